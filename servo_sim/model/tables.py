"""Every motor's numbers as MuJoCo keeps a model's: tables of named rows over the motors.

Each group is one 2-D array, fields x motors, whose rows the module-level constants
below name (the order of a group is written once, here: the last name of each group
is its number of rows). The law (``law.py``) reads ``parameters[KP]``,
``state[INTEGRAL]``...: on the whole tables (numpy's runner) that is the row over every
motor; the compiled runner hands the law one motor's column (``table[:, i]``), and the
same expression is that motor's number (and ``state[INTEGRAL] = ...`` writes through).

:class:`MotorData` holds them all, in three kinds (as ``mjModel`` and ``mjData``):

* the model, what the config gives and no command changes: :class:`Parameters` (the
  law's), :class:`JointParameters` (the joints', the sensors' and the limits', with the
  step's constants derived from them), :class:`JointMasks`;
* the commands: :class:`Targets` and :class:`TargetMasks` (as given) and each motor's
  mode; :class:`Commands` (as ``MotorBank.refresh`` derives them for the law);
* the state the step changes: :class:`State` (the law's), :class:`Joints` (position,
  velocity, the velocity a step before, motor force, energy);

and the law's :class:`Masks` (per-motor yes/no) and :class:`Flags` (whether any, or
every, motor has a part, so that the law skips it); a step's results are a table of
``RESULT_ROWS`` rows (:func:`results`).

The tables are made once per bank and written in place from then on (a reset fills
them again): a view of a row stays the row. The classes give each row a name
(:class:`Row`), and :func:`name_rows` gives the bank the same names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# the motors' parameters: the step (s) and the actuators' config (actuator.py)
(DT, SAFE_TICK, DEADBAND_EDGE, KP, KI, KD, FRICTION, FIRMWARE_DRIVE, SAFE_SLOPE,
 HALF_GAP, NEG_HALF_GAP, K_EXT, K_MOTOR, K_EXT_S, K_MOTOR_S, BASE_S, STRIBECK_VELOCITY,
 STRIBECK_ALPHA, PARAMETER_ROWS) = range(19)

# the commands, as refresh derives them (bank.py, actuator.py)
(PID_TARGET, SPEED_LIMIT, PID_GAIN, NOT_PID_GAIN, POSITION_GAIN, ACTIVE_GAIN, CONTROL_P,
 CONTROL_I, D_OVER_DT, FEEDFORWARD, VELOCITY_SETPOINT, ACCELERATION_STEP, FORCE_LIMIT,
 APPLIED_FORCE, PROFILE_STEP, NEG_PROFILE_STEP, PROFILE_STEP_DT, ACTIVE_SLOPE, ACTIVE_DRIVE,
 CAP, NEG_CAP, COMMAND_ROWS) = range(22)

# the state the law changes
(INTEGRAL, PREVIOUS, COMMAND_VELOCITY, SETPOINT, SETPOINT_VELOCITY, GAP,
 STATE_ROWS) = range(7)

# the joints' state each step writes (bank.py, the bodies): the velocity a step before is
# the joint acceleration's other end; the energy the motor consumed since the start (J)
(POSITION, VELOCITY, PREVIOUS_VELOCITY, MOTOR_FORCE, ENERGY, JOINT_ROWS) = range(6)

# the joints' parameters: the config's (apply_config rewrites them, set_loads the loads)
# and the step's constants derived from them (the bank's _load_parameters, _derive_loads)
(MAX_VELOCITY, MAX_FORCE, MULTIPLIER, INITIAL_POSITION, MIN_POSITION, MAX_POSITION,
 MIN_STOP, MAX_STOP, STOP_LOW, STOP_HIGH, SPRING_CONSTANT, DAMPING_CONSTANT,
 STATIC_FRICTION, CONSUMPTION_FACTOR, ENERGY_PER_FORCE, INERTIA, ARMATURE, GEAR_DAMPING,
 GRAVITY_MASS, GRAVITY_DISTANCE, GRAVITY, GRAVITY_ANGLE, EXTERNAL_LOAD, JOINT_INERTIA_DT,
 SERVO_MASS, JOINT_MASS, CONSTANT_LOAD, GRAVITY_TORQUE, GRAVITY_PHASE, POSITION_NOISE,
 POSITION_RESOLUTION, COMMAND_TIMEOUT_MS, JOINT_PARAMETER_ROWS) = range(33)

# the joints' yes/no of the config: rotational (else linear), soft limits, hard stops,
# passive (no motor)
(ROTATIONAL, SOFT_LIMITS, STOPS, PASSIVE, JOINT_MASK_ROWS) = range(5)

# the commands as given (after the multiplier and the limits; motor.py, safety.py), from
# which refresh derives the law's; the time of each motor's last command (the watchdog's)
(TARGET_POSITION, TARGET_VELOCITY, ACCELERATION, AVAILABLE_FORCE, CONTROL_D,
 REQUESTED_POSITION, REQUESTED_VELOCITY, LAST_COMMAND_MS, TARGET_ROWS) = range(9)

# the commands' yes/no: enabled, under force control, emergency-stopped, halting (a
# velocity ramp to 0), warned; position or velocity control (refresh's)
(ENABLED, FORCE_CONTROL, E_STOP, HALTING, WARNING, POSITION_CONTROL, VELOCITY_CONTROL,
 TARGET_MASK_ROWS) = range(8)

# the masks: commands' (ACTIVE ... FOLLOWING), state's (STARTING), parameters' (the rest)
(ACTIVE, ACCELERATION_LIMITED, FOLLOWING, STARTING, GOAL_TICKS, ENCODER,
 MASK_ROWS) = range(7)

# the flags: any (all) motor's mask or part
(HAS_ACTUATORS, ANY_FIRMWARE, ANY_GOAL_TICKS, ALL_GOAL_TICKS, ANY_FOLLOWING,
 ALL_FOLLOWING, ANY_STARTING, ANY_ENCODER, ALL_ENCODER, ANY_DEADBAND, ANY_FRICTION,
 ANY_ENVELOPE, ANY_BACKLASH, ANY_LOAD_DEPENDENT, ANY_FEEDFORWARD, ANY_ACCELERATION_LIMIT,
 ANY_FORCE_CONTROL, ANY_SPRING, FLAG_COUNT) = range(19)

# a step's results: the velocity each joint reaches (before the body's stops), the motor
# force (before an off motor's is zeroed), Webots' wanted force and the firmware's duty
(V_NEW, FORCE, WANTED, DUTY, RESULT_ROWS) = range(5)


class Row:
    """A named row of a table: read, the row (a view); assigned, written in place."""

    def __init__(self, index: int, table: str = "") -> None:
        """Row ``index`` of the object's own rows, or (``table``) of its attribute
        ``table``'s."""
        self.index, self.table = index, table

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        if self.table:
            obj = getattr(obj, self.table)
        return obj.views[self.index]

    def __set__(self, obj: Any, value: Any) -> None:
        self.__get__(obj)[...] = value


