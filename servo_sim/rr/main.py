"""``servo-sim-rr CONFIG [--port P] [--robotraconteur-OPTION=VALUE ...]``: the motors of a
config as Robot Raconteur servos.

Runs the hardware the config names (the model by default, or a real bus) at the
runtime's pace, one ``com.robotraconteur.servo.Servo`` service per motor, until SIGINT
or SIGTERM; then the node shuts down (clients see the disconnect) and real devices
torque off. Exit status 0 on a signal, 2 with one line on a bad config or option.
Robot Raconteur's own node options (``--robotraconteur-*``: TLS, node name, discovery)
go to its node setup.
"""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from ..command import CliError
from ..hardware.registry import PluginError
from ..load import load
from ..model import ConfigError
from ..runtime import Runtime
from .door import serve
from .security import rr_options


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="servo-sim-rr", description="Serve every motor of CONFIG as a Robot "
        "Raconteur com.robotraconteur.servo.Servo (one service per motor, named by its "
        "ROS name).", epilog="Robot Raconteur's own node options (--robotraconteur-"
        "load-tls=true, --robotraconteur-require-tls=true, --robotraconteur-tcp-ipv4-"
        "discovery=true ...) are passed to its node setup.")
    p.add_argument("config", nargs="?", help="config file: YAML, a Webots .wbt or .proto "
                                             "(default: the packaged one)")
    p.add_argument("--port", type=int, default=62222,
                   help="TCP port (default 62222; 0: a free one, printed)")
    p.add_argument("--users", type=Path, help="Robot Raconteur users file: password "
                   "authentication (lines 'USER MD5-OF-PASSWORD objectlock')")
    p.add_argument("--listen-all", action="store_true",
                   help="listen on every interface, not only loopback (see "
                   "docs/robot-raconteur.md for transport security) and announce the "
                   "node for discovery")
    p.add_argument("--real-time-factor", type=float, default=1.0,
                   help="simulated seconds per wall second (the model only; default 1)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    options, argv = rr_options(list(sys.argv[1:] if argv is None else argv))
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="servo-sim-rr: %(levelname)s: %(message)s")
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    try:
        if not (0 <= args.port <= 65535):
            raise CliError(f"--port {args.port}: must be 0 to 65535")
        if not (math.isfinite(args.real_time_factor) and args.real_time_factor >= 0):
            raise CliError("--real-time-factor must be finite and >= 0")
        if args.users is not None and not args.users.is_file():
            raise CliError(f"--users {args.users}: no such file")
        runtime = Runtime.open(load(args.config).config,
                               real_time_factor=args.real_time_factor)
    except (CliError, ConfigError, PluginError, OSError, ValueError) as exc:
        # (ValueError: a real-time factor real hardware refuses)
        print(f"servo-sim-rr: error: {exc}", file=sys.stderr)
        return 2
    if args.listen_all and args.users is None:
        logging.warning("--listen-all without --users: anyone who reaches this machine may "
                        "command the motors (see docs/robot-raconteur.md)")
    try:
        runtime.start(required=False)  # a device that does not answer: the cycle retries
        with serve(runtime, args.port, listen_all=args.listen_all, users=args.users,
                   options=options) as (door, port):
            host = "HOST" if args.listen_all else "localhost"
            print(f"servo-sim-rr: {len(door.servos)} motor(s) on hardware "
                  f"{runtime.plugin_name!r} ({runtime.hardware_state}), node "
                  f"{door.node.NodeName!r}, "
                  f"{'password login' if args.users else 'no login'}:", flush=True)
            for servo in door.servos:
                print(f"  {servo.motor}: {door.url(port, servo, host)}", flush=True)
            while not stop:
                door.publish(runtime.cycle())
    except ValueError as exc:  # Robot Raconteur refused the node (port, name, option)
        print(f"servo-sim-rr: error: {exc}", file=sys.stderr)
        return 2
    finally:
        runtime.close()  # real devices: torque off
    return 0


if __name__ == "__main__":
    sys.exit(main())
