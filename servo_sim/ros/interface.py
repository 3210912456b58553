"""The ROS interface of the servo_sim node as one declarative table (SPEC §6).

Nothing here imports ROS: the node (``node.py``) walks these tables to create its
services, publishers and subscriptions, and the tests check them against SPEC §6 and
the ``.msg``/``.srv`` files without a ROS installation.

Per motor, every name is relative to ``<node namespace>/<motor ROS name>/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..model import LINEAR, ROTATIONAL, MotorView, ros_name
from ..model.commands import ACTION, COMMAND, MOTOR_COMMANDS, TRIGGER, MotorCommand

#: Fields of the package's own interfaces, (type, name) in file order: request, response.
SRV_FIELDS: dict[str, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {
    "SetFloat": ((("float64", "value"),), (("bool", "success"),)),
    "GetFloat": ((("bool", "ask"),), (("float64", "value"),)),
    "SetInt": ((("int32", "value"),), (("bool", "success"),)),
    "GetInt": ((("bool", "ask"),), (("int32", "value"),)),
    "GetString": ((("bool", "ask"),), (("string", "value"),)),
    "MotorSetControlPid": (
        (("float64", "controlp"), ("float64", "controli"), ("float64", "controld")),
        (("int8", "success"),),
    ),
}
MSG_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "Float64Stamped": (("std_msgs/Header", "header"), ("float64", "data")),
    "ServoState": (("std_msgs/Header", "header"), ("uint64", "seqno"), ("string[]", "name"),
                   ("int8[]", "mode"), ("uint32[]", "servo_state_flags"),
                   ("float64[]", "position"), ("float64[]", "velocity"),
                   ("float64[]", "acceleration"), ("float64[]", "effort"),
                   ("float64[]", "position_command"), ("float64[]", "velocity_command"),
                   ("float64[]", "effort_command")),
}
#: Fields of the package's actions: goal, result, feedback.
ACTION_FIELDS: dict[str, tuple[tuple[tuple[str, str], ...], ...]] = {
    "TrapezoidalMove": (
        (("float64", "target_position"), ("float64", "target_velocity"),
         ("float64", "max_velocity"), ("float64", "max_acceleration")),
        (("bool", "success"), ("string", "message"), ("float64", "position"),
         ("float64", "duration")),
        (("float64", "position"), ("float64", "velocity"), ("float64", "remaining_distance")),
    ),
}

#: ``get_type``'s answer: Webots' WB_ROTATIONAL / WB_LINEAR.
TYPE_CODES = {ROTATIONAL: 0, LINEAR: 1}

#: The sensors a motor has, named as the model's SampledSensors attributes on the bank.
POSITION_SENSOR = "position_sensor"
FORCE_SENSOR = "force_sensor"


@dataclass(frozen=True)
class MotorService:
    """One per-motor service: name, servo_sim srv type and what answers it.

    A setter's ``command`` (its row of the command table) goes through the runtime with
    the request fields and raises ``ValueError`` to reject; a getter's ``read(motor)``
    (of the motor's read-only view) returns the response value.
    ``topic`` names the topic an enable service starts (the feedback topic is named
    after the enable service used). ``parameter`` is the motor parameter a setter
    changes, with the getter that reads its new value, so the two stay in step.
    """

    name: str
    srv: str
    command: MotorCommand | None = None  #: a setter's row of the command table
    read: Callable[[MotorView], Any] | None = None  #: a getter's answer
    topic: str | None = None
    parameter: tuple[str, Callable[[MotorView], Any]] | None = None

    @cached_property
    def is_getter(self) -> bool:
        return SRV_FIELDS[self.srv][0] == (("bool", "ask"),)

    @cached_property
    def request_fields(self) -> tuple[str, ...]:
        """The request fields passed to ``call`` (none for a getter's ``ask``)."""
        return () if self.is_getter else tuple(n for _, n in SRV_FIELDS[self.srv][0])

    @cached_property
    def response_field(self) -> tuple[str, str]:
        """(type, name) of the one response field."""
        return SRV_FIELDS[self.srv][1][0]


@dataclass(frozen=True)
class MotorTopic:
    """One per-motor feedback topic, published when its sensor refreshes."""

    name: str
    msg: str
    sensor: str  # attribute of the bank: POSITION_SENSOR or FORCE_SENSOR


def position_sensor_name(motor: MotorView) -> str:
    """What ``get_position_sensor_name`` answers: where the sensor's services live."""
    return f"{ros_name(motor.name)}/{POSITION_SENSOR}"


def _setter(name: str) -> MotorService:
    """The service of a command of the command table, with its topic and mirrored field."""
    c = COMMAND[name]
    srv = "SetInt" if c.arg_type is int else "SetFloat" if len(c.args) == 1 \
        else "MotorSetControlPid"
    return MotorService(c.ros_service, srv, command=c, topic=c.topic,
                        parameter=(c.field, c.read) if c.field and c.read else None)


MOTOR_SERVICES: tuple[MotorService, ...] = (
    # commands (seed 002: Motor functions), from the command table
    *(_setter(name) for name in ("set_position", "set_velocity", "set_acceleration",
                                 "set_available_force", "set_available_torque", "set_force",
                                 "set_torque", "set_control_pid")),
    # getters
    MotorService("get_target_position", "GetFloat", read=MotorView.get_target_position),
    MotorService("get_min_position", "GetFloat", read=MotorView.get_min_position),
    MotorService("get_max_position", "GetFloat", read=MotorView.get_max_position),
    MotorService("get_velocity", "GetFloat", read=MotorView.get_velocity),
    MotorService("get_max_velocity", "GetFloat", read=MotorView.get_max_velocity),
    MotorService("get_acceleration", "GetFloat", read=MotorView.get_acceleration),
    MotorService("get_available_force", "GetFloat", read=MotorView.get_available_force),
    MotorService("get_max_force", "GetFloat", read=MotorView.get_max_force),
    MotorService("get_available_torque", "GetFloat", read=MotorView.get_available_torque),
    MotorService("get_max_torque", "GetFloat", read=MotorView.get_max_torque),
    MotorService("get_multiplier", "GetFloat", read=MotorView.get_multiplier),
    MotorService("get_type", "GetInt", read=lambda m: TYPE_CODES[m.get_type()]),
    MotorService("get_brake_name", "GetString",  # the config's brake_name, "" if none
                 read=lambda m: m.config.brake_name or ""),
    MotorService("get_position_sensor_name", "GetString", read=position_sensor_name),
    # sensors (seed 002: force/torque feedback; the position sensor of each motor)
    _setter("enable_position"),
    MotorService("position_sensor/get_sampling_period", "GetInt",
                 read=MotorView.get_position_sampling_period),
    _setter("enable_force_feedback"),
    MotorService("force_feedback_sensor/get_sampling_period", "GetInt",
                 read=MotorView.get_force_feedback_sampling_period),
    _setter("enable_torque_feedback"),
    MotorService("torque_feedback_sensor/get_sampling_period", "GetInt",
                 read=MotorView.get_torque_feedback_sampling_period),
)

MOTOR_TOPICS: tuple[MotorTopic, ...] = (
    MotorTopic("position", "Float64Stamped", POSITION_SENSOR),
    MotorTopic("force_feedback", "Float64Stamped", FORCE_SENSOR),
    MotorTopic("torque_feedback", "Float64Stamped", FORCE_SENSOR),
)


@dataclass(frozen=True)
class MotorTrigger:
    """A per-motor ``std_srvs/srv/Trigger`` service beyond Webots: its row of the
    command table, without arguments; a refusal (ValueError) answers success = false
    with the reason as message."""

    name: str
    command: MotorCommand


#: Modes and safety (issue 5, seed 004), per motor.
MOTOR_TRIGGERS: tuple[MotorTrigger, ...] = tuple(
    MotorTrigger(c.ros_service, c) for c in MOTOR_COMMANDS if c.kind == TRIGGER)


@dataclass(frozen=True)
class MotorAction:
    """A per-motor action: name, servo_sim action type, the command that starts it."""

    name: str
    action: str
    command: MotorCommand


MOTOR_ACTIONS: tuple[MotorAction, ...] = tuple(
    MotorAction(c.ros_service, "".join(w.title() for w in c.name.split("_")), c)
    for c in MOTOR_COMMANDS if c.kind == ACTION)


#: Families of per-motor interfaces; the node parameter ``motor_interfaces`` selects which
#: are created (all by default: the Webots table stays complete).
MOTOR_FAMILIES = ("commands", "getters", "sensors", "safety", "actions")
#: What ``motor_interfaces`` may name: a family, or one row of the table by its name
#: (``get_velocity``, ``position_sensor/enable``, ``trapezoidal_move``).
MOTOR_INTERFACE_CHOICES = MOTOR_FAMILIES + tuple(
    r.name for r in (*MOTOR_SERVICES, *MOTOR_TRIGGERS, *MOTOR_ACTIONS))


def family(row: MotorService | MotorTrigger | MotorAction) -> str:
    """The family of a per-motor table row: commands and getters of the Webots table,
    its sensor services, the safety triggers, the actions."""
    if isinstance(row, MotorTrigger):
        return "safety"
    if isinstance(row, MotorAction):
        return "actions"
    if "/" in row.name:  # position_sensor/enable, torque_feedback_sensor/get_sampling_period
        return "sensors"
    return "getters" if row.is_getter else "commands"


def default_force_topic(motor: MotorView) -> str:
    """The feedback topic of a sensor enabled by the config: named after the motor type."""
    return "torque_feedback" if motor.get_type() == ROTATIONAL else "force_feedback"


@dataclass(frozen=True)
class NodeEndpoint:
    """A node-wide service, publisher or subscription: name, full type, node handler."""

    name: str
    kind: str  # "service" | "publisher" | "subscription"
    type: str  # "pkg/msg/Name" or "pkg/srv/Name"
    handler: str | None = None  # method of the node for services and subscriptions
    #: A service whose request, carried out twice, leaves what once does: a client may
    #: send it again when no answer came (servo_sim.ros.link.resend). Every per-motor
    #: service and trigger is.
    idempotent: bool = True


NODE_ENDPOINTS: tuple[NodeEndpoint, ...] = (
    NodeEndpoint("joint_states", "publisher", "sensor_msgs/msg/JointState"),
    NodeEndpoint("joint_commands", "subscription", "sensor_msgs/msg/JointState",
                 "on_joint_commands"),
    NodeEndpoint("/clock", "publisher", "rosgraph_msgs/msg/Clock"),  # when publish_clock
    NodeEndpoint("~/pause", "service", "std_srvs/srv/Trigger", "on_pause"),
    NodeEndpoint("~/resume", "service", "std_srvs/srv/Trigger", "on_resume"),
    NodeEndpoint("~/step", "service", "servo_sim/srv/SetInt", "on_step", idempotent=False),
    NodeEndpoint("~/reset", "service", "std_srvs/srv/Trigger", "on_reset"),
    # modes and safety (issue 5): node-wide e-stop, the state of every motor
    NodeEndpoint("~/e_stop", "service", "std_srvs/srv/Trigger", "on_e_stop"),
    NodeEndpoint("~/reset_e_stop", "service", "std_srvs/srv/Trigger", "on_reset_e_stop"),
    NodeEndpoint("~/servo_state", "publisher", "servo_sim/msg/ServoState"),
    NodeEndpoint("/diagnostics", "publisher", "diagnostic_msgs/msg/DiagnosticArray"),
)
