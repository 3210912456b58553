"""The one table of the commands a motor takes, from which every door is derived.

Each row names the model's ``Motor`` method, its arguments, the device capabilities it
needs (any one; none: always accepted, as enable and the e-stop), the config field it
mirrors (a change of either goes through the command once, and a parameter follows
it), and its names at each door: the ROS service (``ros/interface.py``), the
``servo-sim run --command`` key (``cli.py``) and the Webots API method
(``webots/api.py``). The hardware system's capability check reads ``needs``; the live
parameters read ``field``. Whatever the door, a command goes through
``HardwareSystem.command`` (or ``set_parameter`` for a mirrored field): one validation,
one capability check, one reason. A door names a command by its row
(:class:`Command`), never by a function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import methodcaller
from typing import Any

from .motor import Motor

#: The kinds of row: a command with values, a Trigger-like command without, an action.
SETTER, TRIGGER, ACTION = "setter", "trigger", "action"


@dataclass(frozen=True)
class MotorCommand:
    """One command (see the module docstring)."""

    name: str  #: the Motor method
    args: tuple[str, ...] = ()  #: its arguments, in order
    arg_type: type = float  #: their type (sampling periods are int)
    needs: tuple[str, ...] = ()  #: device capabilities, any one (lower-case flag names)
    field: str | None = None  #: the config field it mirrors
    #: the mirrored field's value now, of a Motor or its read-only view (MotorView)
    read: Callable[[Any], Any] | None = None
    kind: str = SETTER
    service: str | None = None  #: its ROS service, relative to the motor (default: name)
    topic: str | None = None  #: the feedback topic an enable names
    key: str | None = None  #: its ``servo-sim run --command`` key
    webots: str | None = None  #: its Webots API method (on the device ``webots_device``)
    webots_device: str = "Motor"  #: (enableTorqueFeedback is Webots' alias of the force's)

    @property
    def call(self) -> Callable[..., Any]:
        """The model's ``Motor`` method."""
        return getattr(Motor, self.name)

    @property
    def ros_service(self) -> str:
        return self.service or self.name

    @property
    def constant(self) -> str:
        """Its name in :class:`Command`: the method's, upper case, without ``set_``."""
        return self.name.removeprefix("set_").upper()

    def __repr__(self) -> str:
        return f"Command.{self.constant}"


def _pid(m: Any) -> list[float]:
    return list(m.get_control_pid())


MOTOR_COMMANDS: tuple[MotorCommand, ...] = (
    MotorCommand("set_position", ("position",), needs=("position_command",),
                 key="position", webots="setPosition"),  # +-inf: velocity_command
    MotorCommand("set_velocity", ("velocity",), needs=("velocity_command", "velocity_limit"),
                 key="velocity", webots="setVelocity"),
    MotorCommand("set_acceleration", ("acceleration",), needs=("acceleration_limit",),
                 field="acceleration", read=methodcaller("get_acceleration"), key="acceleration",
                 webots="setAcceleration"),
    MotorCommand("set_available_force", ("force",), needs=("available_force",),
                 key="available_force", webots="setAvailableForce"),
    MotorCommand("set_available_torque", ("torque",), needs=("available_force",),
                 key="available_torque", webots="setAvailableTorque"),
    MotorCommand("set_force", ("force",), needs=("effort_command",), key="force",
                 webots="setForce"),
    MotorCommand("set_torque", ("torque",), needs=("effort_command",), key="torque",
                 webots="setTorque"),
    MotorCommand("set_control_pid", ("p", "i", "d"), needs=("pid_gains",),
                 field="control_pid", read=_pid, key="control_pid", webots="setControlPID"),
    MotorCommand("enable_position", ("sampling_period",), int,
                 field="position_sensor.sampling_period_ms",
                 read=methodcaller("get_position_sampling_period"),
                 service="position_sensor/enable", topic="position", webots="enable",
                 webots_device="PositionSensor"),
    MotorCommand("enable_force_feedback", ("sampling_period",), int,
                 field="force_feedback_sampling_period_ms",
                 read=methodcaller("get_force_feedback_sampling_period"),
                 service="force_feedback_sensor/enable", topic="force_feedback",
                 webots="enableForceFeedback"),
    MotorCommand("enable_torque_feedback", ("sampling_period",), int,
                 field="force_feedback_sampling_period_ms",
                 read=methodcaller("get_torque_feedback_sampling_period"),
                 service="torque_feedback_sensor/enable", topic="torque_feedback"),
    MotorCommand("halt", needs=("position_command",), kind=TRIGGER),
    MotorCommand("enable", kind=TRIGGER),
    MotorCommand("disable", kind=TRIGGER),
    MotorCommand("e_stop", kind=TRIGGER),
    MotorCommand("reset_e_stop", kind=TRIGGER),
    MotorCommand("trapezoidal_move", ("target_position", "target_velocity", "max_velocity",
                                      "max_acceleration"),
                 needs=("trapezoidal_command",), kind=ACTION),
)

#: The table by command name.
COMMAND = {c.name: c for c in MOTOR_COMMANDS}



class Command:
    """The table's rows by what they command, to hand to a door's one entry
    (``runtime.command("arm", Command.POSITION, 1.0)``): each row's :attr:`constant`
    (``POSITION``, ``ENABLE_POSITION``, ``HALT``, ``TRAPEZOIDAL_MOVE``...). A command
    is a row of the table, never a function; the hardware system checks its ``needs``."""

    def __init__(self) -> None:
        raise TypeError("Command is a namespace of the command table's rows")


for _row in MOTOR_COMMANDS:
    setattr(Command, _row.constant, _row)
