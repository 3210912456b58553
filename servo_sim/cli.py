"""``servo-sim``: run and tune the motor model without ROS.

    servo-sim run [CONFIG] [--duration S] [--command arm.position=1.0[@T] ...] [--csv F]
                  [--physics mujoco --model so101.urdf]
    servo-sim step-response [CONFIG] --motor M --target X [--plot out.png] [--csv F]
    servo-sim check [CONFIG]
    servo-sim controller SCRIPT.py [CONFIG] [--duration S] [--real-time-factor F]
                         [--csv F] [-- ARGS...]
    servo-sim profiles [NAME]
    servo-sim record CONFIG --motor M [--out rec.csv]
    servo-sim replay RECORDING... (--servo NAME | --config FILE [--motor M]) [--plot PNG]
    servo-sim identify RECORDING... --servo NAME [--validate RECORDING...] [--fit FIELD ...]

CONFIG defaults to the package's ``config/servo_sim.yaml``; it may also be a Webots
world or PROTO file (``.wbt``, ``.proto``: its motors are imported). Errors (a bad
config, an unknown motor, a rejected command) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .analysis import step_metrics
from .command import CliError
from .command import run as run_command
from .identification.cli import add_commands as add_identification_commands
from .load import Loaded, load_arguments, on_physics, physics_options
from .load import config_argument as _config_argument
from .model import Command
from .model.commands import MOTOR_COMMANDS, MotorCommand
from .plotting import PLOT_EXTRA, save_step_response
from .record import csv_columns, csv_row, run_steps
from .runtime import Runtime, StartError
from .webots.cli import add_commands as add_webots_commands

#: ``--command`` keys: the command table's row each sends.
COMMANDS: dict[str, MotorCommand] = {c.key: c for c in MOTOR_COMMANDS if c.key}


@dataclass(frozen=True)
class TimedCommand:
    """One ``--command``: at ``at`` s, send ``key``'s command to ``motor`` with
    ``values``."""

    motor: str
    key: str
    values: list[float]
    at: float = 0.0

    @classmethod
    def parse(cls, text: str) -> TimedCommand:
        """Parse ``MOTOR.KEY=VALUE[,VALUE...][@SECONDS]``."""
        head, eq, tail = text.partition("=")
        motor, dot, key = head.rpartition(".")
        if not eq or not dot or not motor:
            raise CliError(f"--command {text!r}: expected MOTOR.KEY=VALUE[@SECONDS]")
        if key not in COMMANDS:
            raise CliError(f"--command {text!r}: unknown key {key!r} (known: "
                           + ", ".join(COMMANDS) + ")")
        value_text, at_sign, at_text = tail.partition("@")
        try:
            values = [float(v) for v in value_text.split(",")]
            at = float(at_text) if at_sign else 0.0
        except ValueError:
            raise CliError(f"--command {text!r}: values must be numbers") from None
        arity = len(COMMANDS[key].args)
        if len(values) != arity:
            raise CliError(f"--command {text!r}: {key} takes {arity} value(s)")
        if not math.isfinite(at) or at < 0:
            raise CliError(f"--command {text!r}: the time after '@' must be >= 0")
        return cls(motor, key, values, at)

    def send(self, runtime: Runtime) -> None:
        """Through the runtime's check, as every other way to command a motor."""
        runtime.command(self.motor, COMMANDS[self.key], *self.values)


def cmd_run(args: argparse.Namespace) -> int:
    """Run a config on the hardware it names (the model by default), applying timed
    commands, printing a live table and optional CSV."""
    config = on_physics(load_arguments(args), args.physics, args.model)
    runtime = Runtime.open(config, real_time_factor=args.real_time_factor)
    try:
        commands = sorted((TimedCommand.parse(c) for c in args.command), key=lambda c: c.at)
        for c in commands:
            runtime.motor(c.motor)  # unknown motors fail before anything runs
        _start(runtime)
        _run(args, runtime, commands)
    finally:
        runtime.close()
    return 0


