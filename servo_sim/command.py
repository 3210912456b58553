"""What every ``servo-sim`` verb shares, below the modules that define the verbs
(``cli.py``, ``identification/cli.py``, ``webots/cli.py``): the user error, the packaged
default config, and running a parsed command line (the common options' checks; a user
error printed as one line with exit status 2). ROS-free.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from . import resources
from .model import ConfigError


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def default_config_path() -> Path:
    """The packaged default config (see :mod:`servo_sim.resources`)."""
    try:
        return resources.default_config_path()
    except FileNotFoundError as exc:
        raise CliError(f"{exc}; pass a CONFIG file") from None


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``) with ``parser`` (its subcommand in
    ``cmd``, its handler in ``func``) and run the handler: ``servo-sim``'s main."""
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if argv[:1] == ["controller"] and "--" in argv:  # the rest is the controller's
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if args.cmd == "controller":
        args.controller_args = script_args
    logging.basicConfig(level=logging.WARNING, format="servo-sim: warning: %(message)s")
    for name in ("duration", "print_every", "band"):
        value = getattr(args, name, None)
        if value is not None and not (math.isfinite(value) and value > 0):
            print(f"servo-sim: error: --{name.replace('_', '-')} must be > 0", file=sys.stderr)
            return 2
    factor = getattr(args, "real_time_factor", None)
    if factor is not None and not (math.isfinite(factor) and factor >= 0):
        print("servo-sim: error: --real-time-factor must be >= 0", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (CliError, ConfigError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"servo-sim: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
