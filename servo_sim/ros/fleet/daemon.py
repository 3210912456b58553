"""Restart this domain's ros2 daemon with this process's environment:
``python -m servo_sim.ros.fleet.daemon``, what ``fleet.launch.py`` runs (with the discovery
servers' super-client environment) once every robot's table is complete.

One process for the stop and the start, with ros2cli's own functions, and again while a
daemon is found running after the stop: ``ros2 daemon stop`` then ``ros2 daemon start``
can find "not running", then "already running" on a busy machine (seen at 30 x 6), which
leaves a daemon that is not the servers' super client and lists nothing of the fleet.
Tried again for :data:`PATIENCE_S` (a try may add ros2cli's own waits, 10 s each): a
10 x 6 fleet launched right after another one had ended found the daemon's port taken,
with no daemon answering on it, at each of 5 tries over 2.3 s (1 benchmark run in 6),
and its tools then listed nothing for 16 s. It ends with the launch that started it.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a Ctrl-C reaches the whole launch, this process too,
    import os  # maybe mid-import; it ends quietly (the launch stops the daemon as it ends)
    import signal

    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))

import argparse
import sys
import time

from .host import follow_parent

#: How long to try stop-then-start, and the pause between two tries.
PATIENCE_S = 20.0
PAUSE_S = 0.5
#: ros2cli's own wait for a daemon to stop or to be ready (its verbs' figure).
TIMEOUT_S = 10.0


def restart(patience_s: float = PATIENCE_S) -> bool:
    """Stop the domain's daemon if one runs, and start one that inherits this process's
    environment, trying again for up to ``patience_s``; True once this process started
    it."""
    from ros2cli.node.daemon import shutdown_daemon, spawn_daemon

    args = argparse.Namespace()
    deadline = time.monotonic() + patience_s
    while True:
        try:
            shutdown_daemon(args, timeout=TIMEOUT_S)
        except RuntimeError:  # it did not stop within TIMEOUT_S: try again
            pass
        else:
            if spawn_daemon(args, timeout=TIMEOUT_S):
                return True
        if time.monotonic() + PAUSE_S > deadline:
            return False
        time.sleep(PAUSE_S)


def main() -> int:
    """The command: one line saying what happened; status 1 if no daemon of ours runs.
    It ends with the process that started it (a killed launch: no daemon started after
    it, as a super client of servers that are gone)."""
    if not follow_parent():
        return 1
    if restart():
        print("ros2 daemon restarted with this environment", flush=True)
        return 0
    print(f"ros2 daemon: not restarted in {PATIENCE_S:g} s (another one kept starting, or "
          "did not stop, or its port stayed taken); `ros2 daemon stop` and start it again "
          "with the environment the launch logged",
          file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
