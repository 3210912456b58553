"""Configuration of a simulation: schema, defaults, validation and the ROS-parameter form.

A config is a plain mapping (from YAML or code) in one of two forms:

* the model form of SPEC §5::

      {basic_time_step_ms: 8, physics: dynamic, motors: [{name: arm, ...}, ...]}

* a ROS 2 parameters file of the same content (ros2_controllers style)::

      {servo_sim: {ros__parameters: {basic_time_step_ms: 8, motors: [arm], arm: {...}}}}

  where each motor's group is keyed by its ROS name (see :func:`ros_name`) and may
  also be given flat, as ``arm.max_torque: 10.0`` (how rclpy lists parameters).

Validation builds nothing on error: it raises one :class:`ConfigError` whose message
names the source, the motor, the field and the value.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

#: Separator of coupled motor names, "base::specifier" (Webots convention).
COUPLING_SEPARATOR = "::"
#: Node-level ROS parameters that may sit beside the model's in a parameters file: rclpy's
#: own and the servo_sim node's (declared in ``servo_sim/ros/params.py``).
NODE_PARAMETERS = frozenset({"use_sim_time", "start_type_description_service",
                             "publish_clock", "real_time_factor", "joint_states_rate",
                             "start_paused", "robot_description", "executor",
                             "motor_interfaces", "robot_raconteur_port", "config_file"})


#: The hardware plugin of a config without a ``hardware`` group: the model itself.
DEFAULT_PLUGIN = "sim"
#: A motor's position sensor is called "<motor name> sensor" unless the config names it
#: (Webots has no default; its samples name them so, e.g. "left wheel sensor").
DEFAULT_SENSOR_SUFFIX = " sensor"
#: m/s^2, the load's default gravity (Webots' WorldInfo default)
STANDARD_GRAVITY = 9.81
#: ``physics`` values whose joints a multibody engine integrates (``model/body.py``):
#: the engine's name -> its body class (``package.module:Class``, imported only when a
#: config asks for it); its settings are the ``multibody`` group, which it checks.
BODY_ENGINES: dict[str, str] = {"mujoco": "servo_sim.multibody.body:MujocoBody"}


class ConfigError(ValueError):
    """A config that cannot be used; the message names source, motor, field and value.

    What it is about, for importers that say it in their own terms (the Webots world
    reader): ``motor`` (None: not one motor's), ``field`` (a config field name; None: the
    motor as a whole or nothing in particular), ``value`` and ``reason`` (the message's
    last part; None when the error was not raised by the config checks). A host that
    knows whose config it was sets ``logger_name`` (the ROS node: its own logger's name).
    """

    logger_name: str | None = None

    def __init__(self, message: str, *, motor: str | None = None, field: str | None = None,
                 value: Any = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.motor, self.field, self.value, self.reason = motor, field, value, reason


class _FieldError(ValueError):
    """Raised by a field parser; turned into a ConfigError with full context."""


# --------------------------------------------------------------------------- parsers


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _real(check: Callable[[float], bool] | None = None, rule: str = "",
          minimum: float | None = None) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if not _is_real(value):
            raise _FieldError("must be a number")
        value = float(value)
        if not math.isfinite(value):
            raise _FieldError("must be finite")
        if check is not None and not check(value):
            raise _FieldError(f"must be {rule}")
        return value

    parse.minimum = minimum  # type: ignore[attr-defined]  # for ROS parameter ranges
    return parse


def _integer(minimum: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _FieldError("must be an integer")
        if value < minimum:
            raise _FieldError(f"must be an integer >= {minimum}")
        return int(value)

    parse.minimum = minimum  # type: ignore[attr-defined]
    return parse


def _choice(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in choices:
            raise _FieldError("must be one of " + ", ".join(repr(c) for c in choices))
        return value

    return parse


def _gains(value: Any) -> tuple[float, float, float]:
    """A servo firmware's position gains [P, I, D] in device units (each >= 0)."""
    rule = "must be a list of three numbers [P, I, D] >= 0 in the device's units"
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise _FieldError(rule)
    gains = tuple(_real()(v) for v in value)
    if min(gains) < 0:
        raise _FieldError(rule)
    return gains  # type: ignore[return-value]


def _pid(value: Any) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise _FieldError("must be a list of three numbers [P, I, D]")
    p, i, d = map(_any_real, value)
    if p <= 0 or i < 0 or d < 0:
        raise _FieldError("needs P > 0, I >= 0 and D >= 0")
    return (p, i, d)


_any_real = _real()
_non_negative = _real(lambda v: v >= 0, ">= 0", minimum=0.0)
_positive = _real(lambda v: v > 0, "> 0", minimum=0.0)  # the range is closed; 0 still fails
_acceleration = _real(lambda v: v == -1 or v >= 0, "-1 (unlimited) or >= 0")
_multiplier = _real(lambda v: v != 0, "non-zero")
_resolution = _real(lambda v: v == -1 or v > 0, "-1 (infinite) or > 0")


def _device_name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise _FieldError("must be a non-empty device name")
    return value


def _servo_name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _FieldError("must be a servo profile name")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _FieldError("must be true or false")
    return value


def _sensor_name(value: Any) -> str | None:
    """A position sensor's device name; "" for none (a Webots joint without one)."""
    if value == "":
        return value
    try:
        return _device_name(value)
    except _FieldError:
        raise _FieldError('must be a device name, or "" for no PositionSensor') from None


def _battery(value: Any) -> BatteryConfig:
    """A capacity in J (the battery starts full) or Webots' ``[energy, capacity(,
    recharge)]``; the recharge needs a Webots Charger, so it is accepted and unused."""
    if _is_real(value):
        capacity = _non_negative(value)
        return BatteryConfig(capacity, capacity)
    if not isinstance(value, (list, tuple)) or not 2 <= len(value) <= 3:
        raise _FieldError("must be a capacity in J or [energy, capacity(, recharge)]")
    energy, capacity, *_ = (_non_negative(v) for v in value)
    if energy > capacity:
        raise _FieldError(f"the energy {energy:g} J exceeds the capacity {capacity:g} J")
    return BatteryConfig(energy, capacity)


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class LoadConfig:
    """Passive load on the joint: gravity on a mass and a constant external force/torque.

    Rotational: ``-gravity_mass * gravity * gravity_distance * cos(x - gravity_angle)``
    (the lever is horizontal at ``x = gravity_angle``, the mass hangs at
    ``gravity_angle - pi/2``); linear: ``-gravity_mass * gravity * cos(gravity_angle)``
    (``gravity_angle``: the axis from straight up). The defaults are SPEC §2.2's.
    """

    gravity_mass: float = 0.0
    gravity_distance: float = 0.0
    external: float = 0.0
    gravity: float = STANDARD_GRAVITY
    gravity_angle: float = 0.0


#: The position control laws: Webots' (P/I/D -> velocity), or a servo firmware's
#: (P/I/D in device units on the encoder's ticks -> PWM duty; ``actuator.py``).
CONTROL_LAWS = ("webots", "dynamixel", "feetech")


@dataclass(frozen=True)
class ActuatorConfig:
    """A real servo's actuator (``actuator.py``): beyond Webots' ideal motor, each part
    opt-in (its default leaves the motor as Webots has it).

    * torque-speed envelope: a DC motor, ``stall_torque`` at rest and none at
      ``no_load_speed``, both at ``rated_voltage``, scaled by ``supply_voltage``;
    * ``resolution``: encoder ticks per turn, what the controller and sensors see;
    * ``backlash``: the gear's dead zone, rad (full width);
    * ``deadband``: position errors smaller than this drive nothing, rad;
    * ``friction``: Coulomb friction of the gear, N*m;
    * load-dependent friction (Rhoban/bam's directional Stribeck model, M5): the friction
      grows with the torques the gear carries, ``load_friction_external`` times the
      external load's, ``load_friction_motor`` times the motor's (both dimensionless),
      and near rest by ``friction_stribeck`` (N*m) and the two ``*_stribeck`` factors,
      fading with the speed as ``exp(-(|w| / stribeck_velocity) ** stribeck_alpha)``;
    * ``viscous_friction``: the gear's viscous friction, N*m*s/rad (adds to the joint's
      ``damping_constant``);
    * ``armature``: the rotor's inertia as the output sees it (through the gear ratio),
      kg*m^2 (adds to the joint's ``inertia``);
    * ``control``: the position control law, with the firmware's ``gains``.
    """

    stall_torque: float = 0.0
    no_load_speed: float = 0.0
    rated_voltage: float = 0.0
    supply_voltage: float = 0.0  # 0: the rated voltage
    resolution: int = 0  # 0: exact
    backlash: float = 0.0
    deadband: float = 0.0
    friction: float = 0.0
    friction_stribeck: float = 0.0
    load_friction_external: float = 0.0
    load_friction_motor: float = 0.0
    load_friction_external_stribeck: float = 0.0
    load_friction_motor_stribeck: float = 0.0
    stribeck_velocity: float = 0.0  # rad/s
    stribeck_alpha: float = 0.0
    viscous_friction: float = 0.0
    armature: float = 0.0
    control: str = "webots"
    gains: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def envelope(self) -> bool:
        """Whether the torque-speed envelope is on (the three figures are given)."""
        return self.stall_torque > 0.0

    @property
    def stribeck(self) -> bool:
        """Whether any friction grows near rest (the Stribeck terms)."""
        return (self.friction_stribeck + self.load_friction_external_stribeck
                + self.load_friction_motor_stribeck) > 0.0

    @property
    def load_dependent(self) -> bool:
        """Whether the friction depends on the torques the gear carries (or the speed)."""
        return self.stribeck or (self.load_friction_external + self.load_friction_motor) > 0.0

    @property
    def voltage(self) -> float:
        """The supply voltage, V (the rated one unless set)."""
        return self.supply_voltage or self.rated_voltage

    def motor_inside(self) -> tuple[float, float]:
        """The stall torque and no-load speed (at the rated voltage) of the motor inside
        the gear: the datasheet's stall torque, and a no-load speed at which the output,
        against the gear's Coulomb and viscous friction, runs free at the datasheet's
        speed ``w`` (the motor's torque at ``w`` equals ``friction + viscous_friction *
        w``). ValueError where the friction at ``w`` reaches the stall torque."""
        stall = self.stall_torque
        lost = self.friction + self.viscous_friction * self.no_load_speed
        if lost >= stall:
            raise ValueError(f"the gear's friction at the no-load speed ({lost:g} N*m) is "
                             f"not below the stall torque ({stall:g} N*m)")
        return stall, self.no_load_speed / (1.0 - lost / stall)


@dataclass(frozen=True)
class PositionSensorConfig:
    """The motor's position sensor: sampling period (0 = off), quantisation and noise."""

    sampling_period_ms: int = 0
    resolution: float = -1.0
    noise: float = 0.0


@dataclass(frozen=True)
class MotorConfig:
    """One motor, with the Webots fields in snake_case (SPEC §5)."""

    name: str
    type: str = "rotational"
    max_velocity: float = 10.0
    max_force: float = 10.0  # max_torque for rotational motors
    control_pid: tuple[float, float, float] = (10.0, 0.0, 0.0)
    acceleration: float = -1.0
    min_position: float = 0.0
    max_position: float = 0.0
    min_stop: float = 0.0
    max_stop: float = 0.0
    spring_constant: float = 0.0
    damping_constant: float = 0.0
    static_friction: float = 0.0
    multiplier: float = 1.0
    consumption_factor: float = 10.0
    position: float = 0.0
    inertia: float = 0.01
    load: LoadConfig = field(default_factory=LoadConfig)
    position_sensor: PositionSensorConfig = field(default_factory=PositionSensorConfig)
    force_feedback_sampling_period_ms: int = 0
    #: the command watchdog: seconds without a command before a commanded motor halts
    #: (0 = off); beyond Webots (SPEC §3)
    command_timeout: float = 0.0
    #: device name of the motor's PositionSensor (Webots controllers, ``getDevice``);
    #: None: ``"<name> sensor"``; "": the joint has no PositionSensor (see
    #: :attr:`position_sensor_device`)
    position_sensor_name: str | None = None
    #: device name of a Brake on the motor's joint; None: the joint has no brake
    brake_name: str | None = None
    #: a joint without a motor (a Webots joint whose device list has a PositionSensor or
    #: Brake and no motor): moved only by its load, spring, damping and stops; every
    #: command is refused; Webots controllers see its sensor and brake, not a motor
    passive: bool = False
    #: the servo profile the motor's fields came from (``profiles.yaml``), or None
    servo: str | None = None
    #: a real servo's actuator (envelope, encoder, backlash, firmware control); None:
    #: Webots' ideal motor
    actuator: ActuatorConfig | None = None

    @property
    def position_sensor_device(self) -> str | None:
        """The device name of the motor's PositionSensor (configured or the default), or
        None when the config says it has none (``position_sensor_name: ""``)."""
        if self.position_sensor_name is not None:
            return self.position_sensor_name or None
        return f"{self.name}{DEFAULT_SENSOR_SUFFIX}"

    @property
    def coupling_base(self) -> str | None:
        """The base name shared by coupled motors, or None for a motor on its own (or a
        passive joint: it has no motor to couple)."""
        base, sep, _ = self.name.partition(COUPLING_SEPARATOR)
        return base if sep and not self.passive else None

    @property
    def force_field(self) -> str:
        """The config name of the force limit: max_torque (rotational) or max_force."""
        return "max_torque" if self.type == "rotational" else "max_force"


@dataclass(frozen=True)
class BatteryConfig:
    """The robot's battery (Webots ``Robot.battery``): energy now and capacity, J."""

    energy: float
    capacity: float


@dataclass(frozen=True)
class SimulationConfig:
    """A whole simulation: time step, physics mode, noise seed and motors."""

    motors: tuple[MotorConfig, ...]
    basic_time_step_ms: int = 8
    physics: str = "dynamic"
    seed: int = 0
    source: str = "<dict>"
    #: the hardware plugin and its settings: ``{"plugin": "sim"}`` unless the config says
    #: otherwise; the plugin validates the rest (``servo_sim.hardware``)
    hardware: Mapping[str, Any] = field(default_factory=lambda: {"plugin": DEFAULT_PLUGIN})
    #: the battery the motors' energy drains (Webots controllers); None: no battery
    battery: BatteryConfig | None = None
    #: the multibody model of a ``physics`` engine (BODY_ENGINES) and its settings
    #: (``model``, ``joints``...), which the engine checks; None: each joint on its own
    multibody: Mapping[str, Any] | None = None


_MOTOR_PARSERS: dict[str, Callable[[Any], Any]] = {
    "type": _choice("rotational", "linear"),
    "max_velocity": _non_negative,
    "max_torque": _non_negative,
    "max_force": _non_negative,
    "control_pid": _pid,
    "acceleration": _acceleration,
    "min_position": _any_real,
    "max_position": _any_real,
    "min_stop": _any_real,
    "max_stop": _any_real,
    "spring_constant": _non_negative,
    "damping_constant": _non_negative,
    "static_friction": _non_negative,
    "multiplier": _multiplier,
    "consumption_factor": _non_negative,
    "position": _any_real,
    "inertia": _positive,
    "force_feedback_sampling_period_ms": _integer(0),
    "command_timeout": _non_negative,
    "position_sensor_name": _sensor_name,
    "brake_name": _device_name,
    "passive": _boolean,
    "servo": _servo_name,
}
_NESTED_PARSERS: dict[str, tuple[type, dict[str, Callable[[Any], Any]]]] = {
    "load": (
        LoadConfig,
        {"gravity_mass": _non_negative, "gravity_distance": _any_real, "external": _any_real,
         "gravity": _non_negative, "gravity_angle": _any_real},
    ),
    "actuator": (
        ActuatorConfig,
        {"stall_torque": _non_negative, "no_load_speed": _non_negative,
         "rated_voltage": _non_negative, "supply_voltage": _non_negative,
         "resolution": _integer(0), "backlash": _non_negative, "deadband": _non_negative,
         "friction": _non_negative, "viscous_friction": _non_negative,
         "friction_stribeck": _non_negative, "load_friction_external": _non_negative,
         "load_friction_motor": _non_negative,
         "load_friction_external_stribeck": _non_negative,
         "load_friction_motor_stribeck": _non_negative, "stribeck_velocity": _non_negative,
         "stribeck_alpha": _non_negative, "armature": _non_negative,
         "control": _choice(*CONTROL_LAWS), "gains": _gains},
    ),
    "position_sensor": (
        PositionSensorConfig,
        {"sampling_period_ms": _integer(0), "resolution": _resolution, "noise": _non_negative},
    ),
}
_TOP_PARSERS: dict[str, Callable[[Any], Any]] = {
    "basic_time_step_ms": _integer(1),
    "physics": _choice("dynamic", "kinematic", *BODY_ENGINES),
    "seed": _integer(0),
    "battery": _battery,
}
#: A motor's scalar fields and the top-level ones, by name (parse_field).
_FLAT_PARSERS = {**_MOTOR_PARSERS, **_TOP_PARSERS}


#: Top-level groups beside the scalar fields.
_GROUPS = ("motors", "hardware", "multibody")

# --------------------------------------------------------------------------- helpers


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested groups as dotted names: ``{"load": {"external": 1}}`` -> ``{"load.external":
    1}`` (each name after ``prefix``)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


def ros_name(device_name: str) -> str:
    """The ROS name of a motor: every character outside [A-Za-z0-9_] becomes '_'."""
    return re.sub(r"[^A-Za-z0-9_]", "_", device_name)


def _unknown(kind: str, key: Any, known: list[str]) -> str:
    hint = difflib.get_close_matches(str(key), known, n=1)
    tail = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(sorted(known))})"
    return f"unknown {kind} {key!r}{tail}"


