"""The ``servo_sim`` ROS 2 node: the Webots ROS table (SPEC §6) over the runtime.

A thin host: the runtime (``servo_sim.runtime``, no ROS) owns the hardware system and
the pacing and reports what each cycle did; this node turns ROS requests into the
runtime's and the hardware system's calls and publishes what the cycles report
(``outputs.py``). Every per-motor service and topic comes from the tables in
``interface.py`` and one generic handler; parameters from ``live_parameters.py``; the
actions from ``goals.py``; the process from ``entry.py`` and ``spin.py``. One
executor thread runs everything (services, the cycle timer, the action servers'
coroutines), so callbacks never race. Beyond Webots (issue 5): per motor Trigger
services and the ``trapezoidal_move`` action; ``~/e_stop``/``~/reset_e_stop``,
``~/servo_state`` (with every joint_states message) and ``/diagnostics`` (1 Hz).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_service import ParameterService
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from ... import msg as servo_msgs
from ... import srv as servo_srvs
from ...model import ConfigError, law, ros_name
from ...model.urdf import ros2_control_joints
from ...pacing import MAX_CATCH_UP_STEPS
from ...runtime import SENSORS, RealTimeError, Runtime
from ..interface import NODE_ENDPOINTS, MotorService, MotorTrigger
from ..logs import RosLogHandler
from ..messages import flag_names
from .goals import Goals
from .joint_commands import command_joints, per_joint
from .live_parameters import SIMULATION_ONLY, EchoFirst, LiveParameters, read_config
from .outputs import Outputs
from .rr_door import open_door
from .table import FEEDBACK_TOPICS, TableBuilder, table_rows

#: How often (wall time) the node checks which feedback topics have subscribers.
LISTENERS_PERIOD_S = 0.2
#: How often (wall time) /diagnostics is published.
DIAGNOSTICS_PERIOD_S = 1.0
#: How often (wall time) the per-motor table grows by a slice, and how long a slice may
#: take (plus one endpoint's creation): the longest the step loop waits for the table;
#: the steps due meanwhile run right after it.
TABLE_PERIOD_S = 0.001
TABLE_SLICE_S = 0.005

_ENDPOINT_TYPES = {"sensor_msgs/msg/JointState": JointState, "rosgraph_msgs/msg/Clock": ClockMsg,
                   "std_srvs/srv/Trigger": Trigger, "servo_sim/srv/SetInt": servo_srvs.SetInt,
                   "servo_sim/msg/ServoState": servo_msgs.ServoState,
                   "diagnostic_msgs/msg/DiagnosticArray": DiagnosticArray}


class ServoSimNode(EchoFirst, Node):
    """Hosts every motor of its config; see SPEC §6 and ``interface.py``."""

    def __init__(self, **kwargs: Any) -> None:
        self._started = time.monotonic()
        try:  # parameters: the node's own now, each motor's with the table, then the
            # parameter services (a client sees all of them or none)
            super().__init__("servo_sim", start_parameter_services=False, **kwargs)
        except (ValueError, ParameterException) as exc:  # rclpy refusing an override,
            # e.g. `-p use_sim_time:=maybe`
            raise ConfigError(f"parameter overrides of servo_sim: {exc}") from None
        # the compiled law loads once the table is complete (numpy's runner till then)
        law.hold_loading()
        self._holding_law = True
        self._log_handler = RosLogHandler(self)
        self._log_handler.attach()
        try:
            settings, config = read_config(self)
            # made, not started yet (the hardware starts once the node's endpoints exist)
            self.runtime = runtime = Runtime.open(config, joint_states_rate=settings[
                "joint_states_rate"])
            if not runtime.simulated and settings["publish_clock"]:
                raise ConfigError(f"use_sim_time / publish_clock = true: hardware "
                                  f"{runtime.plugin_name!r} runs in real time (nothing "
                                  "would publish /clock)")
            for name, value in SIMULATION_ONLY.items():  # declared with the values in force
                if not runtime.simulated and settings[name] != value:
                    self.get_logger().warning(f"{name} = {settings[name]} ignored: hardware "
                                              f"{runtime.plugin_name!r} runs in real time")
                    settings[name] = value
            runtime.set_real_time_factor(settings["real_time_factor"])
            if settings["start_paused"]:
                runtime.pause()
        except BaseException as exc:
            if hasattr(self, "runtime"):
                self.runtime.close()
            # a config error is said under the node's own name ([r3.servo_sim]); one rclpy
            # raises before the node exists (a refused override) is said under servo_sim
            if isinstance(exc, ConfigError):
                exc.logger_name = self.get_logger().name
            # destroyed now, not by the GC later: rcl (Jazzy) finalizing a dead node takes
            # the /rosout publisher of the live node of the same name with it
            self._log_handler.detach()
            self._release_law()
            super().destroy_node()
            raise
        if settings["publish_clock"]:  # the node's clock follows its own /clock
            self.set_parameters([Parameter("use_sim_time", value=True)])
        self.parameters = LiveParameters(self, self.runtime, settings, self._retime)
        urdf = settings["robot_description"]  # how a compact joint_commands reads
        self._command_interfaces = {name: joint["command"] for name, joint in
                                    ros2_control_joints(urdf).items()} if urdf else None
        names = runtime.motor_names
        self._joint_names = {**{ros_name(n): n for n in names}, **{n: n for n in names}}
        publishers: dict[str, Any] = {}
        for ep in NODE_ENDPOINTS:
            kind = _ENDPOINT_TYPES[ep.type]
            if ep.kind == "service":
                self.create_service(kind, ep.name, getattr(self, ep.handler))
            elif ep.kind == "subscription":
                self.create_subscription(kind, ep.name, getattr(self, ep.handler), 10)
            elif ep.name != "/clock" or settings["publish_clock"]:
                publishers[ep.name] = self.create_publisher(kind, ep.name, 10)
        self.outputs = Outputs(self, runtime, publishers, settings["publish_clock"])
        self.goals = Goals(self, self.runtime)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._timer = self.create_timer(self.runtime.period, self._on_tick, clock=steady)
        self.create_timer(LISTENERS_PERIOD_S, self.outputs.update_listened, clock=steady)
        self.create_timer(DIAGNOSTICS_PERIOD_S, self.outputs.publish_diagnostics,
                          clock=steady)
        # the per-motor table after the node runs, a slice at a time between steps
        self.table = TableBuilder(self._table_jobs(settings["motor_interfaces"]))
        self._table_next = 0.0  # when the next slice may run
        self.table_timer = self.create_timer(TABLE_PERIOD_S, self._grow_table, clock=steady)
        try:  # a signal from here on: the caller has no node to switch the devices off
            runtime.start(required=False)  # a device that does not answer: the cycle retries
            self.rr_door = open_door(self.runtime, settings["robot_raconteur_port"],
                                     self.outputs.cycle_listeners, self.get_fully_qualified_name())
            self.outputs.publish_joint_states()
            self.outputs.publish_clock()
            self.outputs.publish_diagnostics()
            self.get_logger().info(
                f"{len(runtime)} motor(s) {', '.join(names)} on hardware "
                f"{runtime.plugin_name!r} ({runtime.hardware_state}); step "
                f"{runtime.step_ms} ms, real_time_factor "
                f"{settings['real_time_factor']}{', paused' if self.runtime.paused else ''}")
        except BaseException:
            self.stop_hardware()
            raise

    # ------------------------------------------------------------------ the table

    def _table_jobs(self, families: list[str]) -> Iterator[tuple[str, Callable[[], object]]]:
        """The table's creation jobs, made as they run: each motor's parameters, the
        parameter services (before any service that changes a motor and its parameter;
        a client sees all parameters or none), then a job per row and motor, row by row."""
        motors = [(i, name, ros_name(name)) for i, name in enumerate(self.runtime.motor_names)]
        for motor in self.runtime.config.motors:
            yield "motors' parameters", partial(self.parameters.declare_motor, motor.name)
        yield "parameter services", partial(ParameterService, self)
        for row in table_rows(families):
            for i, name, base in motors:
                if row == FEEDBACK_TOPICS:  # on the sensor's topic when the job runs
                    for sensor in SENSORS:
                        if self.runtime.readings.sensor_period_ms(sensor)[i] > 0:
                            yield "topics", partial(self.outputs.create_sensor_publisher,
                                                    name, sensor)
                elif isinstance(row, MotorService):
                    yield "services", partial(self.create_service, getattr(
                        servo_srvs, row.srv), f"{base}/{row.name}", partial(self._serve, row, name))
                elif isinstance(row, MotorTrigger):
                    yield "services", partial(self.create_service, Trigger, f"{base}/{row.name}",
                                              partial(self._serve_trigger, row, name))
                else:
                    yield "actions", partial(self.goals.create_server, row, name)

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
        self._release_law()
        counts = self.table.counts
        self.get_logger().info(
            f"per-motor table complete: {len(self.runtime)} motors' parameters, "
            f"{counts['services']} services, {counts['topics']} topics, {counts['actions']} "
            f"actions, {time.monotonic() - self._started:.2f} s after start (longest "
            f"creation {self.table.longest_job_s * 1000:.1f} ms)")

    # ------------------------------------------------------------------ services

    def _serve(self, row: MotorService, motor_name: str, request: Any, response: Any) -> Any:
        """Every per-motor service: request fields -> command (or getter) -> response."""
        motor = self.runtime.motor(motor_name)
        field_type, field = row.response_field
        if row.is_getter:
            setattr(response, field, row.read(motor))
            return response
        args = tuple(getattr(request, name) for name in row.request_fields)
        try:
            if row.parameter is None:
                self.runtime.command(motor_name, row.command, *args)
            else:  # the motor parameter's change: one check, applied once
                self.runtime.set_parameter(motor_name, row.parameter[0],
                                           list(args) if len(args) > 1 else args[0])
            ok = True
        except ValueError as exc:
            self.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            ok = False
        if ok and row.topic is not None:  # the sensor's topic is named after this service
            self.outputs.use_topic(motor_name, row.topic)
        if ok and row.parameter is not None:  # keep `ros2 param get` true
            name, read = row.parameter
            self.parameters.echo(f"{ros_name(motor_name)}.{name}", read(motor))
        setattr(response, field, int(ok) if field_type == "int8" else ok)
        return response

    def _serve_trigger(self, row: MotorTrigger, motor_name: str, request: Trigger.Request,
                       response: Trigger.Response) -> Trigger.Response:
        """halt, enable, disable, e_stop, reset_e_stop of one motor."""
        try:
            self.runtime.command(motor_name, row.command)
        except ValueError as exc:
            self.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            response.success, response.message = False, str(exc)
            return response
        motor = self.runtime.motor(motor_name)
        response.success = True
        response.message = f"{motor_name}: mode {motor.mode.name.lower()}, flags " \
                           f"{flag_names(motor.flags)}"
        return response

    def on_e_stop(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        """Node-wide e-stop: every motor off and latched."""
        self.runtime.e_stop()
        response.success, response.message = True, f"e-stop: {len(self.runtime)} motor(s) off"
        return response

    def on_reset_e_stop(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        self.runtime.reset_e_stop()
        response.success = True
        response.message = "e-stop reset: motors disabled until enabled"
        return response

    def _refused(self, service: str, exc: ValueError, response: Any) -> Any:
        """``response`` filled with a refusal (real hardware: no pause, step, reset)."""
        why = f"{service}: refused: {exc}"
        self.get_logger().warning(why)
        response.success = False
        if hasattr(response, "message"):
            response.message = why
        return response

    def on_pause(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        try:
            self.runtime.pause()
        except RealTimeError as exc:
            return self._refused("~/pause", exc, response)
        response.success, response.message = True, f"paused at t = {self.runtime.time:.3f} s"
        return response

    def on_resume(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        self.runtime.resume()
        self._timer.reset()  # in phase with the pacing
        response.success, response.message = True, f"resumed at t = {self.runtime.time:.3f} s"
        return response

    def on_step(self, request: Any, response: Any) -> Any:
        """``~/step``: ``value`` steps, only while paused."""
        try:
            cycles = self.runtime.step(request.value)
        except RealTimeError as exc:
            return self._refused("~/step", exc, response)
        except ValueError as exc:
            self.get_logger().warning(f"~/step: value = {request.value} rejected: {exc}")
            response.success = False
            return response
        self.outputs.update_listened()
        for cycle in cycles:
            self.outputs.publish_cycle(cycle, self.goals.follow)
        response.success = True
        return response

    def on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Any:
        try:
            ended = self.runtime.reset()
        except RealTimeError as exc:
            return self._refused("~/reset", exc, response)
        self.goals.follow(ended, ())  # moves in progress ended (aborted: reset)
        self.outputs.reset_topics()
        self._timer.reset()
        self.outputs.publish_clock()  # back to 0, as Webots' and Gazebo's resets
        self.outputs.publish_joint_states()
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
        for text, throttled in command_joints(self.runtime, self._joint_names, commands):
            if throttled:
                self.get_logger().warning(text, throttle_duration_sec=5.0)
            else:
                self.get_logger().warning(text)

    # ------------------------------------------------------------------ stepping

    def _retime(self) -> None:
        """The cycle timer at the runtime's period, from now (a new real-time factor)."""
        self._timer.timer_period_ns = int(self.runtime.period * 1e9)
        self._timer.reset()

    def _on_tick(self) -> None:
        runtime = self.runtime
        if runtime.paused:
            self.goals.poll()  # cancels and e-stops end goals while paused too
            return
        if not runtime.pacing:  # pace from the first tick, the timer in phase with it
            runtime.start_pacing()
            self._timer.reset()
        overruns = runtime.overruns
        publish, follow = self.outputs.publish_cycle, self.goals.follow
        for cycle in runtime.tick():
            publish(cycle, follow)
        if runtime.overruns != overruns:
            self.get_logger().warning(
                f"cannot keep real_time_factor {runtime.real_time_factor}: more than "
                f"{MAX_CATCH_UP_STEPS} steps behind; letting simulated time slip",
                throttle_duration_sec=5.0)

    def stop_hardware(self) -> None:
        """The Robot Raconteur door closed, real devices torque off and released
        (idempotent)."""
        if getattr(self, "rr_door", None) is not None:
            self.rr_door.close()
        self.runtime.close()

    def destroy_node(self) -> None:
        """Also for a node whose constructor a signal interrupted (Kilted's try_shutdown
        destroys it): a real device is left with its torque off; Node.destroy_node leaves
        action servers alone, and their handles would keep the rcl node alive."""
        if hasattr(self, "runtime"):
            self.stop_hardware()
        if hasattr(self, "_log_handler"):
            self._log_handler.detach()
        if hasattr(self, "goals"):
            self.goals.destroy()
        self._release_law()
        super().destroy_node()

    def _release_law(self) -> None:
        """The node's hold on the compiled law's loading released (once)."""
        if self.__dict__.pop("_holding_law", False):
            law.release_loading()
