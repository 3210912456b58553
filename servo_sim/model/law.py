"""The actuator half of a dynamic step, written once: :func:`servo_step`.

The bank (``bank.py``) asks the body for each joint's momentum ``p`` and mass over the
step, then runs the law on its tables (``tables.py``: the motors' parameters, the
commands, the state, masks and flags, each one array of named rows; ``actuator.py``:
what each part means and where it comes from): PID or firmware law on encoder ticks,
dead zone, saturation and acceleration limit, the torque-speed envelope, backlash, the
gear's friction. It gives the velocity each joint reaches and the motor's force, and
the body integrates the velocity (``body.py``).

:func:`servo_step` is written element by element, in operations that mean the same on
a numpy array (every motor at once) and on one motor's numbers, and reads the tables by
row (``parameters[KP]``). Two runners take it, with the same arguments:

* :func:`step_motors` (numpy's, no extra needed): the whole tables, so a row is every
  motor's (it steps a copy of :func:`servo_step` made at import that reads a row as
  ``table[ROW]``, not ``table[ROW, i]``: :class:`_WholeRows`, the same arrays);
* :func:`compiled` (where numba is installed): numba compiles :func:`servo_step` for one
  motor's numbers and :func:`_each_motor` hands it each motor's column of the tables in
  turn, in machine code, so a row is that motor's number and a write to the state
  writes through. numpy's cost is per call, not per motor, and on a few motors it is
  most of a step. The tests step both and compare them to the bit.

The few operations that differ between an array and a number (in place on an array,
plain on a number: ``at_most``, ``at_least``, ``fmin_``, ``fmax_``, ``rint_``, ``select``;
``fade_``, whose pow and exp numpy computes otherwise than the C library) are names
this module's namespace gives each runner. A part a flag turns off is not read.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .tables import (
    ACCELERATION_LIMITED,
    ACCELERATION_STEP,
    ACTIVE,
    ACTIVE_DRIVE,
    ACTIVE_GAIN,
    ACTIVE_SLOPE,
    ALL_ENCODER,
    ALL_FOLLOWING,
    ALL_GOAL_TICKS,
    ANY_ACCELERATION_LIMIT,
    ANY_BACKLASH,
    ANY_DEADBAND,
    ANY_ENCODER,
    ANY_ENVELOPE,
    ANY_FEEDFORWARD,
    ANY_FIRMWARE,
    ANY_FOLLOWING,
    ANY_FORCE_CONTROL,
    ANY_FRICTION,
    ANY_GOAL_TICKS,
    ANY_LOAD_DEPENDENT,
    ANY_SPRING,
    ANY_STARTING,
    APPLIED_FORCE,
    BASE_S,
    CAP,
    COMMAND_VELOCITY,
    CONTROL_I,
    CONTROL_P,
    D_OVER_DT,
    DEADBAND_EDGE,
    DT,
    DUTY,
    ENCODER,
    FEEDFORWARD,
    FIRMWARE_DRIVE,
    FOLLOWING,
    FORCE,
    FORCE_LIMIT,
    FRICTION,
    GAP,
    GOAL_TICKS,
    HALF_GAP,
    HAS_ACTUATORS,
    INTEGRAL,
    K_EXT,
    K_EXT_S,
    K_MOTOR,
    K_MOTOR_S,
    KD,
    KI,
    KP,
    NEG_CAP,
    NEG_HALF_GAP,
    NEG_PROFILE_STEP,
    NOT_PID_GAIN,
    PID_GAIN,
    PID_TARGET,
    POSITION_GAIN,
    PREVIOUS,
    PROFILE_STEP,
    PROFILE_STEP_DT,
    RESULT_ROWS,
    SAFE_SLOPE,
    SAFE_TICK,
    SETPOINT,
    SETPOINT_VELOCITY,
    SPEED_LIMIT,
    STARTING,
    STRIBECK_ALPHA,
    STRIBECK_VELOCITY,
    V_NEW,
    VELOCITY_SETPOINT,
    WANTED,
)

# ---------------------------------------------------------------- the numpy runner's

#: ``select(c, a, b)``: ``a`` where ``c``, else ``b``
select = np.where


# The bounds below are comparisons, in both runners, not numpy's minimum/maximum/fmin/
# fmax: where +0 and -0 meet those return either (numpy's SIMD loops the second operand,
# numba's scalar code the first), and the runners must agree to the bit, zero's sign too.


def smaller(a: np.ndarray, b: Any) -> np.ndarray:
    """The smaller of ``a`` and ``b``, a new array (``b`` where it is below ``a``; a NaN
    in ``a`` stays)."""
    return np.where(np.less(b, a), b, a)


def larger(a: np.ndarray, b: Any) -> np.ndarray:
    """The larger of ``a`` and ``b``, a new array (``b`` where it is above ``a``; a NaN
    in ``a`` stays)."""
    return np.where(np.greater(b, a), b, a)


def at_most(a: np.ndarray, b: Any) -> np.ndarray:
    """``a`` lowered to ``b`` where ``b`` is below it (in place on an array; a NaN in
    ``a`` stays)."""
    np.copyto(a, b, where=np.less(b, a))
    return a


def at_least(a: np.ndarray, b: Any) -> np.ndarray:
    """``a`` raised to ``b`` where ``b`` is above it (in place on an array; a NaN in
    ``a`` stays)."""
    np.copyto(a, b, where=np.greater(b, a))
    return a


def fmin_(a: np.ndarray, b: Any) -> np.ndarray:
    """``at_most``, a NaN in ``a`` taking ``b``. (Where ``b < a or isnan(a)`` is where
    ``fmin(a, b) != a``: a tie of +0 and -0 compares equal whichever fmin returns; two
    calls where three would do the same.)"""
    np.copyto(a, b, where=np.not_equal(np.fmin(a, b), a))
    return a


def fmax_(a: np.ndarray, b: Any) -> np.ndarray:
    """``at_least``, a NaN in ``a`` taking ``b`` (where ``fmax(a, b) != a``, as
    :func:`fmin_`)."""
    np.copyto(a, b, where=np.not_equal(np.fmax(a, b), a))
    return a


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


#: _fade_each compiled by numba, once numba_jit has imported numba in this process
_FADE_COMPILED: Callable[..., np.ndarray] | None = None
#: numba, once numba_jit has imported it (a bank may be importing it in a thread)
_NUMBA: Any = None


def fade_(v: np.ndarray, velocity: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The Stribeck fade ``exp(-(|v| / velocity) ** alpha)`` motor by motor with the C
    library's pow and exp, as the compiled runner computes it: numpy's own (SIMD, on
    AVX-512) differ from them in the last bit for about one number in twenty, and the
    two runners must agree to the bit. Compiled by numba where :func:`numba_jit` has imported
    it already (a compiled runner, MuJoCo's body: some 0.1 us a motor), else with
    Python's math (some 0.14 us a motor): the same bits either way, and a process that
    steps numpy's runner alone (a device emulator) does not wait for numba's import."""
    global _FADE_COMPILED
    if _FADE_COMPILED is None:
        if _NUMBA is None:
            return _fade_math(v, velocity, alpha)
        _FADE_COMPILED = _NUMBA.njit(cache=True, nogil=True, error_model="numpy")(_fade_each)
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


