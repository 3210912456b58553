"""A fleet of servo_sim_node processes on Fast DDS discovery servers (issue 33), started
as ``fleet.launch.py`` starts them (servo_sim/ros/fleet.py's server commands and
environment), without launch: a killed and restarted server, a redundant pair with one
killed, and a robot killed with SIGKILL; and robots forked from one host
(servo_sim.ros.fleet.host, fork:=true), one of them killed, and the host killed.
Newcomers are fresh processes.

Every wait is on a condition with a generous timeout; the one time bound asserted is the
documented one (a killed robot leaves a newcomer's graph within the participant lease).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO, STARTED, TIMEOUT, NodeProcess, require_ros

require_ros("rclpy")
pytestmark = pytest.mark.ros

from servo_sim.ros.fleet import robots as fleet  # noqa: E402
from servo_sim.ros.fleet.host import FORKED_LINE  # noqa: E402

CONFIG = str(REPO / "config" / "servo_sim.yaml")
#: This shell without Fast DDS transport settings of its own (the robots then get the
#: launch's profile, as a user's fleet does).
QUIET_SHELL = {k: v for k, v in os.environ.items() if k not in fleet.SHELL_TRANSPORT_VARIABLES}
#: A fresh process that calls each given robot's /<ns>/arm/get_velocity as
#: servo-sim-client does (the request sent again while no answer came: a fresh client's
#: first answer may be dropped, issue 61), prints "ok" once all answered (or what did
#: not) and exits.
CALLER = """
import sys, rclpy
from rclpy.executors import SingleThreadedExecutor
from servo_sim.ros.link.answered import call_answered
from servo_sim.ros.link.resend import resendable
from servo_sim.srv import GetFloat
rclpy.init(); node = rclpy.create_node("newcomer")
executor = SingleThreadedExecutor(); executor.add_node(node)
for ns in sys.argv[2:]:
    client = node.create_client(GetFloat, f"/{ns}/arm/get_velocity")
    if not client.wait_for_service(timeout_sec=float(sys.argv[1])):
        print("no service", ns); sys.exit(1)
    outcome = call_answered(client, GetFloat.Request(ask=True), float(sys.argv[1]), executor,
                            resendable(client.service_name, "servo_sim/srv/GetFloat"))
    if outcome.response is None:
        print("no answer", ns, "sent", outcome.sent); sys.exit(1)
print("ok")
"""
#: A fresh super client that prints the servo_sim nodes' namespaces it sees after
#: seeing the robot named in argv[1] (the graph is then as the server had it).
GRAPH = """
import sys, time, rclpy
rclpy.init(); node = rclpy.create_node("newcomer_graph")
deadline = time.monotonic() + float(sys.argv[2])
def robots():
    return sorted(ns.strip("/") for name, ns in node.get_node_names_and_namespaces()
                  if name == "servo_sim")
while sys.argv[1] not in robots() and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
end = time.monotonic() + 1.0  # a second more for the rest of what the server sends
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.05)
print(" ".join(robots()))
"""


class Servers:
    """The discovery servers of one fleet, started as fleet.launch.py starts them."""

    def __init__(self, tmp_path, count: int) -> None:
        self.discovery = fleet.discovery("server", str(fleet.free_port(count)), str(count))
        self.commands = self.discovery.server_commands()
        self.log = tmp_path / "servers.log"
        self.procs: list[subprocess.Popen | None] = [None] * count
        for k in range(count):
            self.start(k)

    def start(self, k: int) -> None:
        command, env = self.commands[k]
        with self.log.open("a") as out:
            self.procs[k] = subprocess.Popen(command, env={**os.environ, **env}, stdout=out,
                                             stderr=subprocess.STDOUT)

    def kill(self, k: int) -> None:
        self.procs[k].kill()
        self.procs[k].wait()

    def close(self) -> None:
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@pytest.fixture
def fleet_of(tmp_path, monkeypatch):
    """fleet_of(robots, servers): servers, then robots r0.. as their clients, each started
    and stepping, and a Watcher of their joint_states."""
    made: list = []

    def _make(robots: int, servers: int):
        s = Servers(tmp_path, servers)
        made.append(s)
        for k, v in s.discovery.node_environment().items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("ROS_SUPER_CLIENT", raising=False)
        # the robots' own transports, as the launch gives them (this process's
        # LOCALHOST: UDP on the loopback only)
        nodes = [NodeProcess(tmp_path, f"r{k}", "--params-file", CONFIG,
                             env=s.discovery.transport_environment(QUIET_SHELL))
                 for k in range(robots)]
        made.extend(nodes)
        for n in nodes:
            n.wait_for_output(STARTED)
        watcher = Watcher([n.namespace for n in nodes])
        made.append(watcher)
        watcher.until_every_robot_published()
        return s, nodes, watcher

    yield _make
    for m in reversed(made):
        m.close() if not isinstance(m, NodeProcess) else m.kill()


#: A client node of its own process (Fast DDS reads the discovery environment once per
#: process: this one's must not stay with the test run) that subscribes to each given
#: robot's joint_states and prints, every 0.1 s, {ns: [count, latest stamp, names]}.
WATCH = """
import json, sys, time, rclpy
from sensor_msgs.msg import JointState
rclpy.init(); node = rclpy.create_node("fleet_watcher")
state = {ns: [0, -1.0, []] for ns in sys.argv[1:]}
def got(ns, m):
    state[ns][:] = [state[ns][0] + 1, m.header.stamp.sec + m.header.stamp.nanosec * 1e-9,
                    list(m.name)]
