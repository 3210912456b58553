"""The servo_sim node under real rclpy, in process: services, topics, parameters, clock.

Skipped, with the reason shown, where no ROS 2 can be had (conftest.require_ros); with
rclpy but without servo_sim's built interfaces they fail. Time is driven with ~/pause
and ~/step (the node starts paused), never sleeps.
"""

from __future__ import annotations

import gc
import logging
import math
import time

import pytest
from conftest import destroy_node, require_ros

rclpy, servo_msgs, servo_srvs = require_ros("rclpy", "servo_sim.msg", "servo_sim.srv")
pytestmark = pytest.mark.ros

from rcl_interfaces.msg import Log, ParameterEvent  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.action import ActionServer  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from servo_sim.ros.entry import make_executor  # noqa: E402
from servo_sim.ros.interface import MOTOR_SERVICES  # noqa: E402
from servo_sim.ros.node import ServoSimNode  # noqa: E402

TIMEOUT = 20.0
CONFIG = {
    "basic_time_step_ms": 8,
    "motors": ["arm", "grip::left"],
    "arm.max_velocity": 2.0,
    "arm.max_torque": 5.0,
    "arm.control_pid": [10.0, 0.0, 0.0],
    "arm.min_position": -1.5,
    "arm.max_position": 1.5,
    "arm.position_sensor.sampling_period_ms": 16,
    "arm.force_feedback_sampling_period_ms": 16,
    "grip__left.type": "linear",
    "grip__left.max_force": 20.0,
    "grip__left.max_velocity": 0.1,
    "grip__left.force_feedback_sampling_period_ms": 32,
    "joint_states_rate": 62.5,  # every 16 ms
    "publish_clock": True,
    "start_paused": True,
}


class Harness:
    """The node and a client node on one executor spun from the test thread."""

    def __init__(self, base=CONFIG, executor_kind="single_threaded", table=True, **overrides):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        params = [Parameter(k, value=v) for k, v in {**base, **overrides}.items()]
        self.node = ServoSimNode(context=self.context, parameter_overrides=params)
        self.client = rclpy.create_node("servo_sim_test_client", context=self.context)
        self.executor, kind = make_executor(executor_kind, self.context)
        assert kind == executor_kind, f"this rclpy has no {executor_kind} executor"
        self.executor.add_node(self.node)
        self.executor.add_node(self.client)
        self.received: dict[str, list] = {}
        self._clients: dict[str, object] = {}
        if table:
            self.wait_for(lambda: self.node.table.done, "the per-motor table")
        else:  # the test grows it
            self.node.table_timer.cancel()

    def close(self):
        self.executor.shutdown()
        destroy_node(self.client)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def listen(self, topic: str, msg_type) -> list:
        out = self.received.setdefault(topic, [])
        qos = 100
        if topic == "/rosout":  # transient local as the node's log publisher: what was
            # logged before the subscription matched still arrives
            qos = QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.client.create_subscription(msg_type, topic, out.append, qos)
        if topic == "/rosout":  # and matched before the test logs anything
            self.wait_for(lambda: self.node.count_subscribers("/rosout") >= 1,
                          "the /rosout subscription to match")
        return out

    def wait_for(self, condition, what: str):
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            self.executor.spin_once(timeout_sec=0.05)

    def call(self, name: str, srv_type, **fields):
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.client.create_client(srv_type, name)
            assert client.wait_for_service(timeout_sec=TIMEOUT), name
        future = client.call_async(srv_type.Request(**fields))
        self.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        assert future.done(), f"no answer from {name}"
        return future.result()

    def set_remote(self, name: str, value):
        """Set one of the node's parameters as another node does (its SetParameters
        service); the result (successful, reason)."""
        if "parameters" not in self._clients:
            self._clients["parameters"] = AsyncParameterClient(self.client, "/servo_sim")
            assert self._clients["parameters"].wait_for_services(timeout_sec=TIMEOUT)
        future = self._clients["parameters"].set_parameters([Parameter(name, value=value)])
        self.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        return future.result().results[0]

    def step(self, n: int):
        assert self.call("/servo_sim/step", servo_srvs.SetInt, value=n).success


@pytest.fixture
def h(executor_kind):
    harness = Harness(executor_kind=executor_kind)
    yield harness
    harness.close()


