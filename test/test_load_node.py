"""The ROS node reads every kind of config file (servo_sim.load) through its
``config_file`` parameter: a Webots world as a YAML config, a URDF's limits over either.

Under real rclpy, in process, as test_ros_node's (the node starts paused).
"""

from __future__ import annotations

import pytest
from conftest import require_ros

rclpy, servo_msgs, servo_srvs = require_ros("rclpy", "servo_sim.msg", "servo_sim.srv")
pytestmark = pytest.mark.ros

from rclpy.parameter import Parameter  # noqa: E402
from test_load import WORLD, YAML, write  # noqa: E402
from test_ros_node import Harness  # noqa: E402

from servo_sim.model import ConfigError  # noqa: E402
from servo_sim.ros.node import ServoSimNode  # noqa: E402

#: A URDF limiting the wrist below the world's maxVelocity (0.5) and maxTorque (10).
URDF = """<robot name="bench">
  <link name="base"/><link name="hand"/>
  <joint name="wrist" type="revolute">
    <parent link="base"/><child link="hand"/>
    <limit lower="-1.5" upper="1.5" effort="4.0" velocity="0.25"/>
  </joint>
</robot>"""


@pytest.mark.parametrize("name", ["bench.wbt", "bench.yaml"])
def test_the_node_runs_the_config_file_of_either_kind(tmp_path, executor_kind, name):
    path = write(tmp_path, name, WORLD if name.endswith(".wbt") else YAML)
    h = Harness(base={"start_paused": True, "config_file": str(path)},
                executor_kind=executor_kind)
    try:
        node = h.node
        assert node.get_parameter("motors").value == ["wrist"]
        assert node.get_parameter("basic_time_step_ms").value == 2
        assert node.get_parameter("config_file").value == str(path)
        assert node.describe_parameter("config_file").read_only
        assert h.call("/wrist/get_max_velocity", servo_srvs.GetFloat, ask=True).value == 0.5
        assert h.call("/wrist/get_max_torque", servo_srvs.GetFloat, ask=True).value == 10.0
        assert node.get_parameter("wrist.min_position").value == -2.0
        assert node.get_parameter("wrist.damping_constant").value == 0.05
    finally:
        h.close()


def test_a_robot_description_limits_a_world(tmp_path, executor_kind):
    path = write(tmp_path, "bench.wbt", WORLD)
    h = Harness(base={"start_paused": True, "config_file": str(path),
                      "robot_description": URDF}, executor_kind=executor_kind)
    try:
        assert h.call("/wrist/get_max_velocity", servo_srvs.GetFloat, ask=True).value == 0.25
        assert h.call("/wrist/get_max_torque", servo_srvs.GetFloat, ask=True).value == 4.0
        assert h.node.get_parameter("wrist.max_position").value == 1.5
        assert h.node.get_parameter("basic_time_step_ms").value == 2  # the world's
    finally:
        h.close()


@pytest.mark.parametrize(("given", "message"), [
    ({"motors": ["arm"], "arm.max_velocity": 1.0},
     r": config_file '{path}' and the config parameters arm\.max_velocity, motors: give the "
     r"config in one place$"),
    ({"basic_time_step_ms": 4},
     r": config_file '{path}' and the config parameters basic_time_step_ms: give"),
])
def test_a_config_file_and_config_parameters_are_one_error(tmp_path, given, message):
    path = write(tmp_path, "bench.wbt", WORLD)
    _refused([Parameter("config_file", value=str(path)),
              *(Parameter(k, value=v) for k, v in given.items())],
             message.format(path=path))


@pytest.mark.parametrize(("name", "message"), [
    ("gone.wbt", r"^{path}: cannot read: No such file"),
    ("arm.urdf", r"^{path}: a URDF gives joint limits, not motors"),
])
def test_a_bad_config_file_is_one_error_naming_it(tmp_path, name, message):
    path = tmp_path / name
    if name.endswith(".urdf"):
        path.write_text(URDF)
    _refused([Parameter("config_file", value=str(path))], message.format(path=path))


def _refused(parameters: list[Parameter], message: str) -> None:
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigError, match=message):
            ServoSimNode(context=context, parameter_overrides=parameters)
    finally:
        rclpy.shutdown(context=context)
