"""A real servo's actuator, for the motors whose config has an ``actuator`` group.

Webots' motor is ideal: its full torque at any speed, a P-controller on velocity, an
exact position. These parts make a motor behave as a real servo (each opt-in; the
bank's step runs exactly as before for motors without them):

* **Torque-speed envelope** (a DC motor): at supply voltage ``V``, the motor torque is
  ``tau = stall_torque * (u * V / rated_voltage - w / no_load_speed)`` for a drive
  ``u`` in [-1, 1] (PWM duty) at speed ``w``; the step solves it implicitly in the new
  speed. Under Webots' law the drive is whatever reaches the commanded velocity, so the
  torque lies between the envelope's two lines (``u = +-1``). The regenerating side
  (torque against the motion) is limited like the driving side by the current limit,
  ``stall_torque * V / rated_voltage`` (the stall current), and by ``max_torque``.
* **Encoder**: the controller and the position sensor see the position in ticks
  (``resolution`` per turn).
* **Backlash** (Webots' HingeJointWithBacklash: a gap of ``backlash`` between gear and
  output): the gear side is massless; while it crosses the gap, no torque reaches the
  output, which moves under its own load, friction and inertia.
* **Deadband**: a position error within ``deadband`` drives nothing.
* **Friction**: Coulomb friction ``friction`` against the output's motion, sticking
  when the other torques are below it; the gear's ``viscous_friction`` (adds to the
  joint's damping) and the rotor's ``armature`` (its inertia at the output, adds to the
  joint's inertia). The datasheet's no-load speed is the output's, friction included:
  the motor inside runs free that much faster (``ActuatorConfig.motor_inside``).
  Where the profile gives them, the friction also grows with the torques the gear
  carries and near rest (Rhoban/bam's directional Stribeck model, M5 in arXiv
  2410.08650): with the external load ``L`` and the motor's torque ``T`` as each acts on
  the joint and ``s = exp(-(|w| / stribeck_velocity) ** stribeck_alpha)`` at the speed
  ``w`` the step starts from, the friction is ``friction + |L k_ext - T k_motor| +
  s (friction_stribeck + |L k_ext_stribeck - T k_motor_stribeck|)``. A gear holding a
  load (``T = -L``) so has more friction than one at ease: a high-ratio gear is hard to
  back-drive, and a servo at rest in its dead zone stays there.
* **Firmware control laws** (``control``): the device's own position controller, in
  its units: a velocity/acceleration profile generator (the speed limit and the
  acceleration: Webots' target velocity and acceleration, as the hardware plugins map
  them to Profile Velocity / Goal Speed and Profile Acceleration / Acceleration), then a
  PID on the error in encoder ticks whose output is the PWM duty:

  =========  ============================================  ============
  law        duty                                          source
  =========  ============================================  ============
  dynamixel  (P/128 e + I/65536 sum(e) + D/16 de) / 885     ROBOTIS e-Manual, X series
  feetech    (P e + I sum(e) + D de) / 1000                our choice (undocumented)
  =========  ============================================  ============

  times ``gain_scale`` (the XL330 as measured: 0.5, its P acting as P/256),
  with ``e`` in ticks, ``sum`` and ``de`` per firmware period of :data:`FIRMWARE_PERIOD_S`
  (the documents give none; 1 ms is our choice), 885 the X series' PWM Limit (100 %)
  and 1000 Feetech's PWM unit (0.1 %). In velocity control these motors follow Webots'
  velocity law within the envelope.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .config import ActuatorConfig, MotorConfig
from .law import ACTUATOR_FLAGS, ACTUATOR_FLOATS, ACTUATOR_MASKS, servo_step

#: The firmware control period the I and D terms are counted in, s (our choice).
FIRMWARE_PERIOD_S = 0.001
#: Per law: the PWM full scale and the divisors of the P, I and D gains.
LAWS: dict[str, tuple[float, tuple[float, float, float]]] = {
    "dynamixel": (885.0, (128.0, 65536.0, 16.0)),
    "feetech": (1000.0, (1.0, 1.0, 1.0)),
}
_NO_ACTUATOR = ActuatorConfig()


def _column(actuators: Sequence[ActuatorConfig], get) -> np.ndarray:
    return np.array([get(a) for a in actuators], dtype=float)


#: the actuators' state the step changes
_STATE = ("setpoint", "setpoint_velocity", "gap", "starting")
#: where any_starting is in step_arguments() and in tables()'s flags
_NAMES = servo_step.__code__.co_varnames[:servo_step.__code__.co_argcount]
_STARTING_AT = _NAMES.index("any_starting") - _NAMES.index("has_actuators")
_FLAGS_STARTING_AT = ACTUATOR_FLAGS.index("any_starting")


class Actuators:
    """The actuator parameters and state of a bank's motors; their part of the step is
    ``law.servo_step``, which takes these arrays (``step_arguments``)."""

    def __init__(self, motors: Sequence[MotorConfig], dt: float) -> None:
        acts = [m.actuator or _NO_ACTUATOR for m in motors]
        col = lambda get: _column(acts, get)  # noqa: E731
        self.dt = dt
        n = len(acts)
        #: law.servo_step's per-motor arrays, each a row of one of two tables (the
        #: compiled runner takes the tables): written in place, never rebound
        self.floats = np.zeros((len(ACTUATOR_FLOATS), n))
        self.masks = np.zeros((len(ACTUATOR_MASKS), n), dtype=bool)
        for names, table in ((ACTUATOR_FLOATS, self.floats), (ACTUATOR_MASKS, self.masks)):
            for name, row in zip(names, table, strict=True):
                setattr(self, name, row)
        self._state_rows = tuple(getattr(self, name) for name in _STATE)
        #: the firmware's gains (kp, ki, kd) and the M5 friction (k_ext ... base_s): rows
        self.gains = self.floats[ACTUATOR_FLOATS.index("kp"):][:3]
        self.load_friction = self.floats[ACTUATOR_FLOATS.index("k_ext"):][:5]
        envelope = col(lambda a: a.envelope).astype(bool)
        self.any_envelope = bool(envelope.any())
        # tau = u * drive - slope * w (implicit in w): drive = stall * V / V_rated, of
        # the motor inside the gear (ActuatorConfig.motor_inside: the datasheet's figures
        # are the output's, the gear's friction included)
        inside = [a.motor_inside() if a.envelope else (1.0, 1.0) for a in acts]
        self.drive = np.where(envelope, [stall * a.voltage / (a.rated_voltage or 1.0)
                                         for (stall, _), a in zip(inside, acts, strict=True)],
                              np.inf)
        self.slope = np.where(envelope, [stall / speed for stall, speed in inside], 0.0)
        self.safe_slope[:] = np.where(self.slope > 0, self.slope, 1.0)
        self.tick = col(lambda a: 2 * math.pi / a.resolution if a.resolution else 0.0)
        self.encoder[:] = self.tick > 0
        self.any_encoder = bool(self.encoder.any())
        self.all_encoder = bool(self.encoder.all())
        self.safe_tick[:] = np.where(self.encoder, self.tick, 1.0)
        self.half_gap[:] = col(lambda a: a.backlash / 2)
        self.neg_half_gap[:] = -self.half_gap
        self.any_backlash = bool(self.half_gap.any())
        # self.gap: gear side minus output, within +-half_gap (0 at start)
        self.deadband = col(lambda a: a.deadband)
        self.deadband_edge[:] = self.deadband * (1 + 1e-9)  # errors within: drive nothing
        self.any_deadband = bool(self.deadband.any())
        self.friction[:] = col(lambda a: a.friction)
        self.any_load_dependent = any(a.load_dependent for a in acts)
        self.any_friction = bool(self.friction.any()) or self.any_load_dependent
        if self.any_load_dependent:  # Rhoban/bam's M5 friction budget
            self.load_friction[:] = np.array(
                [[a.load_friction_external, a.load_friction_motor,
                  a.load_friction_external_stribeck, a.load_friction_motor_stribeck,
                  a.friction_stribeck] for a in acts]).T
            self.stribeck_velocity[:] = col(lambda a: a.stribeck_velocity or 1.0)
            self.stribeck_alpha[:] = col(lambda a: a.stribeck_alpha or 1.0)
        else:  # read by the step only where some motor has it (law.py): any numbers
            self.stribeck_velocity[:] = self.stribeck_alpha[:] = 1.0
        self.firmware = col(lambda a: a.control != "webots").astype(bool)
        self.any_firmware = bool(self.firmware.any())
        # a firmware's goal register holds whole ticks
        self.goal_ticks[:] = self.firmware & self.encoder
        self.any_goal_ticks = bool(self.goal_ticks.any())
        self.all_goal_ticks = bool(self.goal_ticks.all())
        self.firmware_drive[:] = np.where(self.firmware, self.drive, 0.0)
        # self.gains: duty per rad, per rad*s, per rad/s
        for i, a in enumerate(acts):
            if a.control in LAWS:
                full, divisors = LAWS[a.control]
                per_rad = a.resolution / (2 * math.pi) / full
                p, i_, d = (g / k * a.gain_scale
                            for g, k in zip(a.gains, divisors, strict=False))
                self.gains[:, i] = (p * per_rad, i_ * per_rad / FIRMWARE_PERIOD_S,
                                    d * per_rad * FIRMWARE_PERIOD_S)
        # self.setpoint, self.setpoint_velocity: the profile generator's (firmware laws)
        # refreshed with the bank's commands (refresh()): envelope of powered motors only
        self.any_following = self.all_following = False
        # self.starting: the motors that began following since the last step: their
        # profile starts from the present state (see reference)
        self.any_starting = False
        self.refresh(np.zeros(len(acts), dtype=bool), np.zeros(len(acts), dtype=bool),
                     np.zeros(len(acts)), np.full(len(acts), -1.0))

    @property
    def encoder_resolution(self) -> np.ndarray:
        """The position sensor's resolution an encoder implies (-1 where none), rad."""
        return np.where(self.tick > 0, self.tick, -1.0)

    def refresh(self, active: np.ndarray, position_control: np.ndarray,
                limit: np.ndarray, acceleration: np.ndarray) -> None:
        """Powered motors have the envelope (an unpowered one is only held by friction);
        powered, position-controlled firmware motors follow the firmware's law. ``limit``
        (the bank's force limits: the available force, or an off motor's static friction)
        and ``acceleration`` (-1: unlimited) are the commands' as ``force`` and
        ``reference`` then take them."""
        # the profile's velocity change of one step at the acceleration (unlimited:
        # 1e100 * dt), and that times dt
        step = self.profile_step
        np.copyto(step, np.where(acceleration >= 0.0, acceleration, 1e100))
        step *= self.dt
        np.maximum(step, 1e-300, out=step)
        np.negative(step, out=self.neg_profile_step)
        np.multiply(step, self.dt, out=self.profile_step_dt)
        np.copyto(self.active_drive, np.where(active, self.drive, np.inf))
        # the stall current (and max_torque) both ways
        np.minimum(limit, self.active_drive, out=self.cap)
        np.negative(self.cap, out=self.neg_cap)
        np.copyto(self.active_slope, np.where(active, self.slope, 0.0))
        following = self.firmware & position_control
        np.copyto(self.starting, (self.starting | (following & ~self.following)) & following)
        self.any_starting = bool(self.starting.any())
        np.copyto(self.following, following)
        self.any_following = bool(self.following.any())
        self.all_following = bool(self.following.all())
        #: law.servo_step's actuator arguments, for numpy's runner and the compiled one
        self.arguments = self.step_arguments()
        self.compiled_arguments = self.tables()

    def step_arguments(self, present: bool = True) -> tuple:
        """The actuator arguments of ``law.servo_step``, in its order (``present``
        False: the bank has no actuators, and these arrays are only placeholders)."""
        k_ext, k_motor, k_ext_s, k_motor_s, base_s = self.load_friction
        kp, ki, kd = self.gains
        return [present,
                self.any_firmware, self.any_goal_ticks, self.goal_ticks,
                self.all_goal_ticks, self.safe_tick, self.following,
                self.any_following, self.all_following, self.setpoint,
                self.setpoint_velocity, self.any_starting, self.starting,
                self.profile_step, self.neg_profile_step, self.profile_step_dt,
                self.any_encoder, self.encoder, self.all_encoder,
                self.any_deadband, self.deadband_edge, kp, ki, kd,
                self.any_friction, self.friction,
                self.any_envelope, self.active_slope, self.active_drive,
                self.firmware_drive, self.cap, self.neg_cap, self.safe_slope,
                self.any_backlash, self.half_gap, self.neg_half_gap, self.gap,
                self.any_load_dependent, k_ext, k_motor, k_ext_s, k_motor_s, base_s,
                self.stribeck_velocity, self.stribeck_alpha]

    def tables(self, present: bool = True) -> list:
        """The compiled runner's actuator arguments (``law._each_motor``'s last three):
        the flags (``law.ACTUATOR_FLAGS``) as one array, the two tables."""
        flags = np.array([present, *(getattr(self, name) for name in ACTUATOR_FLAGS[1:])],
                         dtype=bool)
        return [flags, self.floats, self.masks]

    def keep(self, result: tuple | None = None) -> None:
        """The state after a step: numpy's runner's new arrays (``law.servo_step``'s last
        four results: set-point, its velocity, backlash gap, starting) copied into this
        one's rows; the compiled runner's (``None``) are updated in place already."""
        if result is not None:
            for row, new in zip(self._state_rows, result[8:], strict=True):
                if new is not row:
                    np.copyto(row, new)
        if self.any_starting:  # the step started their profiles
            self.any_starting = self.arguments[_STARTING_AT] = False
            self.compiled_arguments[0][_FLAGS_STARTING_AT] = False

    def force_at_rest(self, wanted: np.ndarray, duty: np.ndarray | None,
                      limit: np.ndarray) -> np.ndarray:
        """The motor force of motors that a hard stop holds at rest: the drive at speed 0
        (``force``'s envelope is at the speed the motor would have reached)."""
        cap = np.minimum(self.active_drive, limit)
        if duty is not None:
            wanted = np.where(self.following, duty * self.firmware_drive, wanted)
        return np.clip(wanted, -cap, cap)
