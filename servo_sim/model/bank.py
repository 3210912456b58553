"""The motor bank: every motor of a simulation as one struct of numpy arrays.

:class:`~servo_sim.model.stepping.Stepper` (``bank.stepper``) advances all motors together
with array operations, calling the bank's private parts of a step in their order; there
is no per-motor Python code on the step path. Commands (see ``motor.py``) write the
command arrays and call :meth:`MotorBank.refresh`, which keeps the derived arrays
that the step reads (modes, limits) in sync, so the step does no bookkeeping.

Dynamic mode, per motor (SPEC §2.2)::

    PID -> desired velocity -> acceleration limit -> v_cmd
    M  = J/dt + K*dt + B                     (inertia, implicit spring and damper)
    p  = J/dt*v + F_load + F_applied - K*x   ("momentum" of the step, no motor)
    f  = clip(v_cmd*M - p, -limit, limit)    (ODE-style motor: force to reach v_cmd)
    v' = (p + f) / M ;  x' = x + v'*dt       (semi-implicit Euler)

which is backward Euler for the spring and damper, stable for any stiffness and step.
An off motor (available force 0, or force control) is the same constraint with
``v_cmd = 0`` and ``limit = static_friction``: static friction, not a motor force.

The step's two halves meet at ``p`` and ``M``: the actuator half (PID or firmware law,
envelope, backlash, friction) finds ``f`` and ``v'``; the body (``body.py``) gives ``p``
and ``M`` and integrates ``v'`` into the state: this per-joint one by default
(``J``, ``F_load``, stops from the config), or a multibody engine's (``physics:
mujoco``: ``J`` and the loads from the whole model at its pose).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from . import law
from .actuator import Actuators
from .body import Body, JointBodies, apply_stops
from .config import MotorConfig, SimulationConfig
from .modes import ServoMode
from .sensors import SampledSensors, measure_position, position_masks
from .stepping import RUN_STEPS as RUN_STEPS  # (where tests and tools look for it)
from .stepping import Stepper
from .tables import (
    APPLIED_FORCE,
    COMMAND_VELOCITY,
    CONTROL_I,
    CONTROL_P,
    DUTY,
    FEEDFORWARD,
    FORCE,
    HAS_ACTUATORS,
    INTEGRAL,
    PID_TARGET,
    PREVIOUS,
    SPEED_LIMIT,
    V_NEW,
    VELOCITY_SETPOINT,
    WANTED,
    JointMasks,
    JointParameters,
    Joints,
    MotorData,
    Row,
    TargetMasks,
    Targets,
    name_rows,
)

#: Kinematic mode: a target is reached when closer than this (Webots' threshold).
KINEMATIC_TARGET_THRESHOLD = 1e-6
#: Kinematic mode: a target velocity is reached when closer than this.
KINEMATIC_VELOCITY_THRESHOLD = 1e-6


def _column(motors, get, dtype=float) -> np.ndarray:
    """One per-motor array: ``get(motor config)`` for every motor."""
    return np.array([get(m) for m in motors], dtype=dtype)


class MotorBank:  # (its rows: name_rows, after the class)
    """N motors stepped together: their tables (``tables.MotorData``, :attr:`data`: the
    model, the commands, the state), the step's parts and the commands' bookkeeping.

    Every row of the tables is also an attribute of the bank (``bank.position``,
    ``bank.inertia``, ``bank.target_position``...: :func:`tables.name_rows`): read, the
    row itself; assigned, written in place. Nothing is rebound, so a view of a row kept
    anywhere is that row from then on (a value to keep across a step is a copy)."""

    # the rows of the law's tables (``tables.py``) that the bank writes and others read
    pid_target = Row(PID_TARGET, "commands")
    speed_limit = Row(SPEED_LIMIT, "commands")
    control_p, control_i = Row(CONTROL_P, "commands"), Row(CONTROL_I, "commands")
    feedforward = Row(FEEDFORWARD, "commands")
    velocity_setpoint = Row(VELOCITY_SETPOINT, "commands")
    applied_force = Row(APPLIED_FORCE, "commands")
    #: the PID's integral of the error and its error a step before
    error_integral, previous_error = Row(INTEGRAL, "state"), Row(PREVIOUS, "state")
    #: the velocity the last step commanded (Webots' Vp)
    command_velocity = Row(COMMAND_VELOCITY, "state")

    @property
    def mode(self) -> np.ndarray:
        """Each motor's mode (``modes.ServoMode``): assigned, written in place."""
        return self.data.mode

    @mode.setter
    def mode(self, value: Any) -> None:
        self.data.mode[...] = value

    def __init__(self, config: SimulationConfig,
                 supervisor: Callable[[MotorBank], Any], body: Body | None = None) -> None:
        """``supervisor(bank)`` makes the bank's supervisor (:class:`servo_sim.model.safety.
        Supervisor`, which the simulation passes): it reads and writes the bank's arrays
        and the bank calls it each step, so the bank does not import it. ``body``
        integrates the joints (``body.py``; default: each joint on its own)."""
        #: every command and step holds this lock (commands may come from any thread)
        self.lock = threading.RLock()
        #: advances the bank by steps (the order of a step: ``stepping.py``)
        self.stepper = Stepper(self)
        #: the step's law: numpy's runner, or (use_compiled_law) the compiled one
        self._law, self._keep_motor_force = law.step_motors, law.keep_motor_force
        self._compiled = False
        #: the thread loading the compiled law (compile_law), or None
        self._compiling: threading.Thread | None = None
        #: the motors' tables (tables.py): made once, written in place from then on
        data = self.data = MotorData(len(config.motors))
        self._law_arguments = data.arguments  # (the step's: one lookup)
        self.parameters, self.commands, self.state = data.parameters, data.commands, data.state
        self.masks, self.flags, self.joints = data.masks, data.flags, data.joints
        self.joint_parameters, self.joint_masks = data.joint_parameters, data.joint_masks
        self.targets, self.target_masks = data.targets, data.target_masks
        #: the rows the step reads and writes, taken once: the joints' (position,
        #: velocity, velocity a step before, motor force, energy), the energy per force
        #: and the active motors' gain
        self._joint_rows = data.joints.views
        self._energy_per_force = data.joint_parameters.energy_per_force
        self._active_gain = data.commands.active_gain
        self._sensor_rows = (data.joint_parameters.position_noise,
                             data.joint_parameters.position_resolution)
        #: the motors' sensors (their periods set, and restarted, by _initial_state)
        self.position_sensor = SampledSensors(np.zeros(len(config.motors), dtype=np.int64))
        self.force_sensor = SampledSensors(np.zeros(len(config.motors), dtype=np.int64))
        self._make_supervisor = supervisor
        self._initial_state(config, body)

    def _initial_state(self, config: SimulationConfig, body: Body | None) -> None:
        """Parameters, commands, state and sensors of ``config`` at time 0: what the
        constructor makes and :meth:`reset` makes again."""
        motors = config.motors
        self.body = None  # attached once the state is made
        self.n = len(motors)
        self.names = [m.name for m in motors]
        self.step_ms = config.basic_time_step_ms
        self.dt = self.step_ms / 1000.0
        self.kinematic = config.physics == "kinematic"
        self.time_ms = 0

        column = partial(_column, motors)

        self.actuators: Actuators | None = None  # real servos' actuators (actuator.py)
        data = self.data
        for table in (data.commands.table, data.targets.table, data.target_masks.table,
                      data.mode, data.state.table, data.joints.table, data.masks.table):
            table[...] = 0
        self._load_parameters(config)
        self.initial_position = column(lambda m: m.position)
        # a passive joint (no motor) is a motor switched off for good
        self.passive = column(lambda m: m.passive, dtype=bool)

        # commands: internal values (after multiplier and clipping) ...
        self.target_position = self.initial_position
        self.target_velocity = self.max_velocity
        self.acceleration = column(lambda m: m.acceleration)
        self.available_force = self.max_force
        self.control_p = column(lambda m: m.control_pid[0])
        self.control_i = column(lambda m: m.control_pid[1])
        self.control_d = column(lambda m: m.control_pid[2])
        # force_control, applied_force (set_torque's force): 0 (none)
        # ... and what the getters return (the caller's values, before the multiplier)
        self.requested_position = self.initial_position
        self.requested_velocity = self.max_velocity

        # modes and safety (safety.py): a motor starts enabled, holding its position;
        # e_stop, halting (a velocity ramp to 0, then hold), warning, last_command_ms: 0
        self.mode = int(ServoMode.HALT)
        self.enabled = ~self.passive
        self.mode[self.passive] = int(ServoMode.DISABLED)
        self.warnings = [""] * self.n  # why each warning flag is set

        # state: the joints at their initial position, at rest (velocity, the velocity
        # a step before, motor force and energy: the 0 above)
        self.position = self.initial_position
        self.period = self.dt  # the time between the velocity and the one a step before, s
        # the law's state (error_integral ... command_velocity): 0, the set-point where
        # the motor is
        self.state.setpoint = self.position

        # sensors: their periods, nothing read yet; the noise's random numbers from the seed
        self.rng = np.random.default_rng(config.seed)
        self.position_sensor.restart(
            column(lambda m: m.position_sensor.sampling_period_ms, np.int64))
        self.force_sensor.restart(
            column(lambda m: m.force_feedback_sampling_period_ms, np.int64))

        # derived from the commands, kept in sync by refresh() (the law's commands, and
        # position_control, velocity_control); masks are stored as 0/1 gains
        # (active_gain, pid_gain, not_pid_gain, position_gain) so that the step
        # multiplies instead of selecting (cheaper in numpy). pid_target: the position
        # the PID compares with; feedforward: velocity added to the PID output (moves);
        # velocity_setpoint: velocity control's set-point (the target, or a halting
        # ramp), else 0; speed_limit: position control's (|target velocity|; a move:
        # max_velocity)
        self.supervisor = self._make_supervisor(self)
        self.refresh()
        self.body = body if body is not None else JointBodies()
        self.body.attach(self)
        #: the body's own loop of dynamic steps (``run``: MuJoCo's, with the compiled
        #: law), or None: the bank's step (_step_dynamic)
        self._body_loop = getattr(self.body, "run", None) if self._compiled else None

    # ------------------------------------------------------------------ bookkeeping

    def apply_config(self, config: SimulationConfig) -> None:
        """Take new per-motor parameters (same motors, validated), keeping state and commands.

        Commands that the new limits no longer allow are clipped to them, as Webots
        clips a command: the available force to the max force, the velocity to the
        max velocity, the position target to the soft limits.
        """
        self._load_parameters(config)
        np.minimum(self.available_force, self.max_force, out=self.available_force)
        vmax = self.max_velocity
        np.clip(self.target_velocity, -vmax, vmax, out=self.target_velocity)
        np.clip(self.requested_velocity, -vmax / np.abs(self.multiplier),
                vmax / np.abs(self.multiplier), out=self.requested_velocity)
        finite = np.isfinite(self.target_position) & self.soft_limits
        self.target_position[finite] = np.clip(self.target_position[finite],
                                               self.min_position[finite],
                                               self.max_position[finite])
        self.refresh()

    def _load_parameters(self, config: SimulationConfig) -> None:
        """The per-motor parameters of ``config`` and the step constants derived from them."""
        motors = config.motors
        self._config = config
        #: each motor's config now (a run-time change replaces one: record_motor)
        self.motor_configs = list(motors)
        self._motors_recorded = False

        column = partial(_column, motors)

        self.rotational = column(lambda m: m.type == "rotational", bool)
        self.max_velocity = column(lambda m: m.max_velocity)
        self.max_force = column(lambda m: m.max_force)
        self.multiplier = column(lambda m: m.multiplier)
        self.min_position = column(lambda m: m.min_position)
        self.max_position = column(lambda m: m.max_position)
        self.soft_limits = self.min_position != self.max_position
        self.min_stop = column(lambda m: m.min_stop)
        self.max_stop = column(lambda m: m.max_stop)
        self.stops = (self.min_stop != 0.0) | (self.max_stop != 0.0)
        self.spring_constant = column(lambda m: m.spring_constant)
        self.damping_constant = column(lambda m: m.damping_constant)
        self.static_friction = column(lambda m: m.static_friction)
        self.consumption_factor = column(lambda m: m.consumption_factor)
        self.inertia = column(lambda m: m.inertia)
        # the gear's own: the rotor's inertia at the output, the viscous friction
        self.armature = column(lambda m: m.actuator.armature if m.actuator else 0.0)
        self.gear_damping = column(lambda m: m.actuator.viscous_friction if m.actuator
                                   else 0.0)
        self.gravity_mass = column(lambda m: m.load.gravity_mass)
        self.gravity_distance = column(lambda m: m.load.gravity_distance)
        self.gravity = column(lambda m: m.load.gravity)
        self.gravity_angle = column(lambda m: m.load.gravity_angle)
        self.external_load = column(lambda m: m.load.external)
        self.position_noise = column(lambda m: m.position_sensor.noise)
        self.position_resolution = column(lambda m: m.position_sensor.resolution)
        self.actuators = None
        self.flags.table[HAS_ACTUATORS] = False
        if any(m.actuator is not None for m in motors):
            # (a parameter change keeps the actuators' state: the rows of self.state)
            self.actuators = Actuators(motors, self.dt, self.data)
            # an encoder quantises the sensor too, unless the sensor has its own resolution
            np.copyto(self.position_resolution, self.actuators.encoder_resolution,
                      where=self.position_resolution == -1.0)
        #: the position sensors' masks (sensors.position_masks)
        self._position_masks = position_masks(self.position_noise, self.position_resolution)
        self.command_timeout_ms = column(lambda m: m.command_timeout * 1000.0)
        self.any_watchdog = bool(self.command_timeout_ms.any())

        # constants of the step
        self.energy_per_force = self.consumption_factor * self.dt
        self.parameters.dt = self.dt
        self.flags.any_spring = bool(self.spring_constant.any())
        self.any_stops = bool(self.stops.any())
        self.stop_low = np.where(self.stops, self.min_stop, -np.inf)
        self.stop_high = np.where(self.stops, self.max_stop, np.inf)
        self._derive_loads()

    def _derive_loads(self) -> None:
        """The step's constants of the joints' inertia and loads (the per-joint body's,
        ``body.py``; the servo's own spring, damper and gear for every body)."""
        dt = self.dt
        self.joint_inertia_dt = (self.inertia + self.armature) / dt
        self.servo_mass = self.spring_constant * dt + self.damping_constant + self.gear_damping
        self.joint_mass = self.joint_inertia_dt + self.servo_mass
        weight = self.gravity_mass * self.gravity
        self.constant_load = self.external_load - np.where(
            self.rotational, 0.0, weight * np.cos(self.gravity_angle))
        self.gravity_torque = np.where(self.rotational, weight * self.gravity_distance, 0.0)
        self.gravity_phase = np.where(self.rotational, self.gravity_angle, 0.0)  # rotational
        if self.body is not None:
            self.body.configure()

    def set_loads(self, inertia: np.ndarray, gravity_mass: np.ndarray,
                  gravity_distance: np.ndarray, gravity_angle: np.ndarray) -> None:
        """Every motor's joint inertia and gravity load (the fields of ``inertia`` and
        ``load``), for joints whose loads change with the pose of the others (an arm's);
        the config keeps its own. The state is left as it is."""
        for column, values in ((self.inertia, inertia), (self.gravity_mass, gravity_mass),
                               (self.gravity_distance, gravity_distance),
                               (self.gravity_angle, gravity_angle)):
            np.copyto(column, values)
        self._derive_loads()

    def target_window(self, idx: np.ndarray, stops: bool = False
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) a position target of motors ``idx`` may take: the active soft
        limits, and with ``stops`` the hard stops as well (-inf/inf where none)."""
        soft = self.soft_limits[idx]
        low = np.where(soft, self.min_position[idx], -np.inf)
        high = np.where(soft, self.max_position[idx], np.inf)
        if stops:
            low, high = np.maximum(low, self.stop_low[idx]), np.minimum(high, self.stop_high[idx])
        return low, high

    @property
    def config(self) -> SimulationConfig:
        """The config in force: the start-up one with the motors' recorded changes."""
        if self._motors_recorded:
            self._config = replace(self._config, motors=tuple(self.motor_configs))
            self._motors_recorded = False
        return self._config

    def record_motor(self, index: int, motor: MotorConfig) -> None:
        """Motor ``index``'s config is ``motor`` now (its change already applied): O(1),
        the whole config is made again only when read."""
        self.motor_configs[index] = motor
        self._motors_recorded = True

    def refresh_gains(self, idx: int | slice | np.ndarray = slice(None)) -> None:
        """Recompute what the step derives from the PID gains of motors ``idx`` (all
        that a change of gains alone needs)."""
        if isinstance(idx, int):  # one motor: a Python float, inf past 1e308 (no warning)
            self.commands.d_over_dt[idx] = float(self.control_d[idx]) / self.dt
            return
        with np.errstate(over="ignore"):  # D near 1e308: inf, saturated by the step
            self.commands.d_over_dt[idx] = self.control_d[idx] / self.dt

    def refresh(self, idx: slice | np.ndarray = slice(None)) -> None:
        """Recompute what the step derives from the commands, for motors ``idx``."""
        active = self.enabled[idx] & ~self.force_control[idx] & (self.available_force[idx] > 0.0)
        target = self.target_position[idx]
        position_control = np.isfinite(target)
        pid = active & position_control
        moving = self.supervisor.trapezoidal[idx]
        self.commands.active_gain[idx] = active
        self.commands.force_limit[idx] = np.where(active, self.available_force[idx],
                                          self.static_friction[idx])
        self.position_control[idx] = position_control
        self.velocity_control[idx] = ~position_control
        self.commands.pid_gain[idx] = pid
        self.commands.not_pid_gain[idx] = ~pid
        self.pid_target[idx] = np.where(pid, target, 0.0)
        self.commands.position_gain[idx] = position_control
        halting = self.halting[idx]
        self.velocity_setpoint[idx] = np.where(
            position_control, 0.0, np.where(halting, self.velocity_setpoint[idx],
                                            self.target_velocity[idx]))
        self.speed_limit[idx] = np.where(moving, self.max_velocity[idx],
                                         np.abs(self.target_velocity[idx]))
        self.refresh_gains(idx)
        self.masks.acceleration_limited[idx] = self.acceleration[idx] >= 0.0
        self.commands.acceleration_step[idx] = np.abs(self.acceleration[idx]) * self.dt
        self.flags.any_acceleration_limit = bool(self.masks.acceleration_limited.any())
        self.flags.any_force_control = bool(self.force_control.any())
        self.flags.any_feedforward = bool(self.supervisor.trapezoidal.any())
        self.any_halting = bool(self.halting.any())
        np.greater(self.commands.active_gain, 0.0, out=self.masks.active)
        if self.actuators is not None:
            self.actuators.refresh(self.masks.active, self.commands.pid_gain > 0.0,
                                   self.commands.force_limit, self.acceleration)

    def use_compiled_law(self) -> bool:
        """Step with the compiled law (``ahead.compiled``: the library compiled ahead of
        time, else numba's JIT) from now on, where numba is installed; whether it is."""
        from . import ahead  # (here, in the loading thread: ctypes' import, not at start)

        compiled = ahead.compiled()
        if compiled is None:
            return False
        # compiled now, on copies (the first step would otherwise wait for it)
        with self.lock:
            tables = [table.copy() for table in self.data.arguments]
        compiled(*(np.zeros(self.n) for _ in range(3)), np.ones(self.n), np.zeros(self.n),
                 *tables)
        keep = ahead.compiled_keep_motor_force()
        keep(np.zeros(self.n), np.ones(self.n), np.zeros(self.n), np.ones(self.n))
        with self.lock:  # between two steps
            self._law, self._keep_motor_force, self._compiled = compiled, keep, True
        return True

    def compile_law(self) -> None:
        """Step with the compiled law once it is loaded, where numba is installed: a
        thread of its own loads it (numba's import and the law's cache take about half a
        second, more on a busy machine, which would otherwise delay every start) while
        the bank steps with numpy's runner, whose results are the same to the bit;
        :meth:`wait_for_compiled_law` waits for the switch."""
        if self._compiled or self._compiling is not None or not law.can_compile():
            return
        self._compiling = threading.Thread(target=self._load_compiled_law, daemon=True,
                                           name="servo_sim compiled law")
        self._compiling.start()

    def _load_compiled_law(self) -> None:
        """:meth:`use_compiled_law`, in :meth:`compile_law`'s thread, once no host
        holds it back (``law.hold_loading``)."""
        law.wait_until_loading_allowed()
        with law.quick_gil_handover():
            self.use_compiled_law()

    def wait_for_compiled_law(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` s (None: as long as it takes) for :meth:`compile_law`'s
        switch; whether the bank steps with the compiled law."""
        if self._compiling is not None:
            self._compiling.join(timeout)
        return self._compiled

    # ------------------------------------------------------------------ stepping

    # The parts of a step, called only by the Stepper (``stepping.py``) in their order:
    # _supervise, _step_physics (or _run_body_loop) or a device's read after
    # _measure_acceleration_over, _advance_clock, _sample_sensors.

    def _run_body_loop(self, steps: int) -> None:
        """The state ``steps`` dynamic steps on in one run of the body's loop
        (``_body_loop``); not the clock or the sensors."""
        self._keep_body_loop_state(self._body_loop(steps))

    def _advance_clock(self, steps: int = 1) -> None:
        """The clock ``steps`` basic time steps on: the one place it advances (a step of
        the model, or a hardware system's cycle)."""
        self.time_ms += steps * self.step_ms

    def hold_position_targets(self) -> None:
        """The motors under position control hold where they are now (a real device's
        first read: its first goals are where it stands)."""
        with self.lock:
            self.supervisor.hold(np.flatnonzero(np.isfinite(self.target_position)))

    def halt_enabled(self, reason: str) -> None:
        """Every enabled motor halts (a move in progress aborted with ``reason``)."""
        with self.lock:
            self.supervisor.halt(np.flatnonzero(self.enabled), reason)

    def measured(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, joint acceleration, motor force) now, arrays of their own."""
        with self.lock:
            return (self.position.copy(), self.velocity.copy(), self.joint_acceleration(),
                    self.motor_force.copy())

    def _measure_acceleration_over(self, period: float) -> None:
        """A real device's cycle of ``period`` s begins: the velocity now is the one the
        next read's joint acceleration differs from (the model's step keeps both)."""
        np.copyto(self.previous_velocity, self.velocity)
        self.period = period

    def _supervise(self) -> None:
        """What the start of a step triggers: watchdog, halting ramps, trapezoidal moves."""
        if self.supervisor.busy:
            self.supervisor.update()

    def joint_acceleration(self) -> np.ndarray:
        """The acceleration over the last step (finite difference of the velocity)."""
        return (self.velocity - self.previous_velocity) / self.period

    def _step_physics(self) -> None:
        """The state one step on (position, velocity, motor force, energy); not the clock."""
        if self.kinematic:
            self._step_kinematic()
        elif self._body_loop is not None:
            self._run_body_loop(1)
        else:
            self._step_dynamic()

    def _keep_body_loop_state(self, state: tuple) -> None:
        """The state after the body's own run of steps (``run``): ``(position, velocity,
        velocity a step before, law results)`` as the bank's step keeps it."""
        x, v, previous, results = state
        self._keep_joints(x, v, results[FORCE], previous)

    def reset(self) -> None:
        """Back to the initial state of the current config, in place (handles stay valid).

        Moves in progress end as aborted."""
        with self.lock:
            self.supervisor.supersede(np.arange(self.n), "reset")
            self._initial_state(self.config, self.body)

    def _step_dynamic(self) -> None:
        """The body's momentum and mass -> the actuators' law (``law.servo_step``) ->
        the body integrates the velocity each joint reaches."""
        body = self.body
        position, velocity, previous, motor_force, energy = self._joint_rows
        p, mass = body.momentum()
        law.add_servo_loads(p, self.data)  # set_torque's force, the spring's explicit part
        out = self._law(position, velocity, p, mass, body.inertia_dt, *self._law_arguments)
        act = self.actuators
        x_new, v_new, stopped, force = body.advance(out[V_NEW], out[FORCE])
        if stopped is not None and act is not None and act.flags.any_envelope and stopped.any():
            duty = out[DUTY] if law.has_duty(self.flags.table) else None
            force = np.where(stopped, act.force_at_rest(out[WANTED], duty,
                                                        self.commands.force_limit), force)
        self._keep_motor_force(force, self._active_gain, energy, self._energy_per_force)
        # _keep_joints' copies, written out (the per-joint body wrote the position row):
        # the call would add 7-8 % to a per-joint step of six servos
        previous[...] = velocity
        velocity[...] = v_new
        if x_new is not position:
            position[...] = x_new
        motor_force[...] = force
        self.period = self.dt

    def _keep_joints(self, x: np.ndarray, v: np.ndarray, force: np.ndarray | float,
                     previous: np.ndarray | None = None) -> None:
        """The joints' state one step on, written into its rows (never rebound): position
        ``x``, velocity ``v``, motor force ``force``; the velocity a step before is
        ``previous`` (None: the velocity until now)."""
        position, velocity, previous_velocity, motor_force, _ = self._joint_rows
        previous_velocity[...] = velocity if previous is None else previous
        velocity[...] = v
        position[...] = x
        motor_force[...] = force
        self.period = self.dt

    def _step_kinematic(self) -> None:
        """Webots without physics: velocity ramps, position walks to the target."""
        dt = self.dt
        x = self.position
        target = self.target_position
        velocity_control = self.velocity_control
        target_velocity = self.target_velocity
        blocked = velocity_control & self.soft_limits & (
            ((x >= self.max_position) & (target_velocity >= 0.0))
            | ((x <= self.min_position) & (target_velocity <= 0.0)))
        arrived = self.position_control & (np.abs(target - x) < KINEMATIC_TARGET_THRESHOLD)
        idle = blocked | arrived | self.force_control | ~self.enabled

        available = self.available_force
        acc = np.where((self.acceleration == -1.0) | (self.acceleration > available),
                       available, self.acceleration)
        goal = np.where(velocity_control, self.velocity_setpoint, np.abs(target_velocity))
        current = self.command_velocity
        gap = goal - current
        current = np.where(np.abs(gap) > KINEMATIC_VELOCITY_THRESHOLD,
                           current + np.clip(gap, -acc * dt, acc * dt), current)
        current[idle] = 0.0

        direction = np.where(velocity_control, 1.0, np.sign(target - x))
        x_new = x + direction * current * dt
        x_new = np.where(velocity_control, x_new,
                         np.where(direction > 0, np.minimum(x_new, target),
                                  np.maximum(x_new, target)))
        if self.flags.any_feedforward:  # trapezoidal moves: exactly on the profile
            moving = self.supervisor.trapezoidal
            x_new = np.where(moving, target, x_new)
            current = np.where(moving, self.feedforward, current)
        v_new = (x_new - x) / dt
        if self.any_stops:
            apply_stops(x_new, v_new, self.stop_low, self.stop_high)
        self.command_velocity = current
        self._keep_joints(x_new, v_new, 0.0)  # no motor force: Webots' kinematic motors

    def _sample_sensors(self) -> None:
        """Refresh the sensors due at ``time_ms`` from the state arrays."""
        now = self.time_ms
        position, _, _, motor_force, _ = self._joint_rows
        sensor = self.position_sensor
        due = sensor.due(now)
        if due is sensor.everyone:  # all of them: whole arrays, no indexing
            noise, resolution = self._sensor_rows
            measure_position(position, noise, resolution, self.rng, self._position_masks,
                             sensor.value)
        elif due is not None and len(due):
            sensor.value[due] = measure_position(
                position[due], self.position_noise[due], self.position_resolution[due],
                self.rng)
        sensor = self.force_sensor
        due = sensor.due(now)
        if due is sensor.everyone:
            sensor.value[:] = motor_force
        elif due is not None and len(due):
            sensor.value[due] = motor_force[due]


# each row of the model's, the commands' and the joints' tables, an attribute of the bank
for _attribute, _rows in (("joint_parameters", JointParameters), ("joint_masks", JointMasks),
                          ("targets", Targets), ("target_masks", TargetMasks),
                          ("joints", Joints)):
    name_rows(MotorBank, _attribute, _rows)
