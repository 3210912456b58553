"""A fleet of servo_sim robots on one ROS domain: their namespaces and configs, and how
their participants discover each other (simple discovery, or Fast DDS discovery servers)
with the environment every node and the user's tools need.

No ROS import: ``launch/fleet.launch.py``, the tests and ``bench_node.py fleet`` all build
a fleet from here. A bad argument is one ``ValueError`` naming it, e.g.
``robots:='ten': must be a whole number from 1 to 1000``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from servo_sim.resources import data_file

#: Fast DDS's default discovery server port (its ``fastdds discovery`` tool's default).
DEFAULT_PORT = 11811
#: Where the servers the launch starts listen: on this machine only.
LOCAL_HOST = "127.0.0.1"
#: The most robots and the most redundant servers a fleet launch takes.
MAX_ROBOTS = 1000
MAX_SERVERS = 4
#: Fast DDS's discovery server executable (in the ROS 2 wheels' venv and in a ROS 2
#: installation alike).
SERVER_EXECUTABLE = "fast-discovery-server"
#: The servers' Fast DDS profile (config/discovery_server.xml: a 50 ms sync period).
SERVER_PROFILE = ("config", "discovery_server.xml")
#: The Fast DDS profile the launch gives its robots with servers on this machine: they
#: listen on UDP at 127.0.0.1, not on shared memory, and take in no other participant's
#: graph updates (config/fleet_robot.xml says why).
ROBOT_PROFILE = ("config", "fleet_robot.xml")
#: The ros2 daemon's, which the launch restarts, and its nudge's (servo_sim.ros.
#: fleet_nudge): the robots' locators, the whole graph.
DAEMON_PROFILE = ("config", "fleet_daemon.xml")
#: Where Fast DDS 2 (Jazzy) and Fast DDS 3 (Kilted) read the path of a profiles file.
PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
#: A shell that sets one of these chooses Fast DDS's transports itself.
SHELL_TRANSPORT_VARIABLES = (*PROFILE_VARIABLES, "FASTDDS_BUILTIN_TRANSPORTS")
#: How long a participant killed without a goodbye stays in others' graphs: Fast DDS's
#: default participant lease duration (what rmw_fastrtps leaves it at), in seconds.
LEASE_DURATION_S = 20.0

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Robot:
    """One robot of the fleet: its node's namespace and its parameters file."""

    namespace: str
    config: str