def test_while_the_table_grows_whatever_exists_answers_right(executor_kind):
    """Issue 18: the table grown one job at a time (its timer stopped): each motor's
    parameters, then the parameter services, then set_position for every motor, the
    getters...; after each job, the parameter services exist only with every parameter,
    and each getter answers its motor's value as soon as it exists."""
    h = Harness(executor_kind=executor_kind, table=False)
    try:
        node = h.node
        fields = [f"{m}.{f}" for m in ("arm", "grip__left")
                  for f in ("max_velocity", "control_pid", "position_sensor.noise")]
        expected = {"/arm/get_max_velocity": 2.0, "/grip__left/get_max_velocity": 0.1}
        appeared: list[str] = []
        while not node.table.done:
            node.table.run(0.0)  # one job
            services = [node.resolve_service_name(s.srv_name) for s in node.services]
            appeared += [name for name in services if name not in appeared]
            actions = [w for w in node.waitables if isinstance(w, ActionServer)]
            if actions:  # the actions come last
                assert appeared[-1] == "/grip__left/torque_feedback_sensor/get_sampling_period"
            if "/servo_sim/get_parameters" in services:
                assert all(node.has_parameter(f) for f in fields)
                names = ["arm.max_velocity", "grip__left.max_velocity"]
                answer = h.call("/servo_sim/get_parameters", GetParameters, names=names)
                assert [v.double_value for v in answer.values] == [2.0, 0.1]
            for name in [n for n in expected if n in services]:
                assert h.call(name, servo_srvs.GetFloat, ask=True).value == expected.pop(name)
        assert not expected
        table = [n for n in appeared if not n.startswith("/servo_sim/")]
        assert table[:2] == ["/arm/set_position", "/grip__left/set_position"]
        assert table[2:4] == ["/arm/get_target_position", "/grip__left/get_target_position"]
        assert appeared.index("/servo_sim/get_parameters") < appeared.index("/arm/set_position")
        assert len(actions) == 2
    finally:
        h.close()


def test_the_compiled_law_loads_once_the_table_is_complete():
    """The node holds back its bank's loading of the compiled law (numba's import) while
    it makes its table, numpy's runner stepping meanwhile; once the table is complete the
    law loads; a node destroyed before that releases its hold too."""
    from servo_sim.model import ahead, law

    if not law.can_compile():
        pytest.skip("numba is not installed (or SERVO_SIM_JIT=0): no compiled law to load")
    early = Harness(table=False)
    early.close()  # destroyed with its table unfinished: its hold goes with it
    assert law._LOADING_ALLOWED.is_set()
    h = Harness(table=False)
    try:
        bank = h.node.runtime._sim.bank  # (which runner steps has no getter)
        assert not law._LOADING_ALLOWED.is_set() and bank._law is law.step_motors
        h.node.table_timer.reset()
        h.wait_for(lambda: h.node.table.done, "the per-motor table")
        h.wait_for(lambda: bank._compiled, "the compiled law")
        assert bank._law is ahead.compiled() and law._LOADING_ALLOWED.is_set()
    finally:
        h.close()


def test_every_service_of_the_table_is_served_with_its_type(h):
    expected = {f"/{m}/{s.name}": f"servo_sim/srv/{s.srv}"
                for m in ("arm", "grip__left") for s in MOTOR_SERVICES}
    expected.update({"/servo_sim/pause": "std_srvs/srv/Trigger",
                     "/servo_sim/resume": "std_srvs/srv/Trigger",
                     "/servo_sim/reset": "std_srvs/srv/Trigger",
                     "/servo_sim/step": "servo_sim/srv/SetInt"})

    def served():
        return {n: t[0] for n, t in h.client.get_service_names_and_types()}

    h.wait_for(lambda: expected.items() <= served().items(), "the services")


def test_setters_change_the_model(h):
    arm, grip = h.node.runtime.motor("arm"), h.node.runtime.motor("grip::left")
    ok = {}
    for name, value in [("set_position", 0.5), ("set_velocity", 1.5),
                        ("set_acceleration", 4.0), ("set_available_torque", 3.0)]:
        ok[name] = h.call(f"/arm/{name}", servo_srvs.SetFloat, value=value).success
    ok["pid"] = h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid,
                       controlp=20.0, controli=0.5, controld=0.1).success
    ok["force"] = h.call("/grip__left/set_available_force", servo_srvs.SetFloat,
                         value=7.0).success
    assert ok == {"set_position": True, "set_velocity": True, "set_acceleration": True,
                  "set_available_torque": True, "pid": 1, "force": True}
    assert (arm.get_target_position(), arm.get_velocity(), arm.get_acceleration(),
            arm.get_available_torque(), arm.get_control_pid()) == (0.5, 1.5, 4.0, 3.0,
                                                                   (20.0, 0.5, 0.1))
    assert grip.get_available_force() == 7.0
    assert h.call("/grip__left/set_force", servo_srvs.SetFloat, value=2.0).success
    assert h.call("/arm/set_torque", servo_srvs.SetFloat, value=1.0).success
    h.step(1)
    assert grip.motor_force == 0.0  # force control: the motor itself applies nothing more
    # the commanded effort has no getter (Webots has none): the bank's, read only
    assert h.node.runtime._sim.bank.applied_force.tolist() == [1.0, 2.0]
    # setters that are parameters keep the parameter in step
    assert list(h.node.get_parameter("arm.control_pid").value) == [20.0, 0.5, 0.1]
    assert h.node.get_parameter("arm.acceleration").value == 4.0


