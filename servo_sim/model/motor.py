"""The per-motor handle: Webots ``wb_motor_*`` commands and getters over the bank.

Every command validates first and changes nothing when it rejects a value (it raises
``ValueError`` naming the motor, the argument and the value). Values that Webots
clips are clipped with a warning on the ``servo_sim`` logger. ``set_position``,
``set_velocity`` and ``set_force``/``set_torque`` are relayed to coupled motors
("base::specifier" names), each applying its own multiplier and limits.

Beyond Webots (``safety.py``): the motion commands set the motor's mode and feed the
command watchdog; ``halt``, ``enable``/``disable``, ``e_stop``/``reset_e_stop`` and
``trapezoidal_move`` act on the coupled group too. While a motor is e-stopped every
command is refused (``CommandRefusedError``, a ValueError, saying why); while it is
disabled, every motion command is.
"""

from __future__ import annotations

import functools
import logging
import math
import numbers
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .bank import MotorBank
from .config import MotorConfig
from .safety import Move, ServoMode, StateFlags, plan_trapezoid, report
from .sensors import SampledSensors

log = logging.getLogger("servo_sim")
# A library logger must reach the application's handlers. ROS 2's `launch` makes its
# LaunchLogger (propagate = False) the logger class once imported, e.g. by the
# launch_testing pytest plugin; were it imported first, our warnings would vanish.
log.propagate = True

ROTATIONAL = "rotational"
LINEAR = "linear"

_F = TypeVar("_F", bound=Callable[..., Any])
#: what a command needs: MOTION (enabled, not e-stopped), SETTING (not e-stopped)
MOTION, SETTING = "motion", "setting"


class CommandRefusedError(ValueError):
    """A command the motor (or its hardware) cannot take now; the message says why."""


def command(kind: str) -> Callable[[_F], _F]:
    """A Motor command: run under the bank's lock, refused when the state forbids it."""
    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def run(self: Motor, *args: Any) -> Any:
            with self._bank.lock:
                self._allow(method.__name__, kind)
                return method(self, *args)
        return run  # type: ignore[return-value]
    return wrap


