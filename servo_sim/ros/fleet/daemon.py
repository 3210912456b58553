"""Restart this domain's ros2 daemon with this process's environment:
``python -m servo_sim.ros.fleet.daemon``, what ``fleet.launch.py`` runs (with the discovery
servers' super-client environment) once every robot's table is complete.

One process stops and starts the daemon with ros2cli's own functions, and does it again
while the stop or the start fails: ``ros2 daemon stop`` then ``ros2 daemon start`` as two
commands can see "not running", then "already running" (the old daemon is still going
down), and leave a daemon that is not the servers' super client and lists nothing of the
fleet. A daemon that is going down can also hold its port without answering on it for a
few seconds, so the tries go on for :data:`PATIENCE_S` (each may include ros2cli's own
waits of :data:`TIMEOUT_S`). The process ends with the launch that started it.
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
