"""A read-only view of one motor: what a host reads, and nothing it could command.

:meth:`servo_sim.runtime.Runtime.motor` hands out a :class:`MotorView`, not the model's
:class:`~servo_sim.model.motor.Motor`: a Motor's setters change the bank directly, past
the hardware system's capability check, so a host that held one could command what the
device cannot take. A view answers the Motor's getters and state properties, under the
same names, and has no setter, no trigger and no attribute that reaches the Motor, its
bank or its moves; every command goes through ``Runtime.command``. A view reads under
the bank's lock: from any thread, the state between two steps (the model writes its
rows in place, a reset refills them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .motor import Motor

#: The Motor's getters a view answers (Webots' ``wb_motor_get_*`` and the sensors').
GETTERS = (
    "get_target_position", "get_min_position", "get_max_position", "get_velocity",
    "get_max_velocity", "get_acceleration", "get_available_force", "get_available_torque",
    "get_max_force", "get_max_torque", "get_multiplier", "get_type", "get_control_pid",
    "get_command_timeout", "get_position", "get_position_sampling_period",
    "get_force_feedback", "get_torque_feedback", "get_force_feedback_sampling_period",
    "get_torque_feedback_sampling_period",
)
#: The Motor's read-only properties a view answers (values, not handles: ``move`` is
#: left out, as a Move can be canceled).
PROPERTIES = ("mode", "flags", "position", "velocity", "motor_force", "energy",
              "target_position", "config", "coupled")


class MotorView:
    """Motor ``name``'s getters and state, read-only (see the module docstring)."""

    __slots__ = ("__motor", "name")

    def __init__(self, motor: Motor) -> None:
        self.__motor = motor
        self.name: str = motor.name

    def __setattr__(self, attr: str, value: Any) -> None:
        if hasattr(self, "name"):  # set once, at construction
            raise AttributeError(f"motor {self.name!r}: the view is read-only "
                                 f"({attr} cannot be set; commands go through the runtime)")
        object.__setattr__(self, attr, value)

    def __repr__(self) -> str:
        return f"<MotorView {self.name!r}>"


def _getter(name: str) -> Callable[..., Any]:
    method = getattr(Motor, name)

    @functools.wraps(method)
    def get(self: MotorView) -> Any:
        motor = self._MotorView__motor  # type: ignore[attr-defined]
        with motor._bank.lock:  # between two steps (a reset) of another thread
            return method(motor)

    return get


def _property(name: str) -> property:
    fget = getattr(Motor, name).fget

    @functools.wraps(fget)
    def get(self: MotorView) -> Any:
        motor = self._MotorView__motor  # type: ignore[attr-defined]
        with motor._bank.lock:
            return fget(motor)

    return property(get)


for _name in GETTERS:
    setattr(MotorView, _name, _getter(_name))
for _name in PROPERTIES:
    setattr(MotorView, _name, _property(_name))