def servo_step(position: Any, velocity: Any, momentum: Any, joint_mass: Any,
               joint_inertia_dt: Any, parameters: Any, commands: Any, state: Any,
               masks: Any, flags: Any, out: Any, motors: Any) -> None:
    """One step of the ``motors`` in turn, each ``i`` a slice (numpy's runner: every
    motor at once) or an index (the compiled one: one motor, the tables' entries
    numbers), on the tables of ``tables.py``: the joints' ``position`` and ``velocity``,
    the body's ``momentum``, ``joint_mass`` and ``joint_inertia_dt`` (arrays over the
    motors). The results into the rows of ``out`` (``V_NEW``: the velocity each joint
    reaches before the body's stops, ``FORCE``: the motor force before an off motor's is
    zeroed, ``WANTED`` and ``DUTY``: Webots' wanted force and the firmware's duty, for a
    force at rest), the new state into ``state`` and the ``STARTING`` mask (the
    ``ANY_STARTING`` flag is the runner's to clear)."""
    for i in motors:
        x, v, p, mass = position[i], velocity[i], momentum[i], joint_mass[i]
        dt = parameters[DT, i]
        # PID -> desired velocity; only powered, position-controlled motors (gain 1)
        # integrate and remember their error, the others keep theirs (Webots)
        has_actuators = flags[HAS_ACTUATORS]
        following_now = has_actuators and flags[ANY_FOLLOWING]
        if not has_actuators:
            error = commands[PID_TARGET, i] - x
        else:  # the controller sees encoder ticks; a firmware follows its profile
            reference = commands[PID_TARGET, i]
            if flags[ANY_FIRMWARE]:
                reference = _reference(x, v, parameters, commands, state, masks, flags, i)
            seen = x
            if flags[ANY_ENCODER]:
                seen = whole_ticks(x, parameters[SAFE_TICK, i], masks[ENCODER, i],
                                   flags[ALL_ENCODER])
            error = reference - seen
            if flags[ANY_DEADBAND]:  # errors within the deadband drive nothing
                error = select(np.abs(error) <= parameters[DEADBAND_EDGE, i], 0.0, error)
        error *= commands[PID_GAIN, i]
        state[INTEGRAL, i] += error * dt
        integral = state[INTEGRAL, i]
        previous = state[PREVIOUS, i]
        change = error - previous
        duty = error  # read only where following_now
        if following_now:  # the firmware's PWM duty in [-1, 1]
            duty = parameters[KP, i] * error
            duty += parameters[KI, i] * integral
            duty += parameters[KD, i] * (change / dt)
            duty = at_most(duty, 1.0)
            duty = at_least(duty, -1.0)
        u = commands[CONTROL_P, i] * error
        u += commands[CONTROL_I, i] * integral
        change *= commands[D_OVER_DT, i]
        u += change
        previous *= commands[NOT_PID_GAIN, i]
        previous += error
        state[PREVIOUS, i] = previous
        if flags[ANY_FEEDFORWARD]:  # trapezoidal moves: the profile's velocity
            u += commands[FEEDFORWARD, i]
        # saturate at the speed limit; fmin/fmax also map an undefined output (inf - inf
        # from absurd gains) to the limit, so the state stays finite
        speed_limit = commands[SPEED_LIMIT, i]
        v_des = fmin_(u, speed_limit)
        v_des = fmax_(v_des, -speed_limit)
        v_des *= commands[POSITION_GAIN, i]
        v_des += commands[VELOCITY_SETPOINT, i]  # velocity control: the signed set-point
        if flags[ANY_ACCELERATION_LIMIT]:
            command_velocity = state[COMMAND_VELOCITY, i]
            acceleration_step = commands[ACCELERATION_STEP, i]
            ramped = v_des - command_velocity
            ramped = at_most(ramped, acceleration_step)
            ramped = at_least(ramped, -acceleration_step)
            ramped += command_velocity
            v_des = select(masks[ACCELERATION_LIMITED, i], ramped, v_des)
        v_cmd = v_des
        v_cmd *= commands[ACTIVE_GAIN, i]  # off motors hold zero velocity (friction only)
        state[COMMAND_VELOCITY, i] = v_cmd

        # the joint: the motor between the body's p and mass
        wanted = v_cmd * mass
        wanted -= p
        out[WANTED, i] = wanted
        out[DUTY, i] = duty
        if not has_actuators:
            force_limit = commands[FORCE_LIMIT, i]
            force = at_most(wanted, force_limit)
            force = at_least(force, -force_limit)
            out[FORCE, i] = force
            v_new = p + force
            v_new /= mass
            out[V_NEW, i] = v_new
            continue
        # envelope, firmware drive, backlash, friction
        force = _drive(wanted, v_cmd, duty, following_now, p, mass, parameters, commands,
                       masks, flags, i)
        if flags[ANY_BACKLASH]:  # the force that reaches the output: none while the gear crosses
            free = v_cmd  # how fast the (massless) gear side turns when nothing holds it
            if following_now:
                free = duty * parameters[FIRMWARE_DRIVE, i]
                free /= parameters[SAFE_SLOPE, i]
                if not flags[ALL_FOLLOWING]:
                    free = select(masks[FOLLOWING, i], free, v_cmd)
            half_gap = parameters[HALF_GAP, i]
            crossing = free - p / mass
            crossing *= dt
            crossing += state[GAP, i]
            open_ = np.abs(crossing) < half_gap
            open_ &= masks[ACTIVE, i]
            closed = larger(crossing, parameters[NEG_HALF_GAP, i])
            closed = at_most(closed, half_gap)
            state[GAP, i] = select(open_, crossing, closed)
            force = select(open_, 0.0, force)
        out[FORCE, i] = force
        impulse = p + force
        if not flags[ANY_FRICTION]:
            out[V_NEW, i] = impulse / mass
            continue
        friction = parameters[FRICTION, i]
        budget = friction
        if flags[ANY_LOAD_DEPENDENT]:
            # the gear's load-dependent friction (Rhoban/bam's M5, actuator.py): the external
            # load is the step's p less the inertia's momentum and the motor's own torque
            # (set_torque's, under force control); the motor's torque is the drive's force
            # of powered motors (an off motor's is its static friction) and set_torque's
            external = p - joint_inertia_dt[i] * v
            motor = force * commands[ACTIVE_GAIN, i]
            if flags[ANY_FORCE_CONTROL]:
                applied_force = commands[APPLIED_FORCE, i]
                external -= applied_force
                motor += applied_force
            near_rest = fade_(v, parameters[STRIBECK_VELOCITY, i], parameters[STRIBECK_ALPHA, i])
            budget = np.abs(external * parameters[K_EXT, i] - motor * parameters[K_MOTOR, i])
            budget += near_rest * (parameters[BASE_S, i] + np.abs(
                external * parameters[K_EXT_S, i] - motor * parameters[K_MOTOR_S, i]))
            budget += friction
        # stuck where the impulse is within the friction
        moving = np.abs(impulse) > budget
        out[V_NEW, i] = select(moving, (impulse - np.sign(impulse) * budget) / mass, 0.0)


