"""The servo-sim command line, run as a real subprocess."""

import argparse
import csv
import importlib.metadata
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO


def servo_sim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "servo_sim.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or REPO, timeout=120)


def test_run_default_config_prints_a_table_and_applies_commands(tmp_path):
    out = tmp_path / "run.csv"
    r = servo_sim("run", "--duration", "1.0", "--command", "arm.position=0.5",
                  "--command", "gripper.position=0.03@0.2", "--csv", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "arm" in lines[0] and "gripper" in lines[0]
    assert lines[-1].startswith("energy [J]:")
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 126  # t = 0 .. 1.0 s in 8 ms steps
    assert float(rows[-1]["time"]) == pytest.approx(1.0)
    assert float(rows[-1]["arm.position"]) == pytest.approx(0.5, abs=0.02)
    at_02 = next(r for r in rows if float(r["time"]) >= 0.2)
    assert float(at_02["gripper.position"]) == 0.0  # not commanded before 0.2 s
    assert float(rows[-1]["gripper.position"]) == pytest.approx(0.03, abs=1e-3)


def test_run_a_config_file_in_model_form(tmp_path):
    cfg = tmp_path / "one.yaml"
    cfg.write_text(yaml.safe_dump({"basic_time_step_ms": 4,
                                   "motors": [{"name": "solo", "max_torque": 50.0}]}))
    r = servo_sim("run", cfg, "--duration", "0.2", "--command", "solo.position=inf",
                  "--command", "solo.velocity=1", "--print-every", "0.2")
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-2]
    assert last.split()[0] == "0.200"
    assert float(last.split()[2]) == pytest.approx(0.2, abs=1e-9)


