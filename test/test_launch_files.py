"""The launch files (where launch is importable: a ROS 2 installation, or the ROS 2
Python tools built onto the venv): what they start with which parameters, their
arguments' errors (one line naming the argument), and a robot-scale launch ending on
Ctrl-C without launch escalating to SIGTERM (issue 18)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, require_ros, tf_lookup_at_now_minus

pytestmark = pytest.mark.ros_launch
LAUNCH = REPO / "launch"


def described(name: str):
    """A launch file's arguments, and its nodes for given argument values."""
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.launch_description_sources import get_launch_description_from_python_launch_file

    description = get_launch_description_from_python_launch_file(str(LAUNCH / name))
    arguments = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
    opaque = next(e for e in description.entities if isinstance(e, OpaqueFunction))

    def nodes_with(**given):
        context = LaunchContext()
        for a in arguments:
            context.launch_configurations[a.name] = given.get(a.name, "".join(
                s.perform(context) for s in a.default_value))
        return opaque.execute(context)

    return arguments, nodes_with


def _plain(parameters: dict) -> dict:
    """launch_ros's normalised parameters (keys and strings as substitutions) as values."""
    from launch import LaunchContext

    def value(v):
        if isinstance(v, tuple) and all(hasattr(s, "perform") for s in v):
            return "".join(s.perform(LaunchContext()) for s in v)
        return v

    return {value(k): value(v) for k, v in parameters.items()}


def _file(parameter_file) -> Path:
    """The path of a launch_ros ParameterFile."""
    from launch import LaunchContext

    return Path(parameter_file.evaluate(LaunchContext()))


def _installed(monkeypatch, prefix: Path, *packages: str, only: bool = False) -> None:
    """An ament prefix at ``prefix`` with ``packages`` registered (nothing else in them):
    in front of the environment's prefixes, or (``only``) alone."""
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for package in packages:
        (index / package).touch()
    rest = "" if only else os.environ.get("AMENT_PREFIX_PATH", "")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join(filter(None, [str(prefix), rest])))


def test_ros2_control_launch_file_describes_the_stack(monkeypatch, tmp_path):
    require_ros("launch_ros", need="ros_launch")
    arguments, nodes_with = described("ros2_control.launch.py")
    # the maintained topic system, as a distribution installs it today
    _installed(monkeypatch, tmp_path, "joint_state_topic_hardware_interface")
    assert [a.name for a in arguments] == ["robot", "urdf", "config", "controllers",
                                           "controller", "update_rate", "use_sim_time",
                                           "real_time_factor", "hardware", "port", "physics",
                                           "respawn", "log_level"]
    assert all(a.description for a in arguments)

    nodes = nodes_with()
    # the node steps once per controller update, on the stack's clock when asked
    for rate, step in (("125", 8), ("500", 2), ("1000", 1)):
        node, _, manager = nodes_with(update_rate=rate, use_sim_time="true")[:3]
        node_parameters = _plain(node._Node__parameters[1])  # launch_ros has no getter
        manager_parameters = _plain(manager._Node__parameters[1])
        assert node_parameters["basic_time_step_ms"] == step
        # a little slower than the controllers read (the launch file says why)
        assert node_parameters["joint_states_rate"] == pytest.approx(0.98 * int(rate))
        assert node_parameters["use_sim_time"] is True  # the one switch (issue 24)
        assert manager_parameters == {"update_rate": int(rate), "use_sim_time": True}
    for name, value in (("update_rate", "300"), ("update_rate", "fast"),
                        ("use_sim_time", "yes"), ("controller", "pid"),
                        ("real_time_factor", "fast"), ("respawn", "maybe"),
                        ("robot", "so100")):
        with pytest.raises(ValueError, match=f"{name}:="):
            nodes_with(**{name: value})
    # robot:= picks the shipped files; hardware:= and port:= override the config's
    node, _, manager = nodes_with(robot="so101", hardware="sim", port="/dev/pts/9")[:3]
    assert _file(node._Node__parameters[0]).name == "so101.yaml"
    given = _plain(node._Node__parameters[1])  # strings kept as YAML
    assert yaml.safe_load(given["hardware.plugin"]) == "sim"
    assert yaml.safe_load(given["hardware.port"]) == "/dev/pts/9"
    assert "shoulder_pan" in given["robot_description"]
    assert "<plugin>joint_state_topic_hardware_interface/JointStateTopicSystem</plugin>" \
        in given["robot_description"]
    assert _file(manager._Node__parameters[0]).name == "so101_controllers.yaml"
    executables = [(n.node_package, n.node_executable) for n in nodes]
    assert executables[:3] == [("servo_sim", "servo_sim_node"),
                               ("robot_state_publisher", "robot_state_publisher"),
                               ("controller_manager", "ros2_control_node")]
    # every node on the same clock: robot_state_publisher, controller_manager, spawners
    for sim_time in (False, True):
        started = nodes_with(use_sim_time=str(sim_time).lower())
        assert [_plain(n._Node__parameters[-1])["use_sim_time"] for n in started] == \
            [sim_time] * len(started)
    spawned = [n._Node__arguments for n in nodes[3:]]  # launch_ros has no public getter
    assert [a[0] for a in spawned] == ["joint_state_broadcaster",
                                       "forward_position_controller",
                                       "joint_trajectory_controller"]
    assert ["--inactive" in a for a in spawned] == [False, True, False]


