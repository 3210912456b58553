"""Which ros2_control plugin reaches the node over its topics, for
``launch/ros2_control.launch.py`` (no ROS imported: the launch file asks the ament
index what is installed and passes the answer in).

The maintained one is ``joint_state_topic_hardware_interface/JointStateTopicSystem``
(ros-controls/topic_based_hardware_interfaces, released to Jazzy, Kilted and Rolling).
Its predecessor, ``topic_based_ros2_control/TopicBasedSystem``
(PickNikRobotics/topic_based_ros2_control), left the distributions in October 2025
(rosdistro #47967) but is still found in older installations and source workspaces;
both read the same ``<param>`` tags (``joint_commands_topic``, ``joint_states_topic``,
``trigger_joint_command_threshold``, ``sum_wrapped_joint_states``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: (package, plugin) of the maintained topic system, then of its predecessor
MAINTAINED = ("joint_state_topic_hardware_interface",
              "joint_state_topic_hardware_interface/JointStateTopicSystem")
PREDECESSOR = ("topic_based_ros2_control", "topic_based_ros2_control/TopicBasedSystem")
_PLUGIN_TAG = re.compile(r"(<plugin>\s*)(" + "|".join(
    re.escape(plugin) for _, plugin in (MAINTAINED, PREDECESSOR)) + r")(\s*</plugin>)")


def choose(installed: Callable[[str], bool]) -> tuple[str, str]:
    """(plugin, what to log) of the topic system to use, given ``installed(package)``:
    the maintained one, else its predecessor; ValueError naming both where neither is."""
    if installed(MAINTAINED[0]):
        return MAINTAINED[1], ""
    if installed(PREDECESSOR[0]):
        return PREDECESSOR[1], (
            f"ros2_control: {MAINTAINED[0]} is not installed; using {PREDECESSOR[1]} "
            f"from {PREDECESSOR[0]}, which the distributions no longer release")
    raise ValueError(
        f"ros2_control: neither {MAINTAINED[0]} (plugin {MAINTAINED[1]}; apt install "
        f"ros-$ROS_DISTRO-{MAINTAINED[0].replace('_', '-')}) nor {PREDECESSOR[0]} (plugin "
        f"{PREDECESSOR[1]}) is installed: one of them carries the node's topics to "
        "ros2_control")


def with_plugin(urdf: str, plugin: str) -> str:
    """``urdf`` with its topic system's ``<plugin>`` (either name) set to ``plugin``; any
    other hardware plugin is left as it is."""
    return _PLUGIN_TAG.sub(lambda m: m.group(1) + plugin + m.group(3), urdf)