class _Context:
    """Formats errors as 'source: motor 'm': field 'f' = v: reason'."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, reason: str, motor: str | None = None, name: str | None = None,
              value: Any = None) -> ConfigError:
        parts = [self.source]
        if motor is not None:
            parts.append(f"motor {motor!r}")
        if name is not None:
            parts.append(f"field {name!r} = {value!r}")
        return ConfigError(": ".join([*parts, reason]), motor=motor, field=name, value=value,
                           reason=reason)

    def parse(self, parser: Callable[[Any], Any], value: Any, motor: str | None,
              name: str) -> Any:
        try:
            return parser(value)
        except _FieldError as exc:
            raise self.error(str(exc), motor, name, value) from None


# --------------------------------------------------------------------------- motor


def _parse_motor(raw: Any, ctx: _Context, index: int) -> MotorConfig:
    if not isinstance(raw, Mapping):
        raise ctx.error(f"motors[{index}] must be a mapping with at least a 'name'")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ctx.error(f"motors[{index}]: field 'name' = {name!r}: must be a non-empty string")
    motor_type = ctx.parse(_MOTOR_PARSERS["type"], raw.get("type", "rotational"), name, "type")
    force_key = "max_torque" if motor_type == "rotational" else "max_force"
    other_key = "max_force" if motor_type == "rotational" else "max_torque"
    if other_key in raw:
        raise ctx.error(f"{motor_type} motors take {force_key!r}, not {other_key!r}",
                        name, other_key, raw[other_key])

    if "servo" in raw:
        raw = _with_profile(raw, ctx, name)
    values: dict[str, Any] = {"name": name, "type": motor_type}
    for key, value in raw.items():
        if key in ("name", "type"):
            continue
        if key in _NESTED_PARSERS:
            values[key] = _parse_nested(key, value, ctx, name)
        elif key in _MOTOR_PARSERS:
            parsed = ctx.parse(_MOTOR_PARSERS[key], value, name, key)
            values["max_force" if key == force_key else key] = parsed
        else:
            known = [k for k in [*_MOTOR_PARSERS, *_NESTED_PARSERS, "name"] if k != other_key]
            raise ctx.error(_unknown("field", key, known), name)
    motor = MotorConfig(**values)
    _check_motor(motor, ctx)
    return motor


def _with_profile(raw: Mapping, ctx: _Context, motor: str) -> dict[str, Any]:
    """The motor's fields over those of its servo profile (nested groups merged by key)."""
    from .profiles import profile_names, servo_profile

    name = raw["servo"]
    try:
        prof = servo_profile(name)
    except KeyError:
        raise ctx.error(_unknown("servo profile", name, profile_names()), motor, "servo",
                        name) from None
    merged: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v
                              for k, v in prof.motor.items()}
    for key, value in raw.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key].update(value)
        else:
            merged[key] = value
    return merged