def test_the_ros2_control_launch_falls_back_to_the_old_topic_system_and_says_so(
        monkeypatch, tmp_path):
    """Only topic_based_ros2_control installed: its plugin, and one log line; neither:
    one error naming both packages."""
    require_ros("launch_ros", need="ros_launch")
    from launch.actions import LogInfo

    _, nodes_with = described("ros2_control.launch.py")
    _installed(monkeypatch, tmp_path / "old", "topic_based_ros2_control", only=True)
    entities = nodes_with()
    note = entities[0]
    assert isinstance(note, LogInfo)
    text = "".join(s.perform(None) for s in note.msg)
    assert "joint_state_topic_hardware_interface is not installed" in text
    assert "topic_based_ros2_control/TopicBasedSystem" in text
    node = entities[1]
    description = _plain(node._Node__parameters[1])["robot_description"]
    assert "<plugin>topic_based_ros2_control/TopicBasedSystem</plugin>" in description
    assert "JointStateTopicSystem" not in description
    _installed(monkeypatch, tmp_path / "none", only=True)
    with pytest.raises(ValueError, match=r"neither joint_state_topic_hardware_interface .* "
                                         r"nor topic_based_ros2_control"):
        nodes_with()


def test_servo_sim_launch_file_has_one_time_base_and_checks_its_arguments():
    require_ros("launch_ros", need="ros_launch")
    arguments, nodes_with = described("servo_sim.launch.py")
    assert [a.name for a in arguments] == ["config", "namespace", "use_sim_time",
                                           "real_time_factor", "log_level", "executor",
                                           "robot_raconteur_port"]
    assert all(a.description for a in arguments)
    for sim_time in (False, True):
        (node,) = nodes_with(use_sim_time=str(sim_time).lower(), real_time_factor="2")
        assert (node.node_package, node.node_executable) == ("servo_sim", "servo_sim_node")
        parameters = _plain(node._Node__parameters[1])  # launch_ros has no getter
        parameters["executor"] = yaml.safe_load(parameters["executor"])  # kept as YAML
        assert parameters == {"use_sim_time": sim_time, "real_time_factor": 2.0,
                              "executor": "auto"}
    (node,) = nodes_with(robot_raconteur_port="62222")  # the door on: its parameter
    assert _plain(node._Node__parameters[1])["robot_raconteur_port"] == 62222
    # a Webots world as the config: the node reads it through config_file (issue 53)
    world = str(REPO / "examples" / "webots" / "arm.wbt")
    (node,) = nodes_with(config=world)
    given = _plain(node._Node__parameters[0])  # strings kept as YAML
    assert {k: yaml.safe_load(v) for k, v in given.items()} == {"config_file": world}
    for name, value, message in (("use_sim_time", "maybe", "must be true or false"),
                                 ("real_time_factor", "fast", "must be a number"),
                                 ("robot_raconteur_port", "70000",
                                  r"must be an integer from -1 \(off\) to 65535")):
        with pytest.raises(ValueError, match=f"^{name}:='{value}': {message}$"):
            nodes_with(**{name: value})


ROBOT = 100


