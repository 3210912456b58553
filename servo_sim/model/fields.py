"""A motor's config fields as named parameters, for every door that has them (the ROS
node's parameters, Robot Raconteur's ``getf_param``): the flat names relative to the
motor (``max_velocity``, ``load.external``) with their values, and a value's parameter
type."""

from __future__ import annotations

from typing import Any

from .config import MotorConfig, flatten, motor_to_dict


def motor_fields(m: MotorConfig) -> dict[str, Any]:
    """The motor's fields as flat names relative to its group (``load.external``), with
    the values in ``m`` (``name`` left out: it names the group)."""
    fields = motor_to_dict(m)
    del fields["name"]
    return flatten(fields)


def value_type(value: Any) -> str:
    """The parameter type of a plain value: bool, integer, double, string, string_array
    or double_array ("" if it has none)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "string_array"
    if isinstance(value, (list, tuple)):
        return "double_array"
    return ""
