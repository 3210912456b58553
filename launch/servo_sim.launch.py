"""Start the servo_sim node: ``ros2 launch servo_sim servo_sim.launch.py [arg:=value ...]``."""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from servo_sim.ros.launch_args import EXECUTOR, LOG_LEVEL, USE_SIM_TIME, flag, number

ARGUMENTS = (
    ("config", str(Path(get_package_share_directory("servo_sim"), "config", "servo_sim.yaml")),
     "ROS parameters file with the motors (the servo_sim config format)."),
    ("namespace", "", "Namespace of the node, its services and topics."),
    ("use_sim_time", "false", USE_SIM_TIME),
    ("real_time_factor", "1.0",
     "Simulated seconds per wall-clock second; 0 = as fast as possible."),
    ("log_level", "info", LOG_LEVEL),
    ("executor", "auto", EXECUTOR),
)


def _node(context) -> list[Node]:
    """The node, once the arguments are known (each checked: one line if bad)."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    return [Node(
        package="servo_sim",
        executable="servo_sim_node",
        name="servo_sim",
        namespace=arg("namespace"),
        output="screen",
        emulate_tty=True,
        parameters=[
            arg("config"),
            {
                "use_sim_time": flag(arg("use_sim_time"), "use_sim_time"),
                "real_time_factor": number(arg("real_time_factor"), "real_time_factor"),
                "executor": arg("executor"),
            },
        ],
        arguments=["--ros-args", "--log-level", arg("log_level")],
    )]


def generate_launch_description() -> LaunchDescription:
    """The launch arguments and the one servo_sim node."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_node)])
