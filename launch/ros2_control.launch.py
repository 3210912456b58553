"""servo_sim under ros2_control: ``ros2 launch servo_sim ros2_control.launch.py``.

Starts the servo_sim node (its motors configured by ``config`` and by the URDF's
``<limit>`` tags, through its ``robot_description`` parameter), robot_state_publisher,
ros2_control's ``controller_manager`` with the URDF's ``<ros2_control>`` block
(``topic_based_ros2_control/TopicBasedSystem`` talking to the node), and the spawners
of joint_state_broadcaster and of the controllers (``controller`` active, the other
loaded inactive).

The node's ``joint_states`` and ``joint_commands`` are remapped under ``/servo_sim``:
joint_state_broadcaster owns ``/joint_states``, and a second publisher there would
feed the TopicBasedSystem its own broadcast.

Needs ros2_control, ros2_controllers and topic_based_ros2_control installed.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

SHARE = Path(get_package_share_directory("servo_sim"))
CONTROLLERS = ("forward_position_controller", "joint_trajectory_controller")
ARGUMENTS = (
    ("urdf", str(SHARE / "config" / "servo_sim.urdf"),
     "URDF with the joints (their <limit> tags configure the motors) and a <ros2_control> "
     "block using topic_based_ros2_control/TopicBasedSystem."),
    ("config", str(SHARE / "config" / "servo_sim.yaml"),
     "ROS parameters file with the motors (the servo_sim config format)."),
    ("controllers", str(SHARE / "config" / "ros2_controllers.yaml"),
     "controller_manager parameters: the controllers and their joints."),
    ("controller", "joint_trajectory_controller",
     "Controller to activate: " + " or ".join(CONTROLLERS) + " (the other is loaded "
     "inactive)."),
    ("log_level", "info", "Log level of servo_sim: debug, info, warn, error or fatal."),
)
#: The node's topics, remapped so that joint_state_broadcaster owns /joint_states.
REMAPPINGS = [("joint_states", "/servo_sim/joint_states"),
              ("joint_commands", "/servo_sim/joint_commands")]


def _nodes(context):
    """The nodes, once the URDF path is known (its text is a parameter of three nodes)."""
    arg = LaunchConfiguration
    urdf = Path(arg("urdf").perform(context)).read_text()
    active = arg("controller").perform(context)
    if active not in CONTROLLERS:
        raise ValueError(f"controller:={active!r}: must be one of {', '.join(CONTROLLERS)}")
    description = {"robot_description": urdf}
    spawners = [Node(package="controller_manager", executable="spawner",
                     arguments=[name, "--controller-manager", "/controller_manager",
                                *([] if name in ("joint_state_broadcaster", active)
                                  else ["--inactive"])])
                for name in ("joint_state_broadcaster", *CONTROLLERS)]
    return [
        Node(package="servo_sim", executable="servo_sim_node", name="servo_sim",
             output="screen", emulate_tty=True, remappings=REMAPPINGS,
             parameters=[arg("config"), description],
             arguments=["--ros-args", "--log-level", arg("log_level")]),
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[description]),
        Node(package="controller_manager", executable="ros2_control_node", output="screen",
             parameters=[arg("controllers")]),
        *spawners,
    ]


def generate_launch_description() -> LaunchDescription:
    """The launch arguments, then the nodes (see the module docstring)."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_nodes)])