for ns in sys.argv[1:]:
    node.create_subscription(JointState, f"/{ns}/joint_states", lambda m, ns=ns: got(ns, m), 10)
last = 0.0
while True:
    rclpy.spin_once(node, timeout_sec=0.05)
    if time.monotonic() - last > 0.1:
        print(json.dumps(state), flush=True); last = time.monotonic()
"""


class Watcher:
    """Each robot's /<ns>/joint_states, counted in a process of its own (WATCH)."""

    def __init__(self, spaces: list[str]) -> None:
        self.state = {ns: [0, -1.0, []] for ns in spaces}
        self.proc = subprocess.Popen([sys.executable, "-c", WATCH, *spaces],
                                     stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.state = json.loads(line)

    @property
    def count(self) -> dict[str, int]:
        return {ns: s[0] for ns, s in self.state.items()}

    @property
    def stamp(self) -> dict[str, float]:
        return {ns: s[1] for ns, s in self.state.items()}

    @property
    def names(self) -> dict[str, list[str]]:
        return {ns: s[2] for ns, s in self.state.items()}

    def until_every_robot_published(self, spaces=None, more_than: dict | None = None) -> None:
        """Each robot (of ``spaces``) published; with ``more_than``, past those counts
        and with a later stamp than now: it kept stepping."""
        spaces = spaces or list(self.count)
        counts = dict(more_than or dict.fromkeys(spaces, 0))
        stamps = self.stamp
        deadline = time.monotonic() + TIMEOUT
        while not all(self.count[ns] > counts[ns] + 3 and self.stamp[ns] > stamps[ns]
                      for ns in spaces):
            assert self.proc.poll() is None, "the watcher exited"
            assert time.monotonic() < deadline, f"no joint_states of {spaces}: {self.state}"
            time.sleep(0.05)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def newcomer_calls(*spaces: str) -> str:
    """A fresh process (a plain client of the servers) calls each robot's service."""
    done = subprocess.run([sys.executable, "-c", CALLER, str(TIMEOUT), *spaces],
                          capture_output=True, text=True, timeout=4 * TIMEOUT)
    return done.stdout.strip() + done.stderr[-2000:]


def newcomer_sees(seen: str, wait_s: float, env: dict[str, str]) -> list[str]:
    """A fresh super client of the servers: the robots in its graph, once it sees
    ``seen``."""
    done = subprocess.run([sys.executable, "-c", GRAPH, seen, str(wait_s)],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=4 * TIMEOUT)
    return done.stdout.split()


def shared_memory_ports_listened(pid: int) -> set[str]:
    """The Fast DDS shared-memory ports a process listens on: the ports whose lock file
    (``/dev/shm/fastrtps_port<N>_el``; ``fastdds_`` in Fast DDS 3) it holds locked."""
    names = {}
    for p in Path("/dev/shm").iterdir():
        if re.fullmatch(r"fast(rtps|dds)_port\d+_el", p.name):
            try:
                names[str(p.stat().st_ino)] = p.name
            except FileNotFoundError:  # removed meanwhile (its process ended)
                pass
    held = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[4] == str(pid) and fields[5].rsplit(":", 1)[-1] in names:
            held.add(names[fields[5].rsplit(":", 1)[-1]])
    return held


def test_the_robots_take_no_data_on_shared_memory_and_a_default_newcomer_reaches_them(
        fleet_of):
    """The robots' profile as the launch gives it (config/fleet_robot.xml): their data on
    UDP at 127.0.0.1, no shared-memory port to listen on, so that a newcomer's first
    message to each robot does not wait for a port's proof of life (docs/benchmarks.md);
    a process of the default transports is answered by them."""
    _, nodes, watcher = fleet_of(robots=2, servers=1)
    assert newcomer_calls("r0", "r1") == "ok"
    for n in nodes:
        assert shared_memory_ports_listened(n.proc.pid) == set(), n.namespace
    # the check sees a port where there is one: the watcher listens on shared memory
    assert shared_memory_ports_listened(watcher.proc.pid)


def test_a_robot_reads_no_graph_of_others_and_tools_and_the_daemon_see_every_robot(
        fleet_of):
    """The robots' profile (config/fleet_robot.xml): a participant with it takes in no
    other participant's graph updates (each robot's table sends hundreds, to every
    robot: docs/benchmarks.md), so its graph has no other node; the robots' own updates
    still reach a tool of the default profile, and one with the profile the launch gives
    the ros2 daemon (config/fleet_daemon.xml)."""
    servers, _, _ = fleet_of(robots=2, servers=1)
    tools = servers.discovery.tool_environment()
    daemon = servers.discovery.transport_environment(QUIET_SHELL, profile=fleet.DAEMON_PROFILE)
    robot = servers.discovery.transport_environment(QUIET_SHELL)
    assert robot and daemon and robot != daemon
    assert newcomer_sees("r1", TIMEOUT, tools) == ["r0", "r1"]
    assert newcomer_sees("r1", TIMEOUT, {**tools, **daemon}) == ["r0", "r1"]
    # a super client too (the servers send it every endpoint), but its graph reader in the
    # robots' partition: no node in 5 s, where the two above saw both at once
    assert newcomer_sees("r1", 5.0, {**tools, **robot}) == []


class Nudge:
    """servo_sim.ros.fleet.nudge for the given robots, as fleet.launch.py starts it (a
    super client with the daemon's profile), its stdout lines read as they come."""

    def __init__(self, servers: Servers, *arguments: str) -> None:
        from servo_sim.ros.fleet import nudge as fleet_nudge

        self.ready = fleet_nudge.READY_LINE
        env = {**os.environ, **servers.discovery.tool_environment(),
               **servers.discovery.transport_environment(QUIET_SHELL,
                                                         profile=fleet.DAEMON_PROFILE)}
        self.proc = subprocess.Popen([sys.executable, "-m", "servo_sim.ros.fleet.nudge",
                                      *arguments], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []  # stdout's
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True
                         ).start()

    def until_ready(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while self.ready + "\n" not in self.lines:
            assert self.proc.poll() is None and time.monotonic() < deadline, self.lines
            time.sleep(0.05)

    def said(self) -> str:
        """Its own lines on stderr (not rmw's: Kilted's warns of the Fast DDS 2 profile
        variable), once it ended with status 0."""
        try:
            _, err = self.proc.communicate(timeout=TIMEOUT)
        finally:
            self.proc.kill()
        assert self.proc.returncode == 0, err
        return "".join(line for line in err.splitlines(keepends=True)
                       if line.startswith("servo_sim_fleet_nudge: "))


def udp_sockets(pid: int) -> int:
    """How many UDP sockets a process has open (a DDS participant has several)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:  # (a file the process closes meanwhile: gone)
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    table = Path("/proc/net/udp").read_text().splitlines()[1:]
    return sum(line.split()[9] in inodes for line in table)


def test_the_nudge_joins_at_its_signal_sees_every_robot_and_leaves(fleet_of):
    """The launch's nudge (servo_sim.ros.fleet.nudge): no participant until SIGUSR1, then
    a super client of the servers until it has every robot's joint_states writer, then
    gone, status 0; a robot it never sees keeps it --stay seconds."""
    servers, _, _ = fleet_of(robots=2, servers=1)
    nudge = Nudge(servers, "r0", "r1")
    nudge.until_ready()
    assert udp_sockets(nudge.proc.pid) == 0
    nudge.proc.send_signal(signal.SIGUSR1)
    assert re.fullmatch(r"servo_sim_fleet_nudge: joined, saw every robot's joint_states "
                        r"writer and left after \d+\.\d\d s \(\d+\.\d\d s of CPU\)\n",
                        nudge.said())
    unseen = Nudge(servers, "r9", "--stay", "2")
    unseen.until_ready()
    unseen.proc.send_signal(signal.SIGUSR1)
    said = re.fullmatch(r"servo_sim_fleet_nudge: joined and left after (\d+\.\d\d) s without "
                        r"seeing the joint_states of /r9 \(\d+\.\d\d s of CPU\)\n",
                        unseen.said())
    assert said and float(said[1]) >= 2.0


def test_the_nudge_ends_quietly_on_ctrl_c_before_or_after_it_joined(fleet_of):
    servers, _, _ = fleet_of(robots=1, servers=1)
    waiting = Nudge(servers, "r0")
    waiting.until_ready()
    waiting.proc.send_signal(signal.SIGINT)
    assert waiting.said() == ""
    assert waiting.lines == [waiting.ready + "\n"]
    joined = Nudge(servers, "r9", "--stay", "600")  # a robot it will not see: it stays
    joined.until_ready()
    joined.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + TIMEOUT
    while not udp_sockets(joined.proc.pid):  # its participant is there
        assert time.monotonic() < deadline, joined.lines
        time.sleep(0.05)
    joined.proc.send_signal(signal.SIGINT)
    assert joined.said().startswith("servo_sim_fleet_nudge: stopped before seeing every "
                                    "robot (")


#: A parent, as launch is: starts ``python -m <its arguments>`` (the child's lines on this
#: process's stdout, after the child's pid, which it prints), then waits to be killed.
MODULE_PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", *sys.argv[1:]])
print(child.pid, flush=True)
time.sleep(600)
"""


def until_gone(pid: int, what: str) -> None:
    """Wait (TIMEOUT) until process ``pid``, whose parent was killed, has ended; SIGKILL it
    if it has not (the failure)."""
    deadline = time.monotonic() + TIMEOUT
    try:
        while _running(pid):
            assert time.monotonic() < deadline, f"{what} outlived its parent"
            time.sleep(0.05)
    finally:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)


def test_the_nudge_ends_with_the_process_that_started_it():
    """A launch killed (SIGKILL) leaves no nudge waiting behind it (PR_SET_PDEATHSIG)."""
    from servo_sim.ros.fleet import nudge as fleet_nudge

    parent = subprocess.Popen([sys.executable, "-c", MODULE_PARENT,
                               "servo_sim.ros.fleet.nudge", "r0"], stdout=subprocess.PIPE,
                              text=True)
    try:
        pid = int(parent.stdout.readline())
        assert parent.stdout.readline() == fleet_nudge.READY_LINE + "\n"
        assert _running(pid)
    finally:
        parent.kill()
        parent.wait()
    until_gone(pid, "the nudge")


#: A parent of a discovery server started through servo_sim.ros.fleet.follow, as the fleet
#: launch starts it: prints the server's pid.
SERVER_PARENT = """
import json, os, subprocess, sys, time
from servo_sim.ros.fleet import follow
command, env = json.loads(sys.argv[1])
server = subprocess.Popen(follow.command(os.getpid(), command), env={**os.environ, **env},
                          stdout=subprocess.DEVNULL)
print(server.pid, flush=True)
time.sleep(600)
"""


def test_a_discovery_server_started_through_follow_ends_with_its_parent():
    """A killed launch leaves no discovery server behind (servo_sim.ros.fleet.follow)."""
    [(command, env)] = fleet.discovery("server", str(fleet.free_port())).server_commands()
    parent = subprocess.Popen([sys.executable, "-c", SERVER_PARENT, json.dumps([command, env])],
                              stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        deadline = time.monotonic() + TIMEOUT
        while os.path.realpath(f"/proc/{pid}/exe") != os.path.realpath(command[0]):
            assert _running(pid) and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait()
    until_gone(pid, "the discovery server")


@pytest.mark.parametrize(("argv", "status", "message"), [
    (["sleep"], 2, "usage: python -m servo_sim.ros.fleet.follow PID COMMAND [ARG ...]"),
    (["x", "sleep", "1"], 2, "usage: python -m servo_sim.ros.fleet.follow PID COMMAND [ARG ...]"),
    (["{parent}", "no-such-command-here"], 2,
     "follow: no-such-command-here: No such file or directory"),
    (["999999999", "sleep", "1"], 1, "follow: process 999999999 ended before sleep started"),
])
def test_follow_refuses_a_bad_command_line_or_a_parent_gone(argv, status, message):
    run = subprocess.run([sys.executable, "-m", "servo_sim.ros.fleet.follow",
                          *(a.format(parent=os.getpid()) for a in argv)],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert (run.returncode, run.stderr.strip()) == (status, message)


def test_a_restarted_discovery_server_loses_nothing_the_robots_keep_stepping(fleet_of):
    servers, nodes, watcher = fleet_of(robots=3, servers=1)
    assert newcomer_calls("r0", "r1", "r2") == "ok"
    servers.kill(0)
    # the robots step and publish on: their samples reach a subscriber matched before
    watcher.until_every_robot_published(more_than=dict(watcher.count))
    servers.start(0)
    restarted = time.monotonic()
    # the restarted server has the robots back at their next announcements (about 6 s
    # here, docs/ros.md); a newcomer started before that may miss them: newcomers are
    # started one after the other until one sees the whole fleet
    env = servers.discovery.tool_environment()
    while (seen := newcomer_sees("r2", 2.0, env)) != ["r0", "r1", "r2"]:
        assert time.monotonic() - restarted < TIMEOUT, f"after the restart: {seen}"
    # and a plain client started after that calls every robot
    assert newcomer_calls("r0", "r1", "r2") == "ok"
    for n in nodes:
        assert n.proc.poll() is None, n.output
        n.proc.send_signal(signal.SIGINT)
    assert [n.wait() for n in nodes] == [0, 0, 0]


def test_of_two_redundant_servers_one_killed_loses_nothing(fleet_of):
    servers, _, watcher = fleet_of(robots=2, servers=2)
    servers.kill(0)
    watcher.until_every_robot_published(more_than=dict(watcher.count))
    assert newcomer_calls("r0", "r1") == "ok"
    assert newcomer_sees("r1", TIMEOUT, servers.discovery.tool_environment()) == ["r0", "r1"]


def test_a_robot_killed_with_sigkill_leaves_the_others_and_a_newcomers_graph(fleet_of):
    """Gone from a newcomer's graph within the participant lease (docs/ros.md), the
    others unaffected."""
    servers, nodes, watcher = fleet_of(robots=3, servers=1)
    env = servers.discovery.tool_environment()
    assert newcomer_sees("r2", TIMEOUT, env) == ["r0", "r1", "r2"]
    nodes[1].proc.kill()
    killed = time.monotonic()
    nodes[1].proc.wait()
    watcher.until_every_robot_published(["r0", "r2"], more_than=dict(watcher.count))
    # the documented bound, whatever this machine's speed: a newcomer started once the
    # lease (and 3 s of the server's lease checks) has run out no longer sees it
    while time.monotonic() < killed + fleet.LEASE_DURATION_S + 3.0:
        watcher.until_every_robot_published(["r0", "r2"], more_than=dict(watcher.count))
        time.sleep(0.5)
    assert newcomer_sees("r2", TIMEOUT, env) == ["r0", "r2"]
    assert newcomer_calls("r0", "r2") == "ok"


class Host:
    """``python -m servo_sim.ros.fleet.host``: robots forked from one process (what
    fleet.launch.py starts with fork:=true), its output in a file."""

    def __init__(self, tmp_path, spaces: list[str], env: dict[str, str]) -> None:
        self.log = tmp_path / "host.log"
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "servo_sim.ros.fleet.host",
                 *[a for ns in spaces for a in ("--robot", ns, CONFIG)]],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **env})
        self.pids = {}
        self.until(lambda: len(self.pids) == len(spaces), "every robot forked")

    @property
    def output(self) -> str:
        text = self.log.read_text()
        self.pids = {ns: int(pid) for ns, pid in FORKED_LINE.findall(text)}
        return text

    def until(self, condition, what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            self.output  # noqa: B018 - reads the pids
            assert time.monotonic() < deadline, f"no {what}:\n{self.output}"
            time.sleep(0.05)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.pids.values():
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def host_of(tmp_path, monkeypatch):
    """host_of(robots): a server, a host forking r0.. as its clients, a Watcher of their
    joint_states once every robot published."""
    made: list = []

    def _make(robots: int):
        s = Servers(tmp_path, 1)
        made.append(s)
        for k, v in s.discovery.node_environment().items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("ROS_SUPER_CLIENT", raising=False)
        spaces = [f"r{k}" for k in range(robots)]
        host = Host(tmp_path, spaces, s.discovery.transport_environment(QUIET_SHELL))
        made.append(host)
        watcher = Watcher(spaces)
        made.append(watcher)
        watcher.until_every_robot_published()
        return s, host, watcher

    yield _make
    for m in reversed(made):
        m.close()


def test_forked_robots_are_processes_of_their_own_one_killed_leaves_the_others(host_of):
    """A robot forked by the host and killed with SIGKILL: the host says so, the others
    step and answer on; SIGINT to the host alone (as launch sends it) ends each of them
    with status 0, and the host with 1 (one robot did not end well)."""
    _, host, watcher = host_of(robots=3)
    assert len(set(host.pids.values())) == 3 and host.proc.pid not in host.pids.values()
    os.kill(host.pids["r1"], signal.SIGKILL)
    host.until(lambda: f"robot /r1 (pid {host.pids['r1']}) killed by SIGKILL" in host.output,
               "line saying r1 was killed")
    watcher.until_every_robot_published(["r0", "r2"], more_than=dict(watcher.count))
    assert newcomer_calls("r0", "r2") == "ok"
    host.proc.send_signal(signal.SIGINT)
    assert host.proc.wait(timeout=TIMEOUT) == 1, host.output
    for ns in ("r0", "r2"):
        assert f"robot /{ns} (pid {host.pids[ns]}) exited with status 0" in host.output


def test_the_hosts_lines_go_nowhere_once_launch_has_ended():
    """The host's output is launch's pseudo-terminal (emulate_tty): once launch has ended,
    a write there fails (EIO); the host's lines then go to /dev/null and it goes on (to
    wait for its robots), with no traceback."""
    import pty

    master, slave = pty.openpty()
    os.close(master)  # launch has ended
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom servo_sim.ros.fleet.host import say\n"
         "say('one')\nsay('two')\nprint('went on', file=sys.stderr)"],
        stdout=slave, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    os.close(slave)
    assert (done.returncode, done.stderr) == (0, "went on\n")


