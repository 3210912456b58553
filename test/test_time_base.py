"""One time base that ROS tools agree with (issue 24), from another process as users
see it: every stamped topic against a stock subscriber's own clock.

By default the node stamps with its ROS clock (the wall clock): a consumer on its
default clock finds ``now() - stamp`` within 0.1 s. With ``use_sim_time:=true`` (one
switch with ``publish_clock``) the node publishes /clock and stamps each sample with its
simulated time: a consumer on sim time finds the stamps at the /clock it follows, at
real_time_factor 1 and 3; paused, neither moves; a step moves both; a reset takes both
back to 0. Bounds are generous (a loaded machine delays the consumer), figures in the
README.
"""

from __future__ import annotations

import re
import statistics
import time

import pytest
from conftest import REPO, TIMEOUT, destroy_node, require_ros

rclpy, servo_msgs, servo_srvs, servo_actions = require_ros(
    "rclpy", "servo_sim.msg", "servo_sim.srv", "servo_sim.action")
pytestmark = pytest.mark.ros

from action_msgs.msg import GoalStatusArray  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

STEP_S = 0.008  # config/servo_sim.yaml
SENSORS = ("-p", "arm.position_sensor.sampling_period_ms:=16",
           "-p", "arm.force_feedback_sampling_period_ms:=16")


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class Consumer:
    """A stock rclpy node (on its default clock, or on sim time) that records, for each
    stamped topic of the node, now() - stamp at each arrival."""

    def __init__(self, namespace: str, use_sim_time: bool) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(
            "time_base_consumer", context=self.context,
            parameter_overrides=[Parameter("use_sim_time", value=use_sim_time)])
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.lags: dict[str, list[float]] = {}
        self.last: dict[str, float] = {}
        self.goals: dict[bytes, float] = {}  # goal id -> now() - its stamp
        ns = f"/{namespace}"
        for topic, kind in ((f"{ns}/joint_states", JointState),
                            (f"{ns}/servo_sim/servo_state", servo_msgs.ServoState),
                            (f"{ns}/arm/position", servo_msgs.Float64Stamped),
                            (f"{ns}/arm/torque_feedback", servo_msgs.Float64Stamped),
                            ("/diagnostics", DiagnosticArray)):
            self.node.create_subscription(kind, topic, self._record(topic, kind), 100)
        self.node.create_subscription(GoalStatusArray,
                                      f"{ns}/arm/trapezoidal_move/_action/status",
                                      self._record_goals, 10)
        self.clock: list[float] = []
        self.node.create_subscription(Clock, "/clock",
                                      lambda m: self.clock.append(seconds(m.clock)), 100)

    def now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def _record(self, topic: str, kind):
        def record(msg) -> None:
            if kind is DiagnosticArray and not any(s.name.endswith(": arm")
                                                   for s in msg.status):
                return  # another node's
            self.last[topic] = seconds(msg.header.stamp)
            self.lags.setdefault(topic, []).append(self.now() - self.last[topic])
        return record

    def _record_goals(self, msg: GoalStatusArray) -> None:
        for status in msg.status_list:  # its stamp: when the node accepted it, so at the
            key = bytes(status.goal_info.goal_id.uuid)  # first status that lists it
            if key not in self.goals:
                self.goals[key] = self.now() - seconds(status.goal_info.stamp)

    def spin_until(self, condition, what: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            self.executor.spin_once(timeout_sec=0.01)

    def beats(self, n: int) -> None:
        """Spin until ``n`` more of the node's 1 Hz /diagnostics have come: its steady
        timer, on while it is paused, so at least n - 1 s of the node's own running."""
        seen = len(self.lags.get("/diagnostics", ()))
        self.spin_until(lambda: len(self.lags.get("/diagnostics", ())) >= seen + n,
                        f"{n} more /diagnostics")

    def spin_for(self, seconds_: float) -> None:
        end = time.monotonic() + seconds_
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def call(self, name: str, srv_type, **fields):
        client = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=TIMEOUT), name
        future = client.call_async(srv_type.Request(**fields))
        self.spin_until(future.done, name)
        return future.result()

    def move(self, namespace: str) -> None:
        """A trapezoidal move of the arm, sent and accepted (its status stamps recorded)."""
        client = ActionClient(self.node, servo_actions.TrapezoidalMove,
                              f"/{namespace}/arm/trapezoidal_move")
        assert client.wait_for_server(timeout_sec=TIMEOUT)
        goal = servo_actions.TrapezoidalMove.Goal(target_position=0.5, max_velocity=1.0,
                                                  max_acceleration=2.0)
        future = client.send_goal_async(goal)
        self.spin_until(future.done, "the goal's acceptance")
        assert future.result().accepted

    def close(self) -> None:
        self.executor.shutdown()
        destroy_node(self.node)
        rclpy.shutdown(context=self.context)


