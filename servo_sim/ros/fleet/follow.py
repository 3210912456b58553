"""``python -m servo_sim.ros.fleet.follow PID COMMAND [ARG ...]``: become COMMAND (``exec``, the
same process) set to get SIGTERM when its parent, process PID, ends.

The fleet launch starts its discovery servers (and, with ``fork:=false``, its robots)
through it: a ``ros2 launch`` that is killed (SIGKILL, or a SIGTERM it does not pass on)
leaves its children running, and a server is not Python of ours that could follow its
parent itself, as the fleet's host and nudge do. ``PR_SET_PDEATHSIG`` is kept across
``exec`` (for a program that is not set-user-ID). No ROS import: a few tens of
milliseconds before the command starts.
"""

from __future__ import annotations

import os
import sys

from .host import follow_parent

USAGE = "usage: python -m servo_sim.ros.fleet.follow PID COMMAND [ARG ...]"


def command(parent: int, argv: list[str]) -> list[str]:
    """The command line that runs ``argv`` following process ``parent``."""
    return [sys.executable, "-m", __name__, str(parent), *argv]


def main(argv: list[str] | None = None) -> int:
    """Exec COMMAND, following PID; 1 if PID has ended already, 2 on a bad command line
    (or a COMMAND that cannot be run: its error)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or not args[0].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    if not follow_parent(int(args[0])):
        print(f"follow: process {args[0]} ended before {args[1]} started", file=sys.stderr)
        return 1
    try:
        os.execvp(args[1], args[1:])
    except OSError as exc:
        print(f"follow: {args[1]}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0  # (not reached)


if __name__ == "__main__":
    sys.exit(main())
