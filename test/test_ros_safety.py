"""Modes and safety on ROS (issue 5): the per-motor Trigger services, the node-wide
e-stop, the trapezoidal_move action, ~/servo_state and /diagnostics, under real rclpy.

Skipped, with the reason shown, where no ROS 2 can be had (conftest.require_ros). Time
is driven with ~/step (the node starts paused); waits are on conditions.
"""

from __future__ import annotations

import math

import pytest
from conftest import require_ros

rclpy, servo_actions, servo_msgs, servo_srvs = require_ros(
    "rclpy", "servo_sim.action", "servo_sim.msg", "servo_sim.srv")
pytestmark = pytest.mark.ros

from action_msgs.msg import GoalStatus  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.action import ActionClient, get_action_names_and_types  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from test_ros_node import CONFIG, TIMEOUT, Harness  # noqa: E402

from servo_sim.model import ServoMode, StateFlags  # noqa: E402
from servo_sim.ros.interface import MOTOR_TRIGGERS  # noqa: E402

Move = servo_actions.TrapezoidalMove


@pytest.fixture
def h(executor_kind):
    harness = Harness(executor_kind=executor_kind)
    yield harness
    harness.close()


class Mover:
    """An action client of one motor's trapezoidal_move, spun by the harness."""

    def __init__(self, h: Harness, motor: str):
        self.h = h
        self.client = ActionClient(h.client, Move, f"/{motor}/trapezoidal_move")
        assert self.client.wait_for_server(timeout_sec=TIMEOUT)
        self.feedback: list = []

    def send(self, target, velocity=0.0, vmax=2.0, amax=8.0):
        future = self.client.send_goal_async(
            Move.Goal(target_position=target, target_velocity=velocity, max_velocity=vmax,
                      max_acceleration=amax),
            feedback_callback=lambda fb: self.feedback.append(fb.feedback))
        self.h.wait_for(future.done, "the goal response")
        handle = future.result()
        assert handle.accepted
        return handle, handle.get_result_async()


def test_safety_interfaces_are_served_with_their_types(h):
    expected = {f"/{m}/{t.name}": "std_srvs/srv/Trigger"
                for m in ("arm", "grip__left") for t in MOTOR_TRIGGERS}
    expected.update({"/servo_sim/e_stop": "std_srvs/srv/Trigger",
                     "/servo_sim/reset_e_stop": "std_srvs/srv/Trigger"})
    h.wait_for(lambda: expected.items() <= {
        n: t[0] for n, t in h.client.get_service_names_and_types()}.items(), "the services")
    h.wait_for(lambda: {("/arm/trapezoidal_move", "servo_sim/action/TrapezoidalMove"),
                        ("/grip__left/trapezoidal_move", "servo_sim/action/TrapezoidalMove")}
               <= {(n, t[0]) for n, t in get_action_names_and_types(h.client)}, "the actions")
    topics = dict(h.client.get_topic_names_and_types())
    assert topics["/servo_sim/servo_state"] == ["servo_sim/msg/ServoState"]
    assert topics["/diagnostics"] == ["diagnostic_msgs/msg/DiagnosticArray"]


def test_servo_state_reports_modes_flags_and_commands(h):
    states = h.listen("/servo_sim/servo_state", servo_msgs.ServoState)
    h.wait_for(lambda: h.node.count_subscribers("/servo_sim/servo_state") >= 1, "matching")
    assert h.call("/arm/set_position", servo_srvs.SetFloat, value=0.5).success
    assert h.call("/grip__left/halt", Trigger).success
    h.step(4)  # 32 ms: a joint_states (and servo_state) time, rate 62.5 Hz
    h.wait_for(lambda: states and states[-1].header.stamp.nanosec == 32_000_000,
               "the servo_state of t = 32 ms (simulated time)")
    s = states[-1]
    assert list(s.name) == ["arm", "grip::left"]
    assert list(s.mode) == [ServoMode.POSITION, ServoMode.HALT]
    assert list(s.servo_state_flags) == [
        StateFlags.READY | StateFlags.ENABLED | StateFlags.VALID_COMMAND,
        StateFlags.READY | StateFlags.ENABLED]
    assert s.position_command[0] == 0.5 and math.isnan(s.velocity_command[0])
    assert math.isnan(s.effort_command[0])
    # at the speed limit (2 rad/s) since the first step: 4 steps of 8 ms
    assert s.position[0] == pytest.approx(0.064) and s.velocity[0] == pytest.approx(2.0)
    assert s.acceleration[0] == pytest.approx(0.0, abs=1e-9)
    assert h.call("/grip__left/set_force", servo_srvs.SetFloat, value=2.0).success
    h.step(2)
    h.wait_for(lambda: states[-1].header.stamp.nanosec == 48_000_000, "t = 48 ms")
    s = states[-1]
    assert s.mode[1] == ServoMode.EFFORT and s.effort_command[1] == 2.0
    assert s.servo_state_flags[1] & StateFlags.VALID_COMMAND