def _parse_nested(key: str, value: Any, ctx: _Context, motor: str) -> Any:
    cls, parsers = _NESTED_PARSERS[key]
    if not isinstance(value, Mapping):
        raise ctx.error("must be a mapping of " + ", ".join(parsers), motor, key, value)
    out = {}
    for sub, subvalue in value.items():
        if sub not in parsers:
            raise ctx.error(_unknown(f"field in {key!r}:", sub, list(parsers)), motor)
        out[sub] = ctx.parse(parsers[sub], subvalue, motor, f"{key}.{sub}")
    return cls(**out)


def _check_motor(m: MotorConfig, ctx: _Context) -> None:
    """Rules between fields of one motor (Webots' limit rules, made errors)."""
    soft = m.min_position != m.max_position
    stops = m.min_stop != 0.0 or m.max_stop != 0.0
    if m.min_position > m.max_position:
        raise ctx.error(f"must be <= max_position ({m.max_position})", m.name,
                        "min_position", m.min_position)
    if m.min_stop > m.max_stop:
        raise ctx.error(f"must be <= max_stop ({m.max_stop})", m.name, "min_stop", m.min_stop)
    if soft and not m.min_position <= m.position <= m.max_position:
        raise ctx.error(f"must lie within the soft limits [{m.min_position}, {m.max_position}]",
                        m.name, "position", m.position)
    if stops and not m.min_stop <= m.position <= m.max_stop:
        raise ctx.error(f"must lie within the hard stops [{m.min_stop}, {m.max_stop}]",
                        m.name, "position", m.position)
    if soft and stops:
        if m.min_position < m.min_stop:
            raise ctx.error(f"soft limit below the hard stop min_stop ({m.min_stop})",
                            m.name, "min_position", m.min_position)
        if m.max_position > m.max_stop:
            raise ctx.error(f"soft limit above the hard stop max_stop ({m.max_stop})",
                            m.name, "max_position", m.max_position)
    if m.actuator is not None:
        _check_actuator(m, m.actuator, ctx)


