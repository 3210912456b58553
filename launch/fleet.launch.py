"""Start a fleet of servo_sim robots on one domain, each its own servo_sim node in its own
namespace: ``ros2 launch servo_sim fleet.launch.py robots:=10 discovery:=server``.

Each robot is ``servo_sim.launch.py`` with ``namespace:=<ns>`` and its config (one for all,
or one per robot): ``/<ns>/joint_states``, ``/<ns>/<motor>/...``. ``discovery`` picks how
the participants find each other: ``simple`` (every participant learns every other
one's endpoints), ``server`` (Fast DDS discovery servers started here, on this machine;
``discovery_servers:=2`` for a redundant pair), or the addresses of servers running
elsewhere. The launch logs the environment that ros2 tools need to see the fleet.
"""

import shutil
import subprocess
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    GroupAction,
    IncludeLaunchDescription,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
    UnsetEnvironmentVariable,
)
from launch.event_handlers import OnProcessExit, OnProcessIO, OnShutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from servo_sim.ros import fleet
from servo_sim.ros.launch_args import EXECUTOR, LOG_LEVEL, USE_SIM_TIME, flag

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
     "With discovery servers: once every robot runs, restart this domain's ros2 daemon as "
     "a super client of them (ros2 node/topic/service list then see the whole fleet from "
     "any shell), and stop it when the launch ends; false leaves the daemon alone."),
    ("use_sim_time", "false", USE_SIM_TIME),
    ("real_time_factor", "1.0",
     "Simulated seconds per wall-clock second, every robot; 0 = as fast as possible."),
    ("log_level", "info", LOG_LEVEL),
    ("executor", "auto", EXECUTOR),
)
#: Arguments passed on to each robot's servo_sim.launch.py unchanged.
_PASSED_ON = ("use_sim_time", "real_time_factor", "log_level", "executor")
_DISCOVERY_VARIABLES = ("ROS_DISCOVERY_SERVER", "ROS_SUPER_CLIENT")


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
    actions += [ExecuteProcess(cmd=command, additional_env=env, name=f"discovery_server_{i}",
                               output="log")
                for i, (command, env) in enumerate(plan.discovery.server_commands())]
    # the robots follow the discovery argument, not a ROS_DISCOVERY_SERVER of the shell
    actions += [UnsetEnvironmentVariable(v) for v in _DISCOVERY_VARIABLES]
    actions += [SetEnvironmentVariable(k, v)
                for k, v in plan.discovery.node_environment().items()]
    if daemon:
        actions += _daemon(plan.discovery, len(plan.robots))
    source = PythonLaunchDescriptionSource(str(SHARE / "launch" / "servo_sim.launch.py"))
    for robot in plan.robots:
        given = {"namespace": robot.namespace, "config": robot.config,
                 **{name: arg(name) for name in _PASSED_ON}}
        actions.append(GroupAction(scoped=True, actions=[
            IncludeLaunchDescription(source, launch_arguments=given.items())]))
    return actions


def _daemon(discovery: fleet.Discovery, robots: int) -> list:
    """Restart the domain's ros2 daemon as a super client of the servers (a daemon in
    simple discovery sees none of their clients) once every robot runs (its start-up
    line: the daemon and the servers' work for it then do not delay a robot's first
    joint_states), and stop it when the launch ends."""
    ros2 = shutil.which("ros2")
    stop = ExecuteProcess(cmd=[ros2, "daemon", "stop"], name="ros2_daemon_stop",
                          output="log")
    start = ExecuteProcess(cmd=[ros2, "daemon", "start"], name="ros2_daemon_start",
                           additional_env=discovery.tool_environment(), output="log")
    running: set[int] = set()

    def robot_output(event) -> list:
        if b" on hardware '" in event.text and event.pid not in running:
            running.add(event.pid)
            if len(running) == robots:
                return [stop]
        return []

    def stop_at_shutdown(context) -> None:
        # not waited for (0.4 s of ros2cli start-up would hold launch's loop, and with it
        # the robots' exits); in a session of its own, out of reach of a second Ctrl-C
        subprocess.Popen([ros2, "daemon", "stop"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)

    return [RegisterEventHandler(OnProcessIO(on_stdout=robot_output,
                                             on_stderr=robot_output)),
            RegisterEventHandler(OnProcessExit(target_action=stop, on_exit=[start])),
            RegisterEventHandler(OnShutdown(on_shutdown=[OpaqueFunction(
                function=stop_at_shutdown)]))]


def generate_launch_description() -> LaunchDescription:
    """The launch arguments and the fleet."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, default, description in ARGUMENTS] + [OpaqueFunction(function=_fleet)])
