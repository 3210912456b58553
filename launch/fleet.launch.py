"""Start a fleet of servo_sim robots on one domain, each its own servo_sim node in its own
process and namespace:
``ros2 launch servo_sim fleet.launch.py robots:=10 discovery:=server``.

Each robot is the node of ``servo_sim.launch.py`` with ``namespace:=<ns>`` and its config
(one for all, or one per robot): ``/<ns>/joint_states``, ``/<ns>/<motor>/...``. By
default the robots' processes are forked from one host process that imported the node's
code once (servo_sim.ros.fleet.host); ``fork:=false`` has launch start each one.
``discovery`` picks how the participants find each other: ``simple`` (every participant
learns every other one's endpoints), ``server`` (Fast DDS discovery servers started here,
on this machine; ``discovery_servers:=2`` for a redundant pair), or the addresses of
servers running elsewhere. With servers on this machine the robots listen on UDP
at 127.0.0.1, not on shared memory, and take in no other participant's graph updates
(config/fleet_robot.xml says why), and a nudge (servo_sim.ros.fleet.nudge) joins the
servers once every robot has started, which ends a wait of Fast DDS 2.14.5's server for
some robots. The launch logs the environment that ros2 tools need to see the fleet.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    EmitEvent,
    ExecuteProcess,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
    UnsetEnvironmentVariable,
)
from launch.event_handlers import OnProcessExit, OnProcessIO, OnShutdown
from launch.events import matches_action
from launch.events.process import SignalProcess
from launch.substitutions import LaunchConfiguration

from servo_sim.ros.fleet import follow
from servo_sim.ros.fleet import nudge as fleet_nudge
from servo_sim.ros.fleet import robots as fleet
from servo_sim.ros.fleet.host import ENDED_LINE
from servo_sim.ros.fleet.host import NAME as HOST
from servo_sim.ros.launch_args import (
    EXECUTOR,
    LOG_LEVEL,
    USE_SIM_TIME,
    flag,
    forked_robots,
    servo_sim_node,
)

SHARE = Path(get_package_share_directory("servo_sim"))

ARGUMENTS = (
    ("robots", "2", f"Number of robots, namespaces r0 .. r<robots-1> (1 to "
                    f"{fleet.MAX_ROBOTS}); 'namespaces' overrides it."),
    ("namespaces", "", "The robots' namespaces instead, separated by commas or spaces, "
                       "e.g. 'left,right'."),
    ("config", str(SHARE / "config" / "servo_sim.yaml"),
     "ROS parameters file with the motors, for every robot."),
    ("configs", "", "One parameters file per robot instead, in the robots' order, "
                    "separated by commas or spaces."),
    ("discovery", "simple",
     "simple; server: Fast DDS discovery server(s) started by this launch on 127.0.0.1; "
     "or the running servers' host:port[;host:port...] (in server-id order)."),
    ("discovery_port", str(fleet.DEFAULT_PORT),
     "discovery:=server: the first server's port (the next ones take the ports after it)."),
    ("discovery_servers", "1",
     f"discovery:=server: how many redundant servers (1 to {fleet.MAX_SERVERS}); every "
     f"participant is a client of all, so one may stop without anything being lost."),
    ("ros2_daemon", "true",
     "With discovery servers: once every robot's per-motor table is complete, restart this "
     "domain's ros2 daemon as a super client of them (ros2 node/topic/service list then "
     "see the whole fleet from any shell), and stop it when the launch ends; false leaves "
     "the daemon alone."),
    ("fork", "true",
     "true: one process (servo_sim.ros.fleet.host) imports the node's code once and forks "
     "each robot's own process from it, a robot's start then costs a third of the CPU; "
     "false: launch starts each robot's servo_sim_node itself."),
    ("use_sim_time", "false", USE_SIM_TIME),
    ("real_time_factor", "1.0",
     "Simulated seconds per wall-clock second, every robot; 0 = as fast as possible."),
    ("log_level", "info", LOG_LEVEL),
    ("executor", "auto", EXECUTOR),
)
#: Arguments passed on to each robot's node unchanged (as servo_sim.launch.py takes them).
_PASSED_ON = ("use_sim_time", "real_time_factor", "log_level", "executor")
_DISCOVERY_VARIABLES = ("ROS_DISCOVERY_SERVER", "ROS_SUPER_CLIENT")
#: A robot's process (launch's name for it) and the line that says its table is whole.
_ROBOT = "servo_sim_node"
_TABLE_LINE = b"per-motor table complete"
_START_LINE = re.compile(rb"\d+ motor\(s\) .* on hardware ")
_READY_LINE = fleet_nudge.READY_LINE.encode()
#: A forked robot's lines: its node's (logger "<ns with dots>.servo_sim") and the
#: host's when it ended.
_LOGGER = re.compile(rb"\[([\w.]+)\.servo_sim\]")
_ENDED = re.compile(ENDED_LINE.pattern.encode())


def _fleet(context) -> list:
    """The servers, the discovery environment and one servo_sim.launch.py per robot, once
    the arguments are known (each checked: one line if bad)."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    plan = fleet.fleet(arg("robots"), arg("namespaces"), arg("config"), arg("configs"),
                       arg("discovery"), arg("discovery_port"), arg("discovery_servers"))
    daemon = (not plan.discovery.simple and flag(arg("ros2_daemon"), "ros2_daemon")
              and shutil.which("ros2") is not None)
    actions: list = [LogInfo(msg=f"{len(plan.robots)} robots: "
                                 f"{', '.join('/' + r.namespace for r in plan.robots)}"),
                     LogInfo(msg=plan.discovery.tool_hint(daemon_restarted=daemon))]
    if not plan.discovery.simple:
        actions.append(LogInfo(msg=plan.discovery.transport_hint()))
    # each server ends with this launch, even a killed one (servo_sim.ros.fleet.follow)
    actions += [ExecuteProcess(cmd=follow.command(os.getpid(), command), additional_env=env,
                               name=f"discovery_server_{i}", output="log")
                for i, (command, env) in enumerate(plan.discovery.server_commands())]
    # the robots follow the discovery argument, not a ROS_DISCOVERY_SERVER of the shell
    actions += [UnsetEnvironmentVariable(v) for v in _DISCOVERY_VARIABLES]
    actions += [SetEnvironmentVariable(k, v)
                for k, v in plan.discovery.node_environment().items()]
    # the robots' own profile for their processes (and the daemon's for it) only, not
    # for nodes of a launch that includes this one
    transport = plan.discovery.transport_environment()
    forked = flag(arg("fork"), "fork")
    if not plan.discovery.simple:
        actions += _after_robots(plan, daemon, arg("log_level"), forked)
    passed_on = {name: arg(name) for name in _PASSED_ON}
    if forked:
        return [*actions, ExecuteProcess(
            cmd=forked_robots([(r.namespace, r.config) for r in plan.robots], **passed_on,
                              parent=os.getpid()),
            additional_env=transport,
            name=HOST, output="screen", emulate_tty=True)]
    # servo_sim.launch.py's node, made here (including that file once per robot loads it
    # each time: 0.1 s more before the tenth robot starts)
    actions += [servo_sim_node(namespace=robot.namespace, config=robot.config, **passed_on,
                               env=transport, parent=os.getpid())
                for robot in plan.robots]
    return actions


