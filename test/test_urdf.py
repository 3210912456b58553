"""The URDF and ros2_control files: limits into the motors, interfaces matching the node."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from servo_sim.model import ConfigError, load_config, parse_config
from servo_sim.model.config import ros_name, to_dict
from servo_sim.model.urdf import apply_urdf, joint_limits, ros2_control_joints
from servo_sim.ros import topic_system

ROOT = Path(__file__).resolve().parents[1]
URDF = (ROOT / "config" / "servo_sim.urdf").read_text()
CONFIG = load_config(ROOT / "config" / "servo_sim.yaml")
#: what the node's joint_commands accepts and its joint_states carries
NODE_INTERFACES = {"position", "velocity", "effort"}
#: the shipped robots for launch/ros2_control.launch.py: (URDF, config, controllers)
ROBOTS = [("servo_sim.urdf", "servo_sim.yaml", "ros2_controllers.yaml"),
          ("dynamixel.urdf", "dynamixel.yaml", "dynamixel_controllers.yaml"),
          ("so101.urdf", "so101.yaml", "so101_controllers.yaml")]
robots = pytest.mark.parametrize("urdf, config, controllers", [
    tuple((ROOT / "config" / name) for name in robot) for robot in ROBOTS],
    ids=[robot[0] for robot in ROBOTS])


def urdf_with(**arm_limit) -> str:
    attrs = " ".join(f'{k}="{v}"' for k, v in arm_limit.items())
    return URDF.replace('<limit lower="-1.5" upper="1.5" effort="5.0" velocity="2.0"/>',
                        f"<limit {attrs}/>")


def test_limits_read_from_the_shipped_urdf():
    assert joint_limits(URDF) == {
        "arm": {"type": "rotational", "min_position": -1.5, "max_position": 1.5,
                "max_velocity": 2.0, "max_torque": 5.0},
        "gripper": {"type": "linear", "min_position": 0.0, "max_position": 0.04,
                    "max_velocity": 0.1, "max_force": 20.0},
    }


@robots
def test_the_urdf_and_its_config_agree(urdf, config, controllers):
    """One description: applying the URDF to its config changes nothing."""
    config = load_config(config)
    assert to_dict(apply_urdf(config, urdf.read_text())) == to_dict(config)


@robots
def test_ros2_control_joints_and_interfaces_match_the_node(urdf, config, controllers):
    joints = ros2_control_joints(urdf.read_text())
    assert set(joints) == {ros_name(m.name) for m in load_config(config).motors}
    for interfaces in joints.values():
        assert set(interfaces["command"]) <= NODE_INTERFACES and interfaces["command"]
        assert set(interfaces["state"]) <= NODE_INTERFACES


@robots
def test_the_topic_based_system_is_wired_to_the_launch_remappings(urdf, config, controllers):
    import xml.etree.ElementTree as ET

    hardware = ET.fromstring(urdf.read_text()).find("ros2_control/hardware")
    assert hardware.findtext("plugin") == topic_system.MAINTAINED[1]
    params = {p.get("name"): p.text for p in hardware.iter("param")}
    launch = (ROOT / "launch" / "ros2_control.launch.py").read_text()
    for key, topic in (("joint_commands_topic", "joint_commands"),
                       ("joint_states_topic", "joint_states")):
        assert params[key] == f"/servo_sim/{topic}"
        assert f'("{topic}", "{params[key]}")' in launch


@robots
def test_controllers_use_the_urdf_joints_and_interfaces(urdf, config, controllers):
    controllers = yaml.safe_load(controllers.read_text())
    joints = ros2_control_joints(urdf.read_text())
    manager = controllers["controller_manager"]["ros__parameters"]
    assert {"joint_state_broadcaster", "forward_position_controller",
            "joint_trajectory_controller"} <= set(manager)
    forward = controllers["forward_position_controller"]["ros__parameters"]
    trajectory = controllers["joint_trajectory_controller"]["ros__parameters"]
    for params in (forward, trajectory):
        assert set(params["joints"]) <= set(joints)
    for joint in forward["joints"]:
        assert forward["interface_name"] in joints[joint]["command"]
    for joint in trajectory["joints"]:
        assert set(trajectory["command_interfaces"]) <= set(joints[joint]["command"])
        assert set(trajectory["state_interfaces"]) <= set(joints[joint]["state"])
        # a lost node must abort a goal (README): every joint has a goal tolerance
        assert trajectory["constraints"][joint]["goal"] > 0
    assert trajectory["constraints"]["goal_time"] > 0
    assert 1000 / manager["update_rate"] == load_config(config).basic_time_step_ms


def test_urdf_limits_override_the_config():
    config = apply_urdf(CONFIG, urdf_with(lower=-1.0, upper=0.5, effort=3.0, velocity=1.25))
    arm = config.motors[0]
    assert (arm.min_position, arm.max_position, arm.max_force, arm.max_velocity) == (
        -1.0, 0.5, 3.0, 1.25)
    assert config.motors[1] == CONFIG.motors[1]
    assert config.source == CONFIG.source


def test_continuous_joints_have_no_position_limits():
    urdf = URDF.replace('name="arm" type="revolute"', 'name="arm" type="continuous"')
    assert "min_position" not in joint_limits(urdf)["arm"]


@pytest.mark.parametrize("urdf, message", [
    ("<robot", "robot_description is not valid XML"),
    ("<model/>", "the root element is <model>, not <robot>"),
    (urdf_with(lower="low", upper=1.0), "joint 'arm' <limit>: lower='low' is not a number"),
    (URDF.replace('name="gripper" type="prismatic"', 'name="gripper" type="revolute"'),
     "motor 'gripper': the URDF joint is rotational, the motor linear"),
    (urdf_with(lower=-2.0, upper=1.0),
     "motor 'arm': field 'min_position' = -2.0: soft limit below the hard stop"),
])
def test_bad_urdf_fails_with_one_message(urdf, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        apply_urdf(CONFIG, urdf)


def test_motors_without_a_joint_keep_their_config():
    config = parse_config({"motors": [{"name": "wrist", "max_velocity": 3.0}]})
    assert apply_urdf(config, URDF) == config


TOPIC_URDF = """<robot name="r"><ros2_control name="r" type="system"><hardware>
  <plugin>{}</plugin>
  <param name="joint_states_topic">/servo_sim/joint_states</param>
