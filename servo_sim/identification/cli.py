"""``servo-sim profiles``, ``record``, ``replay`` and ``identify``: from a servo's
datasheet to a model fitted to the servo itself (see docs/sim-to-real.md).

    servo-sim profiles [NAME]
    servo-sim record CONFIG --motor M [--out rec.csv] [--amplitude RAD]
                     (CONFIG: YAML, or a Webots .wbt/.proto: servo_sim.load)
    servo-sim replay RECORDING... (--servo NAME | --config FILE [--motor M])
                     [--set FIELD=VALUE ...] [--step-ms MS] [--plot PNG]
    servo-sim identify RECORDING... (--servo NAME | --config FILE [--motor M])
                       [--validate RECORDING...] [--set FIELD=VALUE ...] [--fit FIELD ...]
                       [--step-ms MS] [--out fitted.yaml] [--plot fit.png]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..load import config_argument, load, load_arguments, webots_options
from ..model.config import flatten, motor_to_dict
from ..model.profiles import load_profiles, profile_fields, servo_profile
from .fit import (
    BENCH_FIT,
    DEFAULT_FIT,
    FITTABLE,
    MAX_ITERATIONS,
    PATTERN_RUNS,
    UNDETERMINED,
    Model,
    fitted_config,
    identify,
    read_recording,
    write_recording,
)
from .motor_constants import CONSTANTS
from .plots import plot_replays
from .recordings import Recording
from .replay import MRAD, motor_fields, replay


def cmd_profiles(args: argparse.Namespace) -> int:
    """List the servo profiles, or one profile's fields with their sources."""
    profiles = load_profiles()
    if args.name is None:
        print(f"{'servo':<16} {'vendor':<8} {'control':<10} {'stall N*m':>9} "
              f"{'no load rad/s':>13} {'at V':>5}")
        for name, p in sorted(profiles.items()):
            a = p.actuator
            print(f"{name:<16} {p.vendor:<8} {p.control:<10} {a['stall_torque']:>9.4g} "
                  f"{a['no_load_speed']:>13.4g} {a['rated_voltage']:>5.3g}")
        return 0
    servo_profile_or_error(args.name)
    p = servo_profile(args.name)
    print(f"{p.name} ({p.vendor}, {p.control} firmware)")
    print(f"  model number {p.model_number}\n      {p.sources.get('model_number')}")
    for name, value in flatten(p.motor).items():
        print(f"  {name} = {value}\n      {p.sources.get(name, '(no source)')}")
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    """Record one motor's response to the excitation through the config's hardware."""
    from .recorder import record

    config = load_arguments(args).config
    if args.motor not in [m.name for m in config.motors]:
        raise ValueError(f"{args.config}: no motor {args.motor!r}")
    recording = record(config, args.motor, args.amplitude)
    write_recording(args.out, recording)
    print(f"recorded {args.motor!r} through {config.hardware['plugin']!r}: "
          f"{len(recording.time)} samples over {recording.time[-1]:.2f} s, range "
          f"{recording.span:.4g} rad -> {args.out}")
    return 0


