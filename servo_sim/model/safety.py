"""Servo modes and safety beyond Webots (SPEC §3, seed 004): modes, state flags, halt,
enable/disable, e-stop, trapezoidal moves and the command watchdog (the ``ServoMode`` and
``StateFlags`` enums themselves live in ``modes.py``, below the bank, and are importable
from here).

The per-motor arrays live in the bank (``mode``, ``enabled``, ``e_stop``, ``halting``,
``warning``, ``last_command_ms``, ``command_timeout_ms``); the commands that switch them
are the ``Motor`` methods; :class:`Supervisor` runs at the start of every step (before
the physics, or before a real device's read/write) and does what time alone triggers:
the watchdog, the end of a halting ramp, and the set-points of trapezoidal moves.

Trapezoidal moves are planned in closed form (:func:`plan_trapezoid`) and followed with
velocity feed-forward: each step the controller's error is taken against the profile's
set-point at the start of the step and the profile's average velocity over the step is
added to the PID output, so a motor with ample force follows the profile exactly. The
bank's ``target_position`` holds the set-point at the end of the step (what a real
device is sent).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .modes import ServoMode, StateFlags

if TYPE_CHECKING:
    from .bank import MotorBank

log = logging.getLogger("servo_sim")


#: Modes that follow a command stream, watched by the command watchdog.
WATCHED_MODES = (ServoMode.POSITION, ServoMode.VELOCITY, ServoMode.EFFORT)
#: Modes in which the motor follows a command (flag VALID_COMMAND): 1 and up.
COMMANDED_MODES = (*WATCHED_MODES, ServoMode.TRAPEZOIDAL)
# both are runs of consecutive values, the commanded ones the highest: the per-step
# tests are range tests
_WATCHED_LOW, _WATCHED_HIGH = int(min(WATCHED_MODES)), int(max(WATCHED_MODES))
_COMMANDED_LOW = int(min(COMMANDED_MODES))
#: Device flags that put a motor in mode ERROR.
FAULT_FLAGS = StateFlags.ERROR | StateFlags.FATAL_ERROR | StateFlags.COMMUNICATION_FAILURE


# --------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Trapezoid:
    """A time-optimal move from (start, start_velocity) to (target, target_velocity).

    Three phases: a ramp at ``a1`` for ``t1`` s to the peak velocity, a cruise at ``peak``
    for ``tc`` s, a ramp at ``a3`` for ``t3`` s to the target velocity (|a| = the limit).
    """

    start: float
    start_velocity: float
    target: float
    target_velocity: float
    a1: float
    t1: float
    peak: float
    tc: float
    a3: float
    t3: float

    @property
    def duration(self) -> float:
        return self.t1 + self.tc + self.t3

    def sample(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Set-point position and velocity ``t`` s after the start (arrays or scalars)."""
        return profile_at(t, self.start, self.start_velocity, self.a1, self.t1, self.peak,
                          self.tc, self.a3, self.t3)


def profile_at(t, x0, v0, a1, t1, peak, tc, a3, t3):
    """Position and velocity of trapezoidal profiles at time ``t`` (numpy broadcasting)."""
    ramp = np.clip(t, 0.0, t1)
    cruise = np.clip(t - t1, 0.0, tc)
    brake = np.clip(t - t1 - tc, 0.0, t3)
    position = x0 + v0 * ramp + 0.5 * a1 * ramp * ramp + peak * (cruise + brake) \
        + 0.5 * a3 * brake * brake
    return position, v0 + a1 * ramp + a3 * brake


def plan_trapezoid(start: float, start_velocity: float, target: float, target_velocity: float,
                   max_velocity: float, max_acceleration: float) -> Trapezoid:
    """The time-optimal profile under |v| <= max_velocity, |a| <= max_acceleration.

    ``start_velocity`` is clipped to the velocity limit; |target_velocity| must not
    exceed it. The peak is the highest speed the distance allows (triangle) or the limit
    (trapezoid); when the target lies too close for the start velocity, the profile
    goes past it and comes back.
    """
    v_max, a = max_velocity, max_acceleration
    v0 = min(max(start_velocity, -v_max), v_max)
    vf = target_velocity
    distance = target - start

    def ramp(u: float, w: float) -> float:  # distance of a ramp from u to w at |a|
        return abs(w - u) * (w + u) / (2.0 * a)

    squares = 0.5 * (v0 * v0 + vf * vf)
    if distance >= ramp(v0, vf):  # the peak lies above both v0 and vf
        peak = min(math.sqrt(max(a * distance + squares, 0.0)), v_max)
    else:  # below both: the motor goes back
        peak = max(-math.sqrt(max(squares - a * distance, 0.0)), -v_max)
    cruise = distance - ramp(v0, peak) - ramp(peak, vf)
    tc = max(cruise / peak, 0.0) if peak else 0.0
    return Trapezoid(start, v0, target, vf, math.copysign(a, peak - v0), abs(peak - v0) / a,
                     peak, tc, math.copysign(a, vf - peak), abs(vf - peak) / a)


