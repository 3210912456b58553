"""A super client of a fleet's discovery servers that joins them once every robot is up,
then leaves: ``python -m servo_sim.ros.fleet.nudge r0 r1 ...`` (the robots' namespaces),
which ``fleet.launch.py`` starts with discovery servers.

Why: the Fast DDS discovery server of the Jazzy wheels (Fast DDS 2.14.5) sometimes never
tells a robot of a reader that was there before the fleet: a user's rviz or recorder
subscribed to ``/rK/joint_states`` got nothing from that robot, since a robot publishes
only to matched readers. It lasted until a new super client joined the servers; until
then that was the ros2 daemon the launch restarts after every robot's per-motor table,
20-30 s at 10 robots x 30 motors (docs/benchmarks.md, docs/ros.md). Such a join right
after every robot's start ended the wait there in every run measured; at 30 robots x 6
motors not always (some robots then still wait for the daemon).

How: the process imports rclpy, says ``READY_LINE`` on stdout and waits, with no
participant, for SIGUSR1, which the launch sends once every robot has logged its start
(or ended) and this line has come. It then joins as a super client (the environment's
``ROS_DISCOVERY_SERVER`` and ``ROS_SUPER_CLIENT=TRUE``), stays until its graph has every
robot's ``joint_states`` writer (the servers have then taken it in and sent it the fleet)
or ``STAY_S`` has passed, leaves, says so in one line on stderr (with the process's CPU
time; the launch shows it) and exits 0. SIGINT or SIGTERM: status 0, at once while it
waits, and once joined as soon as the rclpy call under way returns, saying it stopped.
It gets SIGTERM when the process that started it ends (``PR_SET_PDEATHSIG``, as the
fleet's host), so a killed launch leaves no nudge behind. An error of rclpy or Fast DDS
(a bad profile) exits 1 with its traceback.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: the launch's Ctrl-C may come mid-import (one before
    # the interpreter gets here still ends the process by SIGINT)
    import os
    import signal

    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))

import argparse
import math
import resource
import signal
import sys
import time

from .host import follow_parent
from .robots import namespaces as fleet_namespaces

#: What the process says on stdout once SIGUSR1 may come.
READY_LINE = "servo_sim_fleet_nudge: ready"
#: The signal that has it join.
JOIN_SIGNAL = signal.SIGUSR1
#: The longest it stays once joined, seeing not every robot.
STAY_S = 10.0
#: The node's name: hidden (a leading underscore) from ``ros2 node list``.
NODE_NAME = "_servo_sim_fleet_nudge"
_STOP = {signal.SIGINT, signal.SIGTERM}
_POLL_S = 0.05


def missing(node, namespaces: list[str]) -> list[str]:
    """The namespaces whose ``joint_states`` writer ``node``'s graph has not (yet)."""
    return [ns for ns in namespaces if not node.count_publishers(f"/{ns}/joint_states")]


def nudge(namespaces: list[str], stay_s: float = STAY_S) -> str:
    """Join as a participant of this environment, stay until every robot's joint_states
    writer is in the graph (or ``stay_s``, or a stop signal, which must be blocked),
    leave; the line that says how it went."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    start = time.monotonic()
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = rclpy.create_node(NODE_NAME, context=context)
        left = missing(node, namespaces)
        while left and time.monotonic() - start < stay_s:
            if signal.sigtimedwait(_STOP, _POLL_S) is not None:
                return "stopped before seeing every robot"
            left = missing(node, left)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    took = time.monotonic() - start
    if left:
        return (f"joined and left after {took:.2f} s without seeing the joint_states of "
                f"{', '.join('/' + ns for ns in left)}")
    return f"joined, saw every robot's joint_states writer and left after {took:.2f} s"


def main(argv: list[str] | None = None) -> int:
    """The command: wait for ``JOIN_SIGNAL``, nudge, one line; 0 but for a usage error
    (2) or rclpy's (1)."""
    parser = argparse.ArgumentParser(prog="servo_sim_fleet_nudge",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("namespaces", nargs="+", help="the robots' namespaces")
    parser.add_argument("--stay", type=float, default=STAY_S, metavar="S",
                        help=f"the longest to stay once joined (default {STAY_S} s)")
    options = parser.parse_args(argv)
    try:  # the fleet launch's own check of the robots' names
        fleet_namespaces("1", " ".join(options.namespaces))
    except ValueError as error:
        parser.error(str(error))
    if not (math.isfinite(options.stay) and options.stay >= 0):
        parser.error(f"--stay {options.stay}: must be a finite number of seconds, 0 or more")
    signal.pthread_sigmask(signal.SIG_BLOCK, {JOIN_SIGNAL, *_STOP})
    if not follow_parent():  # (SIGTERM when it ends, taken by sigwait below)
        return 0
    import rclpy  # noqa: F401 - before the ready line: the join is then quick

    print(READY_LINE, flush=True)
    if signal.sigwait({JOIN_SIGNAL, *_STOP}) != JOIN_SIGNAL:
        return 0
    how = nudge(options.namespaces, options.stay)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"servo_sim_fleet_nudge: {how} ({usage.ru_utime + usage.ru_stime:.2f} s of CPU)",
          file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
