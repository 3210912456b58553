"""Start the servo_sim node: ``ros2 launch servo_sim servo_sim.launch.py [arg:=value ...]``."""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from servo_sim.ros.launch_args import EXECUTOR, LOG_LEVEL, USE_SIM_TIME, servo_sim_node
from servo_sim.ros.params import ROBOT_RACONTEUR_PORT

ARGUMENTS = (
    ("config", str(Path(get_package_share_directory("servo_sim"), "config", "servo_sim.yaml")),
     "ROS parameters file with the motors (the servo_sim config format), or a Webots "
     ".wbt world or .proto (read as the node's config_file)."),
    ("namespace", "", "Namespace of the node, its services and topics."),
    ("use_sim_time", "false", USE_SIM_TIME),
    ("real_time_factor", "1.0",
     "Simulated seconds per wall-clock second; 0 = as fast as possible."),
    ("log_level", "info", LOG_LEVEL),
    ("executor", "auto", EXECUTOR),
    ("robot_raconteur_port", str(ROBOT_RACONTEUR_PORT.value), ROBOT_RACONTEUR_PORT.description),
)


def _node(context) -> list:
    """The node, once the arguments are known (each checked: one line if bad)."""
    return [servo_sim_node(**{name: LaunchConfiguration(name).perform(context)
                              for name, _, _ in ARGUMENTS})]


def generate_launch_description() -> LaunchDescription:
    """The launch arguments and the one servo_sim node."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_node)])
