"""joint_commands read per joint: the aligned layout (topic_based_ros2_control, hand-written
publishers) and the compact one of joint_state_topic_hardware_interface's
JointStateTopicSystem (its write(): every joint named, each array only the joints with
that command interface). No ROS needed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.model.urdf import ros2_control_joints
from servo_sim.ros.node.joint_commands import KINDS, per_joint

NAN = math.nan
#: a robot with each kind of joint the plugin's changelog lists: position, velocity-only
#: and effort-only commands and a mimic joint (also test_ros_node's and the stack test's;
#: the plugin's read() sets every state the node's joint_states carry, position, velocity
#: and effort, and its write() compares each command with the state of its name: each
#: joint the node drives has all three)
STATES = "".join(f'<state_interface name="{k}"/>' for k in ("position", "velocity", "effort"))
URDF = """<robot name="r"><link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <link name="l4"/><link name="l5"/>
  <joint name="arm" type="revolute"><parent link="base"/><child link="l1"/>
    <limit lower="-1.5" upper="1.5" effort="5" velocity="2"/></joint>
  <joint name="finger_mimic" type="prismatic"><parent link="l1"/><child link="l2"/>
    <limit lower="-0.02" upper="0.02" effort="5" velocity="0.1"/>
    <mimic joint="finger" multiplier="-1"/></joint>
  <joint name="wheel" type="continuous"><parent link="base"/><child link="l3"/>
    <limit effort="5" velocity="10"/></joint>
  <joint name="finger" type="prismatic"><parent link="l1"/><child link="l4"/>
    <limit lower="-0.02" upper="0.02" effort="5" velocity="0.1"/></joint>
  <joint name="press" type="revolute"><parent link="base"/><child link="l5"/>
    <limit lower="-1" upper="1" effort="5" velocity="2"/></joint>
  <ros2_control name="r" type="system"><hardware>
    <plugin>joint_state_topic_hardware_interface/JointStateTopicSystem</plugin>
    <param name="joint_commands_topic">/servo_sim/joint_commands</param>
    <param name="joint_states_topic">/servo_sim/joint_states</param></hardware>
  <joint name="arm"><command_interface name="position"/>{states}</joint>
  <joint name="finger_mimic"><param name="mimic">finger</param><param name="multiplier">-1</param>
    <state_interface name="position"/></joint>
  <joint name="wheel"><command_interface name="velocity"/>{states}</joint>
  <joint name="finger"><command_interface name="position"/>{states}</joint>
  <joint name="press"><command_interface name="effort"/>{states}</joint>
</ros2_control></robot>""".replace("{states}", STATES)
INTERFACES = {name: joint["command"] for name, joint in ros2_control_joints(URDF).items()}


def plugin_message(commands: dict[str, float]) -> tuple[list[str], tuple[list, list, list]]:
    """The JointState the plugin's write() publishes for these command values: its loop
    over the joints, pushing each command interface's value into its array."""
    names, arrays = [], ([], [], [])
    for name, kinds in INTERFACES.items():
        names.append(name)
        for kind in kinds:
            arrays[KINDS.index(kind)].append(commands[name])
    return names, arrays


def test_the_compact_message_of_a_mixed_robot_reaches_each_joint():
    names, arrays = plugin_message({"arm": 0.5, "wheel": -2.0, "finger": 0.01, "press": 3.0})
    # by hand: position [0.5, 0.01], velocity [-2.0], effort [3.0] for five names
    assert arrays == ([0.5, 0.01], [-2.0], [3.0])
    assert per_joint(names, arrays, INTERFACES) == {
        "arm": (0.5, None, None), "finger_mimic": (None, None, None),
        "wheel": (None, -2.0, None), "finger": (0.01, None, None),
        "press": (None, None, 3.0)}


def test_aligned_arrays_are_read_by_index_with_nan_or_a_short_array_for_none():
    assert per_joint(["a", "b"], ([0.7, NAN], [NAN, -0.05], []), None) == {
        "a": (0.7, None, None), "b": (None, -0.05, None)}
    # the same with interfaces known: aligned arrays read the same way
    assert per_joint(["arm", "wheel"], ([0.7, NAN], [NAN, -0.05], []), INTERFACES) == {
        "arm": (0.7, None, None), "wheel": (None, -0.05, None)}
    # no robot_description: a short array is "no value" for the names past its end
    assert per_joint(["a", "b"], ([0.2], [], []), None) == {
        "a": (0.2, None, None), "b": (None, None, None)}


def test_a_compact_message_that_does_not_fit_the_interfaces_is_refused_by_name():
    names = list(INTERFACES)
    with pytest.raises(ValueError, match=r"1 position value\(s\) for 5 joints, of which 2 "
                                         r"have a position command interface .*\(arm, finger\)"):
        per_joint(names, ([0.5], [-2.0], [3.0]), INTERFACES)


@given(st.dictionaries(st.sampled_from(["arm", "wheel", "finger", "press"]),
                       st.floats(-10, 10), min_size=4, max_size=4))
def test_every_commanded_joint_gets_its_own_value_back(values):
    """Property: whatever the values, the compact message gives each joint the value the
    plugin put in for it, in the array of its interface, and nothing else."""
    names, arrays = plugin_message(values)
    read = per_joint(names, arrays, INTERFACES)
    for name, kinds in INTERFACES.items():
        expected = [values[name] if kind in kinds else None for kind in KINDS]
        assert list(read[name]) == expected, name
