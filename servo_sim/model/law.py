"""The actuator half of a dynamic step, written once: :func:`servo_step`.

The bank (``bank.py``) asks the body for each joint's momentum ``p`` and mass over the
step, then runs the law with its own arrays and its actuators' (``actuator.py``: what
each part means and where it comes from): PID or firmware law on encoder ticks, dead
zone, saturation and acceleration limit, the torque-speed envelope, backlash, the
gear's friction. It gives the velocity each joint reaches and the motor's force, and
the body integrates the velocity (``body.py``).

:func:`servo_step` is written element by element, in operations that mean the same on
a numpy array (every motor at once) and on one motor's numbers. Two runners take it:

* :func:`servo_step` itself (the default): numpy runs it on the bank's arrays;
* :func:`compiled` (where numba is installed; the ``mujoco`` extra has it): numba
  compiles it for one motor's numbers and :func:`_each_motor` loops over the motors, in
  machine code: what a body whose own step is fast (MuJoCo's) needs, where numpy's
  per-call cost would be most of the step. The tests step both and compare them.

The few operations that differ between an array and a number (in place on an array,
plain on a number: ``lower``, ``raise_``, ``fmin_``, ``fmax_``, ``rint_``, ``select``;
``fade_``, whose pow and exp numpy computes otherwise than the C library)
are names this module's namespace gives each runner. Both return the state after the
step: ``integral`` and ``previous`` (the PID's, updated in place), ``setpoint``,
``setpoint_velocity``, ``gap`` and ``starting`` (the actuators': updated in place by the
compiled runner; new arrays from numpy's where they change, which ``Actuators.keep``
copies into its own). An argument a flag turns off is not read.

The compiled runner takes the per-motor arguments as the rows of four tables that the
bank and its actuators keep them in (:data:`BANK_FLOATS` ...) and gives its results as
the rows of one array: numba's cost is per argument and per array it makes, and with
servo_step's 73 arguments one by one it was most of a MuJoCo step.
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

# ---------------------------------------------------------------- the numpy runner's

#: ``select(c, a, b)``: ``a`` where ``c``, else ``b``
select = np.where


def lower(a: np.ndarray, b: Any) -> np.ndarray:
    """``a`` lowered to ``b`` where above it (in place on an array)."""
    return np.minimum(a, b, out=a)


def raise_(a: np.ndarray, b: Any) -> np.ndarray:
    """``a`` raised to ``b`` where below it (in place on an array)."""
    return np.maximum(a, b, out=a)


def fmin_(a: np.ndarray, b: Any) -> np.ndarray:
    """``lower``, a NaN in ``a`` taking ``b`` (numpy's fmin)."""
    return np.fmin(a, b, a)


def fmax_(a: np.ndarray, b: Any) -> np.ndarray:
    """``raise_``, a NaN in ``a`` taking ``b`` (numpy's fmax)."""
    return np.fmax(a, b, a)


def rint_(a: np.ndarray) -> np.ndarray:
    """``a`` rounded half to even (np.round's own rounding, without its wrapper)."""
    return np.rint(a, a)


def _fade_each(v: np.ndarray, velocity: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The Stribeck fade motor by motor, as the compiled runner computes it (numba: the
    C library's pow and exp)."""
    out = np.empty(v.shape[0])
    for i in range(v.shape[0]):
        out[i] = np.exp(-(np.abs(v[i]) / velocity[i]) ** alpha[i])
    return out


def _fade_math(v: np.ndarray, velocity: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The Stribeck fade motor by motor with Python's math: the C library's pow and exp,
    the same bits as :func:`_fade_each` compiled, without importing numba."""
    return np.array([math.exp(-(abs(a) / b) ** c) for a, b, c in
                     zip(v.tolist(), velocity.tolist(), alpha.tolist(), strict=True)])


#: _fade_each compiled by numba, once numba is imported in this process
_FADE_COMPILED: Callable[..., np.ndarray] | None = None


def fade_(v: np.ndarray, velocity: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The Stribeck fade ``exp(-(|v| / velocity) ** alpha)`` motor by motor with the C
    library's pow and exp, as the compiled runner computes it: numpy's own (SIMD, on
    AVX-512) differ from them in the last bit for about one number in twenty, and the
    two runners must agree to the bit. Compiled by numba where this process has imported
    it already (a compiled runner, MuJoCo's body: some 0.1 us a motor), else with
    Python's math (some 0.14 us a motor): the same bits either way, and a process that
    steps numpy's runner alone (a device emulator) does not wait for numba's import."""
    global _FADE_COMPILED
    if _FADE_COMPILED is None:
        numba = sys.modules.get("numba")
        if numba is None:
            return _fade_math(v, velocity, alpha)
        _FADE_COMPILED = numba.njit(cache=True, nogil=True, error_model="numpy")(_fade_each)
    return _FADE_COMPILED(v, velocity, alpha)


# ---------------------------------------------------------------- the law

def whole_ticks(x: Any, tick: Any, which: Any, every: bool) -> Any:
    """``x`` rounded to whole encoder ticks of size ``tick`` for the motors ``which``
    (all: ``every``)."""
    whole = x / tick
    whole = rint_(whole)
    whole *= tick
    if every:
        return whole
    return select(which, whole, x)


def servo_step(
        dt: float, x: np.ndarray, v: np.ndarray, p: np.ndarray, mass: np.ndarray,
        inertia_dt: np.ndarray,
        # the bank's commands and what refresh() derives from them
        pid_target: np.ndarray, speed_limit: np.ndarray, pid_gain: np.ndarray,
        not_pid_gain: np.ndarray, position_gain: np.ndarray, active_gain: np.ndarray,
        active: np.ndarray, integral: np.ndarray, previous: np.ndarray,
        control_p: np.ndarray, control_i: np.ndarray, d_over_dt: np.ndarray,
        any_feedforward: bool, feedforward: np.ndarray, velocity_setpoint: np.ndarray,
        any_acceleration_limit: bool, acceleration_limited: np.ndarray,
        acceleration_step: np.ndarray, command_velocity: np.ndarray,
        force_limit: np.ndarray, any_force_control: bool, applied_force: np.ndarray,
        # the actuators (has_actuators False: every motor is Webots' ideal one)
        has_actuators: bool,
        any_firmware: bool, any_goal_ticks: bool, goal_ticks: np.ndarray,
        all_goal_ticks: bool, safe_tick: np.ndarray, following: np.ndarray,
        any_following: bool, all_following: bool, setpoint: np.ndarray,
        setpoint_velocity: np.ndarray, any_starting: bool, starting: np.ndarray,
        profile_step: np.ndarray, neg_profile_step: np.ndarray,
        profile_step_dt: np.ndarray,
        any_encoder: bool, encoder: np.ndarray, all_encoder: bool,
        any_deadband: bool, deadband_edge: np.ndarray,
        kp: np.ndarray, ki: np.ndarray, kd: np.ndarray,
        any_friction: bool, friction: np.ndarray,
        any_envelope: bool, active_slope: np.ndarray, active_drive: np.ndarray,
        firmware_drive: np.ndarray, cap: np.ndarray, neg_cap: np.ndarray,
        safe_slope: np.ndarray,
        any_backlash: bool, half_gap: np.ndarray, neg_half_gap: np.ndarray,
        gap: np.ndarray,
        any_load_dependent: bool, k_ext: np.ndarray, k_motor: np.ndarray,
        k_ext_s: np.ndarray, k_motor_s: np.ndarray, base_s: np.ndarray,
        stribeck_velocity: np.ndarray, stribeck_alpha: np.ndarray,
) -> tuple:
    """One step of the motors' actuators (arrays: every motor; numbers: one motor):
    ``(v_new, force, wanted, duty, v_cmd, has_duty)``, the velocity each joint reaches
    (before the body's stops), the motor force (before an off motor's is zeroed),
    Webots' wanted force and the firmware's duty (for a force at rest, ``force_at_rest``;
    the duty only where ``has_duty``) and the commanded velocity (the bank's
    ``command_velocity`` from now on); then the state: ``integral``, ``previous``,
    ``setpoint``, ``setpoint_velocity``, ``gap``, ``starting``."""
    # PID -> desired velocity; only powered, position-controlled motors (gain 1)
    # integrate and remember their error, the others keep theirs (Webots)
    following_now = has_actuators and any_following
    if not has_actuators:
        error = pid_target - x
    else:  # the controller sees encoder ticks; a firmware follows its profile
        reference = pid_target
        if any_firmware:
            reference, setpoint, setpoint_velocity, starting = _reference(
                dt, pid_target, x, v, speed_limit, any_goal_ticks, goal_ticks,
                all_goal_ticks, safe_tick, following, all_following, setpoint,
                setpoint_velocity, any_starting, starting, profile_step,
                neg_profile_step, profile_step_dt)
        seen = x
        if any_encoder:
            seen = whole_ticks(x, safe_tick, encoder, all_encoder)
        error = reference - seen
        if any_deadband:  # errors within the deadband drive nothing
            error = select(np.abs(error) <= deadband_edge, 0.0, error)
    error *= pid_gain
    integral += error * dt
    change = error - previous
    duty = error  # read only where has_duty
    if following_now:  # the firmware's PWM duty in [-1, 1]
        duty = kp * error
        duty += ki * integral
        duty += kd * (change / dt)
        duty = lower(duty, 1.0)
        duty = raise_(duty, -1.0)
    u = control_p * error
    u += control_i * integral
    change *= d_over_dt
    u += change
    previous *= not_pid_gain
    previous += error
    if any_feedforward:  # trapezoidal moves: the profile's velocity
        u += feedforward
    # saturate at the speed limit; fmin/fmax also map an undefined output (inf - inf
    # from absurd gains) to the limit, so the state stays finite
    v_des = fmin_(u, speed_limit)
    v_des = fmax_(v_des, -speed_limit)
    v_des *= position_gain
    v_des += velocity_setpoint  # velocity control: the signed set-point
    if any_acceleration_limit:
        ramped = v_des - command_velocity
        ramped = lower(ramped, acceleration_step)
        ramped = raise_(ramped, -acceleration_step)
        ramped += command_velocity
        v_des = select(acceleration_limited, ramped, v_des)
    v_cmd = v_des
    v_cmd *= active_gain  # off motors hold zero velocity (friction only)

    # the joint: the motor between the body's p and mass
    force = v_cmd * mass
    force -= p
    wanted = force
    if not has_actuators:  # (wanted is not read without actuators)
        force = lower(force, force_limit)
        force = raise_(force, -force_limit)
        v_new = p  # (the body's, not read after)
        v_new += force
        v_new /= mass
        return (v_new, force, wanted, duty, v_cmd, following_now,
                integral, previous, setpoint, setpoint_velocity, gap, starting)
    # envelope, firmware drive, backlash, friction
    force = _drive(wanted, v_cmd, duty, following_now, p, mass, force_limit, following,
                   all_following, any_friction, friction, any_envelope, active_slope,
                   active_drive, firmware_drive, cap, neg_cap)
    if any_backlash:  # the force that reaches the output: none while the gear crosses
        free = v_cmd  # how fast the (massless) gear side turns when nothing holds it
        if following_now:
            free = duty * firmware_drive
            free /= safe_slope
            if not all_following:
                free = select(following, free, v_cmd)
        crossing = free - p / mass
        crossing *= dt
        crossing += gap
        open_ = np.abs(crossing) < half_gap
        open_ &= active
        closed = np.maximum(crossing, neg_half_gap)
        closed = lower(closed, half_gap)
        gap = select(open_, crossing, closed)
        force = select(open_, 0.0, force)
    impulse = p + force
    if not any_friction:
        return (impulse / mass, force, wanted, duty, v_cmd, following_now,
                integral, previous, setpoint, setpoint_velocity, gap, starting)
    budget = friction
    if any_load_dependent:
        # the gear's load-dependent friction (Rhoban/bam's M5, actuator.py): the external
        # load is the step's p less the inertia's momentum and the motor's own torque
        # (set_torque's, under force control); the motor's torque is the drive's force
        # of powered motors (an off motor's is its static friction) and set_torque's
        external = p - inertia_dt * v
        motor = force * active_gain
        if any_force_control:
            external -= applied_force
            motor += applied_force
        near_rest = fade_(v, stribeck_velocity, stribeck_alpha)
        budget = np.abs(external * k_ext - motor * k_motor)
        budget += near_rest * (base_s + np.abs(external * k_ext_s - motor * k_motor_s))
        budget += friction
    # stuck where the impulse is within the friction
    moving = np.abs(impulse) > budget
    v_new = select(moving, (impulse - np.sign(impulse) * budget) / mass, 0.0)
    return (v_new, force, wanted, duty, v_cmd, following_now,
            integral, previous, setpoint, setpoint_velocity, gap, starting)


def _reference(dt: float, target: Any, x: Any, v: Any, speed: Any, any_goal_ticks: bool,
               goal_ticks: Any, all_goal_ticks: bool, safe_tick: Any, following: Any,
               every: bool, setpoint: Any, setpoint_velocity: Any, any_starting: bool,
               starting: Any, step: Any, neg_step: Any, step_dt: Any) -> tuple:
    """The firmware's profile: the set-point one step on towards ``target`` (in whole
    ticks, as the goal register holds it) within the speed limit and the acceleration,
    for the motors ``following`` it (all: ``every``); the others' set-points rest on
    the present state (a new goal starts from it). ``(reference, setpoint,
    setpoint_velocity, starting)``: the position the PID compares with, the new state."""
    if any_goal_ticks:
        target = whole_ticks(target, safe_tick, goal_ticks, all_goal_ticks)
    s = setpoint
    w = setpoint_velocity
    if not every:  # the others rest on their state
        s = select(following, s, x)
        w = select(following, w, v)
    if any_starting:  # a new goal: the profile from where the motor is now
        s = select(starting, x, s)
        w = select(starting, v, w)
        starting = starting & False
    d = target - s
    # the fastest speed from which steps of ``step`` less each still stop on the
    # target (the discrete trapezoid: its ramps are exact to the step):
    # step * (sqrt(1/4 + z) - 1/2) with z = 2|d| / (step * dt), written without the
    # cancellation of an unlimited acceleration (z -> 0)
    distance = np.abs(d)
    distance *= 2.0
    root = distance / step_dt
    root += 0.25
    root = np.sqrt(root)
    root += 0.5
    root *= dt
    stopping = distance / root
    stopping = lower(stopping, speed)
    stopping *= np.sign(d)
    stopping -= w  # the change the profile wants, within one step's
    stopping = lower(stopping, step)
    stopping = raise_(stopping, neg_step)
    w = w + stopping
    s_new = w * dt
    s_new += s
    arrived = target - s_new
    arrived *= d
    done = arrived <= 0.0
    s_new = select(done, target, s_new)
    w = select(done, 0.0, w)
    if every:
        return s_new, s_new, w, starting
    s_new = select(following, s_new, x)
    return (select(following, s_new, target), s_new, select(following, w, v), starting)


def _drive(wanted: Any, v_cmd: Any, duty: Any, has_duty: bool, p: Any, mass: Any,
           limit: Any, following: Any, all_following: bool, any_friction: bool,
           friction: Any, any_envelope: bool, active_slope: Any, active_drive: Any,
           firmware_drive: Any, cap: Any, neg_cap: Any) -> Any:
    """The motor force of the step: Webots' ``wanted`` force (the one that reaches the
    commanded velocity ``v_cmd``; the firmware's ``duty`` instead where given), within
    the envelope at the new speed and +-``limit`` (with an envelope: the stall current
    and max_torque, ``cap``). The new speed is ``(p + force) / mass``."""
    every = has_duty and all_following and any_envelope  # the duty's force everywhere
    force = wanted
    if any_friction and not every:  # Webots' law reaches its velocity through
        force = force + np.sign(v_cmd) * friction  # the friction too
    if not any_envelope:
        force = np.minimum(force, limit)
        return raise_(force, -limit)
    slope_p = active_slope * p
    denominator = mass + active_slope
    full = active_drive * mass
    high_line = full - slope_p  # full drive ahead
    high_line /= denominator
    low_line = -full  # full drive back
    low_line -= slope_p
    low_line /= denominator
    if has_duty:
        voltage = duty * firmware_drive
        voltage *= mass
        voltage -= slope_p
        voltage /= denominator
        force = voltage if every else select(following, voltage, force)
    # the stall current (and max_torque) both ways, where the lines allow it: a motor
    # driven beyond its free speed brakes with its full-drive line anyway
    high = np.maximum(cap, low_line)
    high = lower(high, high_line)
    low = np.maximum(neg_cap, low_line)
    low = lower(low, high_line)
    force = np.maximum(force, low)
    return lower(force, high)


def servo_loads(p: np.ndarray, any_force_control: bool, applied_force: np.ndarray,
                any_spring: bool, spring_constant: np.ndarray, x: np.ndarray) -> None:
    """Add the servo's own loads to a step's momentum ``p`` (in place), whatever the
    body: set_torque's force and the spring (explicit here, implicit in the mass)."""
    if any_force_control:
        p += applied_force
    if any_spring:
        p -= spring_constant * x


def account(force: np.ndarray, active_gain: np.ndarray, energy: np.ndarray,
            energy_per_force: np.ndarray) -> None:
    """What the bank keeps of a step's motor force (in place): an off motor's is its
    friction, not motor force (``active_gain`` 0), and the energy each consumed."""
    force *= active_gain
    energy += np.abs(force) * energy_per_force


# ---------------------------------------------------------------- the compiled runner's

def _select_one(c: bool, a: float, b: float) -> float:
    return a if c else b


def _lower_one(a: float, b: float) -> float:
    return np.minimum(a, b)


def _raise_one(a: float, b: float) -> float:
    return np.maximum(a, b)


def _fmin_one(a: float, b: float) -> float:
    return np.fmin(a, b)


def _fmax_one(a: float, b: float) -> float:
    return np.fmax(a, b)


def _rint_one(a: float) -> float:
    return np.rint(a)


def _fade_one(v: float, velocity: float, alpha: float) -> float:
    return np.exp(-(np.abs(v) / velocity) ** alpha)


#: servo_step's per-motor arguments as the compiled runner takes them: rows of four
#: tables, in these orders (the bank's numbers and masks, its actuators'). The bank and
#: its actuators keep these arrays as the tables' rows, so a table is always current and
#: goes to numba as one argument, not a dozen (numba takes an array in some 60 ns).
BANK_FLOATS = ("pid_target", "speed_limit", "pid_gain", "not_pid_gain", "position_gain",
               "active_gain", "integral", "previous", "control_p", "control_i",
               "d_over_dt", "feedforward", "velocity_setpoint", "acceleration_step",
               "force_limit", "applied_force")
BANK_MASKS = ("active", "acceleration_limited")
ACTUATOR_FLOATS = ("safe_tick", "setpoint", "setpoint_velocity", "profile_step",
                   "neg_profile_step", "profile_step_dt", "deadband_edge", "kp", "ki",
                   "kd", "friction", "active_slope", "active_drive", "firmware_drive",
                   "cap", "neg_cap", "safe_slope", "half_gap", "neg_half_gap", "gap",
                   "k_ext", "k_motor", "k_ext_s", "k_motor_s", "base_s",
                   "stribeck_velocity", "stribeck_alpha")
ACTUATOR_MASKS = ("goal_ticks", "following", "starting", "encoder")
#: servo_step's flags of the actuators, as the compiled runner takes them: one array
ACTUATOR_FLAGS = ("has_actuators", "any_firmware", "any_goal_ticks", "all_goal_ticks",
                  "any_following", "all_following", "any_starting", "any_encoder",
                  "all_encoder", "any_deadband", "any_friction", "any_envelope",
                  "any_backlash", "any_load_dependent")
#: the compiled runner's results: rows of one array (then ``has_duty``)
RESULTS = ("v_new", "force", "wanted", "duty", "v_cmd")


def _each_motor(
        dt, x, v, p, mass, inertia_dt, command_velocity, bank_floats, bank_masks,
        any_feedforward, any_acceleration_limit, any_force_control, actuator_flags,
        actuator_floats, actuator_masks):
    """:func:`servo_step` (compiled for one motor) on each motor in turn: its per-step
    arguments and the bank's flags, the actuators' flags as one array (ACTUATOR_FLAGS),
    its per-motor ones as the rows of four tables (BANK_FLOATS, BANK_MASKS,
    ACTUATOR_FLOATS, ACTUATOR_MASKS), the state rows updated in place; ``(results,
    has_duty)``, servo_step's first five results as the rows of one array (RESULTS)."""
    (pid_target, speed_limit, pid_gain, not_pid_gain, position_gain, active_gain,
     integral, previous, control_p, control_i, d_over_dt, feedforward, velocity_setpoint,
     acceleration_step, force_limit, applied_force) = bank_floats
    active, acceleration_limited = bank_masks
    (safe_tick, setpoint, setpoint_velocity, profile_step, neg_profile_step,
     profile_step_dt, deadband_edge, kp, ki, kd, friction, active_slope, active_drive,
     firmware_drive, cap, neg_cap, safe_slope, half_gap, neg_half_gap, gap, k_ext,
     k_motor, k_ext_s, k_motor_s, base_s, stribeck_velocity,
     stribeck_alpha) = actuator_floats
    goal_ticks, following, starting, encoder = actuator_masks
    (has_actuators, any_firmware, any_goal_ticks, all_goal_ticks, any_following,
     all_following, any_starting, any_encoder, all_encoder, any_deadband, any_friction,
     any_envelope, any_backlash, any_load_dependent) = actuator_flags
    n = x.shape[0]
    results = np.empty((5, n))
    v_new, force, wanted, duty, v_cmd = results
    has_duty = has_actuators and any_following
    for i in range(n):
        # a bank without actuators passes placeholders of one motor (never read)
        a = i if has_actuators else 0
        (v_new[i], force[i], wanted[i], duty[i], v_cmd[i], has_duty, integral[i],
         previous[i], new_setpoint, new_setpoint_velocity, new_gap,
         new_starting) = servo_step(
            dt, x[i], v[i], p[i], mass[i], inertia_dt[i], pid_target[i], speed_limit[i],
            pid_gain[i], not_pid_gain[i], position_gain[i], active_gain[i], active[i],
            integral[i], previous[i], control_p[i], control_i[i], d_over_dt[i],
            any_feedforward, feedforward[i], velocity_setpoint[i],
            any_acceleration_limit, acceleration_limited[i], acceleration_step[i],
            command_velocity[i], force_limit[i], any_force_control, applied_force[i],
            has_actuators, any_firmware, any_goal_ticks, goal_ticks[a], all_goal_ticks,
            safe_tick[a], following[a], any_following, all_following, setpoint[a],
            setpoint_velocity[a], any_starting, starting[a], profile_step[a],
            neg_profile_step[a], profile_step_dt[a], any_encoder, encoder[a],
            all_encoder, any_deadband, deadband_edge[a], kp[a], ki[a], kd[a],
            any_friction, friction[a], any_envelope, active_slope[a], active_drive[a],
            firmware_drive[a], cap[a], neg_cap[a], safe_slope[a], any_backlash,
            half_gap[a], neg_half_gap[a], gap[a], any_load_dependent, k_ext[a],
            k_motor[a], k_ext_s[a], k_motor_s[a], base_s[a], stribeck_velocity[a],
            stribeck_alpha[a])
        if has_actuators:
            setpoint[i], setpoint_velocity[i] = new_setpoint, new_setpoint_velocity
            gap[i], starting[i] = new_gap, new_starting
    return results, has_duty


_COMPILED: Callable[..., Any] | None = None
_COMPILED_ACCOUNT: Callable[..., Any] | None = None


def numba_jit() -> Callable[[Callable[..., Any]], Callable[..., Any]] | None:
    """numba's ``njit`` as this package compiles with it (cached on disk, without the
    GIL, a division by zero giving inf or nan as numpy's does), or None where numba is
    not installed or ``SERVO_SIM_JIT=0`` says not to use it."""
    if os.environ.get("SERVO_SIM_JIT", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True, error_model="numpy")


def compiled() -> Callable[..., Any] | None:
    """The compiled runner: :func:`_each_motor` over :func:`servo_step` compiled by numba
    for one motor's numbers (its cache kept beside this module, or in numba's per-user
    cache where that is read-only), or None where numba is not installed. The numpy
    runner's functions stay as they are: the compiled ones are the same code in a
    namespace of their own."""
    global _COMPILED, _COMPILED_ACCOUNT
    jit = numba_jit()
    if jit is None:
        return None
    if _COMPILED is None:
        namespace = dict(globals())
        for name, one in (("select", _select_one), ("lower", _lower_one),
                          ("raise_", _raise_one), ("fmin_", _fmin_one),
                          ("fmax_", _fmax_one), ("rint_", _rint_one),
                          ("fade_", _fade_one)):
            namespace[name] = jit(one)
        for name in ("whole_ticks", "_reference", "_drive", "servo_step"):
            namespace[name] = jit(clone(globals()[name], namespace))
        _COMPILED = jit(clone(_each_motor, namespace))
        _COMPILED_ACCOUNT = jit(account)
    return _COMPILED


def compiled_account() -> Callable[..., Any] | None:
    """:func:`account` compiled by numba (with :func:`compiled`), or None without it."""
    return _COMPILED_ACCOUNT if compiled() is not None else None


def clone(function: Callable[..., Any], namespace: dict[str, Any], tag: str = ""
          ) -> Callable[..., Any]:
    """``function``'s code with ``namespace`` as its globals. ``tag`` goes into its
    qualified name, which names numba's cache of it: numba checks that cache against the
    function's own file only, so a function compiled with code of other files (their
    compiled functions in ``namespace``) takes a tag of their sources."""
    copy = types.FunctionType(function.__code__, namespace, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = function.__qualname__ + (f"_{tag}" if tag else "")
    copy.__module__ = function.__module__
    return copy
