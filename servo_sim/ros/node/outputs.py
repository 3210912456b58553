"""What the node publishes: /clock, each motor's feedback topics, joint_states with
~/servo_state, and /diagnostics, each from the model's arrays, stamped in the node's time
base. The node calls :meth:`Outputs.publish_cycle` with every cycle the runtime reports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState

from ... import msg as servo_msgs
from ...model import ros_name
from ...model.safety import Move
from ...runtime import SENSORS, Cycle, Runtime
from ..interface import FORCE_SENSOR, MOTOR_TOPICS, POSITION_SENSOR, default_force_topic
from ..messages import diagnostics, stamp

#: topic name -> the bank sensor that feeds it
SENSOR_OF = {t.name: t.sensor for t in MOTOR_TOPICS}


def own_clock_setter(node: Node) -> Callable[[ClockMsg], None] | None:
    """The node is the time source: its TimeSource takes each /clock message from the
    step directly instead of through its own /clock subscription (1,000 deliveries and
    callbacks a second at 1 ms: about a fifth of a core at 100 motors). Returns the
    TimeSource's callback; None (the subscription stays, same behaviour) where rclpy's
    TimeSource is not as Jazzy's and Kilted's."""
    source = getattr(node, "_time_source", None)
    subscription = getattr(source, "_clock_sub", None)
    if subscription is None or not callable(getattr(source, "clock_callback", None)):
        return None
    node.destroy_subscription(subscription)
    source._clock_sub = None
    return source.clock_callback


class Outputs:
    """The node's publishers and the messages they reuse (see the module docstring).

    ``publishers`` are the node-wide ones by name (joint_states, ~/servo_state,
    /diagnostics, /clock when the node is the time source)."""

    def __init__(self, node: Node, runtime: Runtime, publishers: dict[str, Any],
                 publish_clock: bool) -> None:
        self._node, self._runtime, self._now = node, runtime, runtime.readings
        self._publishers = publishers
        self._publish_clock = publish_clock
        self._clock_publisher = publishers.get("/clock")
        self._clock_msg = ClockMsg()
        self._follow_clock = own_clock_setter(node) if publish_clock else None
        self._seqno = 0
        self._feedback: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._listened = {s: np.zeros(len(runtime), dtype=bool) for s in SENSORS}
        #: called with every cycle after the node's own publishing (another door's)
        self.cycle_listeners: list[Callable[[Cycle], None]] = []
        self.reset_topics()

    def stamp(self, time_ms: int) -> Time:
        """The simulated time of a sample where the node publishes /clock (consumers
        follow it), else the node's ROS clock now: stamps agree with the consumers'."""
        if self._publish_clock:
            return stamp(time_ms)
        return self._node.get_clock().now().to_msg()

    def publish_cycle(self, cycle: Cycle,
                      goals: Callable[[tuple[Move, ...], tuple[Move, ...]], None]) -> None:
        """/clock first (stamped with the cycle's time), then ``goals`` (the actions'
        feedback and ends), the sensors that refreshed, joint_states when due; then
        the ``cycle_listeners``."""
        time_ms, refreshed, joint_states, ended, feedback, _ = cycle  # (a tuple: fast)
        if self._clock_publisher is not None:
            self.publish_clock()
        if ended or feedback:
            goals(ended, feedback)
        for sensor_name in refreshed:
            self._publish_feedback(sensor_name, time_ms)
        if joint_states:
            self.publish_joint_states()
        for listener in self.cycle_listeners:
            listener(cycle)

    # ------------------------------------------------------------------ feedback topics

    def reset_topics(self) -> None:
        """Each sensor's topic back to its default name (a reset restores the config's
        sensors, whose publishers the table creates)."""
        self.topic: dict[tuple[str, str], str] = {}  # (motor, sensor) -> its topic
        for m in self._runtime.motors:
            self.topic[(m.name, POSITION_SENSOR)] = "position"
            self.topic[(m.name, FORCE_SENSOR)] = default_force_topic(m)

    def use_topic(self, motor_name: str, topic: str) -> None:
        """The sensor of ``topic`` publishes there from now on (named after the enable
        service called); its publisher exists at once, so subscribers match before data."""
        self.topic[(motor_name, SENSOR_OF[topic])] = topic
        self.feedback_publisher(motor_name, topic)

    def create_sensor_publisher(self, motor_name: str, sensor_name: str) -> None:
        self.feedback_publisher(motor_name, self.topic[(motor_name, sensor_name)])

    def feedback_publisher(self, motor_name: str, topic: str) -> tuple[Any, Any]:
        """The publisher of ``<motor>/<topic>`` and its message, created when first needed."""
        key = (motor_name, topic)
        entry = self._feedback.get(key)
        if entry is None:
            entry = self._feedback[key] = (self._node.create_publisher(
                servo_msgs.Float64Stamped, f"{ros_name(motor_name)}/{topic}", 10),
                servo_msgs.Float64Stamped())
        return entry

    def update_listened(self) -> None:
        """Which feedback topics have subscribers, every LISTENERS_PERIOD_S and before each
        ~/step (asking per motor at each refresh cost ~1.5 us a motor)."""
        names, publishers = self._now.names, self._feedback
        for sensor_name, listened in self._listened.items():
            for i, name in enumerate(names):
                entry = publishers.get((name, self.topic[(name, sensor_name)]))
                listened[i] = entry is not None and entry[0].get_subscription_count() > 0

    def _publish_feedback(self, sensor_name: str, now: int) -> None:
        """A message per motor whose sensor refreshed at ``now``, on its topic, where
        somebody listens; each topic reuses its message."""
        names = self._now.names
        refreshed, values = self._now.refreshed(sensor_name)
        heard = refreshed[self._listened[sensor_name][refreshed]]
        time_stamp = self.stamp(now) if len(heard) else None
        for i in heard:
            motor_name = names[i]
            pub, msg = self.feedback_publisher(motor_name,
                                               self.topic[(motor_name, sensor_name)])
            msg.header.stamp = time_stamp
            msg.data = float(values[i])
            pub.publish(msg)

    # ------------------------------------------------------------------ node-wide

    def publish_joint_states(self) -> None:
        """joint_states and ~/servo_state (seed 004 ServoState), same stamp; each built
        only when somebody listens (servo_state's report costs ~35 us)."""
        now, self._seqno = self._now, self._seqno + 1
        joint_states = self._publishers["joint_states"]
        servo_state = self._publishers["~/servo_state"]
        listened = joint_states.get_subscription_count(), servo_state.get_subscription_count()
        if not any(listened):
            return
        msg = JointState()
        msg.header.stamp = self.stamp(now.time_ms)
        msg.name = now.names
        msg.position = now.position.tolist()
        msg.velocity = now.velocity.tolist()
        msg.effort = now.effort.tolist()
        if listened[0]:
            joint_states.publish(msg)
        if listened[1]:
            servo_state.publish(servo_msgs.ServoState(
                header=msg.header, seqno=self._seqno, name=msg.name,
                **{field: values.tolist()
                   for field, values in self._runtime.servo_states()._asdict().items()}))

    def publish_diagnostics(self) -> None:
        """/diagnostics: one status per motor, OK / WARN / ERROR and why."""
        self._publishers["/diagnostics"].publish(diagnostics(
            self._node.get_name(), self._runtime, self.stamp(self._now.time_ms)))

    def publish_clock(self) -> None:
        pub = self._clock_publisher
        if pub is not None:  # one message, its fields set (each step: 1,000 a second)
            sec, ms = divmod(self._now.time_ms, 1000)
            self._clock_msg.clock.sec, self._clock_msg.clock.nanosec = sec, ms * 1_000_000
            pub.publish(self._clock_msg)
            if self._follow_clock is not None:
                self._follow_clock(self._clock_msg)