@pytest.fixture
def consumer():
    made: list[Consumer] = []

    def make(namespace: str, use_sim_time: bool) -> Consumer:
        made.append(Consumer(namespace, use_sim_time))
        return made[-1]

    yield make
    for c in made:
        c.close()


TOPICS = ("joint_states", "servo_sim/servo_state", "arm/position", "arm/torque_feedback")


def measure(c: Consumer, namespace: str) -> dict[str, list[float]]:
    """now() - stamp of every stamped topic over 2.5 s of spinning (the consumer blocks
    in wait_for_server and wait_for_service: what queued meanwhile is left out), and of
    the arm's move goals, each at its first status."""
    names = [f"/{namespace}/{t}" for t in TOPICS] + ["/diagnostics"]
    c.spin_until(lambda: all(c.lags.get(n) for n in names), "every stamped topic")
    c.move(namespace)
    c.lags.clear()
    c.spin_for(2.5)  # /diagnostics is 1 Hz
    assert set(c.lags) == set(names) and len(c.goals) == 1
    return {**c.lags, "goal": list(c.goals.values())}


def test_by_default_every_stamp_agrees_with_a_default_clock(start, consumer):
    """No /clock, no use_sim_time: a consumer on its default clock."""
    node = start("wall", "--params-file", str(REPO / "config" / "servo_sim.yaml"), *SENSORS)
    c = consumer("wall", use_sim_time=False)
    lags_of = measure(c, "wall")
    assert not c.clock  # nobody publishes /clock
    for topic, lags in lags_of.items():
        lags = sorted(lags)
        assert lags[0] > -0.01, (topic, lags[0])  # not from the future (one clock)
        # what is checked is one clock, not speed: another clock (simulated time from 0,
        # a steady clock from boot) is off by hours or decades; 1 to 2 ms measured here,
        # 0.17 s median with five processes per core (a loaded /opt/ros pass), the goal one
        # event through the action's status (0.29 s once, CI sharing the 2 cores)
        assert statistics.median(lags) < 1.0, (topic, lags)
        # the tail is the consumer's own stalls on a loaded machine
        assert lags[int(0.95 * (len(lags) - 1))] < 2.0, (topic, lags)
    # a reset leaves the time base alone: stamps go on with the clock
    before = c.now()
    assert c.call("/wall/servo_sim/reset", Trigger).success
    c.spin_until(lambda: c.last["/wall/joint_states"] > before, "joint_states after reset")
    assert c.last["/wall/joint_states"] - c.now() < 0.1
    node.kill()


