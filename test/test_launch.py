"""launch_testing: the real launch file starts the node, which serves and publishes, then
exits cleanly. Skipped, with the reason, where launch cannot be had (it is not on PyPI);
with launch but servo_sim not colcon-built and sourced, it fails."""

from __future__ import annotations

import time
import unittest
from pathlib import Path

import pytest
from conftest import launch_file_test, require_ros

require_ros("launch_testing", "launch_ros", need="ros_launch")
(servo_srvs,) = require_ros("servo_sim.srv")
pytestmark = pytest.mark.ros_launch
try:
    from ament_index_python.packages import get_package_share_directory

    LAUNCH_FILE = Path(get_package_share_directory("servo_sim"), "launch", "servo_sim.launch.py")
except LookupError as exc:
    pytest.fail(f"servo_sim is not in the ament index ({exc}): colcon build it and source "
                "install/setup.bash", pytrace=False)

import launch_testing  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

TIMEOUT = 30.0


@pytest.mark.launch_test
def generate_test_description():
    """The package's launch file with its defaults, in a namespace."""
    return launch_file_test(LAUNCH_FILE, namespace="robot")


class TestNodeComesUp(unittest.TestCase):
    """Services answer and /robot/joint_states flows."""

    @classmethod
    def setUpClass(cls):
        cls.context = rclpy.Context()
        rclpy.init(context=cls.context)
        cls.node = rclpy.create_node("launch_test_client", context=cls.context)
        cls.executor = SingleThreadedExecutor(context=cls.context)
        cls.executor.add_node(cls.node)

    @classmethod
    def tearDownClass(cls):
        cls.executor.shutdown()
        cls.node.destroy_node()
        rclpy.shutdown(context=cls.context)

    def _spin_until(self, condition, what):
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            self.assertLess(time.monotonic(), deadline, f"timed out waiting for {what}")
            self.executor.spin_once(timeout_sec=0.1)

    def test_node_services_and_joint_states(self):
        self._spin_until(lambda: "servo_sim" in self.node.get_node_names(), "the node")
        client = self.node.create_client(servo_srvs.SetFloat, "/robot/arm/set_position")
        self.assertTrue(client.wait_for_service(timeout_sec=TIMEOUT))
        future = client.call_async(servo_srvs.SetFloat.Request(value=0.5))
        self._spin_until(future.done, "set_position")
        self.assertTrue(future.result().success)
        getter = self.node.create_client(servo_srvs.GetFloat, "/robot/arm/get_target_position")
        self.assertTrue(getter.wait_for_service(timeout_sec=TIMEOUT))
        future = getter.call_async(servo_srvs.GetFloat.Request(ask=True))
        self._spin_until(future.done, "get_target_position")
        self.assertEqual(future.result().value, 0.5)
        received = []
        self.node.create_subscription(JointState, "/robot/joint_states", received.append, 10)
        self._spin_until(lambda: len(received) >= 3, "/robot/joint_states")
        self.assertEqual(list(received[-1].name), ["arm", "gripper"])


@launch_testing.post_shutdown_test()
class TestCleanExit(unittest.TestCase):
    def test_exit_code(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