def _base(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The motor's own fields (nested): a config's motor (``--motor``, or its only one)
    or a servo profile; and what it is, for the output."""
    if args.config:
        config = load(args.config, webots_home=args.webots_home,
                      strict_protos=args.strict_protos).config
        motors = {m.name: m for m in config.motors if not m.passive}
        name = args.motor
        if name is None and len(motors) == 1:
            name = next(iter(motors))
        if name not in motors:
            raise ValueError(f"{args.config}: no motor {name!r} (give --motor: "
                             f"{', '.join(motors)})" if name else
                             f"{args.config}: {len(motors)} motors: give --motor "
                             f"({', '.join(motors)})")
        fields = motor_to_dict(motors[name])
        for key in ("name", "position", "min_position", "max_position"):
            fields.pop(key, None)
        return fields, f"motor {name!r} of {args.config}"
    if args.servo:
        servo_profile_or_error(args.servo)
        return {"servo": args.servo}, f"servo profile {args.servo}"
    raise ValueError(f"{args.cmd} needs --servo NAME or --config FILE [--motor M]")


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--set FIELD=VALUE`` fields, by dotted name (values read as YAML)."""
    fields = profile_fields("-", args.settings)
    fields.pop("servo")
    return flatten(fields)


def servo_profile_or_error(name: str) -> None:
    """ValueError naming the known profiles where ``name`` is none of them."""
    profiles = load_profiles()
    if name not in profiles:
        raise ValueError(f"no servo profile {name!r} (known: {', '.join(sorted(profiles))})")


def _model(args: argparse.Namespace) -> tuple[Model, str]:
    """The motor to fit: a config's motor or a servo profile, with the --set fields."""
    fields, what = _base(args)
    return (Model(motor_fields(fields, _settings(args)), args.step_ms, args.velocity,
                  args.acceleration), what)


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay recordings on a motor; print each one's error and the mean."""
    recordings = [read_recording(path) for path in args.recording]
    fields, what = _base(args)
    settings = _settings(args)
    print(f"replaying {len(recordings)} recording(s) on {what}, step {args.step_ms} ms")
    replays = []
    for recording in recordings:
        result = replay(recording, fields, settings, args.step_ms)
        replays.append(result)
        print(f"  {recording.name}: {len(recording.time)} samples over "
              f"{recording.time[-1]:.2f} s, {bench_text(recording)}: "
              f"MAE {MRAD * result.mae:.1f} mrad, RMS {MRAD * result.rms:.1f} mrad")
    mean = sum(r.mae for r in replays) / len(replays)
    print(f"mean MAE {MRAD * mean:.1f} mrad over {len(replays)} recordings")
    if args.plot:
        try:
            plot_replays(args.plot, replays, f"servo_sim replay: {what}")
        except ImportError:
            raise ValueError("--plot needs matplotlib: pip install 'servo_sim[plot]'") from None
        print(f"plot written to {args.plot}")
    return 0


def bench_text(recording: Recording) -> str:
    """The recording's bench in a few words."""
    b = recording.bench
    parts = []
    if b.mass is not None and b.length is not None:
        parts.append(f"{b.mass:g} kg at {b.length:g} m")
    if b.kp is not None:
        parts.append(f"P {b.kp:g}")
    if b.vin is not None:
        parts.append(f"{b.vin:g} V")
    if recording.torque is not None:
        parts.append(f"torque off {np.mean(~recording.torque):.0%} of samples")
    return ", ".join(parts) or "no bench"


def cmd_identify(args: argparse.Namespace) -> int:
    """Fit one motor to recordings; print, write the config, validate and plot."""
    recordings = [read_recording(path) for path in args.recording]
    held_out = [read_recording(path) for path in args.validate]
    model, what = _model(args)
    benched = all(r.bench.mass is not None for r in recordings)
    names = args.fit or list(BENCH_FIT if benched else DEFAULT_FIT)
    first = Path(args.recording[0]).with_suffix("")
    out = Path(args.out or f"{first}.fitted.yaml")
    fit = identify(recordings, model, names, args.pattern_runs, args.iterations)
    samples = sum(len(r.time) for r in recordings)
    print(f"identified {what} from {len(recordings)} recording(s) ({args.recording[0]}"
          f"{' ...' if len(recordings) > 1 else ''}): {samples} samples, step "
          f"{model.step_ms} ms, {fit.iterations} iterations")
    print(f"  {'field':<36} {'before':>10} {'fitted':>12}   standard error")
    for name, before, value, std in zip(fit.names, fit.initial, fit.value, fit.std,
                                        strict=True):
        loose = "   (not determined)" if name in fit.undetermined else ""
        print(f"  {name:<36} {before:>10.4g} {value:>12.6g}   +- {std:.2g}{loose}")
    span = fit.span or math.nan
    print(f"  RMS error {fit.rms_before:.4g} rad ({100 * fit.rms_before / span:.3g} % of the "
          f"{fit.span:.4g} rad range) before, {fit.rms_after:.4g} rad "
          f"({100 * fit.rms_after / span:.3g} %) fitted")
    if fit.undetermined:
        print(f"  not determined by these recordings: {', '.join(fit.undetermined)} (their "
              f"standard error is above {UNDETERMINED:.0%} of the value: record more, or "
              "give them with --set and leave them out of --fit)")
    config = fitted_config(model, fit)
    if set(fit.names) & set(CONSTANTS):
        written = config["motors"][0]["actuator"]
        print(f"  the motor's constants written as actuator.stall_torque "
              f"{written['stall_torque']:g} N*m and no_load_speed {written['no_load_speed']:g}"
              " rad/s (at the rated voltage)")
    _print_maes("training", fit.replays())
    fitted = config["motors"][0]
    validation = [replay(r, fitted, {}, model.step_ms) for r in held_out]
    if validation:
        _print_maes("held-out", validation)
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    print(f"  config written to {out}")
    plot_path = args.plot or f"{first}.fit.png"
    try:
        plot_replays(plot_path, [*fit.replays(), *validation], f"servo_sim identify: {what}")
        print(f"  plot written to {plot_path}")
    except ImportError:
        if args.plot:
            raise ValueError("--plot needs matplotlib: pip install 'servo_sim[plot]'") from None
        print("  no plot: matplotlib is not installed (pip install 'servo_sim[plot]')")
    return 0


def _print_maes(what: str, replays: list) -> None:
    """One line per replay (MAE, RMS), then the mean."""
    for r in replays:
        print(f"  {what} {r.recording.name}: MAE {MRAD * r.mae:.1f} mrad, RMS "
              f"{MRAD * r.rms:.1f} mrad")
    mean = sum(r.mae for r in replays) / len(replays)
    print(f"  {what} mean MAE {MRAD * mean:.1f} mrad over {len(replays)} recordings")


def _motor_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """--servo / --config [--motor] / --set: the motor a verb simulates."""
    parser.add_argument("--servo", metavar="NAME", help=f"the servo profile to {verb}")
    parser.add_argument("--config", help="or a config file's motor (YAML, .wbt or .proto; "
                        "--motor M where it has more than one)")
    parser.add_argument("--motor", help="the motor of --config")
    webots_options(parser)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        dest="settings", help="a motor field known from elsewhere, e.g. "
                        "actuator.supply_voltage=12 (over the recording's bench)")