def test_getters_answer_from_the_model(h):
    got = {name: h.call(f"/arm/{name}", servo_srvs.GetFloat, ask=True).value
           for name in ("get_target_position", "get_min_position", "get_max_position",
                        "get_velocity", "get_max_velocity", "get_acceleration",
                        "get_available_force", "get_max_force", "get_available_torque",
                        "get_max_torque", "get_multiplier")}
    assert got == {"get_target_position": 0.0, "get_min_position": -1.5,
                   "get_max_position": 1.5, "get_velocity": 2.0, "get_max_velocity": 2.0,
                   "get_acceleration": -1.0, "get_available_force": 5.0,
                   "get_max_force": 5.0, "get_available_torque": 5.0, "get_max_torque": 5.0,
                   "get_multiplier": 1.0}
    assert h.call("/arm/get_type", servo_srvs.GetInt, ask=True).value == 0
    assert h.call("/grip__left/get_type", servo_srvs.GetInt, ask=True).value == 1
    assert h.call("/arm/position_sensor/get_sampling_period", servo_srvs.GetInt,
                  ask=True).value == 16
    assert h.call("/grip__left/torque_feedback_sensor/get_sampling_period", servo_srvs.GetInt,
                  ask=True).value == 32
    assert h.call("/arm/get_brake_name", servo_srvs.GetString, ask=True).value == ""
    assert h.call("/arm/get_position_sensor_name", servo_srvs.GetString,
                  ask=True).value == "arm/position_sensor"


def test_nan_and_out_of_domain_requests_fail_change_nothing_and_warn(h):
    logs = h.listen("/rosout", Log)
    bank = h.node.runtime._sim.bank  # every motor's state at once, to see nothing changed
    before = (bank.target_position.copy(), bank.control_p.copy(), bank.available_force.copy())
    assert not h.call("/arm/set_position", servo_srvs.SetFloat, value=math.nan).success
    assert not h.call("/arm/set_velocity", servo_srvs.SetFloat, value=math.inf).success
    assert not h.call("/arm/set_available_torque", servo_srvs.SetFloat, value=-1.0).success
    assert h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid, controlp=math.nan,
                  controli=0.0, controld=0.0).success == 0
    assert not h.call("/arm/position_sensor/enable", servo_srvs.SetInt, value=-5).success
    assert (bank.target_position.tolist(), bank.control_p.tolist(),
            bank.available_force.tolist()) == tuple(a.tolist() for a in before)
    h.wait_for(lambda: any("arm/set_position" in m.msg and "nan" in m.msg for m in logs),
               "the warning on /rosout")
    warning = next(m for m in logs if "arm/set_position" in m.msg)
    assert warning.level == Log.WARN and "motor 'arm'" in warning.msg
    h.step(1)  # the node still serves and steps


def test_topics_at_their_sensor_period_with_simulation_stamps(h):
    pos = h.listen("/arm/position", servo_msgs.Float64Stamped)
    torque = h.listen("/arm/torque_feedback", servo_msgs.Float64Stamped)
    force = h.listen("/grip__left/force_feedback", servo_msgs.Float64Stamped)
    joints = h.listen("/joint_states", JointState)
    h.wait_for(lambda: all(h.node.count_subscribers(t) >= 1 for t in (
        "/arm/position", "/arm/torque_feedback", "/grip__left/force_feedback",
        "/joint_states")), "the subscriptions to match")
    assert h.call("/arm/set_position", servo_srvs.SetFloat, value=1.0).success
    h.step(8)  # 64 ms
    h.wait_for(lambda: len(pos) >= 4 and len(torque) >= 4 and len(force) >= 2
               and len(joints) >= 5, "four periods of messages")

    def ms(m):
        return m.header.stamp.sec * 1000 + m.header.stamp.nanosec // 1_000_000

    assert [ms(m) for m in pos] == [16, 32, 48, 64]
    assert [ms(m) for m in torque] == [16, 32, 48, 64]
    assert [ms(m) for m in force] == [32, 64]
    assert [ms(m) for m in joints][-4:] == [16, 32, 48, 64]
    arm = h.node.runtime.motor("arm")
    assert pos[-1].data == arm.get_position() and torque[-1].data == arm.get_torque_feedback()
    last = joints[-1]
    assert list(last.name) == ["arm", "grip::left"]
    assert last.position[0] == arm.position and last.velocity[0] == arm.velocity
    assert last.effort[0] == arm.motor_force and last.position[0] > 0.0
    assert h.client.count_publishers("/arm/force_feedback") == 0  # named after the type


def test_enabling_a_sensor_starts_its_topic_named_after_the_service(h):
    assert h.node.count_publishers("/grip__left/position") == 0  # off in the config
    assert h.call("/grip__left/position_sensor/enable", servo_srvs.SetInt, value=8).success
    assert h.call("/arm/force_feedback_sensor/enable", servo_srvs.SetInt, value=8).success
    pos = h.listen("/grip__left/position", servo_msgs.Float64Stamped)
    force = h.listen("/arm/force_feedback", servo_msgs.Float64Stamped)
    h.wait_for(lambda: h.node.count_subscribers("/grip__left/position") >= 1
               and h.node.count_subscribers("/arm/force_feedback") >= 1, "the new topics")
    h.step(3)
    h.wait_for(lambda: len(pos) >= 3 and len(force) >= 3, "one message a step")
    assert [m.header.stamp.nanosec for m in pos] == [8_000_000, 16_000_000, 24_000_000]
    assert h.node.get_parameter("grip__left.position_sensor.sampling_period_ms").value == 8


