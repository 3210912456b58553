"""One process that starts a fleet's robots: it imports the node's code once and forks
each robot's own process from it (``fleet.launch.py fork:=true``).

A robot started on its own spends about 0.3 s of CPU before its first joint_states,
two thirds of it importing Python, numpy, rclpy and servo_sim; ten of them on two cores
wait for each other. Forked from a parent that has imported all of that (and has no DDS
participant yet), each robot only creates its participant and node. Each
robot is still a process of its own, with its own participant, executor and GIL: a
crash or a SIGKILL takes that robot alone, as with separate ``servo_sim_node``s.

    python -m servo_sim.ros.fleet.host --robot r0 config.yaml --robot r1 config.yaml \\
        [--ros-args <arguments for every robot, e.g. --log-level warn>]

The only threads the host has when it forks are LTTng-UST's listeners, which the ROS 2
wheels' tracetools start as rclpy is imported (idle without an LTTng session daemon; a
forked robot is not traced: trace with ``fork:=false``).

The host says on stdout which pid each robot has and how each ended; SIGINT and SIGTERM
are passed on to every robot (after a SIGTERM, those left after ``TERM_GRACE_S`` get
SIGKILL, as launch would give each of its processes); it exits once every robot has, 0
if every robot exited 0.
A robot whose host is killed gets SIGTERM (``PR_SET_PDEATHSIG``) and leaves as on Ctrl-C;
so does the host when its own parent ends without passing a signal on (``ros2 launch`` on
SIGTERM, which leaves its processes running, or killed).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import signal
import sys
import traceback
import warnings

from ..spin import StopSignals

#: Logger-like name of the host's own lines.
NAME = "servo_sim_fleet"
#: After passing SIGTERM on, how long the robots have before the host SIGKILLs those left
#: (launch's escalation SIGKILLs the host itself 5 s after its SIGTERM).
TERM_GRACE_S = 4
_PR_SET_NAME, _PR_SET_PDEATHSIG = 15, 1
#: The host's two lines about a robot, as :func:`run` says them, read by fleet.launch.py
#: and the fleet benchmark: forked (namespace, pid), and ended (namespace, then the exit
#: status or the signal's name).
FORKED_LINE = re.compile(rf"\[{NAME}\]: robot /(\w+): pid (\d+)")
ENDED_LINE = re.compile(rf"\[{NAME}\]: robot /(\w+) \(pid \d+\) "
                        r"(?:exited with status (-?\d+)|killed by (\w+))")


def say(text: str) -> None:
    """One line of the host's own, in the format of the robots' info lines; nothing once
    whoever read them has ended."""
    try:
        print(f"[INFO] [{NAME}]: {text}", flush=True)
    except OSError:  # launch ended: EPIPE on a pipe, EIO on its pseudo-terminal
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (what the buffer still holds goes there)
        os.close(devnull)


def robot_arguments(namespace: str, config: str, ros_arguments: list[str]) -> list[str]:
    """What a forked robot's ``rclpy.init`` gets: the node's name and namespace, its
    parameters file, then the arguments given for every robot (which override it)."""
    return ["servo_sim_node", "--ros-args", "-r", f"__ns:=/{namespace}", "-r",
            "__node:=servo_sim", "--params-file", config, *ros_arguments]


def preload() -> None:
    """Import what every robot needs before its first joint_states, once, in the host:
    numpy, rclpy and its executors, servo_sim's model and node, and the type support of
    the messages a node creates first (the C libraries, and rosidl's code generator that
    the first import loads). No participant is made here (the only threads are the ones
    rclpy's import starts, LTTng-UST's listeners: see above)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as node_main sets it
    from .. import entry

    entry._ros_or_exit(NAME)
    import numpy  # noqa: F401
    import rclpy.executors
    from rcl_interfaces.msg import ParameterEvent
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    from .. import leave, node  # noqa: F401
    try:
        import rclpy.experimental  # noqa: F401
    except ImportError:
        pass
    for message in (JointState, Clock, ParameterEvent):
        message.__class__.__import_type_support__()


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def follow_parent(parent: int | None = None) -> bool:
    """SIGTERM to this process when its parent ends (``PR_SET_PDEATHSIG``); False if the
    parent (``parent``, by default the one it has now) has ended already."""
    parent = os.getppid() if parent is None else parent
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == parent