def _check_actuator(m: MotorConfig, a: ActuatorConfig, ctx: _Context) -> None:
    """An actuator's figures are complete for what it switches on."""
    figures = {"stall_torque": a.stall_torque, "no_load_speed": a.no_load_speed,
               "rated_voltage": a.rated_voltage}
    given = [k for k, v in figures.items() if v > 0]
    if given and len(given) < 3:
        missing = next(k for k in figures if k not in given)
        raise ctx.error("the torque-speed envelope needs stall_torque, no_load_speed and "
                        "rated_voltage, each > 0", m.name, f"actuator.{missing}",
                        figures[missing])
    if len(given) == 3:
        try:
            a.motor_inside()
        except ValueError as exc:
            raise ctx.error(f"{exc}: the servo could not reach its no-load speed", m.name,
                            "actuator.friction", a.friction) from None
    if a.stribeck:
        for field in ("stribeck_velocity", "stribeck_alpha"):
            if getattr(a, field) <= 0:
                raise ctx.error("the friction near rest (the Stribeck terms) fades with the "
                                "speed: it needs stribeck_velocity and stribeck_alpha > 0",
                                m.name, f"actuator.{field}", getattr(a, field))
    if a.supply_voltage and not given:
        raise ctx.error("needs the envelope's rated_voltage, stall_torque and no_load_speed",
                        m.name, "actuator.supply_voltage", a.supply_voltage)
    if a.control != "webots":
        law = f"the {a.control} control law"
        if m.type != "rotational":
            raise ctx.error(f"{law} needs a rotational motor", m.name, "actuator.control",
                            a.control)
        if not given:
            raise ctx.error(f"{law} drives the motor's voltage: it needs stall_torque, "
                            "no_load_speed and rated_voltage", m.name, "actuator.control",
                            a.control)
        if a.resolution <= 0:
            raise ctx.error(f"{law} works on encoder ticks: it needs a resolution > 0",
                            m.name, "actuator.resolution", a.resolution)
        if a.gains[0] <= 0:
            raise ctx.error(f"{law} needs a position P gain > 0", m.name, "actuator.gains",
                            list(a.gains))