def has_duty(flags: np.ndarray) -> bool:
    """Whether a step's ``DUTY`` result is the firmware's (some motor follows a
    firmware's profile), not only a placeholder."""
    return bool(flags[HAS_ACTUATORS] and flags[ANY_FOLLOWING])


def _reference(x: Any, v: Any, parameters: Any, commands: Any, state: Any, masks: Any,
               flags: Any, i: Any) -> Any:
    """The firmware's profile: the set-point one step on towards the target (in whole
    ticks, as the goal register holds it) within the speed limit and the acceleration,
    for the motors following it (``FOLLOWING``); the others' set-points rest on the
    present state (a new goal starts from it). The position the PID compares with; the
    set-point and its velocity into ``state``, ``STARTING`` cleared."""
    dt = parameters[DT, i]
    target = commands[PID_TARGET, i]
    following = masks[FOLLOWING, i]
    every = flags[ALL_FOLLOWING]
    if flags[ANY_GOAL_TICKS]:
        target = whole_ticks(target, parameters[SAFE_TICK, i], masks[GOAL_TICKS, i],
                             flags[ALL_GOAL_TICKS])
    s = state[SETPOINT, i]
    w = state[SETPOINT_VELOCITY, i]
    if not every:  # the others rest on their state
        s = select(following, s, x)
        w = select(following, w, v)
    if flags[ANY_STARTING]:  # a new goal: the profile from where the motor is now
        starting = masks[STARTING, i]
        s = select(starting, x, s)
        w = select(starting, v, w)
        masks[STARTING, i] = False
    step = commands[PROFILE_STEP, i]
    d = target - s
    # the fastest speed from which steps of ``step`` less each still stop on the
    # target (the discrete trapezoid: its ramps are exact to the step):
    # step * (sqrt(1/4 + z) - 1/2) with z = 2|d| / (step * dt), written without the
    # cancellation of an unlimited acceleration (z -> 0)
    distance = np.abs(d)
    distance *= 2.0
    root = distance / commands[PROFILE_STEP_DT, i]
    root += 0.25
    root = np.sqrt(root)
    root += 0.5
    root *= dt
    stopping = distance / root
    stopping = at_most(stopping, commands[SPEED_LIMIT, i])
    stopping *= np.sign(d)
    stopping -= w  # the change the profile wants, within one step's
    stopping = at_most(stopping, step)
    stopping = at_least(stopping, commands[NEG_PROFILE_STEP, i])
    w = w + stopping
    s_new = w * dt
    s_new += s
    arrived = target - s_new
    arrived *= d
    done = arrived <= 0.0
    s_new = select(done, target, s_new)
    w = select(done, 0.0, w)
    if every:
        state[SETPOINT, i] = s_new
        state[SETPOINT_VELOCITY, i] = w
        return s_new
    s_new = select(following, s_new, x)
    state[SETPOINT, i] = s_new
    state[SETPOINT_VELOCITY, i] = select(following, w, v)
    return select(following, s_new, target)


