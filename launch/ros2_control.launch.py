"""servo_sim under ros2_control: ``ros2 launch servo_sim ros2_control.launch.py``.

``robot:=so101`` brings up the SO-101 arm (six Feetech STS3215), ``robot:=dynamixel`` a
pan-tilt pair of XM430s, the default a simulated arm and gripper; ``hardware:=sim``
simulates a real-servo config, ``hardware:=feetech port:=/dev/ttyACM0`` drives the arm,
``physics:=mujoco`` moves the URDF's arm in MuJoCo (servo_sim.multibody).

Starts the servo_sim node (its motors configured by ``config`` and by the URDF's
``<limit>`` tags, through its ``robot_description`` parameter), robot_state_publisher,
ros2_control's ``controller_manager`` with the URDF's ``<ros2_control>`` block
(``joint_state_topic_hardware_interface/JointStateTopicSystem`` talking to the node;
where only its predecessor ``topic_based_ros2_control`` is installed, that one, said in
one log line), and the spawners
of joint_state_broadcaster and of the controllers (``controller`` active, the other
loaded inactive).

The node's ``joint_states`` and ``joint_commands`` are remapped under ``/servo_sim``:
joint_state_broadcaster owns ``/joint_states``, and a second publisher there would
feed the topic system its own broadcast.

Timing: the node steps once per controller update (``update_rate`` sets both the
controller_manager's rate and the node's ``basic_time_step_ms`` = 1000 / rate) and
publishes its joint states at nearly that rate (see ``JOINT_STATES_RATIO``), so that
each update reads the state of a recent step. With ``use_sim_time:=true`` the node
publishes ``/clock`` and every node here follows it: pausing the node pauses the
controllers, and ``real_time_factor`` speeds everything up or slows it down together.

Needs ros2_control, ros2_controllers and joint_state_topic_hardware_interface (or
topic_based_ros2_control) installed.
"""

from pathlib import Path

from ament_index_python.packages import get_package_share_directory, get_packages_with_prefixes
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from servo_sim.ros import topic_system
from servo_sim.ros.launch_args import (
    PHYSICS,
    USE_SIM_TIME,
    flag,
    number,
    physics_parameters,
)

SHARE = Path(get_package_share_directory("servo_sim"))
CONTROLLERS = ("forward_position_controller", "joint_trajectory_controller")
#: robot:= -> the files of config/ it brings up: (urdf, config, controllers)
ROBOTS = {
    "servo_sim": ("servo_sim.urdf", "servo_sim.yaml", "ros2_controllers.yaml"),
    "dynamixel": ("dynamixel.urdf", "dynamixel.yaml", "dynamixel_controllers.yaml"),
    "so101": ("so101.urdf", "so101.yaml", "so101_controllers.yaml"),
}
ARGUMENTS = (
    ("robot", "servo_sim",
     "The shipped robot whose files (config/<robot>.urdf, .yaml and controllers) are the "
     "defaults of urdf, config and controllers: " + ", ".join(ROBOTS) + " (SO-101 arm: "
     "so101)."),
    ("urdf", "",
     "URDF with the joints (their <limit> tags configure the motors) and a <ros2_control> "
     "block using joint_state_topic_hardware_interface/JointStateTopicSystem (or "
     "topic_based_ros2_control/TopicBasedSystem: the one installed is used); empty: the "
     "robot's."),
    ("config", "",
     "ROS parameters file with the motors (the servo_sim config format); empty: the "
     "robot's."),
    ("controllers", "",
     "controller_manager parameters: the controllers and their joints; empty: the "
     "robot's."),
    ("controller", "joint_trajectory_controller",
     "Controller to activate: " + " or ".join(CONTROLLERS) + " (the other is loaded "
     "inactive)."),
    ("update_rate", "125",
     "Controller update rate, Hz; the node steps at the same rate (basic_time_step_ms = "
     "1000 / rate, which must be a whole number of ms: 1000, 500, 250, 200, 125, 100, ...)."),
    ("use_sim_time", "false", USE_SIM_TIME + " Pausing the node then pauses the "
     "controllers."),
    ("real_time_factor", "1.0",
     "Simulated seconds per wall-clock second (simulated hardware; use with "
     "use_sim_time:=true to run the controllers at that pace too)."),
    ("hardware", "",
     "Hardware plugin of the motors: sim (the model), dynamixel, feetech or another; empty: "
     "the config's hardware.plugin. hardware:=sim simulates a real-servo config."),
    ("port", "", "Serial port of a real-servo config (e.g. /dev/ttyUSB0, /dev/ttyACM0); "
                 "empty: the config's hardware.port."),
    ("physics", "", PHYSICS),
    ("respawn", "false",
     "Start the servo_sim node again if it exits (after 2 s); the controllers pick its "
     "states up again (README: when the node goes away)."),
    ("log_level", "info", "Log level of servo_sim: debug, info, warn, error or fatal."),
)
#: joint_states rate / update rate. The predecessor topic_based_ros2_control takes one
#: message per read from a queue of 5 (SensorDataQoS): at equal rates a backlog that
#: never drains builds up and the controllers read states 3 to 4 cycles old (30 ms at
#: 125 Hz, measured by benchmarks/bench_ros2_control.py). 2 % slower, one read in 50
#: finds no new message and the backlog drains: 7 ms. The maintained
#: JointStateTopicSystem keeps the latest message from its subscription's callback, so
#: the ratio costs it nothing.
JOINT_STATES_RATIO = 0.98
#: Seconds before a node that exited is started again (respawn:=true).
RESPAWN_DELAY_S = 2.0
#: The node's topics, remapped so that joint_state_broadcaster owns /joint_states.
REMAPPINGS = [("joint_states", "/servo_sim/joint_states"),
              ("joint_commands", "/servo_sim/joint_commands")]


