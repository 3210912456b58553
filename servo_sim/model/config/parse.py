"""Reading a config: the field parsers, the checks of a motor and of a whole config,
:func:`parse_config` and :func:`load_config` (a YAML file), and the dict form back
(:func:`to_dict`). Validation builds nothing on error: it raises one
:class:`~.schema.ConfigError` whose message names the source, the motor, the field and
the value."""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from .ros_form import _from_ros_form, _is_ros_form
from .schema import (
    BODY_ENGINES,
    CONTROL_LAWS,
    DEFAULT_PLUGIN,
    GROUPS,
    TOP_FIELDS,
    ActuatorConfig,
    BatteryConfig,
    ConfigError,
    LoadConfig,
    MotorConfig,
    PositionSensorConfig,
    SimulationConfig,
    _Context,
    _FieldError,
    _unknown,
    ros_name,
)

log = logging.getLogger(__name__)

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
         "min_supply_voltage": _non_negative, "max_supply_voltage": _non_negative,
         "resolution": _integer(0), "backlash": _non_negative, "deadband": _non_negative,
         "friction": _non_negative, "viscous_friction": _non_negative,
         "friction_stribeck": _non_negative, "load_friction_external": _non_negative,
         "load_friction_motor": _non_negative,
         "load_friction_external_stribeck": _non_negative,
         "load_friction_motor_stribeck": _non_negative, "stribeck_velocity": _non_negative,
         "stribeck_alpha": _non_negative, "armature": _non_negative,
         "control": _choice(*CONTROL_LAWS), "gains": _gains, "gain_scale": _positive},
    ),
    "position_sensor": (
        PositionSensorConfig,
        {"sampling_period_ms": _integer(0), "resolution": _resolution, "noise": _non_negative},
    ),
}
_TOP_PARSERS: dict[str, Callable[[Any], Any]] = dict(zip(TOP_FIELDS, (
    _integer(1),  # basic_time_step_ms
    _choice("dynamic", "kinematic", *BODY_ENGINES),  # physics
    _integer(0),  # seed
    _battery,
), strict=True))
#: A motor's scalar fields and the top-level ones, by name (parse_field).
_FLAT_PARSERS = {**_MOTOR_PARSERS, **_TOP_PARSERS}




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
    from ..profiles import profile_names, servo_profile

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
            field = "load_friction_motor" if a.load_friction_motor >= 1.0 else "friction"
            raise ctx.error(f"{exc}: the servo could not reach its no-load speed", m.name,
                            f"actuator.{field}", getattr(a, field)) from None
    if a.stribeck:
        for field in ("stribeck_velocity", "stribeck_alpha"):
            if getattr(a, field) <= 0:
                raise ctx.error("the friction near rest (the Stribeck terms) fades with the "
                                "speed: it needs stribeck_velocity and stribeck_alpha > 0",
                                m.name, f"actuator.{field}", getattr(a, field))
    if a.supply_voltage and not given:
        raise ctx.error("needs the envelope's rated_voltage, stall_torque and no_load_speed",
                        m.name, "actuator.supply_voltage", a.supply_voltage)
    _check_supply(m, a, ctx)
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


def _check_supply(m: MotorConfig, a: ActuatorConfig, ctx: _Context) -> None:
    """The supply's rated range: low above high is refused; a supply outside it is
    simulated (the envelope scales on) with a warning, once per motor (coupled motors:
    once), range and value."""
    low, high = a.min_supply_voltage, a.max_supply_voltage
    if low and high and low > high:
        raise ctx.error(f"above max_supply_voltage ({high:g} V)", m.name,
                        "actuator.min_supply_voltage", low)
    v = a.voltage
    if v and ((low and v < low) or (high and v > high)):
        key = (ctx.source, m.coupling_base or m.name, v, low, high)  # coupled: once
        if key not in _SUPPLY_WARNED:
            _SUPPLY_WARNED.add(key)
            log.warning("%s: motor %r: supply %g V outside the servo's rated range %g-%g V: "
                        "its torque-speed envelope scaled to it, beyond the datasheet",
                        ctx.source, m.name, v, low, high or math.inf)


#: the supply warnings given (each once)
_SUPPLY_WARNED: set[tuple] = set()


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
            raise ctx.error(_unknown("top-level field", key, [*_TOP_PARSERS, *GROUPS]))
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