def _drive(wanted: Any, v_cmd: Any, duty: Any, has_duty: bool, p: Any, mass: Any,
           parameters: Any, commands: Any, masks: Any, flags: Any, i: Any) -> Any:
    """The motor force of the step: Webots' ``wanted`` force (the one that reaches the
    commanded velocity ``v_cmd``; the firmware's ``duty`` instead where given), within
    the envelope at the new speed and +-the force limit (with an envelope: the stall
    current and max_torque, ``CAP``). The new speed is ``(p + force) / mass``."""
    any_envelope = flags[ANY_ENVELOPE]
    every = has_duty and flags[ALL_FOLLOWING] and any_envelope  # the duty's force everywhere
    force = wanted
    if flags[ANY_FRICTION] and not every:  # Webots' law reaches its velocity through
        force = force + np.sign(v_cmd) * parameters[FRICTION, i]  # the friction too
    if not any_envelope:
        limit = commands[FORCE_LIMIT, i]
        force = smaller(force, limit)
        return at_least(force, -limit)
    active_slope = commands[ACTIVE_SLOPE, i]
    slope_p = active_slope * p
    denominator = mass + active_slope
    full = commands[ACTIVE_DRIVE, i] * mass
    high_line = full - slope_p  # full drive ahead
    high_line /= denominator
    low_line = -full  # full drive back
    low_line -= slope_p
    low_line /= denominator
    if has_duty:
        voltage = duty * parameters[FIRMWARE_DRIVE, i]
        voltage *= mass
        voltage -= slope_p
        voltage /= denominator
        force = voltage if every else select(masks[FOLLOWING, i], voltage, force)
    # the stall current (and max_torque) both ways, where the lines allow it: a motor
    # driven beyond its free speed brakes with its full-drive line anyway
    high = larger(commands[CAP, i], low_line)
    high = at_most(high, high_line)
    low = larger(commands[NEG_CAP, i], low_line)
    low = at_most(low, high_line)
    force = larger(force, low)
    return at_most(force, high)


