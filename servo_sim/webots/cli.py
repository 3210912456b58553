"""``servo-sim controller`` (and ``python -m servo_sim.webots``): a Webots Python
controller against the config's motors; with the CONFIG argument every ``servo-sim``
verb that reads a config takes (a YAML config or a Webots ``.wbt``/``.proto`` file).

Below ``servo_sim.cli``, which registers the verb (:func:`add_commands`) and reads its
CONFIG arguments with :func:`load`. The world reader, the session and the runner are
imported when a verb needs them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..command import CliError, default_config_path, run
from ..model import SimulationConfig, load_config


@dataclass(frozen=True)
class Loaded:
    """A CONFIG argument read: the config, and the robot's name and world file when it
    is a Webots file."""

    config: SimulationConfig
    robot_name: str = "robot"
    world_path: str = ""
    #: the world's devices servo_sim does not simulate: name -> Webots type, where
    unsimulated: dict[str, str] = field(default_factory=dict)
    #: PROTOs inside the robot that could not be read: name -> first instance
    unread: dict[str, str] = field(default_factory=dict)


def load(args: argparse.Namespace) -> Loaded:
    """Read CONFIG: a YAML config (the packaged one by default) or a Webots file (its
    ``webots://`` PROTOs in ``--webots-home``)."""
    from .world import is_webots_file, load_world

    if args.config and is_webots_file(args.config):
        world = load_world(args.config, args.webots_home, args.strict_protos)
        return Loaded(world.config, world.robot_name, world.path, world.unsimulated,
                      world.unread)
    return Loaded(load_config(args.config if args.config else default_config_path()))


def cmd_controller(args: argparse.Namespace) -> int:
    """Run a Webots Python controller script against the config's motors."""
    from .runner import run_controller
    from .session import Session, SessionError

    script = Path(args.script)
    if not script.is_file():
        raise CliError(f"{script}: no such controller script")
    loaded = load(args)
    try:
        session = Session(loaded.config, robot_name=loaded.robot_name,
                          world_path=loaded.world_path, unsimulated=loaded.unsimulated,
                          unread=loaded.unread,
                          duration=args.duration, real_time_factor=args.real_time_factor,
                          csv_path=args.csv)
    except SessionError as exc:
        raise CliError(str(exc)) from None
    return run_controller(script, session, args.controller_args)


def config_argument(parser: argparse.ArgumentParser) -> None:
    """CONFIG and --webots-home, as every command that reads a config takes them."""
    parser.add_argument("config", nargs="?",
                        help="config file, YAML, .wbt or .proto (default: the packaged one)")
    parser.add_argument("--webots-home", metavar="DIR",
                        help="the Webots installation a world's webots:// PROTOs are read "
                             "from (default: $WEBOTS_HOME, else Webots' usual places); "
                             "never downloaded")
    parser.add_argument("--strict-protos", action="store_true",
                        help="refuse a Webots file in which a PROTO inside the robot cannot "
                             "be read (default: that part is left out with a warning)")


def add_commands(sub: Any) -> None:
    """The ``controller`` subcommand of ``servo-sim``."""
    ctl = sub.add_parser("controller", help="run a Webots Python controller script",
                         description="Run a Webots Python controller (from controller "
                         "import Robot, ...) unchanged against the config's motors. "
                         "Arguments after '--' go to the script's sys.argv.")
    ctl.add_argument("script", help="the controller, e.g. my_controller.py")
    config_argument(ctl)
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