def _robot(namespace: str, config: str, ros_arguments: list[str], host: int) -> int:
    """In the forked child: become the robot and run it (never returns to the host's
    code). Signals are blocked on entry; a signal before the node's own handler is in
    place ends the robot quietly, as one during a servo_sim_node's start-up does."""
    if not follow_parent(host):  # the host died before PR_SET_PDEATHSIG took
        return 1
    _libc().prctl(_PR_SET_NAME, f"{namespace}.servo_sim"[:15].encode())
    from ..entry import node_main

    for s in StopSignals.SIGNALS:
        signal.signal(s, signal.default_int_handler)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, StopSignals.SIGNALS)  # one pending: here
        return node_main(robot_arguments(namespace, config, ros_arguments)) or 0
    except KeyboardInterrupt:
        return 0


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def run(robots: list[tuple[str, str]], ros_arguments: list[str]) -> int:
    """Fork one robot per ``(namespace, config)``, pass stop signals on, wait for all."""
    preload()
    children: dict[int, str] = {}

    def send(signum: int) -> None:
        for pid in list(children):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def pass_on(signum: int, frame: object) -> None:
        send(signum)
        if signum == signal.SIGTERM:  # launch's second step: a robot that hangs goes
            signal.alarm(TERM_GRACE_S)

    host = os.getpid()
    # blocked while forking: a child never runs the host's handler, and a signal that
    # comes meanwhile reaches every robot once the handler is in place
    signal.pthread_sigmask(signal.SIG_BLOCK, StopSignals.SIGNALS)
    for namespace, config in robots:
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():  # Python >= 3.12: "is multi-threaded" (the
            # LTTng-UST listeners, idle: see above)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = _robot(namespace, config, ros_arguments, host)
            except KeyboardInterrupt:  # after _robot returned: its status stands
                pass
            except BaseException:  # noqa: BLE001 - a bug: said, as servo_sim_node says it
                traceback.print_exc()
            finally:  # never back into the host's code, and the exit not interrupted
                signal.pthread_sigmask(signal.SIG_BLOCK, StopSignals.SIGNALS)
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children[pid] = namespace
        say(f"robot /{namespace}: pid {pid}")
    for s in StopSignals.SIGNALS:
        signal.signal(s, pass_on)
    signal.signal(signal.SIGALRM, lambda signum, frame: send(signal.SIGKILL))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, StopSignals.SIGNALS)
    failed = 0
    while children:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        namespace = children.pop(pid)
        failed += status != 0
        say(f"robot /{namespace} (pid {pid}) {_ended(status)}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m servo_sim.ros.fleet.host --robot NS CONFIG ... [--ros-args ...]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ros_arguments: list[str] = []
    if "--ros-args" in argv:
        at = argv.index("--ros-args")
        argv, ros_arguments = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", nargs=2, action="append", required=True,
                        metavar=("NAMESPACE", "CONFIG"),
                        help="a robot: its namespace and parameters file (repeat)")
    parser.add_argument("--parent", type=int, metavar="PID",
                        help="the process that starts the host (launch); by default its "
                             "parent now: the host ends when it does")
    options = parser.parse_args(argv)
    if not follow_parent(options.parent):
        say("the process that started the host has ended: no robot started")
        return 1
    try:
        return run([(ns, config) for ns, config in options.robot], ros_arguments)
    except KeyboardInterrupt:  # a Ctrl-C before any robot was forked
        return 0


if __name__ == "__main__":
    sys.exit(main())