def _check_devices(motors: tuple[MotorConfig, ...], ctx: _Context) -> None:
    """Every device (motor, position sensor, brake) has a name of its own (Webots finds
    devices by name)."""
    owners: dict[str, str] = {m.name: f"motor {m.name!r}" for m in motors if not m.passive}
    for m in motors:
        sensor_field = "position_sensor_name" if m.position_sensor_name is not None else None
        for field_name, device in ((sensor_field, m.position_sensor_device),
                                   ("brake_name", m.brake_name)):
            if device is None:
                continue
            if device in owners:
                used = f"device name already used by {owners[device]}"
                if field_name is None:
                    raise ctx.error(f"its position sensor's default name {device!r} (set "
                                    f"'position_sensor_name'): {used}", m.name)
                raise ctx.error(used, m.name, field_name, device)
            kind = "brake" if field_name == "brake_name" else "position sensor"
            owners[device] = f"the {kind} of motor {m.name!r}"


def _check_coupling(motors: tuple[MotorConfig, ...], ctx: _Context) -> None:
    """Seed 002: coupled limits must be exact factors of each other (by multiplier)."""
    groups: dict[str, list[MotorConfig]] = {}
    for m in motors:
        if m.coupling_base is not None:
            groups.setdefault(m.coupling_base, []).append(m)
    for members in groups.values():
        ref = members[0]
        for m in members[1:]:
            ratio = m.multiplier / ref.multiplier
            v_expected = ref.max_velocity * abs(ratio)
            if not math.isclose(m.max_velocity, v_expected, rel_tol=1e-9, abs_tol=1e-12):
                raise ctx.error(
                    f"inconsistent with coupled motor {ref.name!r}: expected {v_expected:g} "
                    f"(= {ref.max_velocity:g} * |{m.multiplier:g} / {ref.multiplier:g}|)",
                    m.name, "max_velocity", m.max_velocity)
            ref_unlimited = ref.min_position == ref.max_position
            if ref_unlimited != (m.min_position == m.max_position):
                raise ctx.error(
                    f"coupled motor {ref.name!r} has "
                    f"{'unlimited' if ref_unlimited else 'limited'} position; siblings must "
                    "match", m.name, "min_position", m.min_position)
            if ref_unlimited:
                continue
            lo, hi = sorted((ref.min_position * ratio, ref.max_position * ratio))
            for name, value, expected in (("min_position", m.min_position, lo),
                                          ("max_position", m.max_position, hi)):
                if not math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12):
                    raise ctx.error(
                        f"inconsistent with coupled motor {ref.name!r}: expected {expected:g}",
                        m.name, name, value)