def test_clipping_is_reported_as_a_warning():
    r = servo_sim("run", "--duration", "0.1", "--quiet", "--command", "arm.position=3")
    assert r.returncode == 0
    assert "warning: motor 'arm': position 3 exceeds the soft limits" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "--command", "elbow.position=1"], "no motor 'elbow'; known motors: 'arm'"),
    (["run", "--command", "arm.position=nan"], "motor 'arm': position = nan rejected"),
    (["run", "--command", "arm.speed=1"], "unknown key 'speed'"),
    (["run", "--command", "arm.control_pid=1,2"], "takes 3 value(s)"),
    (["run", "--command", "arm"], "expected MOTOR.KEY=VALUE"),
    (["run", "--duration", "-1"], "--duration must be > 0"),
    (["run", "missing.yaml"], "missing.yaml: cannot read"),
    (["step-response", "--motor", "arm", "--target", "0"], "equals the start position"),
])
def test_errors_exit_2_with_one_line(args, message):
    r = servo_sim(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def test_bad_config_file_fails_naming_file_motor_field(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("motors:\n  - name: arm\n    max_torque: -5\n")
    r = servo_sim("check", cfg)
    assert r.returncode == 2
    assert f"{cfg}: motor 'arm': field 'max_torque' = -5: must be >= 0" in r.stderr


def test_check_summarises_the_default_config():
    r = servo_sim("check")
    assert r.returncode == 0
    assert "OK, 2 motor(s)" in r.stdout


@pytest.mark.parametrize("target", [1.0, -1.0])
def test_step_response_reports_figures_and_writes_the_plot(tmp_path, target):
    """A P-only servo with ample torque and no load follows e_k = (1 - P dt)^k exactly
    (test_control): with P = 10, dt = 8 ms, 0.92^k. By hand: 10 % at k = 2 (0.8464 <=
    0.9), 90 % at k = 28 (ln 0.1 / ln 0.92 = 27.6), rise 26 x 8 ms = 0.208 s; within 2 %
    from k = 47 (ln 0.02 / ln 0.92 = 46.9): 0.376 s; no overshoot; the peak force is the
    first step's, I P |e0| / dt = 0.01 x 10 / 0.008 = 12.5 N*m; the error after 3 s,
    0.92^375 = 2.64e-14 rad, has the target's sign."""
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the 'plot' extra)")
    config = tmp_path / "p.yaml"
    config.write_text(yaml.safe_dump({"basic_time_step_ms": 8, "motors": [{
        "name": "m", "inertia": 0.01, "max_torque": 100.0, "max_velocity": 100.0,
        "control_pid": [10.0, 0.0, 0.0]}]}))
    png = tmp_path / "step.png"
    r = servo_sim("step-response", config, "--motor", "m", "--target", str(target),
                  "--duration", "3", "--plot", png)
    assert r.returncode == 0, r.stderr
    figures = {" ".join(line.split()[:-2]): line.split()[-2]
               for line in r.stdout.splitlines()[1:6]}
    assert figures == {"rise time (10-90 %)": "0.208", "overshoot": "0",
                       "settling time (2%)": "0.376",
                       "steady-state error": f"{math.copysign(2.64e-14, target):.3g}",
                       "peak force": "12.5"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000


def test_console_script_is_installed():
    prefix = Path(sys.prefix).resolve()
    script = shutil.which("servo-sim", path=str(Path(sys.executable).parent))
    # an egg-link (older pip's editable install) keeps its metadata in the checkout, so
    # a script beside this Python also counts as installed here
    installed_here = script is not None or any(
        Path(d.locate_file("")).resolve().is_relative_to(prefix)
        for d in importlib.metadata.distributions(name="servo_sim"))
    if not installed_here:
        pytest.skip("servo_sim is not pip-installed in this Python's environment (e.g. a "
                    "colcon/ament install): no console script to check")
    assert script, "the servo-sim console script is not installed beside this Python"
    r = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "step-response" in r.stdout


@pytest.mark.parametrize("plugin", ["dynamixel", "feetech"])
def test_run_drives_the_hardware_its_config_names(plugin, tmp_path, capsys):
    """servo-sim run on an emulated bus: the servo goes to the commanded position in
    wall-clock time (it runs 0.8 s of cycles), the CSV follows what the bus reads, and
    the torque is off at the end."""
    import math
    import time

    from servo_sim import cli

    if plugin == "dynamixel":  # an XM430-W350: 4096 ticks a turn, 2048 = 0
        from servo_sim.emulators import dxl_emulator as emu
        motor, baud, size = {"id": 1, "torque_constant": 1.78}, 4000000, 4
    else:  # an STS3215: the same scale
        from servo_sim.emulators import sts_emulator as emu
        motor, baud, size = {"id": 1}, 1000000, 2
    with emu.EmulatorProcess([1], realtime=True) as bus:
        config = tmp_path / "bus.yaml"
        config.write_text(yaml.safe_dump({
            "basic_time_step_ms": 8,
            "hardware": {"plugin": plugin, "port": bus.port, "baud_rate": baud, "a": motor},
            "motors": [{"name": "a", "max_torque": 1.5, "max_velocity": 4.0,
                        "min_position": -2.5, "max_position": 2.5}]}))
        out = tmp_path / "run.csv"
        start = time.monotonic()
        assert cli.main(["run", str(config), "--duration", "0.8", "--quiet", "--csv", str(out),
                         "--command", "a.position=1.0"]) == 0, capsys.readouterr().err
        assert time.monotonic() - start >= 0.8  # real time: 100 cycles of 8 ms
        rows = list(csv.DictReader(out.open()))
        assert len(rows) == 101 and float(rows[-1]["time"]) == pytest.approx(0.8)
        present = (bus.get(1, emu.PRESENT_POSITION, size) - 2048) * 2 * math.pi / 4096
        assert float(rows[-1]["a.position"]) == pytest.approx(1.0, abs=0.02)
        assert present == pytest.approx(float(rows[-1]["a.position"]), abs=0.01)
        assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0  # switched off at the end


def test_step_response_runs_on_the_configs_hardware(tmp_path, capsys):
    """Issue 53: step-response opens the config's hardware as run does (it ignored it):
    the emulated STS3215 itself steps, in real time, and its figures are the servo's."""
    import time

    from servo_sim import cli
    from servo_sim.emulators import sts_emulator as emu

    with emu.EmulatorProcess([1], realtime=True) as bus:
        config = tmp_path / "bus.yaml"
        config.write_text(yaml.safe_dump({
            "basic_time_step_ms": 8,
            "hardware": {"plugin": "feetech", "port": bus.port, "baud_rate": 1000000,
                         "a": {"id": 1}},
            "motors": [{"name": "a", "max_torque": 1.5, "max_velocity": 4.0,
                        "min_position": -2.5, "max_position": 2.5}]}))
        out = tmp_path / "step.csv"
        start = time.monotonic()
        assert cli.main(["step-response", str(config), "--motor", "a", "--target", "-0.6",
                         "--duration", "1.0", "--csv", str(out)]) == 0, capsys.readouterr().err
        assert time.monotonic() - start >= 1.0  # real time: 125 cycles of 8 ms
        said = capsys.readouterr().out
        assert said.startswith("step response of 'a': 0 -> -0.6 rad over 1 s (dt = 8 ms)")
        t, y = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(0, 1), unpack=True)
        assert len(t) == 126 and t[-1] == pytest.approx(1.0)
        present = (bus.get(1, emu.PRESENT_POSITION, 2) - 2048) * 2 * math.pi / 4096
        # the servo went there (a tick is 1.5 mrad), and the recording says so
        assert present == pytest.approx(-0.6, abs=0.01)
        assert y[-1] == pytest.approx(present, abs=0.01)
        error = float(re.search(r"steady-state error\s+(\S+) rad", said).group(1))
        assert error == pytest.approx(-0.6 - y[-1], abs=1e-3)
        assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0  # switched off at the end


def test_run_tries_a_bus_that_misses_its_first_ping_again_and_gives_up_on_a_dead_one(
        tmp_path, capsys):
    """A bus silent at the first ping starts at a later attempt (START_RETRY_S apart);
    one silent at every attempt fails after START_ATTEMPTS with the device's error."""
    import threading
    import time

    from servo_sim import cli
    from servo_sim.emulators import dxl_emulator as emu
    from servo_sim.hardware import START_ATTEMPTS, START_RETRY_S
    from servo_sim.hardware.serial_bus import READ_TRIES

    with emu.EmulatorProcess([1], realtime=True) as bus:
        config = tmp_path / "bus.yaml"
        config.write_text(yaml.safe_dump({
            "basic_time_step_ms": 8,
            "hardware": {"plugin": "dynamixel", "port": bus.port, "baud_rate": 4000000,
                         "a": {"id": 1, "torque_constant": 1.78}},
            "motors": [{"name": "a", "max_torque": 1.5, "max_velocity": 4.0}]}))
        bus.silence()
        pings = bus.counts().get("0x01", 0)

        def answer_after_the_first_ping() -> None:
            deadline = time.monotonic() + 30
            while bus.counts().get("0x01", 0) == pings and time.monotonic() < deadline:
                time.sleep(0.01)
            bus.silence([])

        waiter = threading.Thread(target=answer_after_the_first_ping)
        waiter.start()
        try:
            assert cli.main(["run", str(config), "--duration", "0.1", "--quiet"]) == 0, \
                capsys.readouterr().err
        finally:
            waiter.join()
        assert bus.counts()["0x01"] >= pings + 2  # the missed ping, then the answered one

        bus.silence()  # dead: every attempt unanswered
        pings = bus.counts()["0x01"]
        start = time.monotonic()
        assert cli.main(["run", str(config), "--duration", "0.1", "--quiet"]) == 2
        assert time.monotonic() - start >= (START_ATTEMPTS - 1) * START_RETRY_S
        # each attempt pings twice: a read with no reply is tried once more
        assert bus.counts()["0x01"] - pings == START_ATTEMPTS * READ_TRIES
        assert capsys.readouterr().err.splitlines()[-1] == (
            "servo-sim: error: hardware 'dynamixel': motor 'a' (id 1): ping: [TxRxResult] "
            "There is no status packet!")


def test_run_activates_again_a_device_whose_first_activation_failed(
        tmp_path, monkeypatch, capsys, caplog):
    """A device whose first on_activate() fails (FAILURE: it stays inactive) is activated
    again at the next attempt, not configured again (an inactive device refuses that),
    and runs: read and written while active."""
    import textwrap

    from servo_sim import cli

    (tmp_path / "late_torque.py").write_text(textwrap.dedent("""
        from servo_sim.hardware import CallbackReturn, HardwareComponent

        class LateTorque(HardwareComponent):
            calls = []  # every callback, in order

            def _call(self, name):
                LateTorque.calls.append(name)
                return CallbackReturn.SUCCESS

            def on_configure(self): return self._call("on_configure")
            def on_activate(self):
                self._call("on_activate")
                if LateTorque.calls.count("on_activate") == 1:
                    return self.fail("torque on: no answer")
                return CallbackReturn.SUCCESS
            def read(self, time, period): return self._call("read")
            def write(self, time, period): return self._call("write")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "late.yaml"
    config.write_text(yaml.safe_dump({
        "basic_time_step_ms": 8, "hardware": {"plugin": "late_torque:LateTorque"},
        "motors": [{"name": "a"}]}))
    try:
        status = cli.main(["run", str(config), "--duration", "0.016", "--quiet"])
        calls = sys.modules["late_torque"].LateTorque.calls
    finally:
        sys.modules.pop("late_torque", None)
    assert status == 0, capsys.readouterr().err
    assert calls[:4] == ["on_configure", "on_activate", "on_activate", "read"]
    assert calls.count("on_configure") == 1
    assert "on_activate failed: torque on: no answer" in caplog.text


def _recording_parser(seen: list) -> argparse.ArgumentParser:
    """A parser with a ``controller`` verb (a script, then its own arguments) and a
    ``run`` verb (positional arguments, argparse's own ``--``), each recording its args."""
    parser = argparse.ArgumentParser(prog="servo-sim")
    verbs = parser.add_subparsers(dest="cmd")
    controller = verbs.add_parser("controller")
    controller.add_argument("script")
    controller.set_defaults(func=lambda a: seen.append((a.script, a.controller_args)) or 0)
    run = verbs.add_parser("run")
    run.add_argument("rest", nargs="*")
    run.set_defaults(func=lambda a: seen.append((a.rest, hasattr(a, "controller_args"))) or 0)
    return parser


def test_what_follows_dash_dash_goes_to_the_controller_and_only_to_it(monkeypatch):
    """``controller SCRIPT -- ARGS``: everything after the first ``--`` (a later ``--``
    included) is the controller's, none without one; another verb's ``--`` is argparse's;
    without argv, sys.argv after the program name."""
    from servo_sim import command

    seen: list = []
    parser = _recording_parser(seen)
    assert command.run(parser, ["controller", "a.py", "--", "--speed", "2", "--", "x"]) == 0
    assert command.run(parser, ["controller", "a.py"]) == 0
    assert command.run(parser, ["run", "--", "-x"]) == 0
    monkeypatch.setattr(sys, "argv", ["servo-sim", "controller", "b.py", "--", "-v"])
    assert command.run(parser) == 0
    assert seen == [("a.py", ["--speed", "2", "--", "x"]), ("a.py", []), (["-x"], False),
                    ("b.py", ["-v"])]


def _options_parser(seen: list, raises: BaseException | None = None,
                    handler=None) -> argparse.ArgumentParser:
    """A ``go`` verb with the common options ``command.run`` checks; its handler (or
    ``handler``) records its args, then raises ``raises`` if given."""
    parser = argparse.ArgumentParser(prog="servo-sim")
    go = parser.add_subparsers(dest="cmd").add_parser("go")
    for option in ("--duration", "--print-every", "--band", "--real-time-factor"):
        go.add_argument(option, type=float)

    def record(args: argparse.Namespace) -> int:
        seen.append(args)
        if raises is not None:
            raise raises
        return 0
    go.set_defaults(func=handler or record)
    return parser


@pytest.mark.parametrize("option, value, message", [
    (option, value, f"--{option} must be > 0")
    for option in ("duration", "print-every", "band") for value in ("0", "-1", "inf", "nan")
] + [("real-time-factor", value, "--real-time-factor must be >= 0")
     for value in ("-1", "-1e-9", "inf", "nan")])
def test_a_common_option_out_of_range_exits_2_naming_it_and_runs_nothing(
        option, value, message, capsys):
    """--duration, --print-every and --band must be finite and > 0 (0 and -1 refused,
    either infinity and nan too); --real-time-factor finite and >= 0."""
    from servo_sim import command

    seen: list = []
    assert command.run(_options_parser(seen), ["go", f"--{option}={value}"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"servo-sim: error: {message}\n")
    assert seen == []


@pytest.mark.parametrize("option, value", [
    ("duration", "0.5"), ("duration", "2"), ("print-every", "1e-9"), ("band", "0.02"),
    ("real-time-factor", "0"), ("real-time-factor", "0.5"), ("real-time-factor", "3")])
def test_a_common_option_in_range_runs_the_verb_with_it(option, value, capsys):
    """Just inside the ranges: 0.5 and 1e-9 are > 0 (> 1 is not the rule); a real-time
    factor of 0 (as fast as it goes) and 0.5 (slower than real time) are allowed."""
    from servo_sim import command

    seen: list = []
    assert command.run(_options_parser(seen), ["go", f"--{option}", value]) == 0
    assert capsys.readouterr() == ("", "")
    assert getattr(seen[0], option.replace("-", "_")) == float(value)


@pytest.mark.parametrize("error, message", [
    ("CliError", "motor 'arm': bad"),
    ("ConfigError", "one.yaml: motor 'arm': field 'max_torque' = -5: must be >= 0"),
    ("KeyError", "no motor 'elbow'; known motors: 'arm'"),
    ("ValueError", "position = nan rejected"),
])
def test_a_user_error_in_the_verb_is_one_line_on_stderr_and_exit_2(error, message, capsys):
    """The verb's user errors (CliError, ConfigError, KeyError, ValueError) print
    ``servo-sim: error: MESSAGE`` and nothing else; a KeyError's message without the
    quotes ``str(KeyError)`` adds."""
    from servo_sim import command
    from servo_sim.model import ConfigError

    exc = {"CliError": command.CliError, "ConfigError": ConfigError, "KeyError": KeyError,
           "ValueError": ValueError}[error](message)
    seen: list = []
    assert command.run(_options_parser(seen, exc), ["go"]) == 2
    assert capsys.readouterr() == ("", f"servo-sim: error: {message}\n")
    assert len(seen) == 1 and seen[0].cmd == "go"


def test_a_config_file_that_is_not_text_is_a_user_error_saying_why(tmp_path, capsys):
    """A UnicodeDecodeError (a ValueError whose first argument is only the codec's name)
    is said whole: ``servo-sim check`` on a binary file, in this process."""
    from servo_sim import cli

    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    assert cli.main(["check", str(binary)]) == 2
    assert capsys.readouterr() == (
        "", "servo-sim: error: 'utf-8' codec can't decode byte 0xff in position 0: "
        "invalid start byte\n")


def test_a_closed_pipe_ends_the_verb_quietly_with_exit_0(capsys):
    """``servo-sim run | head``: the reader went away; not an error."""
    from servo_sim import command

    seen: list = []
    assert command.run(_options_parser(seen, BrokenPipeError()), ["go"]) == 0
    assert capsys.readouterr() == ("", "")


def test_warnings_are_printed_as_servo_sim_warnings_and_nothing_below_them(capsys):
    """``run`` sets up the root logger as the command line shows it: warnings and above, as
    ``servo-sim: warning: MESSAGE`` on stderr. In this process pytest's handlers are on the
    root logger (``basicConfig`` would then do nothing): they are set aside meanwhile."""
    import logging

    from servo_sim import command

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(logging.DEBUG)  # as a host that logged more before would leave it
    log = logging.getLogger("servo_sim.test")
    parser = _options_parser([], handler=lambda a: log.info("not shown")
                             or log.warning("motor 'arm': clipped") or 0)
    try:
        assert command.run(parser, ["go"]) == 0
        assert root.level == logging.WARNING
    finally:
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
    assert capsys.readouterr() == ("", "servo-sim: warning: motor 'arm': clipped\n")
