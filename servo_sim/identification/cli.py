"""``servo-sim profiles``, ``record`` and ``identify``: from a servo's datasheet to a
model fitted to the servo itself (see docs/sim-to-real.md).

    servo-sim profiles [NAME]
    servo-sim record CONFIG --motor M [--out rec.csv] [--amplitude RAD]
                     (CONFIG: YAML, or a Webots .wbt/.proto: servo_sim.load)
    servo-sim identify RECORDING.csv --servo NAME [--set FIELD=VALUE ...] [--fit FIELD ...]
                       [--step-ms MS] [--out fitted.yaml] [--plot fit.png]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import yaml

from ..load import config_argument, load, load_arguments, webots_options
from ..model.config import flatten, motor_to_dict
from ..model.profiles import load_profiles, profile_fields, servo_profile
from .fit import (
    DEFAULT_FIT,
    FITTABLE,
    Model,
    fitted_config,
    identify,
    plot,
    read_recording,
    write_recording,
)


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
    try:
        p = servo_profile(args.name)
    except KeyError:
        raise ValueError(f"no servo profile {args.name!r} (known: "
                         f"{', '.join(sorted(profiles))})") from None
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


def _model(args: argparse.Namespace) -> tuple[Model, str]:
    """The motor to fit: a config's motor or a servo profile, with the --set fields."""
    if args.config:
        config = load(args.config, webots_home=args.webots_home,
                      strict_protos=args.strict_protos).config
        motors = {m.name: m for m in config.motors}
        if args.motor not in motors:
            raise ValueError(f"{args.config}: no motor {args.motor!r} (give --motor)")
        fields = motor_to_dict(motors[args.motor])
        for key in ("name", "position", "min_position", "max_position"):
            fields.pop(key, None)
        what = f"motor {args.motor!r} of {args.config}"
    elif args.servo:
        fields = {}
        what = f"servo profile {args.servo}"
    else:
        raise ValueError("identify needs --servo NAME or --config FILE --motor M")
    extra = profile_fields(args.servo or "-", args.settings)
    extra.pop("servo")
    if args.servo:
        fields["servo"] = args.servo
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(fields.get(key), dict):
            fields[key].update(value)
        else:
            fields[key] = value
    return Model(fields, args.step_ms, args.velocity, args.acceleration), what


def cmd_identify(args: argparse.Namespace) -> int:
    """Fit a motor to a recording; print, write the config and plot."""
    recording = read_recording(args.recording)
    model, what = _model(args)
    names = args.fit or list(DEFAULT_FIT)
    fit = identify(recording, model, names)
    stem = Path(args.recording).with_suffix("")
    out = Path(args.out or f"{stem}.fitted.yaml")
    print(f"identified {what} from {args.recording}: {len(recording.time)} samples over "
          f"{recording.time[-1]:.2f} s, step {model.step_ms} ms, {fit.iterations} iterations")
    print(f"  {'field':<20} {'before':>10} {'fitted':>12}   standard error")
    for name, before, value, std in zip(fit.names, fit.initial, fit.value, fit.std, strict=False):
        print(f"  {name:<20} {before:>10.4g} {value:>12.6g}   +- {std:.2g}")
    span = fit.span or math.nan
    print(f"  RMS error {fit.rms_before:.4g} rad ({100 * fit.rms_before / span:.3g} % of the "
          f"{fit.span:.4g} rad range) before, {fit.rms_after:.4g} rad "
          f"({100 * fit.rms_after / span:.3g} %) fitted")
    out.write_text(yaml.safe_dump(fitted_config(model, fit), sort_keys=False))
    print(f"  config written to {out}")
    plot_path = args.plot or f"{stem}.fit.png"
    try:
        plot(plot_path, recording, fit, f"servo_sim identify: {what}")
        print(f"  plot written to {plot_path}")
    except ImportError:
        if args.plot:
            raise ValueError("--plot needs matplotlib: pip install 'servo_sim[plot]'") from None
        print("  no plot: matplotlib is not installed (pip install 'servo_sim[plot]')")
    return 0


def add_commands(sub: Any) -> None:
    """The sim-to-real subcommands of ``servo-sim``."""
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

    ident = sub.add_parser("identify", help="fit a motor to a recording",
                           description="Fit what the datasheet does not give (by default "
                           f"{', '.join(DEFAULT_FIT)}) to a recording (CSV: time, command, "
                           "position) by least squares on the simulated response.")
    ident.add_argument("recording", help="CSV with the columns time, command, position")
    ident.add_argument("--servo", metavar="NAME", help="the servo profile to start from")
    ident.add_argument("--config", help="or a config file's motor (YAML, .wbt or .proto; "
                       "with --motor)")
    ident.add_argument("--motor", help="the motor of --config")
    webots_options(ident)
    ident.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                       dest="settings", help="a motor field known from elsewhere, e.g. "
                       "actuator.supply_voltage=12")
    ident.add_argument("--fit", nargs="+", metavar="FIELD", choices=list(FITTABLE),
                       help="the fields to fit (default: " + " ".join(DEFAULT_FIT) + ")")
    ident.add_argument("--step-ms", type=int, default=1, help="simulation step, ms (1)")
    ident.add_argument("--velocity", type=float, default=None,
                       help="the speed limit the recording ran with (set_velocity)")
    ident.add_argument("--acceleration", type=float, default=None,
                       help="the acceleration the recording ran with (set_acceleration)")
    ident.add_argument("--out", help="the fitted config (default: RECORDING.fitted.yaml)")
    ident.add_argument("--plot", help="the PNG (default: RECORDING.fit.png)")
    ident.set_defaults(func=cmd_identify)
