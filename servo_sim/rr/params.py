"""A motor's config fields as Robot Raconteur parameters (``getf_param``/``setf_param``).

Every field of the motor's config is a parameter named as in the config (dotted for
groups: ``load.external``, ``position_sensor.sampling_period_ms``); the read-only ones
(``READ_ONLY_FIELDS``) may be read, the others are live. A ``varvalue`` is checked
against the field's type as ``ros2 param set`` checks a parameter's (a double takes a
number, an integer an integer, an array numbers, a string a string), then goes through
``Runtime.set_parameter``: the config's validation and, for a field that is also
a command (``control_pid``), the command's check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.fields import motor_fields, value_type
from ..model.simulation import READ_ONLY_FIELDS
from ..runtime import Runtime


def field_values(runtime: Runtime, motor: str) -> dict[str, Any]:
    """The motor's config fields as they stand, by parameter name (``name`` left out)."""
    return motor_fields(runtime.motor(motor).config)


def live(name: str) -> bool:
    """Whether parameter ``name`` may change at run time."""
    return name not in READ_ONLY_FIELDS


def _numbers(data: Any) -> np.ndarray | None:
    """``data`` (a varvalue's) as a flat numeric array, None if it is not numbers."""
    if isinstance(data, (bool, np.bool_, str)):
        return None
    array = np.asarray(data)
    if array.dtype.kind not in "iuf":
        return None
    return array.reshape(-1)


def convert(motor: str, name: str, current: Any, data: Any) -> Any:
    """``data`` (a varvalue's data) as a value of the field whose value is ``current``;
    ValueError naming motor, parameter and value when the type does not match."""
    want = value_type(current)
    numbers = _numbers(data)
    value: Any = None
    if want == "double" and numbers is not None and numbers.size == 1:
        value = float(numbers[0])
    elif want == "integer" and numbers is not None and numbers.size == 1 \
            and numbers.dtype.kind in "iu":
        value = int(numbers[0])
    elif want == "double_array" and numbers is not None:
        value = [float(v) for v in numbers]
    elif want == "string" and isinstance(data, str):
        value = data
    elif want == "bool":
        flat = np.asarray(data).reshape(-1)
        if flat.size == 1 and flat.dtype.kind == "b":
            value = bool(flat[0])
    if value is None:
        raise ValueError(f"motor {motor!r}: parameter {name!r} = {shown(data)} rejected: "
                         f"must be {'an' if want == 'integer' else 'a'} {want}")
    return value


def shown(data: Any) -> str:
    """A varvalue's data as an error message quotes it (one number as the number)."""
    numbers = _numbers(data)
    if numbers is not None:
        items = [float(v) if numbers.dtype.kind == "f" else int(v) for v in numbers]
        return repr(items[0]) if len(items) == 1 else repr(items)
    return repr(data)


def get(runtime: Runtime, motor: str, name: str) -> Any:
    """The value of parameter ``name``; ValueError for an unknown one."""
    values = field_values(runtime, motor)
    if name not in values:
        raise ValueError(unknown(motor, name, values))
    return values[name]


def set_(runtime: Runtime, motor: str, name: str, data: Any) -> None:
    """Parameter ``name`` to ``data`` (a varvalue's data) through the runtime's
    check; ValueError (motor, parameter, value and why) and nothing changes on a refusal."""
    values = field_values(runtime, motor)
    if name not in values:
        raise ValueError(unknown(motor, name, values))
    value = convert(motor, name, values[name], data)
    runtime.set_parameter(motor, name, value)


def unknown(motor: str, name: str, values: dict[str, Any]) -> str:
    return (f"motor {motor!r}: parameter {name!r} unknown (known: "
            f"{', '.join(sorted(values))})")