# --------------------------------------------------------------------------- moves


class Move:
    """A trapezoidal move in progress or finished (returned by ``Motor.trapezoidal_move``).

    ``state`` is ``"active"``, then ``"succeeded"`` (the profile reached its target),
    ``"aborted"`` (another command took over, an e-stop, a hardware error: ``reason``
    says which) or ``"canceled"`` (:meth:`cancel`: the motor halts).

    A move taken through a hardware system carries that system's check of a halt
    (:meth:`check_cancel_with`): :meth:`cancel` is a halt and passes the same check.
    """

    def __init__(self, bank: MotorBank, motor: int, group: np.ndarray,
                 plans: list[Trapezoid]) -> None:
        self._bank = bank
        self.motor = motor
        self.group = group
        self.plans = plans  # one per motor of the group, in its own units
        self.plan = plans[list(group).index(motor)]
        self.start_ms = bank.time_ms
        self.state = "active"
        self.reason = ""
        self.finished_ms: int | None = None
        self._check_cancel: Callable[[], None] | None = None

    def check_cancel_with(self, check: Callable[[], None]) -> None:
        """Make :meth:`cancel` call ``check`` first (it raises to refuse the halt); set
        once, by the hardware system that took the move."""
        if self._check_cancel is not None:
            raise RuntimeError(f"motor {self.name!r}: the move's cancel is already checked")
        self._check_cancel = check

    @property
    def done(self) -> bool:
        return self.state != "active"

    @property
    def name(self) -> str:
        return self._bank.names[self.motor]

    @property
    def remaining_distance(self) -> float:
        """|target - position| of the commanded motor (true position)."""
        return abs(self.plan.target - float(self._bank.position[self.motor]))

    def cancel(self) -> None:
        """Stop the move: the motor halts where it is; state ``canceled``. A halt the
        hardware refuses raises its refusal (naming the motor and why) and changes
        nothing; a move already ended is left as it is."""
        bank = self._bank
        with bank.lock:
            if self.done:
                return
            if self._check_cancel is not None:
                self._check_cancel()
            bank.supervisor.halt(self.group, "canceled", "canceled")

    def _finish(self, state: str, reason: str = "") -> None:
        self.state, self.reason = state, reason
        self.finished_ms = self._bank.time_ms


# --------------------------------------------------------------------------- supervisor


