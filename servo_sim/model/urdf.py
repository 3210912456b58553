"""Joint limits and ros2_control interfaces from a URDF, so one description configures both.

A motor takes its limits from the URDF joint of the same ROS name::

    <joint type="revolute|continuous|prismatic">  -> type rotational | linear
    <limit lower upper>                            -> min_position, max_position (soft limits)
    <limit velocity>                               -> max_velocity
    <limit effort>                                 -> max_torque (rotational) | max_force

``continuous`` joints have no position limits. Joints without a motor are ignored;
a joint whose type contradicts its motor's is a config error.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

from .config import ConfigError, SimulationConfig, parse_config, ros_name, to_dict

log = logging.getLogger("servo_sim")

_JOINT_TYPES = {"revolute": "rotational", "continuous": "rotational", "prismatic": "linear"}


def _root(urdf: str, source: str) -> ET.Element:
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise ConfigError(f"{source}: robot_description is not valid XML: {exc}") from None
    if root.tag != "robot":
        raise ConfigError(f"{source}: robot_description: the root element is <{root.tag}>, "
                          "not <robot>")
    return root


def _float(element: ET.Element, attribute: str, where: str) -> float | None:
    text = element.get(attribute)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"{where}: {attribute}={text!r} is not a number") from None


def joint_limits(urdf: str, source: str = "robot_description") -> dict[str, dict[str, Any]]:
    """Per movable joint: its motor type and the motor fields its ``<limit>`` sets."""
    out: dict[str, dict[str, Any]] = {}
    for joint in _root(urdf, source).iter("joint"):
        motor_type = _JOINT_TYPES.get(joint.get("type", ""))
        name = joint.get("name")
        if motor_type is None or name is None:
            continue
        fields: dict[str, Any] = {"type": motor_type}
        limit = joint.find("limit")
        if limit is not None:
            where = f"{source}: joint {name!r} <limit>"
            if joint.get("type") != "continuous":
                for attribute, field in (("lower", "min_position"), ("upper", "max_position")):
                    value = _float(limit, attribute, where)
                    if value is not None:
                        fields[field] = value
            velocity = _float(limit, "velocity", where)
            effort = _float(limit, "effort", where)
            if velocity is not None:
                fields["max_velocity"] = velocity
            if effort is not None:
                fields["max_torque" if motor_type == "rotational" else "max_force"] = effort
        out[name] = fields
    return out


def ros2_control_joints(urdf: str, source: str = "robot_description"
                        ) -> dict[str, dict[str, list[str]]]:
    """The joints of the ``<ros2_control>`` blocks: command and state interface names."""
    out: dict[str, dict[str, list[str]]] = {}
    for block in _root(urdf, source).iter("ros2_control"):
        for joint in block.iter("joint"):
            out[joint.get("name", "")] = {
                kind: [i.get("name", "") for i in joint.iter(f"{kind}_interface")]
                for kind in ("command", "state")}
    return out


def apply_urdf(config: SimulationConfig, urdf: str,
               source: str = "robot_description") -> SimulationConfig:
    """``config`` with each motor's limits taken from the URDF joint of its ROS name."""
    limits = joint_limits(urdf, source)
    raw = to_dict(config)
    applied = []
    for entry in raw["motors"]:
        fields = limits.get(ros_name(entry["name"]))
        if fields is None:
            continue
        if fields["type"] != entry["type"]:
            raise ConfigError(f"{source}: motor {entry['name']!r}: the URDF joint is "
                              f"{fields['type']}, the motor {entry['type']}")
        entry.update(fields)
        applied.append(entry["name"])
    if applied:
        log.info("limits of %s taken from the URDF", ", ".join(applied))
    return replace(parse_config(raw, f"{config.source} + {source}"), source=config.source)
