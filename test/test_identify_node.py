"""What ``servo-sim identify`` writes runs in the ROS node, given as its ``config_file``:
the fitted fields are its parameters, and stepped under a goal the motor is where the
model's API puts the file's motor (test_identify_loads.py: replay and servo-sim run).

Under real rclpy, in process, as test_load_node's (the node starts paused)."""

from __future__ import annotations

import pytest
from conftest import require_ros

rclpy, servo_srvs = require_ros("rclpy", "servo_sim.srv")
pytestmark = pytest.mark.ros

from test_identify_loads import DURATION_S, GOAL, STEP_MS, fitted, trajectory  # noqa: E402,F401
from test_ros_node import Harness  # noqa: E402


def test_the_node_runs_it_from_its_config_file(fitted, executor_kind):  # noqa: F811
    h = Harness(base={"start_paused": True, "config_file": str(fitted["path"])},
                executor_kind=executor_kind)
    try:
        node = h.node
        assert node.get_parameter("motors").value == ["servo"]
        actuator = fitted["motor"]["actuator"]
        for name in ("friction", "stall_torque", "no_load_speed"):
            assert node.get_parameter(f"servo.actuator.{name}").value == actuator[name]
        assert h.call("/servo/set_position", servo_srvs.SetFloat, value=GOAL).success
        steps = round(DURATION_S * 1000 / STEP_MS)
        h.step(steps)
        motor = node.runtime.motor("servo")
        h.wait_for(lambda: node.runtime.time >= DURATION_S - 1e-9, "the steps")
        assert motor.position == pytest.approx(trajectory(fitted["path"], steps)[-1],
                                               abs=1e-12)
    finally:
        h.close()
