"""The ``servo_sim`` ROS 2 node: the Webots ROS table (SPEC §6) over a hardware plugin.

Thin by design: every per-motor service and topic comes from the tables in
``interface.py`` and one generic handler; parameters from ``params.py``; pacing from
``servo_sim.pacing``; the process (executor, signals) from ``entry.py``. The hardware
layer (the model through the ``sim`` plugin, or real actuators) does the work. One
executor thread runs everything (services, the cycle timer, the action servers'
coroutines), so callbacks never race. Beyond Webots (issue 5): per motor Trigger
services and the ``trapezoidal_move`` action; ``~/e_stop``/``~/reset_e_stop``,
``~/servo_state`` (with every joint_states message) and ``/diagnostics`` (1 Hz).
"""

from __future__ import annotations

import logging
import math
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import (
    SetParametersResult,
)
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_service import ParameterService
from rclpy.task import Future
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from .. import action as servo_actions
from .. import msg as servo_msgs
from .. import srv as servo_srvs
from ..hardware import HardwareSystem
from ..hardware.system import CommandRefusedError
from ..model import ConfigError, Motor, load_config, ros_name
from ..model.safety import Move, commands
from ..model.urdf import apply_urdf, ros2_control_joints
from ..pacing import Pacer
from ..resources import default_config_path
from .interface import (
    FORCE_SENSOR,
    MOTOR_TOPICS,
    NODE_ENDPOINTS,
    POSITION_SENSOR,
    MotorAction,
    MotorService,
    MotorTrigger,
    default_force_topic,
)
from .joint_commands import per_joint
from .messages import descriptor, diagnostics, flag_names, stamp
from .params import (
    NODE_SPECS,
    ROS_BUILTIN_PARAMETERS,
    ParameterSpec,
    config_from_parameters,
    hardware_specs,
    motor_parameter_specs,
    node_settings,
    split_motor_parameter,
    top_parameter_specs,
)
from .table import FEEDBACK_TOPICS, TableBuilder, table_rows

if TYPE_CHECKING:
    from rclpy.action import ActionServer

#: Wall time one tick may spend stepping when running as fast as possible.
FREE_RUN_SLICE_S = 0.005
#: How often (cycle time) an action goal's feedback is published.
FEEDBACK_PERIOD_MS = 50
#: How often (wall time) the node checks which feedback topics have subscribers.
LISTENERS_PERIOD_S = 0.2
#: How often (wall time) /diagnostics is published.
DIAGNOSTICS_PERIOD_S = 1.0
#: How often (wall time) the per-motor table grows by a slice, and how long a slice may
#: take (plus one endpoint's creation): the longest the step loop waits for the table;
#: the steps due meanwhile run right after it.
TABLE_PERIOD_S = 0.001
TABLE_SLICE_S = 0.005
#: Node settings that only a simulation honours, with the value real hardware runs at.
_SIMULATION_ONLY = {"real_time_factor": 1.0, "start_paused": False}

#: topic name -> the bank sensor that feeds it, and the sensors in table order
_SENSOR_OF = {t.name: t.sensor for t in MOTOR_TOPICS}
_SENSORS = tuple(dict.fromkeys(_SENSOR_OF.values()))
_ENDPOINT_TYPES = {"sensor_msgs/msg/JointState": JointState, "rosgraph_msgs/msg/Clock": ClockMsg,
                   "std_srvs/srv/Trigger": Trigger, "servo_sim/srv/SetInt": servo_srvs.SetInt,
                   "servo_sim/msg/ServoState": servo_msgs.ServoState,
                   "diagnostic_msgs/msg/DiagnosticArray": DiagnosticArray}


def _own_clock_setter(node: Node) -> Callable[[ClockMsg], None] | None:
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