</hardware></ros2_control></robot>"""


def test_the_launch_uses_the_maintained_topic_system_where_it_is_installed():
    plugin, note = topic_system.choose({"joint_state_topic_hardware_interface",
                                        "topic_based_ros2_control"}.__contains__)
    assert plugin == "joint_state_topic_hardware_interface/JointStateTopicSystem"
    assert note == ""
    old = TOPIC_URDF.format("topic_based_ros2_control/TopicBasedSystem")
    assert topic_system.with_plugin(old, plugin) == TOPIC_URDF.format(plugin)


def test_where_only_the_old_topic_system_is_installed_the_launch_says_so_and_uses_it():
    plugin, note = topic_system.choose({"topic_based_ros2_control"}.__contains__)
    assert plugin == "topic_based_ros2_control/TopicBasedSystem"
    assert "joint_state_topic_hardware_interface is not installed" in note
    assert "\n" not in note
    new = TOPIC_URDF.format("joint_state_topic_hardware_interface/JointStateTopicSystem")
    assert topic_system.with_plugin(new, plugin) == TOPIC_URDF.format(plugin)


def test_with_neither_topic_system_installed_one_error_names_both_packages():
    with pytest.raises(ValueError) as error:
        topic_system.choose(set().__contains__)
    message = str(error.value)
    assert "joint_state_topic_hardware_interface" in message
    assert "topic_based_ros2_control" in message and "\n" not in message


def test_another_hardware_plugin_in_the_urdf_is_left_alone():
    mine = TOPIC_URDF.format("my_robot_driver/MySystem")
    assert topic_system.with_plugin(mine, topic_system.MAINTAINED[1]) == mine