def test_live_parameters_are_validated_by_the_model(h):
    set_ = h.set_remote

    assert set_("arm.max_velocity", 1.0).successful
    assert h.node.runtime.motor("arm").get_max_velocity() == 1.0
    assert h.node.runtime.motor("arm").get_velocity() == 1.0  # clipped to the new limit
    bad = set_("arm.min_position", -3.0)  # hard stops are off, but soft <= max still holds
    assert bad.successful
    bad = set_("arm.max_position", -5.0)
    assert not bad.successful and "must be <= max_position" in bad.reason
    assert not set_("arm.type", "linear").successful  # read-only
    refused = set_("arm.max_velocity", -1.0)  # the node's own check, not a range
    assert not refused.successful
    assert refused.reason == "motor 'arm': field 'max_velocity' = -1.0: must be >= 0", \
        refused.reason
    assert h.node.runtime.motor("arm").get_max_velocity() == 1.0
    # issue 19: no range a slider cannot use (rqt_reconfigure draws every range as one);
    # a one-sided bound is stated instead
    params = AsyncParameterClient(h.client, "/servo_sim")
    assert params.wait_for_services(timeout_sec=TIMEOUT)
    described = params.describe_parameters(["arm.max_velocity", "arm.control_pid"])
    h.executor.spin_until_future_complete(described, timeout_sec=TIMEOUT)
    velocity, pid = described.result().descriptors
    assert not velocity.floating_point_range and velocity.additional_constraints == ">= 0"
    assert not pid.floating_point_range and not pid.additional_constraints
    for name, value in h.node._parameters.items():
        d = h.node.describe_parameter(name)
        for r in (*d.floating_point_range, *d.integer_range):
            assert r.to_value - r.from_value < 1e6, (name, value, r)
    assert set_("arm.control_pid", [3.0, 0.0, 0.0]).successful
    assert h.node.runtime.motor("arm").get_control_pid() == (3.0, 0.0, 0.0)
    logs = h.listen("/rosout", Log)
    assert not set_("arm.control_pid", [0.0, 0.0, 0.0]).successful
    assert h.node.runtime.motor("arm").get_max_position() == 1.5
    # the warning shows the value as given (a list, not rclpy's array('d', ...))
    h.wait_for(lambda: any(m.msg.startswith("parameter arm.control_pid = [0.0, 0.0, 0.0] "
                                            "rejected: motor 'arm': ") for m in logs),
               "the rejection on /rosout")


def test_a_setters_parameter_follows_for_readers_at_once_and_in_the_events(h):
    """A service that mirrors a parameter does not wait for the parameter: a reader
    (GetParameters) sees the new value right after the reply, the parameter event follows,
    and a later SetParameters is not overwritten by the service's echo."""
    events = h.listen("/parameter_events", ParameterEvent)
    h.wait_for(lambda: h.node.count_subscribers("/parameter_events") >= 1,
               "the /parameter_events subscription")
    params = AsyncParameterClient(h.client, "/servo_sim")
    assert params.wait_for_services(timeout_sec=TIMEOUT)

    def read() -> list[float]:
        future = params.get_parameters(["arm.control_pid"])
        h.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        return list(future.result().values[0].double_array_value)

    def changes() -> list[list[float]]:  # the node's events of arm.control_pid, in order
        return [list(p.value.double_array_value) for e in events if e.node == "/servo_sim"
                for p in e.changed_parameters if p.name == "arm.control_pid"]

    # with nobody reading parameters, the event still comes (the echo's own timer)
    assert h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid,
                  controlp=7.0, controli=0.0, controld=0.0).success
    h.wait_for(lambda: changes() == [[7.0, 0.0, 0.0]], "the event, unread")
    assert h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid,
                  controlp=20.0, controli=0.5, controld=0.1).success
    assert read() == [20.0, 0.5, 0.1]
    h.wait_for(lambda: changes()[1:] == [[20.0, 0.5, 0.1]], "the parameter event")
    assert h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid,
                  controlp=5.0, controli=0.0, controld=0.0).success
    assert h.set_remote("arm.control_pid", [3.0, 0.0, 0.0]).successful
    h.wait_for(lambda: changes()[-1:] == [[3.0, 0.0, 0.0]], "the later change's event")
    h.node.parameters.flush()  # nothing of the service's left to echo over it
    assert changes() == [[7.0, 0.0, 0.0], [20.0, 0.5, 0.1], [5.0, 0.0, 0.0], [3.0, 0.0, 0.0]]
    assert read() == [3.0, 0.0, 0.0]
    assert h.node.runtime.motor("arm").get_control_pid() == (3.0, 0.0, 0.0)


