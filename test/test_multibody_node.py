"""The MuJoCo body through the ROS node, in process: ``physics: mujoco`` as parameters,
the Webots table, ``/joint_states``, ``/clock``, pause, step and reset as on the
per-joint body; the node's arm moves exactly as the library's (same config, same
steps). Skipped, saying why, where no ROS 2 can be had; time driven with ~/step."""

from __future__ import annotations

import pytest
from conftest import REPO, require_ros

rclpy, servo_srvs = require_ros("rclpy", "servo_sim.srv")
mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed: pip install "
                                              "'servo_sim[mujoco]'")
pytestmark = pytest.mark.ros

import yaml  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from test_ros_node import Harness  # noqa: E402

from servo_sim.model import Simulation  # noqa: E402
from servo_sim.model.config import flatten, from_ros_parameters  # noqa: E402

#: config/so101.yaml as the node's parameters, simulated, in MuJoCo's so101.urdf
SO101 = {**flatten(yaml.safe_load((REPO / "config" / "so101.yaml").read_text())
                   ["/**/servo_sim"]["ros__parameters"]),
         "hardware.plugin": "sim", "physics": "mujoco", "multibody.model": "so101.urdf",
         "publish_clock": True, "start_paused": True}


def test_the_node_drives_the_multibody_arm_through_every_door(executor_kind):
    h = Harness(base=SO101, executor_kind=executor_kind)
    try:
        states, clock = h.listen("/joint_states", JointState), h.listen("/clock", Clock)
        answer = h.call("/servo_sim/get_parameters", GetParameters,
                        names=["physics", "multibody.model"])
        assert [v.string_value for v in answer.values] == ["mujoco", "so101.urdf"]
        assert h.call("/shoulder_lift/set_position", servo_srvs.SetFloat, value=-0.5).success
        assert h.call("/elbow_flex/set_position", servo_srvs.SetFloat, value=0.8).success
        h.step(125)  # 1 s at 8 ms
        assert h.node.runtime.time_ms == 1000
        h.wait_for(lambda: clock and clock[-1].clock.sec == 1, "/clock at 1 s")
        h.wait_for(lambda: states and states[-1].header.stamp.sec == 1, "joint_states at 1 s")
        # the library, same parameters, same commands and steps: the same arm
        alone = Simulation.from_config(from_ros_parameters({
            k: v for k, v in SO101.items() if k not in ("publish_clock", "start_paused")}))
        alone.motor("shoulder_lift").set_position(-0.5)
        alone.motor("elbow_flex").set_position(0.8)
        alone.step(125)
        message = states[-1]
        expected = {m.name: m.position for m in alone}
        assert dict(zip(message.name, message.position, strict=True)) == expected
        assert abs(expected["shoulder_lift"] + 0.5) < 0.02  # it got there, loaded
        assert h.call("/servo_sim/reset", Trigger).success and h.node.runtime.time_ms == 0
        assert [m.position for m in h.node.runtime.motors] == [0.0] * 6
        h.step(1)  # the body was reset too: the first step again
        alone = Simulation.from_config(from_ros_parameters({
            k: v for k, v in SO101.items() if k not in ("publish_clock", "start_paused")}))
        alone.step(1)
        assert [m.position for m in h.node.runtime.motors] == [m.position for m in alone]
    finally:
        h.close()


def test_the_nodes_config_file_a_world_on_mujoco(tmp_path, executor_kind):
    """``config_file`` a Webots world and ``physics: mujoco``: the world's own robot
    built in MuJoCo, stepped as the library steps it."""
    from test_world_mujoco import arm_world, in_process

    path = arm_world(tmp_path, 0.4, -0.7)
    h = Harness(base={"config_file": str(path), "physics": "mujoco", "start_paused": True},
                executor_kind=executor_kind)
    try:
        h.step(350)  # 0.7 s at 2 ms
        runtime = h.node.runtime
        # the body's type has no public getter: read through the runtime's simulation
        body = runtime._sim.bank.body
        assert runtime.time_ms == 700 and type(body).__name__ == "MujocoBody"
        assert runtime.motor("elbow").position == in_process(path, "mujoco", 0.7)
    finally:
        h.close()