def step_of_rate(update_rate: str) -> tuple[int, int]:
    """(rate in Hz, the node's step in ms) for ``update_rate:=``; ValueError unless the
    step is a whole number of milliseconds."""
    try:
        rate = int(update_rate)
    except ValueError:
        rate = 0
    if rate <= 0 or 1000 % rate:
        raise ValueError(f"update_rate:={update_rate!r}: must be a positive integer that "
                         "divides 1000 (the node's step is 1000 / rate ms)")
    return rate, 1000 // rate


def _nodes(context):
    """The nodes, once the arguments are known (the URDF's text is a parameter of three)."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    packages = get_packages_with_prefixes()
    robot = arg("robot")
    if robot not in ROBOTS:
        raise ValueError(f"robot:={robot!r}: must be one of {', '.join(ROBOTS)}")
    urdf_file, config_file, controllers_file = (
        arg(name) or str(SHARE / "config" / default)
        for name, default in zip(("urdf", "config", "controllers"), ROBOTS[robot], strict=True))
    plugin, note = topic_system.choose(lambda package: package in packages)
    urdf = topic_system.with_plugin(Path(urdf_file).read_text(), plugin)
    active = arg("controller")
    if active not in CONTROLLERS:
        raise ValueError(f"controller:={active!r}: must be one of {', '.join(CONTROLLERS)}")
    rate, step_ms = step_of_rate(arg("update_rate"))
    sim_time = flag(arg("use_sim_time"), "use_sim_time")
    clocked = {"use_sim_time": sim_time}
    node_parameters = {"robot_description": urdf, "basic_time_step_ms": step_ms,
                       "joint_states_rate": rate * JOINT_STATES_RATIO, **clocked,
                       "real_time_factor": number(arg("real_time_factor"), "real_time_factor")}
    if arg("hardware"):
        node_parameters["hardware.plugin"] = arg("hardware")
    node_parameters.update(physics_parameters(arg("physics"), arg("hardware"), urdf_file))
    if arg("port"):
        node_parameters["hardware.port"] = arg("port")
    spawners = [Node(package="controller_manager", executable="spawner",
                     parameters=[clocked],
                     arguments=[name, "--controller-manager", "/controller_manager",
                                *([] if name in ("joint_state_broadcaster", active)
                                  else ["--inactive"])])
                for name in ("joint_state_broadcaster", *CONTROLLERS)]
    return [
        *([LogInfo(msg=note)] if note else []),
        Node(package="servo_sim", executable="servo_sim_node", name="servo_sim",
             output="screen", emulate_tty=True, remappings=REMAPPINGS,
             parameters=[config_file, node_parameters],
             respawn=flag(arg("respawn"), "respawn"), respawn_delay=RESPAWN_DELAY_S,
             arguments=["--ros-args", "--log-level", arg("log_level")]),
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": urdf, **clocked}]),
        Node(package="controller_manager", executable="ros2_control_node", output="screen",
             parameters=[controllers_file, {"update_rate": rate, **clocked}]),
        *spawners,
    ]


def generate_launch_description() -> LaunchDescription:
    """The launch arguments, then the nodes (see the module docstring)."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_nodes)])