def _start(runtime: Runtime) -> None:
    """Start the hardware (a bus may miss a packet as it opens: tried again, but a dead
    bus fails in about a second), or the CLI's error."""
    try:
        runtime.start()
    except StartError as exc:
        raise CliError(str(exc)) from None


def _run(args: argparse.Namespace, runtime: Runtime, commands: list[TimedCommand]) -> None:
    out = sys.stdout
    steps = run_steps(args.duration, runtime.step_ms)
    writer = None
    if args.csv:
        handle = open(args.csv, "w", newline="")
        writer = csv.writer(handle)
        writer.writerow(csv_columns(runtime.motor_names))
    motors = runtime.motors
    if not args.quiet:
        names = runtime.motor_names
        width = max(24, *(len(n) + 2 for n in names))
        header = "time [s] " + "".join(f"| {n:<{width}}" for n in names)
        units = "         " + "".join(f"| {'pos':>7} {'vel':>7} {'force':>7} "
                                      .ljust(width + 2) for _ in names)
        out.write(header.rstrip() + "\n" + units.rstrip() + "\n")
    pending = list(commands)
    next_row = 0.0  # a row at the first step at or after each --print-every mark
    try:
        for k in range(steps + 1):
            now = runtime.time
            while pending and pending[0].at <= now + 1e-12:
                pending.pop(0).send(runtime)
            if writer:
                writer.writerow(csv_row(now, runtime.readings))
            if not args.quiet and (now >= next_row - 1e-9 or k == steps):
                while next_row <= now + 1e-9:
                    next_row += args.print_every
                cells = "".join(f"| {m.position:7.3f} {m.velocity:7.3f} {m.motor_force:7.3f} "
                                .ljust(width + 2) for m in motors)
                out.write(f"{now:8.3f} {cells}".rstrip() + "\n")
                out.flush()
            if k < steps:
                runtime.cycle()
    finally:
        if writer:
            handle.close()
    if not args.quiet:
        out.write("energy [J]: " + ", ".join(f"{m.name} {m.energy:.3f}" for m in motors)
                  + "\n")


