"""The ROS-parameter form of a config: a ROS 2 parameters file (one node's
``ros__parameters``), each motor's group keyed by its ROS name (:func:`.schema.ros_name`)
and given nested or flat (``arm.max_torque: 10.0``, as rclpy lists parameters), turned
into the model form; the node's own parameters that may sit beside it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .schema import GROUPS, TOP_FIELDS, ConfigError, _Context, _unknown, ros_name

#: Node-level ROS parameters that may sit beside the model's in a parameters file: rclpy's
#: own and the servo_sim node's (declared in ``servo_sim/ros/params.py``).
NODE_PARAMETERS = frozenset({"use_sim_time", "start_type_description_service",
                             "publish_clock", "real_time_factor", "joint_states_rate",
                             "start_paused", "robot_description", "executor",
                             "motor_interfaces", "robot_raconteur_port", "config_file"})


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
        if key in TOP_FIELDS or key in ("hardware", "multibody"):
            model[key] = value
        elif key not in groups:
            if isinstance(value, Mapping):
                raise ctx.error(f"parameter group {key!r} is not a motor listed in 'motors' "
                                f"({', '.join(groups)}) nor 'hardware' nor 'multibody'")
            raise ctx.error(_unknown("parameter", key, [*TOP_FIELDS, *GROUPS]))
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