# --------------------------------------------------------------------------- public


def parse_config(raw: Any, source: str = "<dict>") -> SimulationConfig:
    """Validate a config mapping (model or ROS-parameters form) into a SimulationConfig."""
    ctx = _Context(source)
    if isinstance(raw, SimulationConfig):
        return raw
    if not isinstance(raw, Mapping):
        raise ctx.error("the config must be a mapping")
    if _is_ros_form(raw):
        raw = _from_ros_form(raw, ctx)
    top: dict[str, Any] = {"source": source}
    for key, value in raw.items():
        if key == "motors":
            continue
        if key == "hardware":
            top[key] = _parse_hardware(value, ctx)
            continue
        if key == "multibody":
            top[key] = _parse_multibody(value, ctx)
            continue
        if key not in _TOP_PARSERS:
            raise ctx.error(_unknown("top-level field", key, [*_TOP_PARSERS, *_GROUPS]))
        top[key] = ctx.parse(_TOP_PARSERS[key], value, None, key)
    raw_motors = raw.get("motors")
    if not isinstance(raw_motors, list) or not raw_motors:
        raise ctx.error("field 'motors' must be a non-empty list of motors")
    motors = tuple(_parse_motor(m, ctx, i) for i, m in enumerate(raw_motors))
    if top.get("physics") == "kinematic":
        for m in motors:
            if m.actuator is not None:
                raise ctx.error("field 'actuator': a real servo's actuator needs physics "
                                "'dynamic' (kinematic motors are ideal)", m.name)
    seen: dict[str, str] = {}
    for m in motors:
        key = ros_name(m.name)
        if key in seen:
            other = seen[key]
            why = "duplicate motor name" if other == m.name else (
                f"its ROS name {key!r} clashes with motor {other!r}")
            raise ctx.error(why, m.name)
        if key[0].isdigit():
            raise ctx.error(f"its ROS name {key!r} must not start with a digit", m.name)
        seen[key] = m.name
    _check_devices(motors, ctx)
    _check_coupling(motors, ctx)
    engine = top.get("physics") in BODY_ENGINES
    if engine != ("multibody" in top):
        raise ctx.error(f"field 'physics' = {top.get('physics', 'dynamic')!r} and field "
                        "'multibody': a multibody engine (physics: "
                        f"{' or '.join(BODY_ENGINES)}) needs a 'multibody' group with its "
                        "'model', and the group needs such an engine")
    plugin = top.get("hardware", {}).get("plugin", DEFAULT_PLUGIN)
    if engine and plugin != DEFAULT_PLUGIN:
        raise ctx.error(f"field 'physics' = {top['physics']!r}: a multibody body is the "
                        f"model's; hardware {plugin!r} moves real servos (hardware plugin "
                        f"{DEFAULT_PLUGIN!r} simulates them)")
    return SimulationConfig(motors=motors, **top)