#: servo_step's motors: every one at once
_EVERY = (slice(None),)
#: the functions of the law that index the tables by motor, and their names on whole rows
_INDEXING = {"servo_step": "_servo_step_on_rows", "_reference": "_reference_on_rows",
             "_drive": "_drive_on_rows"}


class _WholeRows(ast.NodeTransformer):
    """numpy's runner's copy of the law: ``table[ROW, i]`` read as ``table[ROW]`` and
    ``array[i]`` as ``array`` (``i`` is every motor: the same rows and arrays, without
    a view made per read), the law's functions by their copies' names."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        index = node.slice
        if isinstance(index, ast.Name) and index.id == "i":
            return node.value
        if isinstance(index, ast.Tuple) and len(index.elts) == 2 \
                and isinstance(index.elts[1], ast.Name) and index.elts[1].id == "i":
            node.slice = index.elts[0]
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = _INDEXING.get(node.id, node.id)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.name = _INDEXING.get(node.name, node.name)
        return node


def _on_whole_rows() -> Callable[..., None]:
    """:func:`servo_step` as numpy's runner calls it, every motor at once: its code (and
    ``_reference``'s and ``_drive``'s) rewritten by :class:`_WholeRows` into this module
    (a row read by its number alone costs about 60 ns less than by ``[ROW, :]``, some 40
    reads a step); the same operations on the same arrays, so the same bits. Where the
    source is not there to read, :func:`servo_step` itself."""
    try:
        sources = [inspect.getsource(globals()[name]) for name in _INDEXING]
    except (OSError, TypeError):
        return servo_step
    tree = ast.fix_missing_locations(_WholeRows().visit(ast.parse("\n".join(sources))))
    exec(compile(tree, __file__, "exec"), globals())  # this module's own code, rewritten
    return globals()[_INDEXING["servo_step"]]


_servo_step_every_motor = _on_whole_rows()


def step_motors(x: np.ndarray, v: np.ndarray, p: np.ndarray, mass: np.ndarray,
                inertia_dt: np.ndarray, parameters: np.ndarray, commands: np.ndarray,
                state: np.ndarray, masks: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """numpy's runner: :func:`servo_step` on the whole tables (every motor at once); the
    results' table (``V_NEW`` ...)."""
    out = np.empty((RESULT_ROWS, x.shape[0]))
    _servo_step_every_motor(x, v, p, mass, inertia_dt, parameters, commands, state, masks,
                            flags, out, _EVERY)
    flags[ANY_STARTING] = False  # the step started their profiles
    return out