def add_commands(sub: Any) -> None:
    """The sim-to-real subcommands of ``servo-sim``."""
    rep = sub.add_parser("replay", help="replay recordings on a motor and report the error",
                         description="Replay each recording's goals (and torque on/off) on "
                         "its bench (a bam log's header: mass, length, kp, vin) and print "
                         "the mean absolute and RMS position error at its samples.")
    rep.add_argument("recording", nargs="+", help="bam bench JSON, or CSV (time, command, "
                     "position[, torque])")
    _motor_options(rep, "replay on")
    rep.add_argument("--step-ms", type=int, default=1, help="simulation step, ms (1)")
    rep.add_argument("--plot", metavar="PNG", help="simulated against measured, each "
                     "recording")
    rep.set_defaults(func=cmd_replay)

    profiles = sub.add_parser("profiles", help="list the servo profiles, or show one")
    profiles.add_argument("name", nargs="?", help="a profile, e.g. XM430-W350-T")
    profiles.set_defaults(func=cmd_profiles)

    rec = sub.add_parser("record", help="record a motor's response through its hardware",
                         description="Drive one motor of CONFIG through its hardware "
                         "plugin (a real bus, an emulator or the model) with steps and "
                         "ramps around where it stands; write time, command, position.")
    config_argument(rec, required=True, help="config file, YAML, .wbt or .proto (a YAML "
                    "config's hardware group names the bus)")
    rec.add_argument("--motor", required=True)
    rec.add_argument("--amplitude", type=float, default=0.5,
                     help="the excitation's amplitude, rad (0.5): keep it within the limits")
    rec.add_argument("--out", default="recording.csv", help="CSV file (recording.csv)")
    rec.set_defaults(func=cmd_record)

    ident = sub.add_parser("identify", help="fit a motor to recordings",
                           description="Fit one parameter set to all the recordings given "
                           "(each on its own bench) by least squares on the simulated "
                           "position, within each field's bounds: by default "
                           f"{', '.join(DEFAULT_FIT)} (recordings without a bench) or "
                           f"{', '.join(BENCH_FIT)} (recordings on a known bench).")
    ident.add_argument("recording", nargs="+", help="bam bench JSON, or CSV (time, command, "
                       "position[, torque])")
    ident.add_argument("--validate", nargs="+", default=[], metavar="RECORDING",
                       help="held-out recordings: their MAE with the fitted values")
    _motor_options(ident, "start from")
    ident.add_argument("--fit", nargs="+", metavar="FIELD", choices=list(FITTABLE),
                       help="the fields to fit (default: " + " ".join(DEFAULT_FIT) + ")")
    ident.add_argument("--step-ms", type=int, default=1, help="simulation step, ms (1)")
    ident.add_argument("--pattern-runs", type=int, default=PATTERN_RUNS, metavar="N",
                       help=f"most runs of the pattern search ({PATTERN_RUNS})")
    ident.add_argument("--iterations", type=int, default=MAX_ITERATIONS, metavar="N",
                       help=f"most Levenberg-Marquardt iterations ({MAX_ITERATIONS})")
    ident.add_argument("--velocity", type=float, default=None,
                       help="the speed limit the recording ran with (set_velocity)")
    ident.add_argument("--acceleration", type=float, default=None,
                       help="the acceleration the recording ran with (set_acceleration)")
    ident.add_argument("--out", help="the fitted config (default: the first "
                       "RECORDING.fitted.yaml)")
    ident.add_argument("--plot", help="the PNG (default: the first RECORDING.fit.png)")
    ident.set_defaults(func=cmd_identify)