@dataclass(frozen=True)
class Discovery:
    """How the fleet's participants find each other: simple discovery (no servers), or
    the Fast DDS discovery servers at ``servers`` (``host:port``, in server-id order),
    which the launch starts itself where ``started_here``."""

    servers: tuple[str, ...] = ()
    started_here: bool = False

    @property
    def simple(self) -> bool:
        return not self.servers

    def node_environment(self) -> dict[str, str]:
        """Discovery environment of every robot and of any plain client (a newcomer
        calling a service): empty for simple discovery."""
        return {} if self.simple else {"ROS_DISCOVERY_SERVER": ";".join(self.servers)}

    def transport_environment(self, environ: Mapping[str, str] | None = None,
                              profile: tuple[str, str] = ROBOT_PROFILE) -> dict[str, str]:
        """Environment that gives the participants the launch starts their Fast DDS
        ``profile``: ``ROBOT_PROFILE`` for the robots, ``DAEMON_PROFILE`` for the ros2
        daemon it restarts. Both listen on UDP at 127.0.0.1, not on a shared-memory port;
        the robots also take in no other participant's graph updates (the files say
        why). With servers all on this machine, and unless the shell (``environ``, by
        default this process's) sets Fast DDS's transports itself (a profiles file,
        ``FASTDDS_BUILTIN_TRANSPORTS``); empty otherwise (simple discovery, a server
        elsewhere: 127.0.0.1 would be out of a remote participant's reach)."""
        environ = os.environ if environ is None else environ
        if (self.simple or not all(_on_this_machine(a.rpartition(":")[0])
                                   for a in self.servers)
                or any(environ.get(v) for v in SHELL_TRANSPORT_VARIABLES)):
            return {}
        return dict.fromkeys(PROFILE_VARIABLES, str(data_file(*profile)))

    def tool_environment(self) -> dict[str, str]:
        """Environment of tools that must see the whole graph (``ros2 node list``, the
        ros2 daemon, rqt): super clients of the servers."""
        return {} if self.simple else {**self.node_environment(), "ROS_SUPER_CLIENT": "TRUE"}

    def transport_hint(self, environ: Mapping[str, str] | None = None) -> str:
        """The line that says which transports the robots use (with servers)."""
        profile = self.transport_environment(environ).get(PROFILE_VARIABLES[0])
        if profile:
            return (f"the robots listen on UDP at 127.0.0.1, not on shared memory, and "
                    f"read no graph of others ({profile})")
        return "the robots' Fast DDS locators: as Fast DDS and the shell's settings make them"

    def tool_hint(self, daemon_restarted: bool = False) -> str:
        """The line that tells a user how to point ros2 tools at the fleet (and, unless
        the launch restarts the domain's ros2 daemon as a super client itself, to stop a
        daemon that keeps the discovery it started with)."""
        if self.simple:
            return "discovery: simple (every participant finds every other one)"
        where = "started by this launch" if self.started_here else "given by address"
        exports = " ".join(f"{k}='{v}'" for k, v in self.tool_environment().items())
        daemon = ("the ros2 daemon of this domain is restarted as their super client once "
                  "every robot's per-motor table is complete" if daemon_restarted else
                  "then 'ros2 daemon stop' once (a running daemon keeps the discovery it "
                  "started with)")
        return (f"discovery: Fast DDS discovery server(s) {';'.join(self.servers)} ({where});"
                f" for ros2 tools that see the whole fleet: export {exports}; {daemon}")

    def server_commands(self) -> list[tuple[list[str], dict[str, str]]]:
        """The command line and extra environment of each server the launch starts."""
        if not self.started_here:
            return []
        executable = find_server()
        env = library_environment(executable)
        first = [str(executable), *server_command_index(executable, env)]
        profile = str(data_file(*SERVER_PROFILE))
        commands = []
        for server_id, address in enumerate(self.servers):
            host, port = address.rsplit(":", 1)
            commands.append(([*first, "-x", profile, "-i", str(server_id), "-l", host, "-p",
                              port], env))
        return commands


@dataclass(frozen=True)
class Fleet:
    """The robots and their discovery."""

    robots: tuple[Robot, ...]
    discovery: Discovery = field(default_factory=Discovery)


def _on_this_machine(host: str) -> bool:
    """Whether a server's host is this machine's loopback (``127.x.y.z``,
    ``localhost``)."""
    return host == "localhost" or host.startswith("127.")


def _count(value: str, name: str, low: int, high: int) -> int:
    try:
        count = int(value)
    except ValueError:
        count = None
    if count is None or not low <= count <= high:
        raise ValueError(f"{name}:={value!r}: must be a whole number from {low} to {high}")
    return count


def _words(value: str) -> list[str]:
    """A list argument: words separated by commas or spaces, optionally in [ ]."""
    return [w for w in re.split(r"[\s,]+", value.strip().strip("[]")) if w]


def namespaces(robots: str, names: str = "") -> list[str]:
    """The robots' namespaces: ``names`` where given (each a ROS name, no two alike),
    else ``r0`` .. ``r{robots-1}``."""
    if not names.strip():
        return [f"r{k}" for k in range(_count(robots, "robots", 1, MAX_ROBOTS))]
    given = [n.strip("/") for n in _words(names)]
    for n in given:
        if not _NAME.fullmatch(n):
            raise ValueError(f"namespaces:={names!r}: {n!r} is not a ROS name (a letter, "
                             f"then letters, digits or underscores)")
    twice = sorted({n for n in given if given.count(n) > 1})
    if twice:
        raise ValueError(f"namespaces:={names!r}: {', '.join(twice)} given more than once")
    if len(given) > MAX_ROBOTS:
        raise ValueError(f"namespaces:={names!r}: {len(given)} robots, at most {MAX_ROBOTS}")
    return given