class _RosLogHandler(logging.Handler):
    """Forwards the library's Python log (logger ``servo_sim``, INFO and up) to the node's."""

    def __init__(self, node: Node) -> None:
        super().__init__(logging.INFO)
        self._logger = node.get_logger()
        self._library = logging.getLogger("servo_sim")
        self._level = self._library.level

    def attach(self) -> None:
        """Receive the library's records from INFO up: Python's default (root WARNING)
        would drop INFO (a recovered device, the URDF limits) before any handler."""
        self._library.addHandler(self)
        if self._level == logging.NOTSET or self._level > logging.INFO:
            self._library.setLevel(logging.INFO)

    def detach(self) -> None:
        self._library.removeHandler(self)
        self._library.setLevel(self._level)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self._logger.error(record.getMessage())
        elif record.levelno >= logging.WARNING:
            self._logger.warning(record.getMessage())
        else:
            self._logger.info(record.getMessage())


class ServoSimNode(Node):
    """Hosts every motor of its config; see SPEC §6 and ``interface.py``."""

    def __init__(self, **kwargs: Any) -> None:
        self._started = time.monotonic()
        try:  # parameters: the node's own now, each motor's with the table, then the
            # parameter services (a client sees all of them or none)
            super().__init__("servo_sim", start_parameter_services=False, **kwargs)
        except (ValueError, ParameterException) as exc:  # rclpy refusing an override,
            # e.g. `-p use_sim_time:=maybe`
            raise ConfigError(f"parameter overrides of servo_sim: {exc}") from None
        self._log_handler = _RosLogHandler(self)
        self._log_handler.attach()
        try:
            self.hw = HardwareSystem(self._read_config())
        except BaseException:
            # destroyed now, not by the GC later: rcl (Jazzy) finalizing a dead node takes
            # the /rosout publisher of the live node of the same name with it
            self._log_handler.detach()
            super().destroy_node()
            raise
        self.sim = self.hw.sim
        if not self.hw.simulated and self._settings["publish_clock"]:
            self._log_handler.detach()
            super().destroy_node()
            raise ConfigError(f"use_sim_time / publish_clock = true: {self._real_time()} "
                              "(nothing would publish /clock)")
        self._follow_clock = None  # sets the node's own clock from each /clock message
        if self._settings["publish_clock"]:  # the node's clock follows its own /clock
            self.set_parameters([Parameter("use_sim_time", value=True)])
            self._follow_clock = _own_clock_setter(self)
        if not self.hw.simulated:  # declared with the values in force
            for name, value in _SIMULATION_ONLY.items():
                if self._settings[name] != value:
                    self.get_logger().warning(f"{name} = {self._settings[name]} ignored: "
                                              f"{self._real_time()}")
                    self._settings[name] = value
        self._declare_parameters()

        self._feedback_publishers: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._reset_topics()
        # goal id -> its handle, move, the future its coroutine awaits, the next feedback
        # time and the feedback type
        self._goals: dict[bytes, tuple[Any, Move, Future, int, Any]] = {}
        self._action_servers: list[ActionServer] = []
        self._outputs: dict[str, Any] = {}
        self._clock_msg = ClockMsg()
        urdf = self._settings["robot_description"]  # how a compact joint_commands reads
        self._command_interfaces = {name: joint["command"] for name, joint in
                                    ros2_control_joints(urdf).items()} if urdf else None
        for ep in NODE_ENDPOINTS:
            kind = _ENDPOINT_TYPES[ep.type]
            if ep.kind == "service":
                self.create_service(kind, ep.name, getattr(self, ep.handler))
            elif ep.kind == "subscription":
                self.create_subscription(kind, ep.name, getattr(self, ep.handler), 10)
            elif ep.name != "/clock" or self._settings["publish_clock"]:
                self._outputs[ep.name] = self.create_publisher(kind, ep.name, 10)

        self._seqno = 0
        self._paused = bool(self._settings["start_paused"])
        self._next_joint_states_ms = 0
        self._pacer = Pacer(self.sim.basic_time_step_ms / 1000.0,
                            self._settings["real_time_factor"])
        self._last_cycle = time.monotonic()  # real hardware: when the last cycle ran
        self._ticking = False
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._timer = self.create_timer(self._pacer.period, self._on_tick, clock=self._steady)
        self._listened = {s: np.zeros(len(self.sim), dtype=bool) for s in _SENSORS}
        self.create_timer(LISTENERS_PERIOD_S, self._update_listened, clock=self._steady)
        self._diagnostics_timer = self.create_timer(DIAGNOSTICS_PERIOD_S,
                                                    self._publish_diagnostics,
                                                    clock=self._steady)
        #: the parameter a service is setting to what it applied (not applied again)
        self._echo: str | None = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        # the per-motor table after the node runs, a slice at a time between steps
        self.table = TableBuilder(self._table_jobs(self._settings["motor_interfaces"]))
        self._table_next = 0.0  # when the next slice may run
        self.table_timer = self.create_timer(TABLE_PERIOD_S, self._grow_table,
                                              clock=self._steady)
        try:  # a signal from here on: the caller has no node to switch the devices off
            self.hw.start()  # a device that does not answer is retried by the cycle
            self._publish_joint_states()
            self._publish_clock()
            self._publish_diagnostics()
            self.get_logger().info(
                f"{len(self.sim)} motor(s) {', '.join(self.sim.motor_names)} on hardware "
                f"{self.hw.plugin_name!r} ({self.hw.state.value}); step "
                f"{self.sim.basic_time_step_ms} ms, real_time_factor "
                f"{self._settings['real_time_factor']}{', paused' if self._paused else ''}")
        except BaseException:
            self.stop_hardware()
            raise

    # ------------------------------------------------------------------ the table

    def _table_jobs(self, families: list[str]) -> Iterator[tuple[str, Callable[[], object]]]:
        """The table's creation jobs, made as they run: each motor's parameters, the
        parameter services (before any service that changes a motor and its parameter;
        a client sees all parameters or none), then a job per row and motor, row by row."""
        motors = [(i, m.name, ros_name(m.name)) for i, m in enumerate(self.sim.motors)]
        for motor in self.sim.config.motors:
            yield "motors' parameters", partial(self._declare_motor, motor.name)
        yield "parameter services", partial(ParameterService, self)
        for row in table_rows(families):
            for i, name, base in motors:
                if row == FEEDBACK_TOPICS:  # on the sensor's topic when the job runs
                    for sensor in _SENSORS:
                        if getattr(self.sim.bank, sensor).period_ms[i] > 0:
                            yield "topics", partial(self._feedback_publisher_of, name, sensor)
                elif isinstance(row, MotorService):
                    yield "services", partial(self.create_service, getattr(
                        servo_srvs, row.srv), f"{base}/{row.name}", partial(self._serve, row, name))
                elif isinstance(row, MotorTrigger):
                    yield "services", partial(self.create_service, Trigger, f"{base}/{row.name}",
                                              partial(self._serve_trigger, row, name))
                else:
                    yield "actions", partial(self._create_action_server, row, name)

    def _declare_motor(self, motor_name: str) -> None:
        self._declare(motor_parameter_specs(self.sim.motor(motor_name).config))

    def _create_action_server(self, row: MotorAction, motor_name: str) -> None:
        # imported with the first action server, after the node runs: rclpy.action costs
        # 16 ms of start-up, which ten robots starting at once on two cores feel
        from rclpy.action import ActionServer, CancelResponse, GoalResponse

        self._action_servers.append(ActionServer(
            self, getattr(servo_actions, row.action), f"{ros_name(motor_name)}/{row.name}",
            execute_callback=partial(self._execute_move, row, motor_name),
            cancel_callback=lambda goal: CancelResponse.ACCEPT,
            goal_callback=lambda goal: GoalResponse.ACCEPT))

    def _grow_table(self) -> None:
        """A slice of the table, TABLE_PERIOD_S after the last one ended; once it is whole,
        say so once, with its time. (rclpy's EventsExecutor queues a timer event every
        period, run or not: the slices' backlog would hold service requests for
        seconds; the events that come early return at once.)"""
        if time.monotonic() < self._table_next:
            return
        done = self.table.run(TABLE_SLICE_S)
        self._table_next = time.monotonic() + TABLE_PERIOD_S
        if not done:
            return
        self.table_timer.cancel()
        counts = self.table.counts
        self.get_logger().info(
            f"per-motor table complete: {len(self.sim)} motors' parameters, "
            f"{counts['services']} services, {counts['topics']} topics, {counts['actions']} "
            f"actions, {time.monotonic() - self._started:.2f} s after start (longest "
            f"creation {self.table.longest_job_s * 1000:.1f} ms)")

    # ------------------------------------------------------------------ parameters

    def _read_config(self) -> Any:
        """The config from the parameter overrides (params files, ``-p``,
        ``parameter_overrides``): read as given, declared once validated."""
        # rclpy keeps the overrides in Node._parameter_overrides (Foxy to Kilted), and has no
        # public getter: declaring them all to read them (automatically_declare_...) costs a
        # parameter event each, seconds for a thousand motors
        params = {k: p.value for k, p in self._parameter_overrides.items()
                  if not k.startswith("qos_overrides.") and k not in ROS_BUILTIN_PARAMETERS}
        source = f"parameters of {self.get_fully_qualified_name()}"
        untyped = sorted(k for k, v in params.items() if v is None)
        if untyped:  # `-p name:=[]`: ROS parameters have no type for an empty list
            raise ConfigError(f"{source}: parameter {untyped[0]!r} has no type (an empty "
                              "list cannot be a ROS parameter value)")
        sim_time = self._parameter_overrides.get("use_sim_time")
        self._settings = node_settings(
            params if sim_time is None else {**params, "use_sim_time": sim_time.value}, source)
        if "motors" in params:
            config = config_from_parameters(params, source)
        else:
            model_keys = sorted(set(params) - {s.name for s in NODE_SPECS})
            if model_keys:
                raise ConfigError(f"{source}: no 'motors' parameter, but motor parameters "
                                  f"{', '.join(model_keys)}")
            path = default_config_path()
            self.get_logger().info(f"no 'motors' parameter: using {path}")
            config = load_config(path)
        urdf = self._settings["robot_description"]
        return apply_urdf(config, urdf) if urdf else config

    def _declare_parameters(self) -> None:
        """The node's own parameters, with descriptors and validated values; each motor's
        come with the table (``_declare_motor``)."""
        specs = [replace(s, value=self._settings[s.name]) for s in NODE_SPECS]
        specs += top_parameter_specs(self.sim.config) + hardware_specs(
            self.sim.config, self.hw.component.SETTINGS)
        self._declare(specs)

    def _declare(self, specs: list[ParameterSpec]) -> None:
        self.declare_parameters("", [(s.name, s.value, descriptor(s)) for s in specs],
                                ignore_override=True)

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for p in params:
            if not self.has_parameter(p.name) or p.name == self._echo:
                continue  # being declared, or a service's change echoed: already applied
            if p.name == "use_sim_time" and p.value != self._settings["publish_clock"]:
                reason = ("use_sim_time is publish_clock's (read-only): the time base is "
                          "chosen at start")
                self.get_logger().warning(f"parameter use_sim_time = {p.value!r} rejected: "
                                          f"{reason}")
                return SetParametersResult(successful=False, reason=reason)
            target = split_motor_parameter(self.sim.config, p.name)
            value = list(p.value) if isinstance(p.value, array) else p.value  # double arrays
            try:
                if target is not None:
                    self.hw.set_parameter(*target, value)
                elif p.name in self._settings:
                    self._apply_setting(p.name, p.value)
            except ValueError as exc:
                self.get_logger().warning(f"parameter {p.name} = {p.value!r} rejected: {exc}")
                return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _real_time(self) -> str:
        return f"hardware {self.hw.plugin_name!r} runs in real time"

    def _apply_setting(self, name: str, value: Any) -> None:
        if not self.hw.simulated and name in _SIMULATION_ONLY:
            raise ValueError(f"parameter {name!r}: {self._real_time()}")
        self._settings[name] = value
        if name == "real_time_factor":
            self._pacer.set_real_time_factor(value)
            self._timer.timer_period_ns = int(self._pacer.period * 1e9)
            self._timer.reset()  # the new period from now, not after the old one
        elif name == "joint_states_rate":
            self._next_joint_states_ms = self.sim.time_ms

    # ------------------------------------------------------------------ services

    def _serve(self, row: MotorService, motor_name: str, request: Any, response: Any) -> Any:
        """Every per-motor service: request fields -> model call -> response."""
        motor = self.sim.motor(motor_name)
        field_type, field = row.response_field
        if row.is_getter:
            setattr(response, field, row.call(motor))
            return response
        args = tuple(getattr(request, name) for name in row.request_fields)
        try:
            if row.parameter is None:
                self.hw.command(motor_name, row.call, *args)
            else:  # the motor parameter's change: one check, applied once
                self.hw.set_parameter(motor_name, row.parameter[0],
                                      list(args) if len(args) > 1 else args[0])
            ok = True
        except ValueError as exc:
            self.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            ok = False
        if ok and row.topic is not None:  # the sensor's topic is named after this service
            self._topic[(motor_name, _SENSOR_OF[row.topic])] = row.topic
            self._feedback_publisher(motor_name, row.topic)  # subscribers match before data
        if ok and row.parameter is not None:  # keep `ros2 param get` true
            name, read = row.parameter
            self._echo = f"{ros_name(motor_name)}.{name}"
            try:
                self.set_parameters([Parameter(self._echo, value=read(motor))])
            finally:
                self._echo = None
        setattr(response, field, int(ok) if field_type == "int8" else ok)
        return response

    def _serve_trigger(self, row: MotorTrigger, motor_name: str, request: Trigger.Request,
                       response: Trigger.Response) -> Trigger.Response:
        """halt, enable, disable, e_stop, reset_e_stop of one motor."""
        try:
            self.hw.command(motor_name, row.call)
        except ValueError as exc:
            self.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            response.success, response.message = False, str(exc)
            return response
        motor = self.sim.motor(motor_name)
        response.success = True
        response.message = f"{motor_name}: mode {motor.mode.name.lower()}, flags " \
                           f"{flag_names(motor.flags)}"
        return response

    def on_e_stop(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        """Node-wide e-stop: every motor off and latched."""
        self.sim.e_stop()
        response.success, response.message = True, f"e-stop: {len(self.sim)} motor(s) off"
        return response

    def on_reset_e_stop(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        self.sim.reset_e_stop()
        response.success = True
        response.message = "e-stop reset: motors disabled until enabled"
        return response

    async def _execute_move(self, row: MotorAction, motor_name: str, goal: Any) -> Any:
        """A trapezoidal_move goal: start the model's move, wait until it ends."""
        g = goal.request
        result = getattr(servo_actions, row.action).Result()
        try:
            move = self.hw.command(motor_name, row.call, g.target_position,
                                   g.target_velocity, g.max_velocity, g.max_acceleration)
        except ValueError as exc:
            self.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            goal.abort()
            result.success, result.message = False, str(exc)
            return result
        done = Future()
        self._goals[bytes(goal.goal_id.uuid)] = (goal, move, done, self.sim.time_ms,
                                                 getattr(servo_actions, row.action).Feedback)
        self._follow_goals()  # feedback at the start
        await done
        result.success = move.state == "succeeded"
        result.message = move.reason or f"reached {move.plan.target:g}"
        result.position = self.sim.motor(motor_name).position
        result.duration = ((move.finished_ms or self.sim.time_ms) - move.start_ms) / 1000.0
        if move.state == "succeeded":
            goal.succeed()
        elif move.state == "canceled" and goal.is_cancel_requested:
            goal.canceled()
        else:
            goal.abort()
        return result

    def _follow_goals(self) -> None:
        """After cycles: end goals whose move ended, honour cancels, publish feedback."""
        now = self.sim.time_ms
        for key, (goal, move, done, next_ms, feedback) in list(self._goals.items()):
            if goal.is_cancel_requested and not move.done:
                move.cancel()
            if move.done or not goal.is_active:
                del self._goals[key]
                done.set_result(move.state)
            elif now >= next_ms:
                motor = self.sim.motor(move.name)
                goal.publish_feedback(feedback(position=motor.position, velocity=motor.velocity,
                                               remaining_distance=move.remaining_distance))
                self._goals[key] = (goal, move, done, max(next_ms + FEEDBACK_PERIOD_MS, now),
                                    feedback)

    def _refuse_real(self, service: str, response: Any) -> bool:
        """True (and the response filled) when the hardware is real: no pause/step/reset."""
        if self.hw.simulated:
            return False
        why = f"{service}: refused: {self._real_time()}"
        self.get_logger().warning(why)
        response.success = False
        if hasattr(response, "message"):
            response.message = why
        return True

    def on_pause(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        if self._refuse_real("~/pause", response):
            return response
        self._paused = True
        response.success, response.message = True, f"paused at t = {self.sim.time:.3f} s"
        return response

    def on_resume(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        self._paused = False
        self._restart_pacing()
        response.success, response.message = True, f"resumed at t = {self.sim.time:.3f} s"
        return response

    def on_step(self, request: Any, response: Any) -> Any:
        """``~/step``: ``value`` steps, only while paused."""
        if self._refuse_real("~/step", response):
            return response
        if not self._paused or request.value < 0:
            why = "only while paused (call ~/pause first)" if not self._paused else "must be >= 0"
            self.get_logger().warning(f"~/step: value = {request.value} rejected: {why}")
            response.success = False
            return response
        self._update_listened()
        self._advance(request.value)
        response.success = True
        return response

    def on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        if self._refuse_real("~/reset", response):
            return response
        self.hw.reset()
        self._follow_goals()  # moves in progress ended (aborted: reset)
        self._reset_topics()
        self._next_joint_states_ms = 0
        self._restart_pacing()
        self._publish_clock()  # back to 0, as Webots' and Gazebo's resets
        self._publish_joint_states()
        response.success, response.message = True, "reset to the initial state, t = 0"
        return response

    def on_joint_commands(self, msg: JointState) -> None:
        """ros2_control's topic systems (see joint_commands): position, else velocity,
        else effort."""
        try:
            commands = per_joint(msg.name, (msg.position, msg.velocity, msg.effort),
                                 self._command_interfaces)
        except ValueError as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=5.0)
            return
        for name, (position, velocity, effort) in commands.items():
            motor_name = self._joint_names.get(name)
            if motor_name is None:
                if (position, velocity, effort) != (None, None, None):  # not a mimic joint
                    self.get_logger().warning(f"joint_commands: unknown joint {name!r}",
                                              throttle_duration_sec=5.0)
                continue
            command = partial(self.hw.command, motor_name)
            try:
                if position is not None:
                    command(Motor.set_position, position)
                    if velocity is not None:
                        command(Motor.set_velocity, abs(velocity))
                elif velocity is not None:
                    command(Motor.set_position, math.inf)
                    command(Motor.set_velocity, velocity)
                elif effort is not None:
                    command(Motor.set_force, effort)
            except CommandRefusedError as exc:
                self.get_logger().warning(f"joint_commands: {exc}", throttle_duration_sec=5.0)
            except ValueError as exc:
                self.get_logger().warning(f"joint_commands: {exc}")

    # ------------------------------------------------------------------ stepping

    def _restart_pacing(self) -> None:  # pace from now, the timer in phase with the pacer
        self._pacer.rebase()
        self._timer.reset()

    def _on_tick(self) -> None:
        if self._paused:
            if self._goals:  # cancels and e-stops end goals while paused too
                self._follow_goals()
            return
        if not self.hw.simulated:  # real time: one cycle per tick, its real period
            now = time.monotonic()
            self._advance(1, now - self._last_cycle)
            self._last_cycle = now
            return
        if not self._ticking:  # pace from the first tick, not from construction
            self._ticking = True
            self._restart_pacing()
        if self._pacer.real_time_factor > 0:  # the steps due by now, at absolute times
            overruns = self._pacer.overruns
            n = self._pacer.due()
            if self._pacer.overruns != overruns:
                self.get_logger().warning(
                    f"cannot keep real_time_factor {self._pacer.real_time_factor}: more "
                    f"than {n} steps behind; letting simulated time slip",
                    throttle_duration_sec=5.0)
            self._advance(n)
        else:
            end = time.monotonic() + FREE_RUN_SLICE_S
            while time.monotonic() < end:
                self._advance(10)

    def _advance(self, n: int, period: float | None = None) -> None:
        """``n`` cycles, publishing what each refreshed with its own stamp."""
        hw, bank = self.hw, self.sim.bank
        if self._goals:
            self._follow_goals()
        for _ in range(n):
            hw.cycle(period)
            now = bank.time_ms
            self._publish_clock()  # before what the step publishes, stamped with its time
            if self._goals:  # feedback at its period, goals whose move ended
                self._follow_goals()
            for sensor_name in _SENSORS:
                sensor = getattr(bank, sensor_name)
                if sensor.refreshed_ms == now:
                    self._publish_feedback(sensor_name, sensor, now)
            rate = self._settings["joint_states_rate"]
            if rate > 0 and now >= self._next_joint_states_ms:
                self._publish_joint_states()
                period_ms = 1000.0 / rate
                self._next_joint_states_ms = max(self._next_joint_states_ms + period_ms,
                                                 now + 1e-9)

    def _stamp(self, time_ms: int) -> Time:
        """The simulated time of a sample where the node publishes /clock (consumers
        follow it), else the node's ROS clock now: stamps agree with the consumers'."""
        if self._settings["publish_clock"]:
            return stamp(time_ms)
        return self.get_clock().now().to_msg()

    def _publish_feedback(self, sensor_name: str, sensor: Any, now: int) -> None:
        """A message per motor whose ``sensor`` refreshed at ``now``, on its topic, where
        somebody listens (see _update_listened); each topic reuses its message."""
        names, refreshed = self.sim.bank.names, sensor.refreshed
        heard = refreshed[self._listened[sensor_name][refreshed]]
        time_stamp = self._stamp(now) if len(heard) else None
        for i in heard:
            motor_name = names[i]
            pub, msg = self._feedback_publisher(motor_name, self._topic[(motor_name,
                                                                          sensor_name)])
            msg.header.stamp = time_stamp
            msg.data = float(sensor.value[i])
            pub.publish(msg)

    def _update_listened(self) -> None:
        """Which feedback topics have subscribers, every LISTENERS_PERIOD_S and before each
        ~/step (asking per motor at each refresh cost ~1.5 us a motor)."""
        names, publishers = self.sim.bank.names, self._feedback_publishers
        for sensor_name, listened in self._listened.items():
            for i, name in enumerate(names):
                entry = publishers.get((name, self._topic[(name, sensor_name)]))
                listened[i] = entry is not None and entry[0].get_subscription_count() > 0

    def _feedback_publisher_of(self, motor_name: str, sensor_name: str) -> None:
        self._feedback_publisher(motor_name, self._topic[(motor_name, sensor_name)])

    def _feedback_publisher(self, motor_name: str, topic: str) -> tuple[Any, Any]:
        """The publisher of ``<motor>/<topic>`` and its message, created when first needed."""
        key = (motor_name, topic)
        entry = self._feedback_publishers.get(key)
        if entry is None:
            entry = self._feedback_publishers[key] = (self.create_publisher(
                servo_msgs.Float64Stamped, f"{ros_name(motor_name)}/{topic}", 10),
                servo_msgs.Float64Stamped())
        return entry

    def _publish_joint_states(self) -> None:
        """joint_states and ~/servo_state (seed 004 ServoState), same stamp; each built
        only when somebody listens (servo_state's report costs ~35 us)."""
        bank, self._seqno = self.sim.bank, self._seqno + 1
        joint_states, servo_state = self._outputs["joint_states"], self._outputs["~/servo_state"]
        listened = joint_states.get_subscription_count(), servo_state.get_subscription_count()
        if not any(listened):
            return
        msg = JointState()
        msg.header.stamp = self._stamp(bank.time_ms)
        msg.name = self.sim.motor_names
        msg.position = bank.position.tolist()
        msg.velocity = bank.velocity.tolist()
        msg.effort = bank.motor_force.tolist()
        if listened[0]:
            joint_states.publish(msg)
        if listened[1]:
            modes, flags = self.hw.report()
            position_command, velocity_command, effort_command = commands(bank)
            servo_state.publish(servo_msgs.ServoState(
                header=msg.header, seqno=self._seqno, name=msg.name, mode=modes.tolist(),
                servo_state_flags=flags.tolist(), position=msg.position,
                velocity=msg.velocity, acceleration=bank.joint_acceleration().tolist(),
                effort=msg.effort, position_command=position_command.tolist(),
                velocity_command=velocity_command.tolist(),
                effort_command=effort_command.tolist()))

    def _publish_diagnostics(self) -> None:
        """/diagnostics: one status per motor, OK / WARN / ERROR and why."""
        self._outputs["/diagnostics"].publish(diagnostics(
            self.get_name(), self.hw, self._stamp(self.sim.time_ms)))

    def _publish_clock(self) -> None:
        pub = self._outputs.get("/clock")
        if pub is not None:  # one message, its fields set (each step: 1,000 a second)
            sec, ms = divmod(self.sim.time_ms, 1000)
            self._clock_msg.clock.sec, self._clock_msg.clock.nanosec = sec, ms * 1_000_000
            pub.publish(self._clock_msg)
            if self._follow_clock is not None:
                self._follow_clock(self._clock_msg)

    def _reset_topics(self) -> None:
        """Each sensor's topic back to its default name (a reset restores the config's
        sensors, whose publishers the table creates)."""
        self._topic: dict[tuple[str, str], str] = {}  # (motor, sensor) -> its topic
        for m in self.sim.motors:
            self._topic[(m.name, POSITION_SENSOR)] = "position"
            self._topic[(m.name, FORCE_SENSOR)] = default_force_topic(m)
        self._joint_names = {**{ros_name(n): n for n in self.sim.motor_names},
                             **{n: n for n in self.sim.motor_names}}

    def stop_hardware(self) -> None:
        """Real devices torque off and released (idempotent)."""
        self.hw.shutdown()

    def destroy_node(self) -> None:
        """Also for a node whose constructor a signal interrupted (Kilted's try_shutdown
        destroys it): a real device is left with its torque off; Node.destroy_node leaves
        action servers alone, and their handles would keep the rcl node alive."""
        if hasattr(self, "hw"):
            self.stop_hardware()
        if hasattr(self, "_log_handler"):
            self._log_handler.detach()
        for server in getattr(self, "_action_servers", ()):
            server.destroy()
        super().destroy_node()