class Flag:
    """A named flag of :class:`Flags` (a Python bool), read and written in place."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return bool(obj.table[self.index])

    def __set__(self, obj: Any, value: Any) -> None:
        obj.table[self.index] = value


class Rows:
    """A table of ``rows`` named rows over ``n`` motors (fields x motors), zeros."""

    ROWS = 0
    DTYPE: Any = float

    def __init__(self, n: int) -> None:
        #: the table as the law takes it
        self.table = np.zeros((self.ROWS, n), dtype=self.DTYPE)
        #: its rows, views made once
        self.views = tuple(self.table)


class Parameters(Rows):
    """The motors' parameters the law reads (the actuators': ``actuator.py``)."""

    ROWS = PARAMETER_ROWS
    dt = Row(DT)
    safe_tick = Row(SAFE_TICK)
    deadband_edge = Row(DEADBAND_EDGE)
    kp, ki, kd = Row(KP), Row(KI), Row(KD)
    friction = Row(FRICTION)
    firmware_drive = Row(FIRMWARE_DRIVE)
    safe_slope = Row(SAFE_SLOPE)
    half_gap, neg_half_gap = Row(HALF_GAP), Row(NEG_HALF_GAP)
    k_ext, k_motor = Row(K_EXT), Row(K_MOTOR)
    k_ext_s, k_motor_s, base_s = Row(K_EXT_S), Row(K_MOTOR_S), Row(BASE_S)
    stribeck_velocity, stribeck_alpha = Row(STRIBECK_VELOCITY), Row(STRIBECK_ALPHA)

    @property
    def gains(self) -> np.ndarray:
        """The firmware's gains (kp, ki, kd): three rows."""
        return self.table[KP:KD + 1]

    @property
    def load_friction(self) -> np.ndarray:
        """The M5 friction's (k_ext, k_motor, k_ext_s, k_motor_s, base_s): five rows."""
        return self.table[K_EXT:BASE_S + 1]