def test_pause_step_resume_reset_and_clock(h):
    clock = h.listen("/clock", Clock)
    joint_states = h.listen("/joint_states", JointState)  # (published only when heard)
    h.wait_for(lambda: h.node.count_subscribers("/joint_states") >= 1, "discovery")
    sim = h.node.runtime
    h.step(5)
    assert sim.time_ms == 40
    h.wait_for(lambda: clock and clock[-1].clock.nanosec == 40_000_000, "/clock at 40 ms")
    assert h.call("/servo_sim/resume", Trigger).success
    assert not h.call("/servo_sim/step", servo_srvs.SetInt, value=1).success  # not paused
    h.wait_for(lambda: sim.time_ms > 80, "time to run")
    assert h.call("/servo_sim/pause", Trigger).success
    paused_at = sim.time_ms
    for _ in range(5):
        h.executor.spin_once(timeout_sec=0.02)
    assert sim.time_ms == paused_at
    assert not h.call("/servo_sim/step", servo_srvs.SetInt, value=-1).success
    assert h.call("/arm/set_position", servo_srvs.SetFloat, value=1.0).success
    h.step(10)
    assert sim.time_ms > 80
    reply = h.call("/servo_sim/reset", Trigger)
    assert reply.success and sim.time_ms == 0
    assert h.node.runtime.motor("arm").position == 0.0
    assert h.node.runtime.motor("arm").get_target_position() == 0.0
    # the joint_states schedule (every 16 ms) restarts at the reset: stamped 0 by the
    # reset itself, then the first cycle after it and every 16 ms of the new time (not
    # at the old schedule's next time, past the 32 ms stepped here)
    heard = len(joint_states)
    h.step(4)

    def stamps_since() -> list[int]:
        return [m.header.stamp.sec * 1000 + m.header.stamp.nanosec // 1_000_000
                for m in joint_states[heard:]]

    h.wait_for(lambda: {8, 16, 32} <= set(stamps_since()), "joint_states at 8, 16, 32 ms")
    assert 24 not in stamps_since()


def test_joint_commands_drive_the_motors(h):
    pub = h.client.create_publisher(JointState, "/joint_commands", 10)
    h.wait_for(lambda: h.node.count_publishers("/joint_commands") >= 1, "discovery")
    arm, grip = h.node.runtime.motor("arm"), h.node.runtime.motor("grip::left")
    nan = math.nan
    pub.publish(JointState(name=["arm", "grip__left"], position=[0.7, nan],
                           velocity=[nan, -0.05], effort=[nan, nan]))
    h.wait_for(lambda: arm.get_target_position() == 0.7, "the position command")
    assert math.isinf(grip.get_target_position()) and grip.get_velocity() == -0.05
    pub.publish(JointState(name=["grip::left"], effort=[3.0]))  # device name works too
    # the commanded effort has no getter (Webots has none): the bank's, read only
    h.wait_for(lambda: h.node.runtime._sim.bank.applied_force[1] == 3.0,
               "the effort command")
    pub.publish(JointState(name=["arm"], position=[nan], velocity=[nan], effort=[nan]))
    pub.publish(JointState(name=["arm"], position=[0.2], velocity=[0.5]))
    h.wait_for(lambda: arm.get_target_position() == 0.2, "position with a speed limit")
    assert arm.get_velocity() == 0.5


def test_the_maintained_topic_systems_compact_commands_reach_each_joint(executor_kind):
    """Issue 34: joint_state_topic_hardware_interface names every joint of its
    <ros2_control> block and fills each array with only the joints that have that command
    interface (velocity-only, effort-only, a mimic joint with none); the node reads them
    by the robot_description's interfaces. A message that does not fit changes nothing and
    is said in one warning naming the array and the joints."""
    from test_joint_commands import URDF

    base = {"basic_time_step_ms": 8, "motors": ["arm", "wheel", "finger", "press"],
            "finger.type": "linear", "start_paused": True}
    h = Harness(base=base, robot_description=URDF, executor_kind=executor_kind)
    try:
        logs = h.listen("/rosout", Log)
        pub = h.client.create_publisher(JointState, "/joint_commands", 10)
        h.wait_for(lambda: h.node.count_publishers("/joint_commands") >= 1, "discovery")
        sim = h.node.runtime
        arm, wheel, finger = sim.motor("arm"), sim.motor("wheel"), sim.motor("finger")
        # what the plugin's write() sends for arm 0.7, wheel -2, finger 0.01, press 3 N·m
        pub.publish(JointState(name=["arm", "finger_mimic", "wheel", "finger", "press"],
                               position=[0.7, 0.01], velocity=[-2.0], effort=[3.0]))
        # the commanded effort has no getter (Webots has none): the bank's, read only
        h.wait_for(lambda: sim._sim.bank.applied_force[3] == 3.0, "the effort command")
        assert arm.get_target_position() == 0.7 and finger.get_target_position() == 0.01
        assert math.isinf(wheel.get_target_position()) and wheel.get_velocity() == -2.0
        # a position array one short: refused whole, said once, nothing changed
        pub.publish(JointState(name=["arm", "finger_mimic", "wheel", "finger", "press"],
                               position=[0.2], velocity=[1.0], effort=[1.0]))
        pub.publish(JointState(name=["ghost"], position=[1.0]))  # after it, in order
        h.wait_for(lambda: any("'ghost'" in m.msg for m in logs), "the unknown joint")
        said = [m.msg for m in logs if m.level == Log.WARN]
        assert [m for m in said if "position value(s)" in m] == [
            "joint_commands: 1 position value(s) for 5 joints, of which 2 have a position "
            "command interface in the robot_description (arm, finger); the message is "
            "ignored"]
        assert not [m for m in said if "finger_mimic" in m], said  # named, no value: silent
        assert (arm.get_target_position(), wheel.get_velocity()) == (0.7, -2.0)
        assert sim._sim.bank.applied_force[3] == 3.0
    finally:
        h.close()