def _parse_hardware(value: Any, ctx: _Context) -> dict[str, Any]:
    """The ``hardware`` group: a mapping with a plugin name; the plugin checks the rest."""
    if not isinstance(value, Mapping):
        raise ctx.error(f"field 'hardware' = {value!r}: must be a mapping with a 'plugin'")
    plugin = value.get("plugin", DEFAULT_PLUGIN)
    if not isinstance(plugin, str) or not plugin:
        raise ctx.error(f"field 'hardware.plugin' = {plugin!r}: must be a plugin name")
    return {**value, "plugin": plugin}


def _parse_multibody(value: Any, ctx: _Context) -> dict[str, Any]:
    """The ``multibody`` group: a mapping with a ``model`` file; the engine checks the
    rest (``model/body.py``)."""
    model = value.get("model") if isinstance(value, Mapping) else None
    if not isinstance(model, str) or not model:
        raise ctx.error(f"field 'multibody' = {value!r}: must be a mapping with a 'model' "
                        "(an MJCF or URDF file)")
    return dict(value)


def load_config(path: str | Path) -> SimulationConfig:
    """Read and validate a YAML config file (either form)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    return parse_config(raw, str(path))


#: Optional fields left out of the dict form while unset (None).
_OPTIONAL = frozenset({"position_sensor_name", "brake_name", "battery", "servo",
                       "actuator"})


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def motor_to_dict(m: MotorConfig) -> dict[str, Any]:
    """One motor in the model form (plain types; max_torque or max_force by type; the
    optional device names only when set)."""
    entry: dict[str, Any] = {}
    for f in fields(m):
        value = getattr(m, f.name)
        if value is None and f.name in _OPTIONAL:
            continue
        if isinstance(value, (LoadConfig, PositionSensorConfig, ActuatorConfig)):
            value = {g.name: _plain(getattr(value, g.name)) for g in fields(value)}
        else:
            value = _plain(value)
        entry[m.force_field if f.name == "max_force" else f.name] = value
    return entry


def to_dict(config: SimulationConfig) -> dict[str, Any]:
    """The model form of a config (plain types), e.g. to write it back as YAML."""
    out = {"basic_time_step_ms": config.basic_time_step_ms, "physics": config.physics,
           "seed": config.seed, "hardware": dict(config.hardware),
           "motors": [motor_to_dict(m) for m in config.motors]}
    if config.battery is not None:
        out["battery"] = [config.battery.energy, config.battery.capacity]
    if config.multibody is not None:
        out["multibody"] = dict(config.multibody)
    return out


def parse_field(field: str, value: Any) -> Any:
    """Validate one motor field ('max_velocity', 'position_sensor.noise') or top-level
    field ('basic_time_step_ms') on its own: the parsed value, or ValueError saying why
    (for importers that report errors in their own terms)."""
    try:
        return _field_parser(field)(value)
    except _FieldError as exc:
        raise ValueError(str(exc)) from None


def field_minimum(field: str) -> float | None:
    """The lowest valid value of a numeric field ('max_velocity', 'load.gravity_mass',
    'basic_time_step_ms'), or None when it has no lower bound."""
    try:
        return getattr(_field_parser(field), "minimum", None)
    except KeyError:
        return None


def _field_parser(field: str) -> Callable[[Any], Any]:
    """The parser of a motor field ('position_sensor.noise') or a top-level one; KeyError
    if there is none."""
    group, _, leaf = field.rpartition(".")
    return _NESTED_PARSERS[group][1][leaf] if group else _FLAT_PARSERS[leaf]


# --------------------------------------------------------------------------- ROS form


def _is_ros_form(raw: Mapping) -> bool:
    return any(isinstance(v, Mapping) and "ros__parameters" in v for v in raw.values())


def _select_node(raw: Mapping, ctx: _Context) -> Mapping:
    nodes = {k: v["ros__parameters"] for k, v in raw.items()
             if isinstance(v, Mapping) and "ros__parameters" in v}
    if len(nodes) == 1:
        return next(iter(nodes.values()))
    for key, params in nodes.items():
        if str(key).rstrip("/").rsplit("/", 1)[-1] == "servo_sim":
            return params
    raise ctx.error("several nodes in the parameters file and none is 'servo_sim': "
                    + ", ".join(map(str, nodes)))


def unflatten(params: Mapping[str, Any]) -> dict[str, Any]:
    """Turn rclpy-style dotted names ('arm.load.external') into nested mappings."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        node = out
        *parents, leaf = str(key).split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"parameter {key!r} conflicts with a value at {part!r}")
        if isinstance(value, Mapping):
            node.setdefault(leaf, {}).update(unflatten(value))
        else:
            node[leaf] = value
    return out