class Commands(Rows):
    """The commands as the law reads them (``MotorBank.refresh``, ``Actuators.refresh``)."""

    ROWS = COMMAND_ROWS
    pid_target = Row(PID_TARGET)
    speed_limit = Row(SPEED_LIMIT)
    pid_gain, not_pid_gain = Row(PID_GAIN), Row(NOT_PID_GAIN)
    position_gain, active_gain = Row(POSITION_GAIN), Row(ACTIVE_GAIN)
    control_p, control_i, d_over_dt = Row(CONTROL_P), Row(CONTROL_I), Row(D_OVER_DT)
    feedforward = Row(FEEDFORWARD)
    velocity_setpoint = Row(VELOCITY_SETPOINT)
    acceleration_step = Row(ACCELERATION_STEP)
    force_limit = Row(FORCE_LIMIT)
    applied_force = Row(APPLIED_FORCE)
    profile_step, neg_profile_step = Row(PROFILE_STEP), Row(NEG_PROFILE_STEP)
    profile_step_dt = Row(PROFILE_STEP_DT)
    active_slope, active_drive = Row(ACTIVE_SLOPE), Row(ACTIVE_DRIVE)
    cap, neg_cap = Row(CAP), Row(NEG_CAP)


class State(Rows):
    """The state the law changes: the PID's, the last commanded velocity, the firmware
    profile's set-point and the backlash gap."""

    ROWS = STATE_ROWS
    integral, previous = Row(INTEGRAL), Row(PREVIOUS)
    command_velocity = Row(COMMAND_VELOCITY)
    setpoint, setpoint_velocity = Row(SETPOINT), Row(SETPOINT_VELOCITY)
    gap = Row(GAP)


class Joints(Rows):
    """The joints' state each step writes in place (and a reset): a view of a row read
    before a step is the row after it; a value to keep across a step is a copy."""

    ROWS = JOINT_ROWS
    position, velocity = Row(POSITION), Row(VELOCITY)
    previous_velocity = Row(PREVIOUS_VELOCITY)
    motor_force, energy = Row(MOTOR_FORCE), Row(ENERGY)


class JointParameters(Rows):
    """The joints' parameters (``MotorConfig``'s fields) and the step's constants derived
    from them: the bodies', the sensors' and the commands' limits."""

    ROWS = JOINT_PARAMETER_ROWS
    max_velocity, max_force = Row(MAX_VELOCITY), Row(MAX_FORCE)
    multiplier = Row(MULTIPLIER)
    initial_position = Row(INITIAL_POSITION)
    min_position, max_position = Row(MIN_POSITION), Row(MAX_POSITION)
    min_stop, max_stop = Row(MIN_STOP), Row(MAX_STOP)
    #: the hard stops as bounds: -inf/inf where a joint has none
    stop_low, stop_high = Row(STOP_LOW), Row(STOP_HIGH)
    spring_constant, damping_constant = Row(SPRING_CONSTANT), Row(DAMPING_CONSTANT)
    static_friction = Row(STATIC_FRICTION)
    consumption_factor = Row(CONSUMPTION_FACTOR)
    #: consumption_factor * dt: the energy of a step per newton (metre) of motor force
    energy_per_force = Row(ENERGY_PER_FORCE)
    inertia = Row(INERTIA)
    #: the gear's own: the rotor's inertia at the output, the viscous friction
    armature, gear_damping = Row(ARMATURE), Row(GEAR_DAMPING)
    gravity_mass, gravity_distance = Row(GRAVITY_MASS), Row(GRAVITY_DISTANCE)
    gravity, gravity_angle = Row(GRAVITY), Row(GRAVITY_ANGLE)
    external_load = Row(EXTERNAL_LOAD)
    #: (inertia + armature) / dt: the per-joint body's inertia over the step
    joint_inertia_dt = Row(JOINT_INERTIA_DT)
    #: the servo's implicit share of the step's mass: spring, damper, gear's viscous
    servo_mass = Row(SERVO_MASS)
    #: joint_inertia_dt + servo_mass: the per-joint body's mass of the step
    joint_mass = Row(JOINT_MASS)
    #: the per-joint body's load that the pose does not change (a linear joint's weight)
    constant_load = Row(CONSTANT_LOAD)
    #: a rotational joint's gravity torque at its lever's 0, and the lever's phase
    gravity_torque, gravity_phase = Row(GRAVITY_TORQUE), Row(GRAVITY_PHASE)
    position_noise, position_resolution = Row(POSITION_NOISE), Row(POSITION_RESOLUTION)
    command_timeout_ms = Row(COMMAND_TIMEOUT_MS)


class JointMasks(Rows):
    """The joints' yes/no of the config."""

    ROWS = JOINT_MASK_ROWS
    DTYPE = bool
    rotational, soft_limits = Row(ROTATIONAL), Row(SOFT_LIMITS)
    stops, passive = Row(STOPS), Row(PASSIVE)