def test_a_robot_scale_launch_ends_on_ctrl_c_without_launch_escalating(tmp_path):
    """ros2 launch gives a process 5 s after SIGINT before SIGTERM: 100 motors end well
    within it (0.7 s measured)."""
    require_ros("ros2launch", need="ros_launch")
    ros2 = shutil.which("ros2")
    assert ros2, "ros2launch is importable but no ros2 command is on PATH"
    config = tmp_path / "robot.yaml"
    config.write_text("/**/servo_sim:\n  ros__parameters:\n    basic_time_step_ms: 1\n"
                      f"    motors: [{', '.join(f'm{i}' for i in range(ROBOT))}]\n")
    log = tmp_path / "launch.log"
    with log.open("w") as out:
        launch = subprocess.Popen(
            [ros2, "launch", "servo_sim", "servo_sim.launch.py", f"config:={config}",
             "namespace:=scale"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while f"{ROBOT} motor(s) m0" not in log.read_text():
            assert launch.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        os.killpg(launch.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
        assert launch.wait(timeout=30) == 0, log.read_text()
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
    output = log.read_text()
    assert "process has finished cleanly" in output, output
    assert "SIGTERM" not in output and "SIGKILL" not in output, output


def require_tf2() -> None:
    """tf2_ros and robot_state_publisher (C++ packages: a ROS 2 installation's; the Python
    tools on the venv do not have them), or a skip saying so (a failure where
    SERVO_SIM_REQUIRE asks for the launch tests)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        import tf2_ros  # noqa: F401

        get_package_prefix("robot_state_publisher")
    except (ImportError, PackageNotFoundError) as exc:
        pytest.skip(f"tf2_ros and robot_state_publisher come with a ROS 2 installation: {exc}")


def test_tf_from_the_nodes_joint_states_is_found_at_now_on_the_default_clock(tmp_path, client):
    """Issue 24: servo_sim.launch.py with its defaults, robot_state_publisher beside it on
    the URDF (as a user adds it): a tf2 lookup at now() - 0.1 s finds the arm's frames."""
    require_ros("ros2launch", need="ros_launch")
    require_tf2()
    ros2 = shutil.which("ros2")
    assert ros2, "ros2launch is importable but no ros2 command is on PATH"
    params = tmp_path / "rsp.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
        "robot_description": (REPO / "config" / "servo_sim.urdf").read_text()}}}))
    log = tmp_path / "tf.log"
    with log.open("w") as out:
        processes = [subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True) for command in (
            [ros2, "launch", "servo_sim", "servo_sim.launch.py", "namespace:=tf"],
            [ros2, "run", "robot_state_publisher", "robot_state_publisher", "--ros-args",
             "--params-file", str(params), "-r", "joint_states:=/tf/joint_states"])]
    try:
        tf_lookup_at_now_minus(client, client.spin_until, "base_link", "finger")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{log.read_text()[-3000:]}") from None
    finally:
        for p in processes:
            os.killpg(p.pid, signal.SIGINT)
        for p in processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def _fleet_launch(tmp_path, *arguments: str) -> tuple[subprocess.Popen, Path]:
    """``ros2 launch servo_sim fleet.launch.py ARGS`` in a process group of its own."""
    require_ros("ros2launch", need="ros_launch")
    ros2 = shutil.which("ros2")
    assert ros2, "ros2launch is importable but no ros2 command is on PATH"
    log = tmp_path / "fleet.log"
    with log.open("w") as out:
        return subprocess.Popen([ros2, "launch", "servo_sim", "fleet.launch.py", *arguments],
                                stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True), log


def _ctrl_c(launch: subprocess.Popen, log: Path, robots: int) -> str:
    """SIGINT to the launch's group: it and every robot end with status 0 (each its
    launch process, or each forked from the fleet's host, which then ends too)."""
    os.killpg(launch.pid, signal.SIGINT)
    try:
        assert launch.wait(timeout=30) == 0, log.read_text()
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
    output = log.read_text()
    launched = re.findall(r"\[servo_sim_node-\d+\]: process has finished cleanly", output)
    forked = re.findall(r"\[servo_sim_fleet\]: robot /\w+ \(pid \d+\) exited with status 0",
                        output)
    assert len(launched) + len(forked) == robots, output
    assert not forked or re.search(r"\[servo_sim_fleet-\d+\]: process has finished cleanly",
                                   output), output
    assert "SIGTERM" not in output and "SIGKILL" not in output, output
    return output