def cmd_step_response(args: argparse.Namespace) -> int:
    """Step one motor to a target and report rise, overshoot, settling, error, peak force."""
    runtime = Runtime.open(load_arguments(args).config)
    try:
        motor = runtime.motor(args.motor)
        start = motor.position
        if args.target == start:
            raise CliError(f"--target {args.target} equals the start position of "
                           f"{motor.name!r}")
        _start(runtime)
        start = motor.position  # a real device: where the first read found it
        runtime.command(motor.name, Command.POSITION, args.target)
        target = motor.target_position  # after the multiplier and the soft limits
        steps = run_steps(args.duration, runtime.step_ms)
        record = np.empty((steps + 1, 4))
        record[0] = (0.0, motor.position, motor.velocity, motor.motor_force)
        t0 = runtime.time
        for k in range(1, steps + 1):
            runtime.cycle()
            record[k] = (runtime.time - t0, motor.position, motor.velocity,
                         motor.motor_force)
    finally:
        runtime.close()
    t, y, v, f = record.T
    metrics = step_metrics(t, y, start, target, f, band=args.band)
    unit = "rad" if motor.get_type() == "rotational" else "m"
    force_unit = "N*m" if motor.get_type() == "rotational" else "N"

    def fmt(x: float, u: str) -> str:
        return "not reached" if math.isnan(x) else f"{x:.4g} {u}"

    print(f"step response of {motor.name!r}: {start:g} -> {target:g} {unit} "
          f"over {args.duration:g} s (dt = {runtime.step_ms} ms)")
    print(f"  rise time (10-90 %)   {fmt(metrics.rise_time, 's')}")
    print(f"  overshoot             {metrics.overshoot_percent:.3g} %")
    print(f"  settling time ({metrics.band:.0%})    {fmt(metrics.settling_time, 's')}")
    print(f"  steady-state error    {metrics.steady_state_error:.3g} {unit}")
    print(f"  peak force            {metrics.peak_force:.4g} {force_unit}")
    if args.csv:
        header = "time,position,velocity,motor_force"
        np.savetxt(args.csv, record, delimiter=",", header=header, comments="")
    if args.plot:
        try:
            save_step_response(args.plot, motor.name, target, t, y, v, f, unit, force_unit)
        except ImportError:
            raise CliError(f"--plot needs matplotlib: {PLOT_EXTRA}") from None
        print(f"  plot written to {args.plot}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate a config and summarise its motors (and their devices)."""
    loaded = load_arguments(args)
    with Runtime.open(loaded.config) as runtime:  # the whole config checked, not started
        _summarise(loaded, runtime)
    return 0


def _summarise(loaded: Loaded, runtime: Runtime) -> None:
    cfg = runtime.config
    robot = f"robot {loaded.robot_name!r}, " if loaded.world_path else ""
    battery = f", battery {cfg.battery.energy:g}/{cfg.battery.capacity:g} J" \
        if cfg.battery is not None else ""
    passive = sum(m.passive for m in cfg.motors)
    joints = f", {passive} passive joint(s)" if passive else ""
    print(f"{cfg.source}: OK, {robot}{len(runtime) - passive} motor(s){joints}, "
          f"{cfg.physics} physics, "
          f"dt = {cfg.basic_time_step_ms} ms{battery}")
    for m, mc in zip(runtime.motors, cfg.motors, strict=True):
        coupled = f", coupled with {', '.join(m.coupled)}" if len(m.coupled) > 1 else ""
        devices = "".join(f", {kind} {name!r}" for kind, name in (
            ("position sensor", mc.position_sensor_name), ("brake", mc.brake_name)) if name)
        if mc.position_sensor_name == "":
            devices += ", no position sensor"
        if mc.passive:
            print(f"  {m.name}: {m.get_type()}, passive joint (no motor){devices}")
            continue
        print(f"  {m.name}: {m.get_type()}, max velocity {m.get_max_velocity():g}, "
              f"max force {m.get_max_force():g}, PID {m.get_control_pid()}{coupled}{devices}")
    if loaded.unsimulated:
        print("  not simulated (a handle that raises when used): " + ", ".join(
            f"{name!r} ({what})" for name, what in loaded.unsimulated.items()))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="servo-sim", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)

    run = sub.add_parser("run", help="run a config on its hardware (the model by default) "
                                     "and print a live table")
    _config_argument(run)
    run.add_argument("--duration", type=float, default=2.0, help="simulated seconds (2)")
    run.add_argument("--command", action="append", default=[], metavar="M.KEY=V[@T]",
                     help="e.g. arm.position=1.0, arm.velocity=2@0.5, arm.control_pid=20,0,1 "
                          "(keys: " + ", ".join(COMMANDS) + ")")
    run.add_argument("--print-every", type=float, default=0.1, help="table row period, s")
    run.add_argument("--csv", help="write every step to this CSV file")
    run.add_argument("--real-time-factor", type=float, default=None,
                     help="1 = wall-clock pace, 0 = as fast as possible (the default for "
                          "the model; real hardware runs at 1)")
    run.add_argument("--quiet", action="store_true", help="no table")
    physics_options(run)
    run.set_defaults(func=cmd_run)

    step = sub.add_parser("step-response", help="step one motor and report its figures")
    _config_argument(step)
    step.add_argument("--motor", required=True)
    step.add_argument("--target", type=float, required=True, help="target position")
    step.add_argument("--duration", type=float, default=2.0, help="simulated seconds (2)")
    step.add_argument("--band", type=float, default=0.02, help="settling band (0.02)")
    step.add_argument("--plot", help="write a PNG of position, velocity and force")
    step.add_argument("--csv", help="write the trajectory to this CSV file")
    step.set_defaults(func=cmd_step_response)

    check = sub.add_parser("check", help="validate a config")
    _config_argument(check)
    check.set_defaults(func=cmd_check)

    add_webots_commands(sub)  # controller
    add_identification_commands(sub)  # profiles, record, identify
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``servo-sim`` command."""
    return run_command(build_parser(), argv)




if __name__ == "__main__":
    sys.exit(main())