class Targets(Rows):
    """The commands as given (internal units: after the multiplier and the limits) and
    as requested (the caller's units, what the getters return)."""

    ROWS = TARGET_ROWS
    target_position, target_velocity = Row(TARGET_POSITION), Row(TARGET_VELOCITY)
    acceleration, available_force = Row(ACCELERATION), Row(AVAILABLE_FORCE)
    control_d = Row(CONTROL_D)
    requested_position, requested_velocity = Row(REQUESTED_POSITION), Row(REQUESTED_VELOCITY)
    last_command_ms = Row(LAST_COMMAND_MS)


class TargetMasks(Rows):
    """The commands' yes/no."""

    ROWS = TARGET_MASK_ROWS
    DTYPE = bool
    enabled, force_control = Row(ENABLED), Row(FORCE_CONTROL)
    e_stop, halting, warning = Row(E_STOP), Row(HALTING), Row(WARNING)
    position_control, velocity_control = Row(POSITION_CONTROL), Row(VELOCITY_CONTROL)


class Masks(Rows):
    """The per-motor yes/no the law reads."""

    ROWS = MASK_ROWS
    DTYPE = bool
    active, acceleration_limited = Row(ACTIVE), Row(ACCELERATION_LIMITED)
    following, starting = Row(FOLLOWING), Row(STARTING)
    goal_ticks, encoder = Row(GOAL_TICKS), Row(ENCODER)


class Flags:
    """Whether any (or every) motor has a part the law would compute: one array."""

    has_actuators = Flag(HAS_ACTUATORS)
    any_firmware = Flag(ANY_FIRMWARE)
    any_goal_ticks, all_goal_ticks = Flag(ANY_GOAL_TICKS), Flag(ALL_GOAL_TICKS)
    any_following, all_following = Flag(ANY_FOLLOWING), Flag(ALL_FOLLOWING)
    any_starting = Flag(ANY_STARTING)
    any_encoder, all_encoder = Flag(ANY_ENCODER), Flag(ALL_ENCODER)
    any_deadband, any_friction = Flag(ANY_DEADBAND), Flag(ANY_FRICTION)
    any_envelope, any_backlash = Flag(ANY_ENVELOPE), Flag(ANY_BACKLASH)
    any_load_dependent = Flag(ANY_LOAD_DEPENDENT)
    any_feedforward = Flag(ANY_FEEDFORWARD)
    any_acceleration_limit = Flag(ANY_ACCELERATION_LIMIT)
    any_force_control, any_spring = Flag(ANY_FORCE_CONTROL), Flag(ANY_SPRING)

    def __init__(self) -> None:
        self.table = np.zeros(FLAG_COUNT, dtype=bool)


def name_rows(owner: type, attribute: str, rows: type[Rows]) -> None:
    """Give the class ``owner`` each named row of the table class ``rows`` as a
    :class:`Row` of its own, of the table its instances hold as ``attribute``."""
    for name, row in vars(rows).items():
        if isinstance(row, Row):
            if hasattr(owner, name):
                raise TypeError(f"{owner.__name__}.{name} is taken: {rows.__name__}'s row")
            setattr(owner, name, Row(row.index, attribute))


class MotorData:
    """Every table of ``n`` motors, made once and written in place from then on (a reset
    fills them again). As MuJoCo's ``mjModel`` and ``mjData``, three kinds:

    * the model, what the config gives and no command changes (``apply_config`` and
      ``set_loads`` rewrite it): :attr:`parameters` (the law's), :attr:`joint_parameters`,
      :attr:`joint_masks`;
    * the commands: :attr:`targets`, :attr:`target_masks` and :attr:`mode` as given,
      :attr:`commands` as the law reads them (``MotorBank.refresh`` derives them);
    * the state the step changes: :attr:`state` (the law's), :attr:`joints`;

    and the law's :attr:`masks` and :attr:`flags` over the three. ``arguments``: the
    tables the law takes, in its order."""

    def __init__(self, n: int) -> None:
        self.parameters = Parameters(n)
        self.joint_parameters = JointParameters(n)
        self.joint_masks = JointMasks(n)
        self.commands = Commands(n)
        self.targets = Targets(n)
        self.target_masks = TargetMasks(n)
        #: each motor's mode (``modes.ServoMode``)
        self.mode = np.zeros(n, dtype=np.int8)
        self.state = State(n)
        #: the joints' state (not an argument of the law: the bodies' and the bank's)
        self.joints = Joints(n)
        self.masks = Masks(n)
        self.flags = Flags()
        #: the law's arguments after the body's: the tables themselves
        self.arguments = (self.parameters.table, self.commands.table, self.state.table,
                          self.masks.table, self.flags.table)


def results(n: int) -> np.ndarray:
    """A table for a step's results over ``n`` motors (``V_NEW`` ...)."""
    return np.empty((RESULT_ROWS, n))
