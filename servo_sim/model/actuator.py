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
from .tables import MotorData

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


class Actuators:
    """The actuator parameters and state of a bank's motors, kept in the rows of the
    bank's law tables (``tables.MotorData``: ``parameters``, ``commands``, ``state``,
    ``masks``, ``flags``); their part of the step is ``law.servo_step``."""

    def __init__(self, motors: Sequence[MotorConfig], dt: float, data: MotorData) -> None:
        """The actuators of ``motors`` (a step of ``dt`` s), their parameters written into
        ``data``'s rows; its state rows as they are (a parameter change keeps them)."""
        acts = [m.actuator or _NO_ACTUATOR for m in motors]
        col = lambda get: _column(acts, get)  # noqa: E731
        self.dt = dt
        self.parameters, self.commands = data.parameters, data.commands
        self.state, self.masks, self.flags = data.state, data.masks, data.flags
        self.flags.has_actuators = True
        #: the firmware's gains (kp, ki, kd) and the M5 friction (k_ext ... base_s): rows
        self.gains = self.parameters.gains
        self.load_friction = self.parameters.load_friction
        envelope = col(lambda a: a.envelope).astype(bool)
        self.flags.any_envelope = bool(envelope.any())
        # tau = u * drive - slope * w (implicit in w): drive = stall * V / V_rated, of
        # the motor inside the gear (ActuatorConfig.motor_inside: the datasheet's figures
        # are the output's, the gear's friction included)
        inside = [a.motor_inside() if a.envelope else (1.0, 1.0) for a in acts]
        self.drive = np.where(envelope, [stall * a.voltage / (a.rated_voltage or 1.0)
                                         for (stall, _), a in zip(inside, acts, strict=True)],
                              np.inf)
        self.slope = np.where(envelope, [stall / speed for stall, speed in inside], 0.0)
        self.parameters.safe_slope = np.where(self.slope > 0, self.slope, 1.0)
        self.tick = col(lambda a: 2 * math.pi / a.resolution if a.resolution else 0.0)
        self.masks.encoder = self.tick > 0
        self.flags.any_encoder = bool(self.masks.encoder.any())
        self.flags.all_encoder = bool(self.masks.encoder.all())
        self.parameters.safe_tick = np.where(self.masks.encoder, self.tick, 1.0)
        self.parameters.half_gap = col(lambda a: a.backlash / 2)
        self.parameters.neg_half_gap = -self.parameters.half_gap
        self.flags.any_backlash = bool(self.parameters.half_gap.any())
        # self.state.gap: gear side minus output, within +-half_gap (0 at start)
        self.deadband = col(lambda a: a.deadband)
        self.parameters.deadband_edge = self.deadband * (1 + 1e-9)  # errors within: drive nothing
        self.flags.any_deadband = bool(self.deadband.any())
        self.parameters.friction = col(lambda a: a.friction)
        self.flags.any_load_dependent = any(a.load_dependent for a in acts)
        self.flags.any_friction = (bool(self.parameters.friction.any())
                                   or self.flags.any_load_dependent)
        if self.flags.any_load_dependent:  # Rhoban/bam's M5 friction budget
            self.load_friction[:] = np.array(
                [[a.load_friction_external, a.load_friction_motor,
                  a.load_friction_external_stribeck, a.load_friction_motor_stribeck,
                  a.friction_stribeck] for a in acts]).T
            self.parameters.stribeck_velocity = col(lambda a: a.stribeck_velocity or 1.0)
            self.parameters.stribeck_alpha = col(lambda a: a.stribeck_alpha or 1.0)
        else:  # read by the step only where some motor has it (law.py): any numbers
            self.load_friction[:] = 0.0
            self.parameters.stribeck_velocity = self.parameters.stribeck_alpha = 1.0
        self.firmware = col(lambda a: a.control != "webots").astype(bool)
        self.flags.any_firmware = bool(self.firmware.any())
        # a firmware's goal register holds whole ticks
        self.masks.goal_ticks = self.firmware & self.masks.encoder
        self.flags.any_goal_ticks = bool(self.masks.goal_ticks.any())
        self.flags.all_goal_ticks = bool(self.masks.goal_ticks.all())
        self.parameters.firmware_drive = np.where(self.firmware, self.drive, 0.0)
        # self.gains: duty per rad, per rad*s, per rad/s
        self.gains[:] = 0.0
        for i, a in enumerate(acts):
            if a.control in LAWS:
                full, divisors = LAWS[a.control]
                per_rad = a.resolution / (2 * math.pi) / full
                p, i_, d = (g / k * a.gain_scale
                            for g, k in zip(a.gains, divisors, strict=False))
                self.gains[:, i] = (p * per_rad, i_ * per_rad / FIRMWARE_PERIOD_S,
                                    d * per_rad * FIRMWARE_PERIOD_S)
        # self.state.setpoint, self.state.setpoint_velocity: the profile generator's (firmware laws)
        # refreshed with the bank's commands (refresh()): envelope of powered motors only
        self.masks.following[:] = False
        self.flags.any_following = self.flags.all_following = False
        # self.masks.starting: the motors that began following since the last step: their
        # profile starts from the present state (see reference)
        self.masks.starting[:] = False
        self.flags.any_starting = False
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
        step = self.commands.profile_step
        np.copyto(step, np.where(acceleration >= 0.0, acceleration, 1e100))
        step *= self.dt
        np.maximum(step, 1e-300, out=step)
        np.negative(step, out=self.commands.neg_profile_step)
        np.multiply(step, self.dt, out=self.commands.profile_step_dt)
        np.copyto(self.commands.active_drive, np.where(active, self.drive, np.inf))
        # the stall current (and max_torque) both ways
        np.minimum(limit, self.commands.active_drive, out=self.commands.cap)
        np.negative(self.commands.cap, out=self.commands.neg_cap)
        np.copyto(self.commands.active_slope, np.where(active, self.slope, 0.0))
        following = self.firmware & position_control
        masks = self.masks
        np.copyto(masks.starting, (masks.starting | (following & ~masks.following)) & following)
        self.flags.any_starting = bool(self.masks.starting.any())
        np.copyto(self.masks.following, following)
        self.flags.any_following = bool(self.masks.following.any())
        self.flags.all_following = bool(self.masks.following.all())

    def force_at_rest(self, wanted: np.ndarray, duty: np.ndarray | None,
                      limit: np.ndarray) -> np.ndarray:
        """The motor force of motors that a hard stop holds at rest: the drive at speed 0
        (``force``'s envelope is at the speed the motor would have reached)."""
        cap = np.minimum(self.commands.active_drive, limit)
        if duty is not None:
            wanted = np.where(self.masks.following, duty * self.parameters.firmware_drive, wanted)
        return np.clip(wanted, -cap, cap)