class Supervisor:
    """What happens per step without a command: watchdog, halting ramps, moves."""

    def __init__(self, bank: MotorBank) -> None:
        self.bank = bank
        n = bank.n
        self.moves: dict[int, Move] = {}  # motor index -> its move (shared by the group)
        # profile of each moving motor (its own units)
        self._start_ms = np.zeros(n)
        self._profile = np.zeros((8, n))  # x0, v0, a1, t1, peak, tc, a3, t3
        self._end = np.zeros(n)  # t1 + tc + t3
        self._target = np.zeros(n)
        self._target_velocity = np.zeros(n)
        self.trapezoidal = np.zeros(n, dtype=bool)

    @property
    def busy(self) -> bool:
        """True when :meth:`update` has anything to do."""
        bank = self.bank
        return bool(self.moves) or bank.any_halting or bank.any_watchdog

    # ------------------------------------------------------------------ per step

    def update(self) -> None:
        """At the start of a step (time ``bank.time_ms``): watchdog, ramps, moves."""
        bank = self.bank
        now = bank.time_ms
        if bank.any_watchdog:
            mode = bank.mode
            watched = (mode >= _WATCHED_LOW) & (mode <= _WATCHED_HIGH) \
                & (bank.command_timeout_ms > 0)
            late = np.flatnonzero(watched & (now - bank.last_command_ms
                                             >= bank.command_timeout_ms))
            for i in late:
                timeout = bank.command_timeout_ms[i] / 1000.0
                why = (f"no command for {timeout:g} s (command_timeout) in "
                       f"{ServoMode(int(bank.mode[i])).name.lower()} mode: halted")
                log.warning("motor %r: %s", bank.names[i], why)
                self.halt(np.array([i]))
                bank.warning[i] = True
                bank.warnings[i] = why
        if bank.any_halting:
            self._ramp_down()
        if self.moves:
            self._follow_moves(now)

    def clear_warnings(self, idx: np.ndarray) -> None:
        """A command arrived: motors ``idx`` have no watchdog warning any more."""
        bank = self.bank
        bank.warning[idx] = False
        for k in idx:
            bank.warnings[k] = ""

    def _ramp_down(self) -> None:
        """Halting velocity motors: the set-point falls by acceleration * dt per step;
        the step after it reached 0 the motor holds where it stopped."""
        bank = self.bank
        idx = np.flatnonzero(bank.halting)
        setpoint = bank.velocity_setpoint[idx]
        stopped = setpoint == 0.0
        if stopped.any():
            self.hold(idx[stopped])
        idx, setpoint = idx[~stopped], setpoint[~stopped]
        speed = np.maximum(np.abs(setpoint) - bank.acceleration[idx] * bank.dt, 0.0)
        bank.velocity_setpoint[idx] = np.copysign(speed, setpoint)

    def _follow_moves(self, now: int) -> None:
        bank = self.bank
        idx = np.flatnonzero(self.trapezoidal)
        elapsed = (now - self._start_ms[idx]) / 1000.0
        finished = elapsed >= self._end[idx]
        for i in idx[finished]:
            move = self.moves.get(int(i))
            if move is not None and not move.done:
                self._complete(move)
        idx, elapsed = idx[~finished], elapsed[~finished]
        if not len(idx):
            return
        profile = self._profile[:, idx]
        position, _ = profile_at(elapsed, *profile)
        following, _ = profile_at(elapsed + bank.dt, *profile)
        ends = elapsed + bank.dt >= self._end[idx]
        following[ends] = self._target[idx][ends]  # the exact target, not its rounding
        following = np.clip(following, *bank.target_window(idx, stops=True))
        bank.target_position[idx] = following
        bank.pid_target[idx] = position
        bank.feedforward[idx] = (following - position) / bank.dt

    def _complete(self, move: Move) -> None:
        """The profile reached its target: hold it, or go on at the target velocity."""
        bank, group = self.bank, move.group
        self._end_moves(group)
        target, velocity = self._target[group], self._target_velocity[group]
        moving = velocity != 0.0
        bank.target_position[group] = np.where(moving, np.inf, target)
        bank.requested_position[group] = np.where(moving, np.inf,
                                                  target / bank.multiplier[group])
        bank.target_velocity[group] = np.where(moving, velocity, bank.target_velocity[group])
        bank.requested_velocity[group] = bank.target_velocity[group] / bank.multiplier[group]
        # going on: from the profile's end velocity, not the last step's mean (the
        # velocity ramp starts from the command in force)
        bank.command_velocity[group] = np.where(moving, velocity, bank.command_velocity[group])
        bank.mode[group] = np.where(moving, ServoMode.VELOCITY, ServoMode.POSITION)
        bank.last_command_ms[group] = bank.time_ms  # the watchdog counts from the arrival
        move._finish("succeeded")
        bank.refresh(group)

    # ------------------------------------------------------------------ transitions

    def start_move(self, move: Move) -> None:
        """Make ``move`` the command of its motors (the caller checked everything and did
        the bookkeeping of a command: mode, watchdog, earlier moves ended)."""
        bank, group = self.bank, move.group
        for k, plan in zip(group, move.plans, strict=True):
            self._start_ms[k] = bank.time_ms
            self._profile[:, k] = (plan.start, plan.start_velocity, plan.a1, plan.t1,
                                   plan.peak, plan.tc, plan.a3, plan.t3)
            self._end[k] = plan.duration
            self._target[k] = plan.target
            self._target_velocity[k] = plan.target_velocity
            self.moves[int(k)] = move
        self.trapezoidal[group] = True
        bank.target_position[group] = self._profile[0, group]
        bank.requested_position[group] = self._target[group] / bank.multiplier[group]
        bank.force_control[group] = False
        bank.applied_force[group] = 0.0
        bank.refresh(group)

    def supersede(self, group: np.ndarray, reason: str, state: str = "aborted") -> None:
        """End the moves of ``group``'s motors: another command takes over."""
        for k in group:
            move = self.moves.get(int(k))
            if move is not None:
                self._end_moves(move.group)
                if not move.done:
                    move._finish(state, reason)

    def _end_moves(self, group: np.ndarray) -> None:
        for k in group:
            self.moves.pop(int(k), None)
        self.trapezoidal[group] = False
        self.bank.feedforward[group] = 0.0

    def halt(self, group: np.ndarray, reason: str = "halted", state: str = "aborted") -> None:
        """Mode HALT: hold at once; velocity motors with an acceleration limit first ramp
        to zero within it, from the velocity they have (then hold where they stopped)."""
        bank = self.bank
        self.supersede(group, reason, state)
        speed = np.abs(bank.target_velocity[group])
        start = np.clip(bank.velocity[group], -speed, speed)
        ramp = (~np.isfinite(bank.target_position[group]) & (bank.acceleration[group] > 0.0)
                & ~bank.force_control[group] & bank.enabled[group] & (start != 0.0))
        bank.force_control[group] = False
        bank.applied_force[group] = 0.0
        bank.mode[group] = ServoMode.HALT
        bank.halting[group] = ramp
        bank.velocity_setpoint[group] = np.where(ramp, start, 0.0)
        bank.refresh(group)
        if (~ramp).any():
            self.hold(group[~ramp])

    def hold(self, idx: np.ndarray) -> None:
        """Hold motors ``idx`` where they are (position control, target = position)."""
        bank = self.bank
        bank.halting[idx] = False
        bank.target_position[idx] = bank.position[idx]
        bank.requested_position[idx] = bank.position[idx] / bank.multiplier[idx]
        bank.refresh(idx)

    def switch_off(self, group: np.ndarray, reason: str) -> None:
        """Mode DISABLED: torque off (disable, e-stop); a move in progress is aborted."""
        bank = self.bank
        self.supersede(group, reason)
        bank.enabled[group] = False
        bank.halting[group] = False
        bank.force_control[group] = False
        bank.applied_force[group] = 0.0
        bank.mode[group] = ServoMode.DISABLED
        bank.refresh(group)