def test_a_fleet_launch_starts_its_discovery_server_and_robots_that_tools_see(
        tmp_path, monkeypatch):
    """Issue 33: robots:=3 discovery:=server: r0..r2 publish through the server the launch
    started, a super client (the environment the launch logs) sees the three, Ctrl-C
    ends all."""
    from test_fleet_process import Watcher, newcomer_sees, shared_memory_ports_listened

    from servo_sim.ros.fleet import robots as fleet
    from servo_sim.ros.fleet.host import FORKED_LINE

    port = fleet.free_port()
    for variable in fleet.SHELL_TRANSPORT_VARIABLES:  # a shell as users have it
        monkeypatch.delenv(variable, raising=False)
    launch, log = _fleet_launch(tmp_path, "robots:=3", "discovery:=server",
                                f"discovery_port:={port}")
    discovery = fleet.discovery("server", str(port))
    for k, v in discovery.node_environment().items():
        monkeypatch.setenv(k, v)
    watcher = None
    try:
        watcher = Watcher(["r0", "r1", "r2"])
        watcher.until_every_robot_published()
        assert newcomer_sees("r2", 60.0, discovery.tool_environment()) == ["r0", "r1", "r2"]
        # the robots have the launch's profile (config/fleet_robot.xml): their data on
        # UDP at 127.0.0.1, no shared-memory port to listen on
        robots = dict(FORKED_LINE.findall(log.read_text()))
        assert sorted(robots) == ["r0", "r1", "r2"]
        assert not any(shared_memory_ports_listened(int(pid)) for pid in robots.values())
        # the launch restarted the domain's ros2 daemon as a super client: a shell without
        # the discovery environment lists the fleet through it
        env = {k: v for k, v in os.environ.items()
               if k not in ("ROS_DISCOVERY_SERVER", "ROS_SUPER_CLIENT")}
        deadline = time.monotonic() + 60
        while (nodes := [n for n in _ros2(["node", "list"], env) if "servo_sim" in n]) != [
                "/r0/servo_sim", "/r1/servo_sim", "/r2/servo_sim"]:
            assert time.monotonic() < deadline, nodes
            time.sleep(0.5)
        # the nudge has left (it stays up to 10 s after its signal)
        while not re.search(r"\[fleet_nudge-\d+\]: process has finished", log.read_text()):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
    finally:
        if watcher:
            watcher.close()
        output = _ctrl_c(launch, log, robots=3)
    assert f"export ROS_DISCOVERY_SERVER='127.0.0.1:{port}' ROS_SUPER_CLIENT='TRUE'" in output
    assert "[discovery_server_0-1]: process started" in output
    assert re.search(r"the robots listen on UDP at 127\.0\.0\.1, not on shared "
                     r"memory, and read no graph of others \(/\S+/config/fleet_robot\.xml\)",
                     output), output
    assert re.search(r"\[ros2_daemon_restart-\d+\]: process has finished cleanly", output)
    # the nudge (servo_sim.ros.fleet.nudge) joined the servers once every robot had
    # started, and left having seen every robot
    starts = [m.start() for m in re.finditer(r"\] \[r\d\.servo_sim\]: 2 motor\(s\) ", output)]
    assert len(starts) == 3, output
    assert output.index("sending signal 'SIGUSR1' to process[fleet_nudge-") > max(starts)
    assert re.search(r"\[fleet_nudge-\d+\] servo_sim_fleet_nudge: joined, saw every robot's "
                     r"joint_states writer and left", output), output
    assert re.search(r"\[fleet_nudge-\d+\]: process has finished cleanly", output), output
    # restarted once every robot's table was whole: its copy of the fleet's endpoints does
    # not compete with the robots' start and tables
    tables = [m.start() for m in re.finditer(r"per-motor table complete", output)]
    assert len(tables) == 3, output
    assert output.index("[ros2_daemon_restart-") > max(tables), output
    # and stopped it when it ended (a ros2 daemon stop it does not wait for)
    deadline = time.monotonic() + 60
    while "The daemon is not running" not in (status := subprocess.run(
            [shutil.which("ros2"), "daemon", "status"], capture_output=True, text=True,
            timeout=60).stdout):
        assert time.monotonic() < deadline, status
        time.sleep(0.5)


def test_a_fleet_launch_at_log_level_warn_restarts_the_daemon_all_the_same(tmp_path):
    """With the robots' info lines hidden (no start or table line to wait for), the
    daemon is restarted as the servers' super client at once, and no nudge is started:
    a shell without the discovery environment still lists the fleet."""
    from servo_sim.ros.fleet import robots as fleet

    port = fleet.free_port()
    launch, log = _fleet_launch(tmp_path, "robots:=2", "discovery:=server",
                                f"discovery_port:={port}", "log_level:=warn")
    try:
        env = {k: v for k, v in os.environ.items()
               if k not in ("ROS_DISCOVERY_SERVER", "ROS_SUPER_CLIENT")}
        deadline = time.monotonic() + 60
        while (nodes := [n for n in _ros2(["node", "list"], env) if "servo_sim" in n]) != [
                "/r0/servo_sim", "/r1/servo_sim"]:
            assert time.monotonic() < deadline, (nodes, log.read_text())
            time.sleep(0.5)
    finally:
        output = _ctrl_c(launch, log, robots=2)
    assert "per-motor table complete" not in output
    assert "fleet_nudge" not in output  # no start line to wait for: no nudge