def servo_loads(p: np.ndarray, any_force_control: bool, applied_force: np.ndarray,
                any_spring: bool, spring_constant: np.ndarray, x: np.ndarray) -> None:
    """Add the servo's own loads to a step's momentum ``p`` (in place), whatever the
    body: set_torque's force and the spring (explicit here, implicit in the mass)."""
    if any_force_control:
        p += applied_force
    if any_spring:
        p -= spring_constant * x


def add_servo_loads(p: np.ndarray, data: Any) -> None:
    """:func:`servo_loads` from the motors' tables ``data`` (``tables.MotorData``), as
    every body adds them; nothing called where no motor has either (most steps)."""
    flags = data.flags.table  # (the table's entries: quicker than the named flags)
    force_control, spring = flags[ANY_FORCE_CONTROL], flags[ANY_SPRING]
    if force_control or spring:
        servo_loads(p, bool(force_control), data.commands.applied_force, bool(spring),
                    data.joint_parameters.spring_constant, data.joints.position)


def keep_motor_force(force: np.ndarray, active_gain: np.ndarray, energy: np.ndarray,
                     energy_per_force: np.ndarray) -> None:
    """What the bank keeps of a step's motor force (in place): an off motor's is its
    friction, not motor force (``active_gain`` 0), and the energy each consumed."""
    force *= active_gain
    energy += np.abs(force) * energy_per_force


# ---------------------------------------------------------------- the compiled runner's

def _select_one(c: bool, a: float, b: float) -> float:
    return a if c else b


def _at_most_one(a: float, b: float) -> float:
    return b if b < a else a


def _at_least_one(a: float, b: float) -> float:
    return b if b > a else a


def _fmin_one(a: float, b: float) -> float:
    return b if b < a or a != a else a


def _fmax_one(a: float, b: float) -> float:
    return b if b > a or a != a else a


def _rint_one(a: float) -> float:
    return np.rint(a)


def _fade_one(v: float, velocity: float, alpha: float) -> float:
    return np.exp(-(np.abs(v) / velocity) ** alpha)


def _each_motor(x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags):
    """The compiled runner: :func:`servo_step` (compiled for one motor's numbers) on each
    motor in turn, as :func:`step_motors` takes them."""
    out = np.empty((RESULT_ROWS, x.shape[0]))
    servo_step(x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags, out,
               range(x.shape[0]))
    flags[ANY_STARTING] = False  # the step started their profiles
    return out


_COMPILED: Callable[..., Any] | None = None
_COMPILED_KEEP: Callable[..., Any] | None = None


def numba_jit(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]] | None:
    """numba's ``njit`` as this package compiles with it (cached on disk, without the
    GIL, a division by zero giving inf or nan as numpy's does; and numba's ``options``),
    or None where numba is not installed or ``SERVO_SIM_JIT=0`` says not to use it."""
    if os.environ.get("SERVO_SIM_JIT", "1") == "0":
        return None
    global _NUMBA
    try:
        import numba
    except ImportError:
        return None
    _NUMBA = numba  # imported whole (fade_ reads it: not a half-imported module)
    return numba.njit(cache=True, nogil=True, error_model="numpy", **options)


def can_compile() -> bool:
    """Whether :func:`compiled` can give a runner (numba installed, ``SERVO_SIM_JIT`` not
    0), without importing numba."""
    import importlib.util

    return (os.environ.get("SERVO_SIM_JIT", "1") != "0"
            and importlib.util.find_spec("numba") is not None)