def test_a_passive_joint_is_in_joint_states_and_refuses_commands(executor_kind):
    """Issue 20: a joint without a motor (passive: true) publishes its position in
    /joint_states like any joint, moved by its spring only (the SPEC §2.2 step by hand);
    its command services answer success=False and change nothing; 'passive' is
    read-only."""
    base = {k: v for k, v in CONFIG.items() if not k.startswith("grip__left.")}
    h = Harness({**base, "motors": ["arm", "hinge"], "hinge.passive": True,
                 "hinge.position": 0.5, "hinge.spring_constant": 2.0, "hinge.inertia": 0.01},
                executor_kind=executor_kind)
    try:
        states = h.listen("/joint_states", JointState)
        h.wait_for(lambda: h.node.count_subscribers("/joint_states") >= 1, "discovery")
        dt, x, v, reference = 0.008, 0.5, 0.0, [0.5]
        for _ in range(4):  # implicit spring, no motor force, no damping
            v = (0.01 / dt * v - 2.0 * x) / (0.01 / dt + 2.0 * dt)
            x += v * dt
            reference.append(x)
        h.step(4)

        def steps() -> set[int]:  # of the messages, by their stamps (simulated time)
            return {round(m.header.stamp.nanosec * 1e-9 / dt) for m in states}

        h.wait_for(lambda: {2, 4} <= steps(), "/joint_states at 16 and 32 ms")
        for msg in states:
            assert list(msg.name) == ["arm", "hinge"]
            k = round(msg.header.stamp.nanosec * 1e-9 / dt)
            assert msg.position[1] == pytest.approx(reference[k], rel=1e-12), k
        hinge = h.node.runtime.motor("hinge")
        before = (hinge.get_target_position(), hinge.get_velocity())
        assert not h.call("/hinge/set_position", servo_srvs.SetFloat, value=1.0).success
        assert not h.call("/hinge/set_velocity", servo_srvs.SetFloat, value=1.0).success
        assert (hinge.get_target_position(), hinge.get_velocity()) == before
        params = AsyncParameterClient(h.client, "/servo_sim")
        assert params.wait_for_services(timeout_sec=TIMEOUT)
        future = params.set_parameters([Parameter("hinge.passive", value=False)])
        h.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        assert not future.result().results[0].successful
        assert h.node.get_parameter("hinge.passive").value is True
    finally:
        h.close()


def test_a_running_node_finds_a_new_subscriber_of_a_feedback_topic(executor_kind):
    """Feedback goes only to subscribed topics: a subscriber that comes while the node
    runs (no ~/step) is found by the periodic check and gets messages."""
    h = Harness(start_paused=False, executor_kind=executor_kind)
    try:
        position = h.listen("/arm/position", servo_msgs.Float64Stamped)
        h.wait_for(lambda: len(position) >= 3, "/arm/position while running")
        stamps = [m.header.stamp.sec * 1000 + m.header.stamp.nanosec // 1_000_000
                  for m in position[-3:]]
        assert (stamps[1] - stamps[0], stamps[2] - stamps[1]) == (16, 16)  # the period
    finally:
        h.close()


def test_motor_interfaces_create_only_the_families_asked_for():
    h = Harness(motor_interfaces=["getters", "safety"])
    try:
        h.wait_for(lambda: "/arm/get_velocity" in dict(h.client.get_service_names_and_types()),
                   "the getters")
        names = {n for n, _ in h.client.get_service_names_and_types()
                 if n.startswith(("/arm", "/grip__left"))}  # this node's, not the domain's
        assert {"/arm/get_velocity", "/grip__left/get_type", "/arm/halt",
                "/arm/e_stop"} <= names
        assert not {n for n in names if n.startswith("/arm/set_") or "_sensor/" in n
                    or "trapezoidal_move" in n}
        assert h.call("/arm/get_max_velocity", servo_srvs.GetFloat, ask=True).value == 2.0
        assert h.node.get_parameter("motor_interfaces").value == ["getters", "safety"]
    finally:
        h.close()


def test_motor_interfaces_may_name_single_services():
    h = Harness(motor_interfaces=["get_velocity", "set_control_pid"])
    try:
        def motor_services() -> set[str]:
            return {n for n, _ in h.client.get_service_names_and_types()
                    if n.startswith(("/arm/", "/grip__left/"))}

        asked = {f"/{m}/{s}" for m in ("arm", "grip__left")
                 for s in ("get_velocity", "set_control_pid")}
        h.wait_for(lambda: motor_services() >= asked, "the two services of each motor")
        assert motor_services() == asked
        assert h.call("/arm/set_control_pid", servo_srvs.MotorSetControlPid, controlp=20.0,
                      controli=0.0, controld=0.0).success
        assert list(h.node.get_parameter("arm.control_pid").value) == [20.0, 0.0, 0.0]
    finally:
        h.close()


def test_free_run_advances_faster_than_the_wall_clock(executor_kind):
    h = Harness(real_time_factor=0.0, start_paused=False, executor_kind=executor_kind)
    try:
        start = time.monotonic()
        h.wait_for(lambda: h.node.runtime.time > 5.0, "5 s of simulated time")
        assert h.node.runtime.time > time.monotonic() - start
    finally:
        h.close()


