"""The motor's own constants, torque constant and winding resistance, as an alternative
to the envelope's stall torque and no-load speed (docs/sim-to-real.md).

A DC motor at supply ``V`` and speed ``w`` (both at the output, through the gear) gives
``T = kt (u V - kt w) / R``: a stall torque ``kt V / R`` and a motor that runs free at
``V / kt``. The actuator's envelope is the same line written with the datasheet's
figures at the rated voltage (``stall_torque``, ``no_load_speed``), where the no-load
speed is the *output's*, the gear's friction included (``ActuatorConfig.motor_inside``):
so ``kt = rated_voltage / w_inside`` with ``w_inside`` the motor's own free speed, and
``R = kt rated_voltage / stall_torque``. These are the constants Rhoban/bam's models
have (its ``kt`` and ``R``); the supply voltage scales the envelope, not them.

The config has no such fields: a motor's fields with ``actuator.torque_constant`` and/or
``actuator.resistance`` (what ``--set`` and ``identify --fit`` give) are converted to
``stall_torque`` and ``no_load_speed`` with the friction in force (:func:`resolved`); a
constant not given keeps the motor's current one.

Pure Python and the model; no ROS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ConfigError, parse_config
from ..model.config import ActuatorConfig

#: The constants by dotted field name: torque constant (N*m/A, = V*s/rad) and resistance
#: (ohm), both as the output sees them through the gear.
CONSTANTS = ("actuator.torque_constant", "actuator.resistance")
_KEYS = tuple(name.split(".")[1] for name in CONSTANTS)


def constants(actuator: ActuatorConfig) -> tuple[float, float]:
    """``(kt, R)`` of an actuator with an envelope: ``kt = rated_voltage / w_inside``,
    ``R = kt rated_voltage / stall_torque``. ValueError where it has no envelope or its
    friction at the no-load speed reaches the stall torque."""
    if not actuator.envelope or actuator.rated_voltage <= 0.0:
        raise ValueError("the motor has no torque-speed envelope (stall_torque, "
                         "no_load_speed, rated_voltage)")
    stall, inside = actuator.motor_inside()
    kt = actuator.rated_voltage / inside
    return kt, kt * actuator.rated_voltage / stall


def envelope(actuator: ActuatorConfig, kt: float, resistance: float) -> tuple[float, float]:
    """``(stall_torque, no_load_speed)`` at the rated voltage of the motor ``kt``,
    ``resistance`` in ``actuator``'s gear (its friction): the inverse of
    :func:`constants`. The no-load speed is the output's, at which the motor's torque
    ``T`` carries ``friction + viscous_friction w + load_friction_motor T``; at most 0
    where that friction reaches the stall torque (a motor the config check refuses)."""
    v = actuator.rated_voltage
    stall = kt * v / resistance
    inside = v / kt
    carried = (1.0 - actuator.load_friction_motor) * stall
    if carried <= 0.0:
        return stall, 0.0
    # w = inside (1 - lost / stall), lost = (f + c w) / (1 - k): linear in w
    speed = (inside * (1.0 - actuator.friction / carried)
             / (1.0 + inside * actuator.viscous_friction / carried))
    return stall, speed


def resolve(fields: Mapping[str, Any], stall_torque: float | None = None) -> ActuatorConfig:
    """The actuator of a motor's nested fields (its profile's under its own), without
    the constants (and with ``stall_torque`` where given). ConfigError where the config
    check refuses them."""
    entry = dict(fields)
    group = {k: v for k, v in dict(entry.get("actuator") or {}).items() if k not in _KEYS}
    if stall_torque is not None:
        group["stall_torque"] = stall_torque
    entry["actuator"] = group
    entry.setdefault("name", "servo")
    return parse_config({"motors": [entry]}, "identify").motors[0].actuator


#: A stall torque no friction reaches: the motor's gear and voltage read where both
#: constants are given and the fields' own stall torque is below their friction.
_ANY_FRICTION = 1e9


def resolved(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (nested, changed in place and returned) with ``actuator.torque_constant``
    and ``actuator.resistance`` turned into ``stall_torque`` and ``no_load_speed``; as
    they are where none is given. ConfigError naming the field and value where one is
    not a number > 0 or the motor has no envelope to take it; fields the config check
    refuses for another reason lose the constants and are left for it to say why."""
    group = fields.get("actuator")
    if not isinstance(group, dict) or not any(k in group for k in _KEYS):
        return fields
    given = {k: group.pop(k) for k in _KEYS if k in group}
    motor = f"motor {fields['name']!r}: " if "name" in fields else ""
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigError(f"{motor}field 'actuator.{key}' = {value!r}: must be a "
                              "number > 0")
    both = len(given) == len(_KEYS)
    try:
        actuator = resolve(fields)
    except ConfigError:
        if not both:
            return fields
        try:  # the friction may be too much for the old motor, not for the new one
            actuator = resolve(fields, _ANY_FRICTION)
        except ConfigError:
            return fields
    if not actuator.envelope or actuator.rated_voltage <= 0.0:
        key = next(iter(given))
        raise ConfigError(f"{motor}field 'actuator.{key}' = {given[key]!r}: the motor has no "
                          "torque-speed envelope to take it (a servo profile, or "
                          "stall_torque, no_load_speed and rated_voltage)")
    if both:
        kt, resistance = float(given["torque_constant"]), float(given["resistance"])
    else:
        try:
            kt, resistance = constants(actuator)
        except ValueError:
            return fields
        kt = float(given.get("torque_constant", kt))
        resistance = float(given.get("resistance", resistance))
    group["stall_torque"], group["no_load_speed"] = envelope(actuator, kt, resistance)
    return fields