@pytest.mark.parametrize("real_time_factor", [1.0, 3.0])
def test_on_sim_time_every_stamp_is_at_the_clock_the_consumer_follows(start, consumer,
                                                                     real_time_factor):
    start("sim", "--params-file", str(REPO / "config" / "servo_sim.yaml"), *SENSORS,
          "-p", "use_sim_time:=true", "-p", f"real_time_factor:={real_time_factor}")
    c = consumer("sim", use_sim_time=True)
    lags_of = measure(c, "sim")
    for topic, lags in lags_of.items():
        # /clock goes out before each step's messages; DDS does not order two topics, so
        # a sample may arrive a step before its /clock, not more
        assert min(lags) >= -2 * STEP_S - 1e-9, (topic, min(lags))
        # a step or two. The goal is one event: its stamp is taken at acceptance, its
        # status goes out when the node's executor gets to it (0.048 s, 6 steps, once on a
        # loaded CI run), so it is held to the tail's bound below. /diagnostics (1 Hz: two
        # or three) has too few samples for a median that one stalled delivery cannot move
        # (0.31 s once on a loaded CI run): there the lowest is held to it
        # A delivery's wall time shows times the factor in simulated time (at 3: 76 ms,
        # 9.5 steps, once, a busy machine: 25 ms of wall time), so the bound is 0.1 s of
        # wall time at that factor; a stamp from another clock is off by hours
        if topic != "goal":
            typical = statistics.median(lags) if len(lags) > 3 else min(lags)
            assert typical <= 0.1 * real_time_factor, (topic, sorted(lags))
        # the tail is the consumer's own stalls on a loaded machine (in simulated s: a
        # 0.26 s stall at real_time_factor 3 shows as 0.78 s), generous
        tail = sorted(lags)[int(0.95 * (len(lags) - 1))]
        assert tail < 0.5 * real_time_factor, (topic, tail)
    # the consumer's clock runs at real_time_factor
    wall, sim = time.monotonic(), c.now()
    c.spin_for(2.0)
    rate = (c.now() - sim) / (time.monotonic() - wall)
    assert rate == pytest.approx(real_time_factor, rel=0.25)


def test_on_sim_time_paused_nothing_moves_a_step_moves_both_a_reset_takes_both_to_0(
        start, consumer):
    start("pause", "--params-file", str(REPO / "config" / "servo_sim.yaml"),
          "-p", "use_sim_time:=true")
    c = consumer("pause", use_sim_time=True)
    states = "/pause/joint_states"
    c.spin_until(lambda: c.last.get(states, 0.0) > 0.1, "joint_states after 0.1 s")
    reply = c.call("/pause/servo_sim/pause", Trigger)
    assert reply.success
    # what was on its way arrives: the clock of the pause ("paused at t = 1.234 s") and
    # the joint_states of its last 50 Hz period; the node's 50 Hz timer may also have
    # published once more at the pause's own time, so the state is taken a beat later
    pause_t = float(re.search(r"t = ([0-9.]+) s", reply.message).group(1))
    c.spin_until(lambda: c.now() >= pause_t - 5e-4 and c.last[states] > pause_t - 0.0205,
                 "the pause's clock and joint_states")
    c.beats(1)
    clock, stamp, count = c.now(), c.last[states], len(c.lags[states])
    assert clock == pytest.approx(pause_t, abs=5e-4) and stamp <= clock
    c.beats(2)  # the node runs on, paused: over a second of its own time
    assert (c.now(), c.last[states], len(c.lags[states])) == (clock, stamp, count)
    # ~/step 25: the clock and the stamps move 25 steps, exactly
    assert c.call("/pause/servo_sim/step", servo_srvs.SetInt, value=25).success
    c.spin_until(lambda: c.now() >= clock + 25 * STEP_S - 1e-9, "the clock after 25 steps")
    c.spin_until(lambda: c.last[states] > clock + 25 * STEP_S - 0.0205,
                 "the joint_states of the last step's period")
    c.beats(1)  # and nothing after the 25th step
    assert c.now() == pytest.approx(clock + 25 * STEP_S, abs=1e-9)
    assert c.clock[-1] == pytest.approx(clock + 25 * STEP_S, abs=1e-9)
    assert c.last[states] <= c.now() and c.now() - c.last[states] < 0.021  # 50 Hz
    # ~/reset: /clock back to 0, and the joint_states published with it stamped 0
    assert c.call("/pause/servo_sim/reset", Trigger).success
    c.spin_until(lambda: c.now() == 0.0, "the clock back to 0")
    c.spin_until(lambda: c.last[states] == 0.0, "joint_states stamped 0")
