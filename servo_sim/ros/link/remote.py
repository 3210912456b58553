"""A running servo_sim node seen from a tool (the servo panel), over ROS only.

:class:`ServoLink` finds servo_sim nodes in the graph (by their ``~/servo_state`` topic),
follows one motor's state, sends it commands through the per-motor services, reads and
sets its parameters through the node's parameter services, and records step responses.
No Qt here: the panel (``servo_sim.panel``) polls a link from its own timer, and plain
pytest can drive a link against the real node.

Every call is asynchronous (a :class:`Pending` to poll), so a node that does not answer
never freezes the caller; the executor spins in a thread of its own, or in rqt's.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from rcl_interfaces.msg import Parameter, ParameterEvent, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, ListParameters, SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import qos_profile_parameter_events, qos_profile_services_default
from rclpy.signals import SignalHandlerOptions
from std_srvs.srv import Trigger

from servo_sim import msg as servo_msgs
from servo_sim import srv as servo_srvs

from ...analysis import StepMetrics, step_metrics
from ...identification.fit import Recording
from ...model import ServoMode, StateFlags, ros_name
from ..messages import flag_names

STATE_TYPE = "servo_sim/msg/ServoState"
#: The motor parameters the panel edits, in its order.
TUNED_PARAMETERS = ("control_pid", "max_velocity", "max_torque", "max_force",
                    "min_position", "max_position")
#: The per-motor Trigger services the panel offers.
TRIGGERS = ("halt", "enable", "disable", "e_stop", "reset_e_stop")
#: How long a call waits for its service to appear, s.
CALL_WAIT_S = 5.0
#: The servo_state messages the link's subscription keeps until its thread takes them:
#: 10 s at the default 50 Hz, so that a thread held up for a while loses no sample and a
#: step's figures (rise time, overshoot) come from every sample the node published.
STATE_DEPTH = 500


@dataclass
class Sample:
    """One motor in one ~/servo_state message."""

    t: float  # header stamp, s
    position: float
    velocity: float
    effort: float
    target: float  # position command in force, NaN where none
    mode: str
    flags: str


@dataclass
class Pending:
    """An answer to come: ``done``, then ``ok`` and ``message``."""

    what: str
    done: bool = False
    ok: bool = False
    message: str = ""
    value: Any = None
    _callbacks: list[Callable[[Pending], None]] = field(default_factory=list)

    def finish(self, ok: bool, message: str, value: Any = None) -> None:
        self.ok, self.message, self.value, self.done = ok, message, value, True
        for callback in self._callbacks:
            callback(self)

    def then(self, callback: Callable[[Pending], None]) -> Pending:
        self._callbacks.append(callback)
        if self.done:
            callback(self)
        return self


def _sample(msg: Any, i: int, t: float) -> Sample:
    """Motor ``i`` of a servo_state message."""
    return Sample(t=t, position=msg.position[i], velocity=msg.velocity[i],
                  effort=msg.effort[i], target=msg.position_command[i],
                  mode=ServoMode(msg.mode[i]).name.lower(),
                  flags=flag_names(StateFlags(int(msg.servo_state_flags[i]))))


def _parameter_value(value: ParameterValue) -> Any:
    kind = value.type
    return {ParameterType.PARAMETER_BOOL: lambda: value.bool_value,
            ParameterType.PARAMETER_INTEGER: lambda: value.integer_value,
            ParameterType.PARAMETER_DOUBLE: lambda: value.double_value,
            ParameterType.PARAMETER_STRING: lambda: value.string_value,
            ParameterType.PARAMETER_DOUBLE_ARRAY: lambda: list(value.double_array_value),
            }.get(kind, lambda: None)()


def _to_parameter_value(value: Any) -> ParameterValue:
    if isinstance(value, bool):
        return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
    if isinstance(value, (list, tuple)):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                              double_array_value=[float(v) for v in value])
    return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value))


class StepRecording:
    """A step in progress: the samples of one motor from the command on."""

    def __init__(self, motor: str, start: float, target: float, duration: float) -> None:
        self.motor, self.start, self.target, self.duration = motor, start, target, duration
        self.samples: list[Sample] = []
        self.t0: float | None = None  # stamp of the first sample after the command
        self.result = Pending(f"step of {motor} to {target:g}")

    def add(self, sample: Sample) -> None:
        if self.result.done:
            return
        if self.t0 is None:
            self.t0 = sample.t
        self.samples.append(sample)
        if sample.t - self.t0 >= self.duration:
            self.result.finish(True, "recorded", self.metrics())

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """t (s from the first sample), position, effort."""
        t = np.array([s.t for s in self.samples]) - (self.t0 or 0.0)
        return t, np.array([s.position for s in self.samples]), \
            np.array([s.effort for s in self.samples])

    def metrics(self) -> StepMetrics:
        t, y, effort = self.arrays()
        return step_metrics(t, y, self.start, self.target, force=effort)

    def recording(self) -> Recording:
        """The step as ``servo-sim identify`` reads it: time from the first sample, the
        position command in force, the position."""
        t, y, _ = self.arrays()
        return Recording(t, np.array([s.target for s in self.samples]), y)


class ServoLink:
    """One motor of a running servo_sim node, for a tool.

    ``node``: an rclpy node to use (rqt's); None creates one, with its own context and
    an executor spinning in a daemon thread until :meth:`close`.
    """

    def __init__(self, node: Node | None = None, history_s: float = 10.0) -> None:
        self._own = node is None
        if node is None:
            self._context = rclpy.Context()
            # the process's signals stay its owner's (the panel quits Qt on Ctrl-C)
            rclpy.init(context=self._context, signal_handler_options=SignalHandlerOptions.NO)
            node = rclpy.create_node(f"servo_sim_panel_{id(self):x}", context=self._context)
            self._executor = SingleThreadedExecutor(context=self._context)
            self._executor.add_node(node)
            self._thread = threading.Thread(target=self._spin, daemon=True)
        self.node = node
        self.history_s = history_s
        self.target_node = ""  # fully qualified name, e.g. /servo_sim or /arm_ns/servo_sim
        self.motor = ""
        self.motors: list[str] = []  # of the target node, from its servo_state
        self.history: deque[Sample] = deque()
        self.last_state_wall = math.nan  # time.monotonic() of the last servo_state
        self._last_state: Any = None  # the last servo_state message, every motor
        self.recording: StepRecording | None = None
        self._lock = threading.Lock()
        self._subscription = None
        self._clients: dict[str, Any] = {}
        self._waiting: list[tuple] = []  # calls waiting for their service
        self._retry_timer = self.node.create_timer(0.05, self._send_waiting)
        #: the chosen motor's parameters changed on the node (by anyone) since the last
        #: :meth:`take_parameter_changes`: field -> new value
        self._changed: dict[str, Any] = {}
        self._events = self.node.create_subscription(
            ParameterEvent, "/parameter_events", self._on_parameter_event,
            qos_profile_parameter_events)
        if self._own:
            self._thread.start()

    # ------------------------------------------------------------------ discovery

    def _spin(self) -> None:
        while self._context.ok():
            try:
                self._executor.spin_once(timeout_sec=0.05)
            except Exception:  # the context went away under us
                if self._context.ok():
                    raise
                return

    def nodes(self) -> list[str]:
        """Fully qualified names of the servo_sim nodes in the graph (sorted)."""
        found = {name[: -len("/servo_state")]
                 for name, types in self.node.get_topic_names_and_types()
                 if STATE_TYPE in types and name.endswith("/servo_state")}
        return sorted(found)

    def connect(self, target_node: str) -> None:
        """Follow ``target_node`` (e.g. '/servo_sim'): subscribe to its servo_state."""
        with self._lock:
            if target_node == self.target_node:
                return
            if self._subscription is not None:
                self.node.destroy_subscription(self._subscription)
            for client in self._clients.values():
                self.node.destroy_client(client)
            self._clients.clear()
            self.target_node, self.motors, self.motor = target_node, [], ""
            self.history.clear()
            self.recording = None
            self._changed.clear()
            self._last_state = None
        self._subscription = self.node.create_subscription(
            servo_msgs.ServoState, f"{target_node}/servo_state", self._on_state,
            STATE_DEPTH)

    def choose(self, motor: str) -> None:
        """Follow ``motor`` (device name, as in servo_state) of the connected node."""
        with self._lock:
            if motor != self.motor:
                self.motor = motor
                self.history.clear()
                self.recording = None
                self._changed.clear()

    @property
    def namespace(self) -> str:
        """The target node's namespace ('' for the root)."""
        return self.target_node.rsplit("/", 1)[0]

    def motor_path(self, motor: str | None = None) -> str:
        """'/ns/arm': the prefix of a motor's services and topics."""
        return f"{self.namespace}/{ros_name(motor or self.motor)}"

    # ------------------------------------------------------------------ state

    def _on_state(self, msg: Any) -> None:
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            self.motors = list(msg.name)
            self.last_state_wall = time.monotonic()
            self._last_state = msg
            if self.motor not in self.motors:
                return
            sample = _sample(msg, self.motors.index(self.motor), t)
            self.history.append(sample)
            while self.history and t - self.history[0].t > self.history_s:
                self.history.popleft()
            if self.history and t < self.history[0].t:  # time went back: a reset
                self.history.clear()
                self.history.append(sample)
            if self.recording is not None:
                self.recording.add(sample)

    def _on_parameter_event(self, msg: ParameterEvent) -> None:
        """The target node's parameter events: keep what changed of the chosen motor."""
        with self._lock:
            if msg.node != self.target_node or not self.motor:
                return
            prefix = f"{ros_name(self.motor)}."
            for p in (*msg.new_parameters, *msg.changed_parameters):
                if p.name.startswith(prefix):
                    self._changed[p.name[len(prefix):]] = _parameter_value(p.value)

    def take_parameter_changes(self) -> dict[str, Any]:
        """The chosen motor's parameters changed on the node since the last call (by this
        tool or any other: ``ros2 param set``, rqt_reconfigure, a service that mirrors
        one): field -> value."""
        with self._lock:
            changed, self._changed = self._changed, {}
        return changed

    def states(self) -> dict[str, Sample]:
        """Every motor of the node as its last servo_state gave it (the arm view)."""
        with self._lock:
            msg = self._last_state
        if msg is None:
            return {}
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        return {name: _sample(msg, i, t) for i, name in enumerate(msg.name)}

    def samples(self) -> list[Sample]:
        """The chosen motor's samples of the last ``history_s`` seconds."""
        with self._lock:
            return list(self.history)

    def alive(self, within_s: float = 2.0) -> bool:
        """Whether the node's servo_state arrived within the last ``within_s``."""
        return time.monotonic() - self.last_state_wall < within_s

    # ------------------------------------------------------------------ calls

    def _call(self, srv_type: Any, name: str, request: Any, what: str,
              answer: Callable[[Any], tuple[bool, str, Any]]) -> Pending:
        pending = Pending(what)
        with self._lock:
            client = self._clients.get(name)
            if client is None:
                client = self._clients[name] = self.node.create_client(
                    srv_type, name, qos_profile=qos_profile_services_default)

        def done(future: Any) -> None:
            try:
                pending.finish(*answer(future.result()))
            except Exception as exc:  # noqa: BLE001 - shown to the user, never raised
                pending.finish(False, f"{what}: {exc}")

        def send() -> None:
            client.call_async(request).add_done_callback(done)

        if client.service_is_ready():
            send()
        else:  # a client just made, or a table still growing: the timer tries again
            with self._lock:
                self._waiting.append((client, send, pending, time.monotonic() + CALL_WAIT_S,
                                      f"{what}: no service {name} within {CALL_WAIT_S:g} s "
                                      "(is the node running, is its table up?)"))
        return pending

    def _send_waiting(self) -> None:
        """Timer: send the calls whose service has come, fail those out of time."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for entry in waiting:
            client, send, pending, deadline, why = entry
            if client.service_is_ready():
                send()
            elif time.monotonic() > deadline:
                pending.finish(False, why)
            else:
                with self._lock:
                    self._waiting.append(entry)

    def set_float(self, command: str, value: float) -> Pending:
        """``set_position`` / ``set_velocity`` / ``set_torque`` / ``set_force``."""
        name = f"{self.motor_path()}/{command}"
        return self._call(servo_srvs.SetFloat, name, servo_srvs.SetFloat.Request(value=value),
                          f"{command} {value:g}",
                          lambda r: (r.success, "done" if r.success else
                                     f"{command} {value:g} refused (the node's log says why)",
                                     None))

    def trigger(self, command: str) -> Pending:
        """One of :data:`TRIGGERS` on the chosen motor."""
        name = f"{self.motor_path()}/{command}"
        return self._call(Trigger, name, Trigger.Request(), command,
                          lambda r: (r.success, r.message, None))

    def get_parameters(self, names: list[str]) -> Pending:
        """Values of those of the chosen motor's parameters ``names`` (field names) that it
        has (a rotational motor has no max_force), as a dict: a ListParameters, then a
        GetParameters of what exists."""
        prefix = ros_name(self.motor)
        result = Pending("get parameters")

        def listed(answer: Pending) -> None:
            if not answer.ok:
                result.finish(False, answer.message)
                return
            present = [n for n in names if f"{prefix}.{n}" in answer.value]
            request = GetParameters.Request(names=[f"{prefix}.{n}" for n in present])
            self._call(GetParameters, f"{self.target_node}/get_parameters", request,
                       "get parameters",
                       lambda r: (True, "", {n: _parameter_value(v) for n, v in
                                             zip(present, r.values, strict=True)})).then(
                lambda got: result.finish(got.ok, got.message, got.value))

        request = ListParameters.Request(prefixes=[prefix], depth=0)
        self._call(ListParameters, f"{self.target_node}/list_parameters", request,
                   "list parameters", lambda r: (True, "", set(r.result.names))).then(listed)
        return result

    def set_parameter(self, name: str, value: Any) -> Pending:
        """Set the chosen motor's parameter ``name`` (a field); the node's refusal is the
        message."""
        full = f"{ros_name(self.motor)}.{name}"
        request = SetParameters.Request(parameters=[Parameter(
            name=full, value=_to_parameter_value(value))])
        return self._call(SetParameters, f"{self.target_node}/set_parameters", request,
                          f"{full} = {value}",
                          lambda r: (r.results[0].successful,
                                     f"{full} = {value}: {r.results[0].reason or 'set'}",
                                     None))

    # ------------------------------------------------------------------ step

    def step(self, target: float, duration: float) -> Pending:
        """Command a step to ``target`` (set_position) and record ``duration`` s of the
        response (stamp time); the result's value is the :class:`StepMetrics`."""
        samples = self.samples()
        if not samples:
            failed = Pending(f"step to {target:g}")
            failed.finish(False, f"no state of motor {self.motor!r} yet")
            return failed
        recording = StepRecording(self.motor, samples[-1].position, target, duration)
        if recording.start == target:
            recording.result.finish(False, f"the motor is already at {target:g}")
            return recording.result

        def commanded(answer: Pending) -> None:
            if answer.ok:
                with self._lock:
                    self.recording = recording
            else:
                recording.result.finish(False, answer.message)

        self.set_float("set_position", target).then(commanded)
        return recording.result

    def close(self) -> None:
        """End the link: its node and thread if its own, else what it made on rqt's."""
        self.node.destroy_timer(self._retry_timer)
        if not self._own:
            self.node.destroy_subscription(self._events)
            if self._subscription is not None:
                self.node.destroy_subscription(self._subscription)
            for client in self._clients.values():
                self.node.destroy_client(client)
            return
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self._context)
        self._thread.join(timeout=2.0)