def test_a_bad_config_fails_with_one_message():
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        from servo_sim.model import ConfigError

        with pytest.raises(ConfigError, match=r"motor 'arm': field 'max_velocity' = -2.0"):
            ServoSimNode(context=context, parameter_overrides=[
                Parameter("motors", value=["arm"]), Parameter("arm.max_velocity", value=-2.0)])
    finally:
        rclpy.shutdown(context=context)


def test_the_time_base_is_chosen_at_start(h):
    """Issue 24: with publish_clock the node follows its own /clock (use_sim_time true);
    neither can be changed while it runs (a consumer would lose its clock)."""
    assert h.node.get_parameter("use_sim_time").value is True
    assert h.node.describe_parameter("publish_clock").read_only
    result = h.node.set_parameters([Parameter("use_sim_time", value=False)])[0]
    assert not result.successful
    assert result.reason == ("use_sim_time is publish_clock's (read-only): the time base is "
                             "chosen at start")
    assert h.node.get_parameter("use_sim_time").value is True


def test_dead_nodes_do_not_take_the_rosout_of_a_later_one(executor_kind):
    """A node that failed to start, or was destroyed, is finalized by rcl at once: if the GC
    did it later, rcl (Jazzy) would also unregister the /rosout publisher of the live node
    of the same name, and its log lines would never reach /rosout again."""
    from servo_sim.model import ConfigError

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigError) as failed:  # keeps the half-built node referenced
            ServoSimNode(context=context, parameter_overrides=[
                Parameter("motors", value=["arm"]), Parameter("arm.max_velocity", value=-2.0)])
    finally:
        rclpy.shutdown(context=context)
    closed = Harness(executor_kind=executor_kind)  # with its action servers
    closed.executor.spin_once(timeout_sec=0.01)
    closed.close()
    h = Harness(executor_kind=executor_kind)
    try:
        logs = h.listen("/rosout", Log)
        del failed, closed
        gc.collect()
        h.node.get_logger().warning("still on /rosout")
        h.wait_for(lambda: any(m.msg == "still on /rosout" for m in logs), "the line on /rosout")
    finally:
        h.close()


# --------------------------------------------------------------------------- real hardware


@pytest.fixture
def dxl_bus():
    from servo_sim.emulators.dxl_emulator import EmulatorProcess

    with EmulatorProcess([1, 2], realtime=True) as bus:
        bus.set(2, 0, 2, 1060)  # model number: an XL430-W250, no current sensing
        yield bus


def dxl_config(port):
    return {"basic_time_step_ms": 8, "motors": ["a", "b"],
            "a.max_torque": 3.0, "b.max_torque": 1.0,
            "hardware.plugin": "dynamixel", "hardware.port": port,
            "hardware.baud_rate": 4000000,
            "hardware.a.id": 1, "hardware.a.torque_constant": 1.78,
            "hardware.b.id": 2, "hardware.b.torque_constant": 1.5,
            "joint_states_rate": 50.0}


@pytest.fixture
def hw_node(dxl_bus, executor_kind):
    harness = Harness(base=dxl_config(dxl_bus.port), real_time_factor=3.0,  # ignored
                      executor_kind=executor_kind)
    yield harness
    harness.close()


def test_a_parameter_passes_the_same_check_as_its_service_on_a_feetech_bus(executor_kind):
    """Feetech gains have no documented units: /a/set_control_pid is refused, and so is
    the parameter a.control_pid, with the same reason, nothing changed (it once answered
    successful=True and changed nothing). A change both doors take is applied."""
    from servo_sim.emulators.sts_emulator import ACCELERATION, EmulatorProcess

    with EmulatorProcess([1], realtime=True) as bus:
        h = Harness(base={"basic_time_step_ms": 8, "motors": ["a"], "a.max_torque": 1.5,
                          "a.min_position": -2.5, "a.max_position": 2.5,
                          "hardware.plugin": "feetech", "hardware.port": bus.port,
                          "hardware.baud_rate": 1000000, "hardware.a.id": 1},
                    executor_kind=executor_kind)
        try:
            logs = h.listen("/rosout", Log)
            # a bus that missed a packet at start is retried every second: the check
            # under test is the capability's, not the one of an unconfigured bus
            h.wait_for(lambda: h.node.runtime.hardware_state == "active", "the bus active")
            gains = h.node.runtime.motor("a").get_control_pid()
            assert not h.call("/a/set_control_pid", servo_srvs.MotorSetControlPid,
                              controlp=12.0, controli=0.0, controld=0.3).success
            reason = ("motor 'a': set_control_pid not supported by hardware 'feetech' "
                      "(needs pid_gains)")
            h.wait_for(lambda: any(m.msg == f"a/set_control_pid: {reason}" for m in logs),
                       "the service's warning")
            set_ = h.set_remote
            result = set_("a.control_pid", [12.0, 0.0, 0.3])
            assert (result.successful, result.reason) == (False, reason)
            assert h.node.runtime.motor("a").get_control_pid() == gains
            assert list(h.node.get_parameter("a.control_pid").value) == list(gains)
            assert h.node.runtime.config.motors[0].control_pid == gains
            # the acceleration both doors take: 10 rad/s^2 = 65 x 100 steps/s^2 (STS)
            assert set_("a.acceleration", 10.0).successful
            assert h.node.runtime.motor("a").get_acceleration() == 10.0
            assert h.node.runtime.config.motors[0].acceleration == 10.0
            h.wait_for(lambda: bus.get(1, ACCELERATION, 1) == 65, "Acceleration written")
            assert h.call("/a/set_acceleration", servo_srvs.SetFloat, value=20.0).success
            assert h.node.get_parameter("a.acceleration").value == 20.0
            assert h.node.runtime.config.motors[0].acceleration == 20.0
        finally:
            h.close()


