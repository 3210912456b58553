"""launch_testing: ``ros2_control.launch.py`` with its defaults drives the motors through
joint_trajectory_controller and forward_position_controller, and a node that goes away
under a trajectory aborts the goal instead of "succeeding" on a frozen state; the
respawned node is picked up again.

Skipped, with the reason, where ros2_control is not installed (it is not on PyPI)."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest
from conftest import launch_file_test, require_ros

require_ros("launch_testing", "launch_ros", need="ros_launch")
require_ros("controller_manager", "control_msgs.action", "controller_manager_msgs.srv",
            need="ros2_control")
pytestmark = [pytest.mark.ros_launch, pytest.mark.ros2_control]
try:
    from ament_index_python.packages import (
        get_package_share_directory,
        get_packages_with_prefixes,
    )

    from servo_sim.ros import topic_system

    LAUNCH_FILE = Path(get_package_share_directory("servo_sim"), "launch",
                       "ros2_control.launch.py")
    for package in ("joint_trajectory_controller", "forward_command_controller",
                    "joint_state_broadcaster"):
        get_package_share_directory(package)
    # the launch file picks the topic system installed, and says so if it is the old one
    TOPIC_PLUGIN = topic_system.choose(lambda p: p in get_packages_with_prefixes())[0]
except (LookupError, ValueError) as exc:  # controller_manager is there: the stack is whole
    pytest.fail(f"not in the ament index: {exc} (colcon build servo_sim, install "
                "ros2_controllers and joint_state_topic_hardware_interface)", pytrace=False)

import launch_testing  # noqa: E402
import launch_testing.asserts  # noqa: E402
from ros2_control_stack import (  # noqa: E402
    ABORTED,
    FORWARD,
    JTC,
    SUCCEEDED,
    StackClient,
    alive,
    descendants,
    kill,
)

#: Final positions after a trajectory: the controller's goal tolerances
#: (config/ros2_controllers.yaml), arm in rad and gripper in m.
TOLERANCE = (0.01, 0.002)
#: The trajectory's error codes that a lost node may give.
PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = -4, -5


@pytest.mark.launch_test
def generate_test_description():
    """The stack with its defaults; the node respawns when it exits."""
    return launch_file_test(LAUNCH_FILE, respawn="true")


class TestStack(unittest.TestCase):
    """In order: a trajectory, the forward controller, then a lost node."""

    @classmethod
    def setUpClass(cls):
        cls.stack = StackClient()
        cls.stack.wait_ready(JTC)

    @classmethod
    def tearDownClass(cls):
        cls.stack.close()

    def test_1_trajectory_succeeds_and_ends_on_target(self):
        status, result, wall = self.stack.follow([(1.0, [0.25, 0.01]), (2.0, [0.5, 0.02])])
        self.assertEqual(status, SUCCEEDED, result.error_string)
        self.assertEqual(result.error_code, 0)
        self.assertGreater(wall, 1.9)  # a 2 s trajectory takes its 2 s
        final = self.stack.wait_positions([0.5, 0.02], TOLERANCE, timeout=2.0)
        self.assertAlmostEqual(final["arm"], 0.5, delta=TOLERANCE[0])
        self.assertAlmostEqual(final["gripper"], 0.02, delta=TOLERANCE[1])

    def test_2_forward_position_controller_moves_the_motors(self):
        self.stack.switch([FORWARD], [JTC])
        try:
            self.stack.command([-0.3, 0.01])
            # the arm covers 0.8 rad at up to 2 rad/s: about 0.6 s with the ramps
            self.stack.spin_until(lambda: abs(self.stack.positions()["arm"] + 0.3) < 0.05,
                                  "the arm near -0.3", timeout=10.0)
            self.stack.wait_positions([-0.3, 0.01], TOLERANCE, timeout=5.0)
        finally:
            self.stack.switch([JTC], [FORWARD])
        self.stack.wait_ready(JTC)

    def test_3_a_lost_node_aborts_the_goal_and_a_respawned_one_is_picked_up(self):
        nodes = descendants("servo_sim_node")
        self.assertEqual(len(nodes), 1, nodes)
        handle = self.stack.send([(2.0, [0.5, 0.02])])  # from -0.3: 0.8 rad in 2 s
        self.stack.spin_until(lambda: self.stack.positions()["arm"] > -0.2, "the arm moving")
        kill(nodes[0])
        self.stack.spin_until(lambda: not alive(nodes[0]), "the node's exit", timeout=10.0)
        frozen = self.stack.positions()
        status, result = self.stack.result(handle)
        # the controllers kept the last states they had: the goal aborts, no success
        self.assertEqual(status, ABORTED)
        self.assertIn(result.error_code, (PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED),
                      result.error_string)
        self.assertEqual(self.stack.positions(), frozen)  # stale, not NaN
        # respawned (launch's respawn:=true), the node starts from its config and the
        # controller's hold command brings the motors back to where it holds them
        self.stack.spin_until(lambda: [p for p in descendants("servo_sim_node")
                                       if p != nodes[0]], "the respawned node")
        self.stack.spin_until(lambda: self.stack.positions() != frozen,
                              "states from the respawned node")
        status, result, _ = self.stack.follow([(1.5, [0.2, 0.01])])
        self.assertEqual(status, SUCCEEDED, result.error_string)
        self.stack.wait_positions([0.2, 0.01], TOLERANCE, timeout=2.0)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_the_stack_says_what_happened(self, proc_output):
        # what the user sees in the log when the node goes away under a trajectory
        launch_testing.asserts.assertInStream(proc_output, "Aborted due to",
                                              "ros2_control_node", stream="stderr")

    def test_exit_codes(self, proc_info):
        # servo_sim (also the one ended by the test) exits 0; ros2_control_node may
        # end with -2 on the launch's SIGINT (upstream behaviour)
        for info in proc_info:
            allowed = (0, -2) if "ros2_control_node" in info.action.name else (0,)
            self.assertIn(info.returncode, allowed, info.action.name)