def from_ros_parameters(params: Mapping[str, Any], source: str = "<parameters>") -> dict[str, Any]:
    """Convert one node's ROS parameters (nested or dotted) into the model form."""
    return _from_ros_form({"servo_sim": {"ros__parameters": params}}, _Context(source))


def _from_ros_form(raw: Mapping, ctx: _Context) -> dict[str, Any]:
    params = unflatten(_select_node(raw, ctx))
    names = params.get("motors")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ctx.error(f"parameter 'motors' = {names!r}: must be a non-empty list of "
                        "motor names")
    groups = {ros_name(n): n for n in names}
    model: dict[str, Any] = {"motors": []}
    for key, value in params.items():
        if key == "motors" or key in NODE_PARAMETERS:
            continue
        if key in _TOP_PARSERS or key in ("hardware", "multibody"):
            model[key] = value
        elif key not in groups:
            if isinstance(value, Mapping):
                raise ctx.error(f"parameter group {key!r} is not a motor listed in 'motors' "
                                f"({', '.join(groups)}) nor 'hardware' nor 'multibody'")
            raise ctx.error(_unknown("parameter", key, [*_TOP_PARSERS, *_GROUPS]))
    for name in names:
        group = params.get(ros_name(name), {})
        if not isinstance(group, Mapping):
            raise ctx.error(f"parameter {ros_name(name)!r} must be a group of motor fields",
                            name)
        if "name" in group:
            raise ctx.error("the name comes from 'motors'; remove it from the group", name,
                            "name", group["name"])
        model["motors"].append({"name": name, **group})
    return model