def _after_robots(plan: fleet.Fleet, daemon: bool, log_level: str, forked: bool) -> list:
    """With discovery servers: the nudge (servo_sim.ros.fleet.nudge), which joins the
    servers as a super client once every robot has logged its start (or ended), and, with
    ``daemon``, the restart of the domain's ros2 daemon as their super client once every
    robot's per-motor table is complete (its copy of the fleet's endpoints, about 5 s of
    CPU at 10 x 30, then does not compete with the robots' start and tables), stopped
    when the launch ends. Without the robots' info lines to wait for (a log level that
    hides them, or forked, a console format without the logger's name, which says whose
    line it is), no nudge and the daemon at once."""
    tools = {**plan.discovery.tool_environment(),
             **plan.discovery.transport_environment(profile=fleet.DAEMON_PROFILE)}
    handlers = []
    if daemon:
        ros2 = shutil.which("ros2")

        def stop_at_shutdown(context) -> None:
            # not waited for (0.4 s of ros2cli start-up would hold launch's loop, and with
            # it the robots' exits); in a session of its own, out of reach of a second
            # Ctrl-C
            subprocess.Popen([ros2, "daemon", "stop"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)

        handlers.append(RegisterEventHandler(OnShutdown(on_shutdown=[OpaqueFunction(
            function=stop_at_shutdown)])))
    # stop and start in one process, again while another daemon is found (servo_sim.ros.
    # daemon says why)
    restart = [ExecuteProcess(cmd=[sys.executable, "-m", "servo_sim.ros.fleet.daemon"],
                              name="ros2_daemon_restart", additional_env=tools,
                              output="log")] if daemon else []
    unnamed = forked and "{name}" not in os.environ.get("RCUTILS_CONSOLE_OUTPUT_FORMAT",
                                                         "{name}")
    if log_level.lower() not in ("debug", "info") or unnamed:
        return [*restart, *handlers]
    nudge = ExecuteProcess(cmd=[sys.executable, "-m", "servo_sim.ros.fleet.nudge",
                                *(r.namespace for r in plan.robots)],
                           name="fleet_nudge", additional_env=tools, output="log")
    lines = _RobotLines(len(plan.robots), forked, nudge, restart)
    return [nudge, *handlers,
            RegisterEventHandler(OnProcessIO(on_stdout=lines.output, on_stderr=lines.output)),
            RegisterEventHandler(OnProcessExit(on_exit=lines.exit)),
            RegisterEventHandler(OnShutdown(on_shutdown=lines.stop))]


class _RobotLines:
    """The robots' start and table lines, as launch reads them: once every robot has
    logged its start (or ended) and the nudge said it is ready, SIGUSR1 to the nudge;
    once every robot's table is complete (or it ended), the ``after_tables`` actions.
    Nothing once the launch is shutting down (the robots' ends then are no reason to
    nudge or restart anything, and a process started then was seen to keep launch from
    exiting)."""

    def __init__(self, robots: int, forked: bool, nudge: ExecuteProcess,
                 after_tables: list) -> None:
        self.robots, self.forked, self.nudge = robots, forked, nudge
        self.after_tables = after_tables
        # the robots started and done: their pids, or (forked) their loggers' prefixes
        self.started: set = set()
        self.done: set = set()
        self.nudge_ready = self.nudged = self.stopping = False
        # the start of a line split across reads, per process and stream (a forked
        # fleet's robots log on the host's stderr, the host on its stdout)
        self.tails: dict[tuple[int, str], bytes] = {}

    def _robot(self, robot, done: bool = False) -> list:
        """A robot's line: it has started, and with ``done`` its table is complete (or it
        ended)."""
        self.started.add(robot)
        actions = []
        if done and robot not in self.done:
            self.done.add(robot)
            actions += self.after_tables if len(self.done) == self.robots else []
        return actions + self._nudge()

    def _nudge(self) -> list:
        if self.nudged or not self.nudge_ready or len(self.started) < self.robots:
            return []
        self.nudged = True
        return [EmitEvent(event=SignalProcess(signal_number=fleet_nudge.JOIN_SIGNAL,
                                              process_matcher=matches_action(self.nudge)))]

    def stop(self, event, context) -> None:
        """The launch is shutting down."""
        self.stopping = True

    def output(self, event) -> list:
        if self.stopping:
            return []
        stream = (event.pid, type(event).__name__)
        *lines, self.tails[stream] = (self.tails.get(stream, b"") + event.text).split(b"\n")
        if event.action is self.nudge:
            self.nudge_ready |= any(_READY_LINE in line for line in lines)
            return self._nudge()
        if not self.forked and not event.action.name.startswith(_ROBOT):
            return []  # (e.g. a node of a launch that includes this one)
        actions = []
        for line in lines:
            robot = event.pid
            if self.forked:
                if m := _ENDED.search(line):  # before its table: it will not come
                    actions += self._robot(m[1], done=True)
                    continue
                if not (m := _LOGGER.search(line)):
                    continue
                robot = m[1]
            if _TABLE_LINE in line:
                actions += self._robot(robot, done=True)
            elif _START_LINE.search(line):
                actions += self._robot(robot)
        return actions

    def exit(self, event, context) -> list:
        if self.stopping:
            return []
        if event.action is self.nudge:
            self.nudged = True  # (a signal now would find no process)
            return []
        if event.action.name.startswith(_ROBOT):
            return self._robot(event.pid, done=True)
        return []


def generate_launch_description() -> LaunchDescription:
    """The launch arguments and the fleet."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_fleet)])