# --------------------------------------------------------------------------- reporting


def report(bank: MotorBank, device_flags: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """(mode, flags) of every motor as int arrays, given what the device reports.

    ``device_flags`` holds the device's own :class:`StateFlags` per motor (None: a
    simulation, READY | ENABLED). The mode is ERROR while the device reports a fault; ENABLED needs
    the device enabled and the motor enabled; READY is cleared by an e-stop or a fault.
    """
    if device_flags is None:
        device_flags = np.full(bank.n, int(StateFlags.READY | StateFlags.ENABLED))
    device = np.asarray(device_flags, dtype=np.int64)
    fault = (device & int(FAULT_FLAGS)) != 0
    mode = bank.mode.astype(np.int64)
    flags = device & int(FAULT_FLAGS | StateFlags.WARNING | StateFlags.READY
                         | StateFlags.ENABLED)
    flags[~bank.enabled] &= ~int(StateFlags.ENABLED)
    if fault.any():
        mode[fault] = int(ServoMode.ERROR)
        flags[fault] &= ~int(StateFlags.READY)
    if bank.e_stop.any():
        flags[bank.e_stop] &= ~int(StateFlags.READY)
        flags[bank.e_stop] |= int(StateFlags.E_STOP)
    flags[bank.warning] |= int(StateFlags.WARNING)
    flags[(mode >= _COMMANDED_LOW) & ((flags & int(StateFlags.ENABLED)) != 0)] \
        |= int(StateFlags.VALID_COMMAND)
    return mode, flags


def commands(bank: MotorBank) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The commands in force (after the multiplier): position, velocity and effort
    set-points of every motor, NaN where a motor follows no such command."""
    nan = np.full(bank.n, np.nan)
    on = bank.enabled & ~bank.force_control
    holding = on & np.isfinite(bank.target_position)
    moving = bank.supervisor.trapezoidal
    position = np.where(holding, bank.target_position, nan)
    velocity = np.where(on & ~holding, bank.velocity_setpoint,
                        np.where(moving, bank.feedforward, nan))
    effort = np.where(bank.force_control, bank.applied_force, nan)
    return position, velocity, effort


#: Diagnostic levels (diagnostic_msgs/DiagnosticStatus values).
OK, WARN, ERROR = 0, 1, 2


def status(bank: MotorBank, index: int, mode: int, flags: int, fault: str = "") -> tuple[int, str]:
    """(level, why) of one motor for diagnostics: OK / WARN / ERROR and the reason."""
    flags = StateFlags(flags)
    if flags & StateFlags.COMMUNICATION_FAILURE:
        return ERROR, fault or "communication failure"
    if flags & (StateFlags.ERROR | StateFlags.FATAL_ERROR):
        return ERROR, fault or "device error"
    if flags & StateFlags.E_STOP:
        return ERROR, "e-stop latched (reset_e_stop, then enable)"
    if flags & StateFlags.WARNING:
        return WARN, bank.warnings[index] or fault or "warning"
    name = ServoMode(mode).name.lower()
    return OK, name if mode == ServoMode.DISABLED else f"{name} mode"