def test_the_fleet_launchs_robot_lines_nudge_then_restart_and_nothing_once_it_stops():
    """fleet.launch.py's watcher of the robots' lines, on launch's own events: SIGUSR1 to
    the nudge once it said it is ready and every robot (forked: named by its logger)
    logged its start, a line split across two reads included; the after-tables actions
    once every robot's table line came or the host said it ended; nothing once the launch
    is shutting down (a process started then once kept launch from exiting)."""
    require_ros("launch_ros", need="ros_launch")
    import importlib.util

    from launch.actions import EmitEvent, ExecuteProcess, LogInfo
    from launch.events.process import ProcessStderr, ProcessStdout

    from servo_sim.ros.fleet.nudge import READY_LINE

    spec = importlib.util.spec_from_file_location("fleet_launch",
                                                  REPO / "launch" / "fleet.launch.py")
    fleet_launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fleet_launch)
    nudge = ExecuteProcess(cmd=["true"], name="fleet_nudge")
    host = ExecuteProcess(cmd=["true"], name="servo_sim_fleet")
    after = LogInfo(msg="every table")

    def read(lines, action, text: str, stream=ProcessStderr) -> list:
        return lines.output(stream(text=text.encode(), action=action, name=action.name,
                                   cmd=["true"], cwd=None, env=None,
                                   pid=1 if action is nudge else 2))

    def start(ns: str) -> str:
        return (f"[INFO] [1.5] [{ns}.servo_sim]: 6 motor(s) a, b on hardware 'sim' "
                f"(active); step 8 ms, real_time_factor 1.0\n")

    table = "[INFO] [2.5] [r0.servo_sim]: per-motor table complete: 6 motors' parameters\n"
    ended = "[INFO] [servo_sim_fleet]: robot /r1 (pid 7) exited with status 1\n"
    lines = fleet_launch._RobotLines(2, True, nudge, [after])
    assert read(lines, host, start("r0")) == []
    assert read(lines, nudge, READY_LINE + "\n", ProcessStdout) == []  # r1 not yet
    assert read(lines, host, start("r1")[:30]) == []
    [signalled] = read(lines, host, start("r1")[30:])
    assert isinstance(signalled, EmitEvent)
    assert signalled.event.signal_name == "SIGUSR1"
    assert read(lines, host, start("r1")) == []  # once
    assert read(lines, host, table) == []
    assert read(lines, host, ended, ProcessStdout) == [after]  # r1 ended before its table
    stopping = fleet_launch._RobotLines(2, True, nudge, [after])
    assert read(stopping, nudge, READY_LINE + "\n", ProcessStdout) == []
    stopping.stop(None, None)
    assert read(stopping, host, start("r0") + start("r1") + table) == []
    assert read(stopping, host, ended, ProcessStdout) == []