#: held while the compiled runner is made (banks may load it from threads of their own)
_COMPILING = threading.Lock()
#: the threads loading the compiled law now, the switch interval from before them, and
#: the hosts holding the loading back (hold_loading)
_LOADING = {"threads": 0, "interval": 0.0, "holds": 0}
_LOADING_LOCK = threading.Lock()
#: the interpreter's switch interval while a thread loads the compiled law, s
LOADING_SWITCH_INTERVAL_S = 0.0005


#: set while no host holds the banks' loading of the compiled law (hold_loading)
_LOADING_ALLOWED = threading.Event()
_LOADING_ALLOWED.set()


def hold_loading() -> None:
    """Banks' threads wait before they load the compiled law until every hold is
    released (:func:`release_loading`): a host starting up (the ROS node, until its
    per-motor table is complete) would otherwise share the interpreter with the load
    while it makes its endpoints; numpy's runner steps meanwhile."""
    with _LOADING_LOCK:
        _LOADING["holds"] += 1
        _LOADING_ALLOWED.clear()


def release_loading() -> None:
    """One :func:`hold_loading` released; the banks load once none is left."""
    with _LOADING_LOCK:
        _LOADING["holds"] = max(0, _LOADING["holds"] - 1)
        if _LOADING["holds"] == 0:
            _LOADING_ALLOWED.set()


def wait_until_loading_allowed() -> None:
    """Until no host holds the loading of the compiled law (:func:`hold_loading`)."""
    _LOADING_ALLOWED.wait()


@contextlib.contextmanager
def quick_gil_handover() -> Iterator[None]:
    """Around a thread's load of the compiled law (numba's import and cache: Python
    that holds the GIL for about half a second or more): the interpreter's switch
    interval at most :data:`LOADING_SWITCH_INTERVAL_S` (5 ms by default), so a thread
    stepping or serving waits at most that long for the GIL; as it was after."""
    with _LOADING_LOCK:
        if _LOADING["threads"] == 0:
            _LOADING["interval"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_LOADING["interval"], LOADING_SWITCH_INTERVAL_S))
        _LOADING["threads"] += 1
    try:
        yield
    finally:
        with _LOADING_LOCK:
            _LOADING["threads"] -= 1
            if _LOADING["threads"] == 0:
                sys.setswitchinterval(_LOADING["interval"])


def compiled() -> Callable[..., Any] | None:
    """numba's runner: :func:`_each_motor` over :func:`servo_step` compiled by numba
    for one motor's numbers (its cache kept beside this module, or in numba's per-user
    cache where that is read-only), or None where numba is not installed. The numpy
    runner's functions stay as they are: the compiled ones are the same code in a
    namespace of their own."""
    global _COMPILED, _COMPILED_KEEP
    jit = numba_jit()
    if jit is None:
        return None
    with _COMPILING:
        if _COMPILED is None:
            _compile(jit)
    return _COMPILED


def one_motor_namespace(jit: Callable[..., Any]) -> dict[str, Any]:
    """This module's namespace for a law compiled for one motor's numbers: the numpy
    runner's operations as ``jit`` compiles their one-number forms, and the law
    (``servo_step`` and what it calls) to be inlined into its caller."""
    namespace = dict(globals())
    for name, one in (("select", _select_one), ("at_most", _at_most_one),
                      ("at_least", _at_least_one), ("smaller", _at_most_one),
                      ("larger", _at_least_one), ("fmin_", _fmin_one),
                      ("fmax_", _fmax_one), ("rint_", _rint_one),
                      ("fade_", _fade_one)):
        namespace[name] = jit(one)
    # the law inlined into the loop's caller: one function, no array handed on
    inline = numba_jit(inline="always")
    for name in ("whole_ticks", "_reference", "_drive", "servo_step"):
        namespace[name] = inline(clone(globals()[name], namespace))
    return namespace


def _compile(jit: Callable[..., Any]) -> None:
    """Make :data:`_COMPILED` and :data:`_COMPILED_KEEP` (with :func:`compiled`'s lock)."""
    global _COMPILED, _COMPILED_KEEP
    _COMPILED = jit(clone(_each_motor, one_motor_namespace(jit)))
    _COMPILED_KEEP = jit(keep_motor_force)


def compiled_keep_motor_force() -> Callable[..., Any] | None:
    """:func:`keep_motor_force` compiled by numba (with :func:`compiled`), or None without it."""
    return _COMPILED_KEEP if compiled() is not None else None


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
