"""The fleet plan (servo_sim/ros/fleet.py, no ROS): namespaces, configs, the discovery
and its environment, and each bad argument as one line naming it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import REPO

from servo_sim.ros.fleet import robots as fleet

CONFIG = str(REPO / "config" / "servo_sim.yaml")
SO101 = str(REPO / "config" / "so101.yaml")


def test_a_count_of_robots_names_them_r0_to_rn():
    plan = fleet.fleet("3", config=CONFIG)
    assert [(r.namespace, r.config) for r in plan.robots] == [
        ("r0", CONFIG), ("r1", CONFIG), ("r2", CONFIG)]
    assert plan.discovery.simple
    assert plan.discovery.node_environment() == {} == plan.discovery.tool_environment()
    assert plan.discovery.server_commands() == []


def test_namespaces_and_a_config_per_robot_override_the_count():
    plan = fleet.fleet("7", "left, /right", config=CONFIG, per_robot=f"[{CONFIG},{SO101}]")
    assert [(r.namespace, r.config) for r in plan.robots] == [
        ("left", CONFIG), ("right", SO101)]


def test_a_started_server_pair_takes_consecutive_ports_in_server_id_order():
    """(Fast DDS 3's server takes a command index first: "42", found by asking it.)"""
    d = fleet.discovery("server", "12000", "2")
    assert d.servers == ("127.0.0.1:12000", "127.0.0.1:12001") and d.started_here
    assert d.node_environment() == {"ROS_DISCOVERY_SERVER": "127.0.0.1:12000;127.0.0.1:12001"}
    assert d.tool_environment() == {"ROS_DISCOVERY_SERVER": "127.0.0.1:12000;127.0.0.1:12001",
                                    "ROS_SUPER_CLIENT": "TRUE"}
    assert "export ROS_DISCOVERY_SERVER='127.0.0.1:12000;127.0.0.1:12001' " \
           "ROS_SUPER_CLIENT='TRUE'" in d.tool_hint()
    assert "then 'ros2 daemon stop' once" in d.tool_hint()
    assert d.tool_hint(daemon_restarted=True).endswith(
        "; the ros2 daemon of this domain is restarted as their super client once every "
        "robot's per-motor table is complete")
    (first, env), (second, _) = d.server_commands()
    assert Path(first[0]).name == fleet.SERVER_EXECUTABLE
    index = fleet.server_command_index(Path(first[0]), env)
    assert index in ([], ["42"])
    profile = str(REPO / "config" / "discovery_server.xml")
    assert first[1:] == [*index, "-x", profile, "-i", "0", "-l", "127.0.0.1", "-p", "12000"]
    assert second[1:] == [*index, "-x", profile, "-i", "1", "-l", "127.0.0.1", "-p", "12001"]
    assert set(env) == {"LD_LIBRARY_PATH"}


ROBOT_PROFILE = str(REPO / "config" / "fleet_robot.xml")
DAEMON_PROFILE = str(REPO / "config" / "fleet_daemon.xml")
PROFILE = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")


@pytest.mark.parametrize("servers, shell, given", [
    # servers on this machine: the robots listen on UDP at 127.0.0.1, whatever the range
    ("server", {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}, True),
    ("server", {}, True),
    ("localhost:11811;127.0.0.2:11811", {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, True),
    # a server elsewhere: 127.0.0.1 would be out of its other clients' reach
    ("127.0.0.1:11811;10.0.0.6:11811", {}, False),
    ("10.0.0.5:11811", {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, False),
    # the shell sets the transports itself: a profiles file (Fast DDS 2's variable or
    # 3's), or the built-in transports
    ("server", {"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"}, False),
    ("server", {"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}, False),
    ("server", {"FASTDDS_BUILTIN_TRANSPORTS": "LARGE_DATA"}, False),
    # simple discovery: nothing
    ("simple", {}, False),
])
def test_the_robots_take_their_data_on_udp_loopback_where_the_servers_are_here(
        servers, shell, given):
    d = fleet.discovery(servers, "11811")
    expected = dict.fromkeys(PROFILE, ROBOT_PROFILE) if given else {}
    assert d.transport_environment(shell) == expected
    daemon = dict.fromkeys(PROFILE, DAEMON_PROFILE) if given else {}
    assert d.transport_environment(shell, profile=fleet.DAEMON_PROFILE) == daemon
    assert not set(PROFILE) & set(d.tool_environment())  # the user's tools keep theirs
    if not d.simple:
        assert d.transport_hint(shell) == (
            f"the robots listen on UDP at 127.0.0.1, not on shared memory, and read no "
            f"graph of others ({ROBOT_PROFILE})" if given else
            "the robots' Fast DDS locators: as Fast DDS and the shell's settings make them")


def _profiles(path: str) -> list:
    import xml.etree.ElementTree as ET

    ns = {"p": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}
    return ET.parse(path).getroot().findall("p:profiles/*", ns)


def _name(element) -> str:
    return element.tag.split("}")[1]


def _locators(participant) -> list:
    """The default profile's listening locators: (data, discovery traffic); nothing else
    in its rtps element (transports stay rmw_fastrtps's)."""
    assert _name(participant) == "participant"
    assert participant.get("is_default_profile") == "true"
    (rtps,) = participant
    assert [_name(e) for e in rtps] == ["builtin", "defaultUnicastLocatorList"]
    (builtin, data) = rtps
    (metatraffic,) = builtin
    assert _name(metatraffic) == "metatrafficUnicastLocatorList"
    return [[(_name(kind), [(_name(e), e.text) for e in kind])
             for locator in element for kind in locator] for element in (data, metatraffic)]


def test_the_robots_and_the_daemons_profiles_listen_on_udp_loopback_only():
    """One UDPv4 locator at 127.0.0.1 (Fast DDS gives the port) for the data and for the
    servers' discovery traffic, in both profiles."""
    loopback = [("udpv4", [("address", "127.0.0.1")])]
    for path in (ROBOT_PROFILE, DAEMON_PROFILE):
        assert _locators(_profiles(path)[0]) == [loopback, loopback], path


def test_only_the_robots_graph_reader_has_a_partition_of_its_own():
    """rmw_fastrtps gives the graph topic's reader the data_reader profile named after it
    (ros_discovery_info): the robots' is in a partition no writer has; the daemon's
    profile has none (it reads the whole graph)."""
    (_, reader) = _profiles(ROBOT_PROFILE)
    assert (_name(reader), reader.get("profile_name")) == ("data_reader", "ros_discovery_info")
    (qos,) = reader
    (partition,) = qos
    assert [(_name(e), [n.text for n in e]) for e in partition] == [
        ("names", ["servo_sim_fleet_robot_reads_no_graph"])]
    assert [_name(e) for e in _profiles(DAEMON_PROFILE)] == ["participant"]


def test_servers_given_by_address_are_used_not_started():
    d = fleet.discovery("10.0.0.5:11811;10.0.0.6:11811")
    assert d.servers == ("10.0.0.5:11811", "10.0.0.6:11811") and not d.started_here
    assert d.server_commands() == []
    assert "given by address" in d.tool_hint()


def test_the_server_libraries_are_found_in_a_wheels_venv(tmp_path, monkeypatch):
    """The wheels' venv: its lib and the bundled ros_*.libs folders, before what is set."""
    prefix = tmp_path / "venv"
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
        / "site-packages"
    for folder in ("ros_rcl.libs", "ros_fastrtps.libs", "numpy.libs"):
        (site / folder).mkdir(parents=True)
    (prefix / "bin").mkdir()
    monkeypatch.setenv("LD_LIBRARY_PATH", "/already")
    env = fleet.library_environment(prefix / "bin" / fleet.SERVER_EXECUTABLE)
    assert env["LD_LIBRARY_PATH"].split(os.pathsep) == [
        str(prefix / "lib"), str(site / "ros_fastrtps.libs"), str(site / "ros_rcl.libs"),
        "/already"]


@pytest.mark.parametrize("call, message", [
    (lambda: fleet.namespaces("ten"), "robots:='ten': must be a whole number from 1 to 1000"),
    (lambda: fleet.namespaces("0"), "robots:='0': must be a whole number from 1 to 1000"),
    (lambda: fleet.namespaces("1", "a,2b"),
     "namespaces:='a,2b': '2b' is not a ROS name (a letter, then letters, digits or "
     "underscores)"),
    (lambda: fleet.namespaces("1", "a b a"), "namespaces:='a b a': a given more than once"),
    (lambda: fleet.configs(2, CONFIG, CONFIG), f"configs:={CONFIG!r}: 1 files for 2 robots"),
    (lambda: fleet.configs(1, "/no/such.yaml"), "config:='/no/such.yaml': no such file"),
    (lambda: fleet.discovery("servers"),
     "discovery:='servers': must be simple, server, or the servers' host:port[;host:port...]"),
    (lambda: fleet.discovery("10.0.0.5:0"),
     "discovery:='10.0.0.5:0': must be simple, server, or the servers' host:port"),
    (lambda: fleet.discovery("server", "80"),
     "discovery_port:='80': must be a whole number from 1024 to 65531"),
    (lambda: fleet.discovery("server", servers="5"),
     "discovery_servers:='5': must be a whole number from 1 to 4"),
])
def test_a_bad_argument_is_one_line_naming_it(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


@pytest.mark.parametrize("arguments, message", [
    (["--stay", "nan", "r0"], "--stay nan: must be a finite number of seconds, 0 or more"),
    (["--stay", "inf", "r0"], "--stay inf: must be a finite number of seconds, 0 or more"),
    (["--stay", "-1", "r0"], "--stay -1.0: must be a finite number of seconds, 0 or more"),
    (["r0", "2b"], "namespaces:='r0 2b': '2b' is not a ROS name"),
    (["r0", "r0"], "namespaces:='r0 r0': r0 given more than once"),
])
def test_the_nudge_refuses_a_bad_argument_before_it_is_ready(arguments, message):
    """servo_sim.ros.fleet.nudge: one usage line naming the argument, status 2, no ready
    line (the launch would never signal it)."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "servo_sim.ros.fleet.nudge", *arguments],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"servo_sim_fleet_nudge: error: {message}" in done.stderr


def test_free_ports_are_consecutive_and_free():
    import socket

    first = fleet.free_port(3)
    for port in range(first, first + 3):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", port))  # raises OSError if taken


def test_forked_robots_get_the_launch_arguments_of_every_node():
    """fork:=true: one host command; each robot's rcl arguments are a servo_sim node's
    (name, namespace, its config, then the launch's parameters, which override it)."""
    from servo_sim.ros.fleet.host import robot_arguments
    from servo_sim.ros.launch_args import forked_robots

    command = forked_robots([("r0", CONFIG), ("left", SO101)], use_sim_time="True",
                            real_time_factor="2", executor="events", log_level="warn")
    assert command == [sys.executable, "-m", "servo_sim.ros.fleet.host",
                       "--robot", "r0", CONFIG, "--robot", "left", SO101, "--ros-args",
                       "-p", "use_sim_time:=true", "-p", "real_time_factor:=2.0",
                       "-p", 'executor:="events"', "--log-level", "warn"]
    common = command[command.index("--ros-args") + 1:]
    assert robot_arguments("left", SO101, common) == [
        "servo_sim_node", "--ros-args", "-r", "__ns:=/left", "-r", "__node:=servo_sim",
        "--params-file", SO101, *common]
    with pytest.raises(ValueError, match="use_sim_time:='maybe': must be true or false"):
        forked_robots([("r0", CONFIG)], "maybe", "1.0", "auto", "info")