def _ros2(arguments: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run([shutil.which("ros2"), *arguments], env=env, capture_output=True,
                          text=True, timeout=60)
    return sorted(done.stdout.split())


def test_a_fleet_launch_takes_namespaces_and_a_config_per_robot(tmp_path, monkeypatch):
    """Simple discovery (a ROS_DISCOVERY_SERVER of the shell is not followed), two robots
    by name, each with its own config, each started by launch (fork:=false)."""
    from test_fleet_process import Watcher

    monkeypatch.setenv("ROS_DISCOVERY_SERVER", "127.0.0.1:9")  # nobody there
    three = tmp_path / "three.yaml"
    three.write_text("/**/servo_sim:\n  ros__parameters:\n    motors: [a, b, c]\n")
    configs = f"{REPO / 'config' / 'servo_sim.yaml'},{three}"
    launch, log = _fleet_launch(tmp_path, "namespaces:=left right", f"configs:={configs}",
                                "fork:=false")
    monkeypatch.delenv("ROS_DISCOVERY_SERVER")
    watcher = None
    try:
        watcher = Watcher(["left", "right"])
        watcher.until_every_robot_published()
        names = watcher.names
    finally:
        if watcher:
            watcher.close()
        _ctrl_c(launch, log, robots=2)
    assert names["left"] == ["arm", "gripper"]
    assert names["right"] == ["a", "b", "c"]


@pytest.mark.parametrize("fork", ["true", "false"])
def test_a_fleet_and_its_server_end_with_a_launch_that_leaves_them_running(tmp_path, fork):
    """``ros2 launch`` ends on SIGTERM without passing it on ("using SIGTERM can result in
    orphaned processes"): every process it started follows its end (PR_SET_PDEATHSIG:
    the host and the nudge themselves, the discovery server and, with fork:=false, the
    robots through servo_sim.ros.fleet.follow); forked robots leave as on Ctrl-C."""
    from test_fleet_process import _running

    from servo_sim.ros.fleet import robots as fleet
    from servo_sim.ros.fleet.host import FORKED_LINE

    launch, log = _fleet_launch(tmp_path, "robots:=2", "discovery:=server",
                                f"discovery_port:={fleet.free_port()}", f"fork:={fork}",
                                "ros2_daemon:=false")  # (a daemon is no child of launch)
    fleet_pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while log.read_text().count("per-motor table complete") < 2:
            assert launch.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        output = log.read_text()
        started = re.findall(r"\[([\w.]+)-\d+\]: process started with pid \[(\d+)\]",
                             output)
        names = sorted(name for name, _ in started)
        robots = [int(pid) for _, pid in FORKED_LINE.findall(output)]
        assert names == (["discovery_server_0", "fleet_nudge", "servo_sim_fleet"]
                         if fork == "true" else
                         ["discovery_server_0", "fleet_nudge", "servo_sim_node",
                          "servo_sim_node"]), output
        assert len(robots) == (2 if fork == "true" else 0), output
        fleet_pids = [int(pid) for _, pid in started] + robots
        os.kill(launch.pid, signal.SIGTERM)  # the launch alone, as `kill` would
        launch.wait(timeout=30)
        deadline = time.monotonic() + 60
        while left := [pid for pid in fleet_pids if _running(pid)]:
            assert time.monotonic() < deadline, f"still running: {left}\n{log.read_text()}"
            time.sleep(0.05)
    finally:
        for pid in fleet_pids:  # what did not end (the case under test) ends here
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        try:
            os.killpg(launch.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_daemon_restart_tries_on_while_the_daemons_port_stays_taken():
    """The daemon's port bound by a process that answers nothing on it (as a benchmark run
    found it once, the launch right after another): the restart tries on and starts the
    daemon once the port is free, rather than giving up after five tries in 2.3 s; and a
    restart whose parent (the launch) is killed meanwhile ends, starting nothing."""
    require_ros("ros2launch", need="ros_launch")
    from ros2cli.daemon import get_address
    from ros2cli.node.daemon import is_daemon_running
    from test_fleet_process import MODULE_PARENT, _running, until_gone

    ros2 = shutil.which("ros2")
    subprocess.run([ros2, "daemon", "stop"], capture_output=True, timeout=60)
    holder = socket.socket()
    holder.bind(get_address())  # bound, not listening: a connect is refused, a bind fails
    restart = subprocess.Popen([sys.executable, "-m", "servo_sim.ros.fleet.daemon"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    parent = subprocess.Popen([sys.executable, "-c", MODULE_PARENT, "servo_sim.ros.fleet.daemon"],
                              stdout=subprocess.PIPE, text=True)
    orphan = int(parent.stdout.readline())
    try:
        time.sleep(5.0)  # the port taken for a while (what is under test: not a wait)
        assert restart.poll() is None, restart.stdout.read()
        assert _running(orphan)
        parent.kill()
        parent.wait()
        until_gone(orphan, "the restart")
        holder.close()
        out, _ = restart.communicate(timeout=60)
        assert restart.returncode == 0, out
        assert "ros2 daemon restarted with this environment" in out
        assert is_daemon_running(argparse.Namespace())
    finally:
        holder.close()
        for process in (restart, parent):
            if process.poll() is None:
                process.kill()
        if _running(orphan):  # (a failure before until_gone)
            os.kill(orphan, signal.SIGKILL)
        subprocess.run([ros2, "daemon", "stop"], capture_output=True, timeout=60)


def test_a_bad_fleet_argument_is_one_line_naming_it(tmp_path):
    launch, log = _fleet_launch(tmp_path, "robots:=ten")
    assert launch.wait(timeout=60) != 0
    assert "robots:='ten': must be a whole number from 1 to 1000" in log.read_text()