def configs(count: int, config: str, per_robot: str = "") -> list[str]:
    """Each robot's parameters file: ``per_robot`` (one per robot) where given, else
    ``config`` for all; each must exist."""
    files = _words(per_robot) if per_robot.strip() else [config] * count
    name = "configs" if per_robot.strip() else "config"
    if len(files) != count:
        raise ValueError(f"configs:={per_robot!r}: {len(files)} files for {count} robots")
    for f in files:
        if not Path(f).is_file():
            raise ValueError(f"{name}:={f!r}: no such file")
    return files


def discovery(value: str, port: str = str(DEFAULT_PORT), servers: str = "1") -> Discovery:
    """``simple``; ``server``: ``servers`` redundant servers the launch starts on this
    machine at ``port``, ``port + 1``, ...; or the addresses of running servers,
    ``host:port[;host:port...]`` (in server-id order)."""
    if value == "simple":
        return Discovery()
    if value == "server":
        first = _count(port, "discovery_port", 1024, 65535 - MAX_SERVERS)
        count = _count(servers, "discovery_servers", 1, MAX_SERVERS)
        return Discovery(tuple(f"{LOCAL_HOST}:{first + k}" for k in range(count)),
                         started_here=True)
    addresses = [a for a in re.split(r"[;,\s]+", value.strip()) if a]
    for a in addresses:
        host, _, number = a.rpartition(":")
        if not host or not number.isdigit() or not 0 < int(number) < 65536:
            raise ValueError(f"discovery:={value!r}: must be simple, server, or the "
                             f"servers' host:port[;host:port...]")
    return Discovery(tuple(addresses))


def fleet(robots: str = "2", names: str = "", config: str = "", per_robot: str = "",
          discovery_value: str = "simple", port: str = str(DEFAULT_PORT),
          servers: str = "1") -> Fleet:
    """A fleet from the launch arguments (each checked: one ``ValueError`` if bad)."""
    spaces = namespaces(robots, names)
    files = configs(len(spaces), config, per_robot)
    return Fleet(tuple(Robot(n, c) for n, c in zip(spaces, files, strict=True)),
                 discovery(discovery_value, port, servers))


def free_port(count: int = 1) -> int:
    """The first of ``count`` consecutive UDP ports free on 127.0.0.1 now (for servers
    started on this machine by a test or a benchmark: ``discovery_port``)."""
    def free(port: int) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind((LOCAL_HOST, port))
            except OSError:
                return False
        return True

    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((LOCAL_HOST, 0))
            first = s.getsockname()[1]
        if first + count <= 65536 and all(free(first + k) for k in range(1, count)):
            return first


def find_server() -> Path:
    """Fast DDS's discovery server: on PATH (a sourced ROS 2 installation), or beside
    this Python (the ROS 2 wheels' venv, whose bin may not be on PATH)."""
    found = shutil.which(SERVER_EXECUTABLE)
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / SERVER_EXECUTABLE
    if beside.exists():
        return beside
    raise FileNotFoundError(
        f"{SERVER_EXECUTABLE} not found on PATH nor beside {sys.executable}: it comes with "
        f"Fast DDS (the ROS 2 wheels' venv, or a ROS 2 installation)")


def server_command_index(executable: Path, env: dict[str, str]) -> list[str]:
    """Fast DDS 3's server (Kilted) takes a command index first, 42 to run a server (what
    its ``fastdds discovery`` front end passes); Fast DDS 2's (Jazzy) takes none. Asked
    of the executable itself: it says "Invalid command index" to a bare ``-h``."""
    try:
        probe = subprocess.run([str(executable), "-h"], env={**os.environ, **env},
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["42"] if "command index" in probe.stdout + probe.stderr else []


def library_environment(executable: Path) -> dict[str, str]:
    """``LD_LIBRARY_PATH`` for the server: its prefix's ``lib`` and, in the wheels' venv,
    the wheels' bundled library folders (``site-packages/ros_*.libs``), before what is
    set already. (A sourced installation has them on the path already.)"""
    prefix = executable.absolute().parent.parent
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
        / "site-packages"
    folders = [prefix / "lib", *sorted(site.glob("ros_*.libs"))]
    current = os.environ.get("LD_LIBRARY_PATH", "")
    return {"LD_LIBRARY_PATH": os.pathsep.join(
        [str(f) for f in folders if f.is_dir()] + ([current] if current else []))}