def test_forked_robots_leave_when_their_host_is_killed(host_of):
    """The host killed with SIGKILL (nothing passes a signal on): its robots get SIGTERM
    from the kernel (PR_SET_PDEATHSIG) and end."""
    _, host, _ = host_of(robots=2)
    host.proc.kill()
    host.proc.wait()
    deadline = time.monotonic() + TIMEOUT
    while any(_running(pid) for pid in host.pids.values()):
        assert time.monotonic() < deadline, f"still running: {host.pids}\n{host.output}"
        time.sleep(0.05)


def test_a_forked_robot_that_does_not_stop_gets_sigkill_after_sigterm(host_of):
    """SIGTERM (launch's second step) to the host: a robot that does not end (stopped
    here with SIGSTOP) is killed TERM_GRACE_S later by the host, as launch would kill a
    process of its own; the other leaves with status 0."""
    from servo_sim.ros.fleet.host import TERM_GRACE_S

    _, host, _ = host_of(robots=2)
    os.kill(host.pids["r1"], signal.SIGSTOP)
    sent = time.monotonic()
    host.proc.send_signal(signal.SIGTERM)
    assert host.proc.wait(timeout=TIMEOUT) == 1, host.output
    assert time.monotonic() - sent >= TERM_GRACE_S
    assert f"robot /r0 (pid {host.pids['r0']}) exited with status 0" in host.output
    assert f"robot /r1 (pid {host.pids['r1']}) killed by SIGKILL" in host.output