def test_node_on_dynamixel_serves_the_table_and_publishes_what_it_reads(dxl_bus, hw_node):
    h = hw_node
    logs = h.listen("/rosout", Log)
    states = h.listen("/joint_states", JointState)
    assert h.node.get_parameter("hardware.port").value == dxl_bus.port
    assert h.node.describe_parameter("hardware.a.id").read_only
    dxl_bus.freeze()
    dxl_bus.set(1, 132, 4, 3072)  # present position: a quarter turn past 2048
    h.wait_for(lambda: states and abs(states[-1].position[0] - math.pi / 2) < 1e-9,
               "joint_states carrying the present position")
    assert h.call("/a/set_position", servo_srvs.SetFloat, value=1.0).success
    h.wait_for(lambda: dxl_bus.get(1, 116, 4) == 2048 + round(1.0 / (2 * math.pi / 4096)),
               "Goal Position = 2700")
    assert h.call("/a/get_target_position", servo_srvs.GetFloat, ask=True).value == 1.0
    # a device without the capability: false, and a log line that says why
    def refusal_logged():
        return any("b/set_torque: motor 'b': set_torque not supported by hardware "
                   "'dynamixel' (needs effort_command)" in m.msg for m in logs)

    assert not h.call("/b/set_torque", servo_srvs.SetFloat, value=0.2).success
    h.wait_for(refusal_logged, "the refusal on /rosout")
    response = h.call("/servo_sim/pause", Trigger)
    assert not response.success and "runs in real time" in response.message
    # the pacing of real hardware is the wall clock: real_time_factor stays 1
    result = h.node.set_parameters([Parameter("real_time_factor", value=2.0)])[0]
    assert not result.successful
    assert result.reason == "parameter 'real_time_factor': hardware 'dynamixel' runs in real time"
    assert h.node.get_parameter("real_time_factor").value == 1.0


def test_real_hardware_on_sim_time_fails_at_start(dxl_bus):
    """Nothing would publish /clock: the node and its consumers would stall."""
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        from servo_sim.model import ConfigError

        with pytest.raises(ConfigError, match=r"^use_sim_time / publish_clock = true: hardware "
                                              r"'dynamixel' runs in real time \(nothing "
                                              r"would publish /clock\)$"):
            ServoSimNode(context=context, parameter_overrides=[
                Parameter(k, value=v) for k, v in
                {**dxl_config(dxl_bus.port), "use_sim_time": True}.items()])
    finally:
        rclpy.shutdown(context=context)


@pytest.fixture
def python_default_log_level():
    """Python's default root level, WARNING (launch_testing's pytest plugin sets INFO)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)  # setLevel also clears the loggers' level caches
    yield
    root.setLevel(level)


def test_node_survives_a_silent_bus_and_recovers(dxl_bus, python_default_log_level, hw_node):
    """...and its INFO "recovered" reaches /rosout whatever the Python root level."""
    h = hw_node
    logs = h.listen("/rosout", Log)
    h.wait_for(lambda: h.node.runtime.active, "the plugin active")
    dxl_bus.silence()
    h.wait_for(lambda: any("commands halted" in m.msg and m.level == Log.ERROR for m in logs),
               "the error on /rosout")
    assert not h.call("/a/set_position", servo_srvs.SetFloat, value=0.5).success
    assert h.call("/a/get_max_torque", servo_srvs.GetFloat, ask=True).value == 3.0
    dxl_bus.silence([])

    def recovered_after_the_silence() -> bool:
        # a bus that missed its first ping at start-up has logged a recovery already
        # (seen in CI): only one after the error counts
        halted = next(i for i, m in enumerate(logs) if "commands halted" in m.msg)
        return any("hardware 'dynamixel': recovered" in m.msg for m in logs[halted:])

    h.wait_for(recovered_after_the_silence, "the recovery on /rosout")
    assert h.call("/a/set_position", servo_srvs.SetFloat, value=0.5).success


def test_robot_description_limits_configure_the_motors(executor_kind):
    from pathlib import Path

    urdf = (Path(__file__).resolve().parents[1] / "config" / "servo_sim.urdf").read_text()
    urdf = urdf.replace('effort="5.0" velocity="2.0"', 'effort="4.0" velocity="1.25"')
    h = Harness(base={"start_paused": True}, robot_description=urdf,  # the default config
                executor_kind=executor_kind)
    try:
        assert h.call("/arm/get_max_velocity", servo_srvs.GetFloat, ask=True).value == 1.25
        assert h.call("/arm/get_max_torque", servo_srvs.GetFloat, ask=True).value == 4.0
        assert h.node.get_parameter("arm.max_velocity").value == 1.25
    finally:
        h.close()