def test_node_wide_e_stop_latches_under_concurrent_calls(h):
    """Three services keep requests in flight around a node-wide e-stop (3 each at a
    time); every request sent after its answer is refused, then reset + enable restore."""
    clients = [(h.client.create_client(srv, name), request)
               for name, srv, request in (
                   ("/arm/set_position", servo_srvs.SetFloat, servo_srvs.SetFloat.Request),
                   ("/arm/set_velocity", servo_srvs.SetFloat, servo_srvs.SetFloat.Request),
                   ("/arm/enable", Trigger, Trigger.Request))]
    for c, _ in clients:
        assert c.wait_for_service(timeout_sec=TIMEOUT)
    before = [c.call_async(request()) for c, request in clients * 3]
    stop = h.client.create_client(Trigger, "/servo_sim/e_stop")
    assert stop.wait_for_service(timeout_sec=TIMEOUT)
    stopped = stop.call_async(Trigger.Request())
    h.wait_for(stopped.done, "the e-stop answer")
    after = []
    for _ in range(4):
        batch = [c.call_async(request()) for c, request in clients * 3]
        h.wait_for(lambda batch=batch: all(f.done() for f in batch), "a batch of answers")
        after += batch
    h.wait_for(lambda: all(f.done() for f in before), "the answers sent before")
    assert stopped.result().success
    assert [f.result().success for f in after] == [False] * 36
    bank = h.node.runtime._sim.bank  # every motor's latch at once (the model's arrays)
    assert not bank.enabled.any() and bank.e_stop.all()
    enable = h.call("/arm/enable", Trigger)
    assert not enable.success and "e-stop latched" in enable.message
    assert h.call("/servo_sim/reset_e_stop", Trigger).success
    assert not h.call("/arm/set_position", servo_srvs.SetFloat, value=0.3).success  # disabled
    assert h.call("/arm/enable", Trigger).message == "arm: mode halt, flags ready|enabled"
    assert h.call("/arm/set_position", servo_srvs.SetFloat, value=0.3).success


def test_trapezoidal_move_action_timing_feedback_and_result(h):
    # arm: V = 2, A = 8 -> 0.25 s up, 0.25 s at 2 rad/s, 0.25 s down: 0.75 s; the step
    # starting at 752 ms (the 95th) completes it
    mover = Mover(h, "arm")
    _, result = mover.send(1.0)
    for done in (25, 50, 75, 94):  # a feedback topic keeps 10: read them as they come
        h.step(done - h.node.runtime.time_ms // 8)
        h.wait_for(lambda done=done: len(mover.feedback) >= done * 8 // 50,
                   f"the feedback of {done * 8} ms")
    assert not result.done()
    h.step(1)
    h.wait_for(result.done, "the result")
    r = result.result()
    assert r.status == GoalStatus.STATUS_SUCCEEDED
    assert (r.result.success, r.result.message) == (True, "reached 1")
    assert r.result.duration == pytest.approx(0.752)
    assert r.result.position == pytest.approx(1.0, abs=1e-9)
    remaining = [f.remaining_distance for f in mover.feedback]
    assert remaining[0] == pytest.approx(1.0) and remaining == sorted(remaining, reverse=True)
    assert max(f.velocity for f in mover.feedback) == pytest.approx(2.0)
    assert h.node.runtime.motor("arm").mode is ServoMode.POSITION


def test_preemption_cancel_and_new_commands_end_goals_cleanly(h):
    mover = Mover(h, "arm")
    _, first_result = mover.send(1.0)
    h.step(20)
    second, second_result = mover.send(-1.0)
    h.step(1)
    h.wait_for(first_result.done, "the first result")
    r = first_result.result()
    assert r.status == GoalStatus.STATUS_ABORTED
    assert r.result.message == "preempted by a new trapezoidal_move"
    h.step(10)
    cancel = second.cancel_goal_async()
    h.wait_for(cancel.done, "the cancel answer")
    h.step(1)
    h.wait_for(second_result.done, "the second result")
    assert second_result.result().status == GoalStatus.STATUS_CANCELED
    arm = h.node.runtime.motor("arm")
    assert arm.mode is ServoMode.HALT
    _, third_result = mover.send(0.5)
    h.step(3)
    assert h.call("/arm/set_velocity", servo_srvs.SetFloat, value=1.0).success
    h.step(1)
    h.wait_for(third_result.done, "the third result")
    r = third_result.result()
    assert r.status == GoalStatus.STATUS_ABORTED and "superseded" in r.result.message
    _, refused = mover.send(math.nan)
    h.wait_for(refused.done, "the refused result")
    r = refused.result()
    assert r.status == GoalStatus.STATUS_ABORTED
    assert r.result.message == "motor 'arm': target_position = nan rejected: NaN"


@pytest.fixture
def watched(executor_kind):
    harness = Harness(CONFIG, executor_kind=executor_kind, **{"arm.command_timeout": 0.1})
    yield harness
    harness.close()


def test_watchdog_halts_warns_once_and_diagnostics_say_why(watched):
    h = watched
    logs = h.listen("/rosout", Log)
    diagnostics = h.listen("/diagnostics", DiagnosticArray)
    assert h.node.get_parameter("arm.command_timeout").value == 0.1
    assert h.call("/arm/set_position", servo_srvs.SetFloat, value=0.5).success
    h.step(13)
    assert h.node.runtime.motor("arm").mode is ServoMode.POSITION
    h.step(20)
    arm = h.node.runtime.motor("arm")
    assert arm.mode is ServoMode.HALT and arm.flags & StateFlags.WARNING
    why = "motor 'arm': no command for 0.1 s (command_timeout) in position mode: halted"
    h.wait_for(lambda: any(m.msg == why for m in logs), "the watchdog warning")
    assert h.call("/grip__left/e_stop", Trigger).success

    def statuses():
        if not diagnostics:
            return {}
        return {s.name: s for s in diagnostics[-1].status}

    h.wait_for(lambda: statuses().get("servo_sim: grip::left") is not None
               and statuses()["servo_sim: grip::left"].level == DiagnosticStatus.ERROR,
               "diagnostics after the e-stop (published every second)")
    arm_status = statuses()["servo_sim: arm"]
    assert arm_status.level == DiagnosticStatus.WARN
    assert arm_status.message == why.removeprefix("motor 'arm': ")
    assert statuses()["servo_sim: grip::left"].message == \
        "e-stop latched (reset_e_stop, then enable)"
    assert {v.key: v.value for v in arm_status.values}["mode"] == "halt"
    assert sum(m.msg == why for m in logs) == 1
