"""The node's ``joint_commands`` (sensor_msgs/JointState) read per joint (no ROS imported).

Two layouts reach the topic:

- **aligned** arrays, one value per name (``topic_based_ros2_control``'s TopicBasedSystem,
  hand-written publishers): NaN, or an array shorter than the names, means "no value";
- **compact** arrays, as ``joint_state_topic_hardware_interface``'s JointStateTopicSystem
  writes them: every joint of its ``<ros2_control>`` block is named, and each array holds
  the commands of only the joints that have that command interface, in name order. A
  velocity-only joint is in ``velocity`` alone, an effort-only joint in ``effort`` alone,
  and a mimic joint (no command interface) is named with no value at all.

A message whose arrays are each empty or as long as its names is read aligned (the two
layouts agree there); any other is read compact, from the command interfaces that the
robot_description's ``<ros2_control>`` block gives each joint.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial

from ...model import Command
from ...model.motor import CommandRefusedError
from ...runtime import Runtime

KINDS = ("position", "velocity", "effort")
#: (position, velocity, effort) commanded to one joint; None where it has no value
JointCommand = tuple[float | None, float | None, float | None]


def _value(values: Sequence[float], k: int | None) -> float | None:
    if k is None or k >= len(values) or math.isnan(values[k]):
        return None
    return float(values[k])


def per_joint(names: Sequence[str], arrays: Sequence[Sequence[float]],
              interfaces: Mapping[str, Sequence[str]] | None) -> dict[str, JointCommand]:
    """name -> (position, velocity, effort) of one joint_commands message. ``arrays`` are
    its position, velocity and effort; ``interfaces`` each joint's command interfaces
    from the robot_description (None: there is none). ValueError, naming the array and
    the joints, for a compact message that does not fit those interfaces."""
    aligned = all(len(values) in (0, len(names)) for values in arrays)
    if aligned or interfaces is None:
        return {name: tuple(_value(values, k) for values in arrays)  # type: ignore[misc]
                for k, name in enumerate(names)}
    index: dict[str, list[int | None]] = {name: [None, None, None] for name in names}
    for j, (kind, values) in enumerate(zip(KINDS, arrays, strict=True)):
        owners = [name for name in names if kind in interfaces.get(name, ())]
        if len(values) != len(owners):
            raise ValueError(
                f"joint_commands: {len(values)} {kind} value(s) for {len(names)} joints, of "
                f"which {len(owners)} have a {kind} command interface in the "
                f"robot_description ({', '.join(owners) or 'none'}); the message is ignored")
        for k, name in enumerate(owners):
            index[name][j] = k
    return {name: tuple(_value(values, k) for values, k in zip(arrays, index[name],  # type: ignore[misc]
                                                               strict=True))
            for name in names}


def command_joints(runtime: Runtime, motors: Mapping[str, str],
                   commands: Mapping[str, JointCommand]) -> list[tuple[str, bool]]:
    """Each joint's command through the runtime's check: position (with
    its speed), else velocity, else effort; ``motors`` maps joint names to motor names.
    Returns what to warn of, with whether it may be throttled (a refusal repeats with
    every message; a rejected value is said each time)."""
    said: list[tuple[str, bool]] = []
    for name, (position, velocity, effort) in commands.items():
        motor_name = motors.get(name)
        if motor_name is None:
            if (position, velocity, effort) != (None, None, None):  # not a mimic joint
                said.append((f"joint_commands: unknown joint {name!r}", True))
            continue
        command = partial(runtime.command, motor_name)
        try:
            if position is not None:
                command(Command.POSITION, position)
                if velocity is not None:
                    command(Command.VELOCITY, abs(velocity))
            elif velocity is not None:
                command(Command.POSITION, math.inf)
                command(Command.VELOCITY, velocity)
            elif effort is not None:
                command(Command.FORCE, effort)
        except CommandRefusedError as exc:
            said.append((f"joint_commands: {exc}", True))
        except ValueError as exc:
            said.append((f"joint_commands: {exc}", False))
    return said
