"""Restart this domain's ros2 daemon with this process's environment:
``python -m servo_sim.ros.daemon``, what ``fleet.launch.py`` runs (with the discovery
servers' super-client environment) once every robot's table is complete.

One process for the stop and the start, with ros2cli's own functions, and again while a
daemon is found running after the stop: ``ros2 daemon stop`` then ``ros2 daemon start``
can find "not running", then "already running" on a busy machine (seen at 30 x 6), which
leaves a daemon that is not the servers' super client and lists nothing of the fleet.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a Ctrl-C reaches the whole launch, this process too,
    import os  # maybe mid-import; it ends quietly (the launch stops the daemon as it ends)
    import signal

    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))

import argparse
import sys
import time

#: Tries of stop-then-start, and the pause between two.
ATTEMPTS = 5
PAUSE_S = 0.5
#: ros2cli's own wait for a daemon to stop or to be ready (its verbs' figure).
TIMEOUT_S = 10.0


def restart(attempts: int = ATTEMPTS) -> bool:
    """Stop the domain's daemon if one runs, and start one that inherits this process's
    environment; True once this process started it."""
    from ros2cli.node.daemon import shutdown_daemon, spawn_daemon

    args = argparse.Namespace()
    for attempt in range(attempts):
        if attempt:
            time.sleep(PAUSE_S)
        try:
            shutdown_daemon(args, timeout=TIMEOUT_S)
        except RuntimeError:  # it did not stop within TIMEOUT_S: try again
            continue
        if spawn_daemon(args, timeout=TIMEOUT_S):
            return True
    return False


def main() -> int:
    """The command: one line saying what happened; status 1 if no daemon of ours runs."""
    if restart():
        print("ros2 daemon restarted with this environment", flush=True)
        return 0
    print(f"ros2 daemon: not restarted in {ATTEMPTS} tries (another one kept starting, or "
          "did not stop); `ros2 daemon stop` and start it again with the environment the "
          "launch logged",
          file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
