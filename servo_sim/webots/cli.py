"""``servo-sim controller`` (and ``python -m servo_sim.webots``): a Webots Python
controller against the config's motors (CONFIG: a YAML config or a Webots
``.wbt``/``.proto`` file, read by :mod:`servo_sim.load`).

Below ``servo_sim.cli``, which registers the verb (:func:`add_commands`). The session
and the runner are imported when the verb runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..command import CliError, run
from ..load import config_argument, load_arguments, on_physics, physics_options


def cmd_controller(args: argparse.Namespace) -> int:
    """Run a Webots Python controller script against the config's motors."""
    from .runner import run_controller
    from .session import Session, SessionError

    script = Path(args.script)
    if not script.is_file():
        raise CliError(f"{script}: no such controller script")
    loaded = load_arguments(args)
    try:
        session = Session(on_physics(loaded, args.physics, args.model),
                          robot_name=loaded.robot_name,
                          world_path=loaded.world_path, unsimulated=loaded.unsimulated,
                          unread=loaded.unread,
                          duration=args.duration, real_time_factor=args.real_time_factor,
                          csv_path=args.csv)
    except SessionError as exc:
        raise CliError(str(exc)) from None
    return run_controller(script, session, args.controller_args)


def add_commands(sub: Any) -> None:
    """The ``controller`` subcommand of ``servo-sim``."""
    ctl = sub.add_parser("controller", help="run a Webots Python controller script",
                         description="Run a Webots Python controller (from controller "
                         "import Robot, ...) unchanged against the config's motors. "
                         "Arguments after '--' go to the script's sys.argv.")
    ctl.add_argument("script", help="the controller, e.g. my_controller.py")
    config_argument(ctl)
    physics_options(ctl)
    ctl.add_argument("--duration", type=float, default=None,
                     help="simulated seconds (rounded up to whole basic time steps), "
                          "then step() returns -1 (default: no end)")
    ctl.add_argument("--real-time-factor", type=float, default=None,
                     help="1 = wall-clock pace, 0 = as fast as possible (default: 0 "
                          "simulated, 1 on real hardware)")
    ctl.add_argument("--csv", help="write every step to this CSV file (as 'run' does)")
    ctl.set_defaults(func=cmd_controller, controller_args=[])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m servo_sim.webots SCRIPT.py [CONFIG] [options]``: ``servo-sim controller``
    (``argv`` without the verb; default: ``sys.argv[1:]``)."""
    parser = argparse.ArgumentParser(prog="servo-sim")
    add_commands(parser.add_subparsers(dest="cmd", required=True))
    return run(parser, ["controller", *(sys.argv[1:] if argv is None else argv)])