class Motor:
    """A light handle on one motor of a :class:`~servo_sim.model.Simulation`."""

    def __init__(self, bank: MotorBank, index: int, group: np.ndarray) -> None:
        self._bank = bank
        self._index = index
        self._group = group  # indices of the coupled motors, this one included
        self._one = np.array([index])
        self.name = bank.names[index]

    def __repr__(self) -> str:
        return f"<Motor {self.name!r} ({self.get_type()})>"

    # ------------------------------------------------------------------ validation

    def _number(self, argument: str, value: Any, allow_inf: bool = False) -> float:
        if type(value) is not float and (  # (the ABC check costs 0.4 us a call)
                not isinstance(value, numbers.Real) or isinstance(value, bool)):
            raise ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: "
                             "not a number")
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: "
                             + ("NaN" if math.isnan(value) else "must be finite"))
        return value

    def _reject(self, argument: str, value: float, reason: str) -> ValueError:
        return ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: {reason}")

    def _scaled(self, argument: str, value: float) -> np.ndarray:
        """``value`` times each coupled motor's multiplier; rejected if that overflows."""
        with np.errstate(over="ignore"):
            scaled = value * self._bank.multiplier[self._group]
        if not np.isfinite(scaled).all():
            raise self._reject(argument, value, "overflows once multiplied")
        return scaled

    def _allow(self, command: str, kind: str) -> None:
        """Raise CommandRefusedError if ``command`` may not reach the coupled group now."""
        bank = self._bank
        for k in self._group:
            if bank.passive[k]:
                why = "a passive joint (no motor)"
            elif bank.e_stop[k]:
                why = "e-stop latched (call reset_e_stop, then enable)"
            elif kind == MOTION and not bank.enabled[k]:
                why = "disabled (call enable first)"
            else:
                continue
            raise CommandRefusedError(f"motor {bank.names[k]!r}: {command} refused: {why}")

    def _commanded(self, mode: np.ndarray | int, reason: str = "") -> None:
        """Bookkeeping of a motion command to the group: mode, watchdog, moves replaced
        (ended as aborted with ``reason``)."""
        bank, group = self._bank, self._group
        bank.supervisor.supersede(group, reason or f"superseded by a command to {self.name!r}")
        bank.mode[group] = mode
        bank.halting[group] = False
        bank.last_command_ms[group] = bank.time_ms
        bank.supervisor.clear_warnings(group)
        bank.refresh(group)

    def _clip(self, argument: str, motors: np.ndarray, values: np.ndarray, low: np.ndarray,
              high: np.ndarray, what: str, warn: bool = True) -> np.ndarray:
        """Clip ``values`` (one per index in ``motors``) to [low, high], warning per motor."""
        clipped = np.clip(values, low, high)
        if warn:
            for k in np.flatnonzero(clipped != values):
                log.warning("motor %r: %s %g exceeds %s [%g, %g]; clipped to %g",
                            self._bank.names[motors[k]], argument, values[k], what,
                            low[k], high[k], clipped[k])
        return clipped

    # ------------------------------------------------------------------ commands

    @command(MOTION)
    def set_position(self, position: float) -> None:
        """Target position (rad or m); ``±inf`` selects velocity control. Leaves force control."""
        position = self._number("position", position, allow_inf=True)
        bank, group = self._bank, self._group
        if math.isinf(position):
            target = np.full(len(group), position)
        else:
            target = self._scaled("position", position)
            low, high = bank.target_window(group)
            target = self._clip("position", group, target, low, high, "the soft limits")
        bank.target_position[group] = target
        bank.requested_position[group] = position
        bank.force_control[group] = False
        bank.applied_force[group] = 0.0
        self._commanded(ServoMode.VELOCITY if math.isinf(position) else ServoMode.POSITION)

    @command(MOTION)
    def set_velocity(self, velocity: float) -> None:
        """Target velocity in velocity control, speed limit (its magnitude) in position control."""
        velocity = self._number("velocity", velocity)
        bank, group = self._bank, self._group
        vmax = bank.max_velocity[group]
        target = self._clip("velocity", group, self._scaled("velocity", velocity), -vmax, vmax,
                            "max_velocity")
        bank.target_velocity[group] = target
        bank.requested_velocity[group] = target / bank.multiplier[group]
        # velocity control (a halting ramp resumes); a move's speed limit: position control
        mode = bank.mode[group]
        self._commanded(np.where(~np.isfinite(bank.target_position[group]), ServoMode.VELOCITY,
                                 np.where(mode == ServoMode.TRAPEZOIDAL, ServoMode.POSITION,
                                          mode)))

    @command(SETTING)
    def set_acceleration(self, acceleration: float) -> None:
        """Acceleration limit of the controller; -1 means unlimited. Not multiplied."""
        acceleration = self._number("acceleration", acceleration)
        if acceleration != -1 and acceleration < 0:
            raise self._reject("acceleration", acceleration, "must be -1 (unlimited) or >= 0")
        self._bank.acceleration[self._index] = acceleration
        self._bank.refresh(self._one)

    @command(SETTING)
    def set_available_force(self, force: float) -> None:
        """Force (torque) available to the motor, clipped to the max; 0 switches it off."""
        self._set_available("available_force", force)

    @command(SETTING)
    def set_available_torque(self, torque: float) -> None:
        """Alias of :meth:`set_available_force` for rotational motors."""
        self._set_available("available_torque", torque)

    def _set_available(self, argument: str, force: float) -> None:
        force = self._number(argument, force)
        if force < 0:
            raise self._reject(argument, force, "must be >= 0")
        bank, i = self._bank, self._one
        fmax = bank.max_force[i]
        bank.available_force[i] = self._clip(argument, i, np.array([force]), -fmax, fmax,
                                             self._force_field)
        bank.refresh(i)

    @command(SETTING)
    def set_control_pid(self, p: float, i: float, d: float) -> None:
        """PID gains (P > 0, I >= 0, D >= 0); resets the error integral and previous error."""
        p = self._number("p", p)
        i = self._number("i", i)
        d = self._number("d", d)
        for argument, value, ok, rule in (("p", p, p > 0, "> 0"), ("i", i, i >= 0, ">= 0"),
                                          ("d", d, d >= 0, ">= 0")):
            if not ok:
                raise self._reject(argument, value, f"must be {rule}")
        bank, index = self._bank, self._index
        actuator = self.config.actuator
        law = actuator.control if actuator else "webots"
        if law != "webots":
            raise CommandRefusedError(
                f"motor {self.name!r}: set_control_pid refused: its position control is the "
                f"{law} firmware's; set its gains in device units with the parameter "
                "'actuator.gains'")
        bank.control_p[index], bank.control_i[index], bank.control_d[index] = p, i, d
        bank.error_integral[index] = 0.0
        bank.previous_error[index] = 0.0
        bank.refresh_gains(index)

    @command(MOTION)
    def set_force(self, force: float) -> None:
        """Force control: apply ``force * multiplier`` (clipped to the available force)."""
        self._set_force("force", force)

    @command(MOTION)
    def set_torque(self, torque: float) -> None:
        """Alias of :meth:`set_force` for rotational motors."""
        self._set_force("torque", torque)

    def _set_force(self, argument: str, force: float) -> None:
        force = self._number(argument, force)
        bank, group = self._bank, self._group
        available = bank.available_force[group]
        # Webots silences this warning for coupled motors, and so do we
        applied = self._clip(argument, group, self._scaled(argument, force), -available,
                             available, "the available force", warn=len(group) == 1)
        bank.applied_force[group] = applied
        bank.force_control[group] = True
        bank.command_velocity[group] = 0.0
        self._commanded(ServoMode.EFFORT)

    # ------------------------------------------------------------------ beyond Webots

    @command(MOTION)
    def halt(self) -> None:
        """Hold the current position at once (mode HALT); a velocity-controlled motor
        with an acceleration limit first ramps to zero within it."""
        self._bank.supervisor.halt(self._group, f"halted ({self.name!r})")

    @command(SETTING)
    def enable(self) -> None:
        """Torque on (refused while e-stopped): the motor holds where it is (mode HALT)."""
        bank, group = self._bank, self._group
        off = group[~bank.enabled[group]]
        if len(off):
            bank.enabled[off] = True
            bank.supervisor.clear_warnings(off)
            bank.supervisor.halt(off)
            log.info("motor %r: enabled", self.name)

    def disable(self) -> None:
        """Torque off: the passive joint of SPEC §2.2 (mode DISABLED); a move is aborted."""
        with self._bank.lock:
            self._bank.supervisor.switch_off(self._group, f"disabled ({self.name!r})")

    def e_stop(self) -> None:
        """Emergency stop: torque off and latched (flag E_STOP); every command is refused
        until :meth:`reset_e_stop`. Always accepted."""
        bank, group = self._bank, self._group
        with bank.lock:
            bank.supervisor.switch_off(group, "e-stop")
            fresh = ~bank.e_stop[group]
            bank.e_stop[group] = True
        if fresh.any():
            log.warning("motor %r: e-stop: torque off, commands refused until reset_e_stop",
                        self.name)

    def reset_e_stop(self) -> None:
        """Release the e-stop latch; the motor stays disabled until :meth:`enable`."""
        bank, group = self._bank, self._group
        with bank.lock:
            latched = bank.e_stop[group].any()
            bank.e_stop[group] = False
        if latched:
            log.info("motor %r: e-stop reset (still disabled: call enable)", self.name)

    @command(MOTION)
    def trapezoidal_move(self, target_position: float, target_velocity: float,
                         max_velocity: float, max_acceleration: float) -> Move:
        """Move to ``target_position``, arriving at ``target_velocity``, on a time-optimal
        trapezoidal velocity profile within ``max_velocity`` and ``max_acceleration``.

        Caller's units (the multiplier applies, as for set_position). The target is
        clipped to the soft limits and hard stops, the velocity and acceleration to the
        motor's limits (with a warning). With limits active, ``target_velocity`` must be
        0. Returns the :class:`~servo_sim.model.safety.Move`; another command, a halt, a
        disable or an e-stop ends it (aborted), :meth:`Move.cancel` halts it (canceled).
        At the end the motor holds the target (mode POSITION) or goes on at the target
        velocity (mode VELOCITY).
        """
        target = self._number("target_position", target_position)
        final = self._number("target_velocity", target_velocity)
        vmax = self._number("max_velocity", max_velocity)
        amax = self._number("max_acceleration", max_acceleration)
        for argument, value in (("max_velocity", vmax), ("max_acceleration", amax)):
            if value <= 0:
                raise self._reject(argument, value, "must be > 0")
        bank, group = self._bank, self._group
        scale = np.abs(bank.multiplier[group])
        vmax_g = self._clip("max_velocity", group, vmax * scale, 0 * scale,
                            bank.max_velocity[group], "max_velocity")
        limit = np.where(bank.acceleration[group] >= 0, bank.acceleration[group], np.inf)
        amax_g = self._clip("max_acceleration", group, amax * scale, 0 * scale, limit,
                            "the acceleration limit")
        for argument, value, limited in (("max_acceleration", amax, amax_g),
                                         ("max_velocity", vmax, vmax_g)):
            if not (limited > 0).all():
                raise self._reject(argument, value, "the motor's limit is 0")
        final_g = self._clip("target_velocity", group, self._scaled("target_velocity", final),
                             -vmax_g, vmax_g, "max_velocity")
        limited = bank.soft_limits[group] | bank.stops[group]
        if final != 0 and limited.any():
            raise self._reject("target_velocity", final, "must be 0 with soft limits or hard "
                               "stops active (the motor would go on past the target)")
        target_g = self._scaled("target_position", target)
        low, high = bank.target_window(group, stops=True)
        target_g = self._clip("target_position", group, target_g, low, high,
                              "the soft limits and hard stops")
        plans = [plan_trapezoid(float(bank.position[k]), float(bank.velocity[k]),
                                float(target_g[j]), float(final_g[j]), float(vmax_g[j]),
                                float(amax_g[j])) for j, k in enumerate(group)]
        move = Move(bank, self._index, group, plans)
        self._commanded(ServoMode.TRAPEZOIDAL, "preempted by a new trapezoidal_move")
        bank.supervisor.start_move(move)
        return move

    @property
    def move(self) -> Move | None:
        """The trapezoidal move in progress, if any."""
        return self._bank.supervisor.moves.get(self._index)

    @property
    def mode(self) -> ServoMode:
        """What the motor is doing (seed 004 ServoMode)."""
        return ServoMode(int(self._bank.mode[self._index]))

    @property
    def flags(self) -> StateFlags:
        """State flags (seed 004), for a simulated device that is always ready."""
        return StateFlags(int(report(self._bank)[1][self._index]))

    def get_command_timeout(self) -> float:
        """The command watchdog's timeout, s (0 = off); set it as the config field."""
        return float(self._bank.command_timeout_ms[self._index]) / 1000.0

    # ------------------------------------------------------------------ getters

    def get_target_position(self) -> float:
        """The argument of the last ``set_position`` (the initial position before any)."""
        return float(self._bank.requested_position[self._index])

    def get_min_position(self) -> float:
        return float(self._bank.min_position[self._index])

    def get_max_position(self) -> float:
        return float(self._bank.max_position[self._index])

    def get_velocity(self) -> float:
        """The velocity set (after clipping, before the multiplier); max_velocity before any."""
        return float(self._bank.requested_velocity[self._index])

    def get_max_velocity(self) -> float:
        return float(self._bank.max_velocity[self._index])

    def get_acceleration(self) -> float:
        return float(self._bank.acceleration[self._index])

    def get_available_force(self) -> float:
        return float(self._bank.available_force[self._index])

    get_available_torque = get_available_force

    def get_max_force(self) -> float:
        return float(self._bank.max_force[self._index])

    get_max_torque = get_max_force

    def get_multiplier(self) -> float:
        return float(self._bank.multiplier[self._index])

    def get_type(self) -> str:
        """``"rotational"`` or ``"linear"``."""
        return ROTATIONAL if self._bank.rotational[self._index] else LINEAR

    def get_control_pid(self) -> tuple[float, float, float]:
        """The PID gains in use (no Webots getter exists; convenient for tuning)."""
        bank, i = self._bank, self._index
        return (float(bank.control_p[i]), float(bank.control_i[i]), float(bank.control_d[i]))

    # ------------------------------------------------------------------ sensors

    def _enable(self, sensor: SampledSensors, argument: str, period_ms: int) -> None:
        if isinstance(period_ms, bool) or not isinstance(period_ms, numbers.Integral):
            raise ValueError(f"motor {self.name!r}: {argument} = {period_ms!r} rejected: "
                             "the sampling period must be an integer number of ms")
        if period_ms < 0:
            raise self._reject(argument, period_ms, "the sampling period must be >= 0")
        sensor.enable(self._index, int(period_ms), self._bank.time_ms)

    def enable_position(self, sampling_period_ms: int) -> None:
        """Sample the position every ``sampling_period_ms`` ms (0 disables)."""
        self._enable(self._bank.position_sensor, "position sampling period", sampling_period_ms)

    def disable_position(self) -> None:
        self.enable_position(0)

    def get_position(self) -> float:
        """The last sampled position (NaN before the first sample or while disabled)."""
        return float(self._bank.position_sensor.value[self._index])

    def get_position_sampling_period(self) -> int:
        return int(self._bank.position_sensor.period_ms[self._index])

    def enable_force_feedback(self, sampling_period_ms: int) -> None:
        """Sample the motor force every ``sampling_period_ms`` ms (0 disables)."""
        self._enable(self._bank.force_sensor, "force feedback sampling period",
                     sampling_period_ms)

    enable_torque_feedback = enable_force_feedback

    def disable_force_feedback(self) -> None:
        self.enable_force_feedback(0)

    disable_torque_feedback = disable_force_feedback

    def get_force_feedback(self) -> float:
        """The last sampled motor force (NaN before the first sample or while disabled)."""
        return float(self._bank.force_sensor.value[self._index])

    get_torque_feedback = get_force_feedback

    def get_force_feedback_sampling_period(self) -> int:
        return int(self._bank.force_sensor.period_ms[self._index])

    get_torque_feedback_sampling_period = get_force_feedback_sampling_period

    # ------------------------------------------------------------------ true state

    @property
    def position(self) -> float:
        """True position (not sampled)."""
        return float(self._bank.position[self._index])

    @property
    def velocity(self) -> float:
        """True velocity (not sampled)."""
        return float(self._bank.velocity[self._index])

    @property
    def motor_force(self) -> float:
        """Force (torque) the motor itself applied in the last step."""
        return float(self._bank.motor_force[self._index])

    @property
    def energy(self) -> float:
        """Energy consumed so far, J: the integral of |motor force| * consumption_factor."""
        return float(self._bank.energy[self._index])

    @property
    def target_position(self) -> float:
        """The target the controller uses: after the multiplier and the soft limits."""
        return float(self._bank.target_position[self._index])

    @property
    def config(self) -> MotorConfig:
        """This motor's config as it stands (run-time parameter changes included)."""
        return self._bank.motor_configs[self._index]

    @property
    def coupled(self) -> list[str]:
        """Names of the motors coupled with this one (this one included)."""
        return [self._bank.names[k] for k in self._group]

    # ------------------------------------------------------------------ helpers

    @property
    def _force_field(self) -> str:
        return "max_torque" if self._bank.rotational[self._index] else "max_force"
