"""Recordings in and ``servo-sim replay``: bam's bench JSON and servo_sim's CSV read with
their bench and torque on/off; the replay is the loop docs/sim-to-real.md writes out;
bad files are one error naming file, entry and field."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim import cli
from servo_sim.identification.recordings import (
    Bench,
    Recording,
    RecordingError,
    read_recording,
    write_recording,
)
from servo_sim.identification.replay import Replay, replay, set_field
from servo_sim.model import Simulation, parse_config

SHARED = REPO.parent / "shared" / "data" / "real-servos" / "xl330"
DROP = SHARED / "2026-01-15_10h28m17.json"  # P 100, lift_and_drop


def bam_log(entries: list[dict], **header) -> dict:
    return {"mass": 0.49, "length": 0.1, "kp": 100, "vin": 7.4, "motor": "xl330",
            "trajectory": "t", **header, "entries": entries}


def bam_entry(t: float, goal: float, position: float, torque: bool = True) -> dict:
    return {"timestamp": t, "goal_position": goal, "position": position, "speed": 0.0,
            "load": 0, "input_volts": 7.4, "temp": 30, "torque_enable": torque}


def lift_and_drop(n: int = 400, dt: float = 0.005) -> list[dict]:
    """A lift to 1 rad over the first half, then torque off: the arm falls."""
    return [bam_entry(0.0035 + k * dt, min(1.0, 2 * k / n), 0.0, k < n // 2)
            for k in range(n)]


def documented_loop(rec: Recording, motor: dict) -> np.ndarray:
    """docs/sim-to-real.md's loop, written out with the model's API alone."""
    motor = {**motor, "name": "arm", "position": float(rec.position[0])}
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [motor]}))
    arm = sim.motor("arm")
    grid = [float(arm.position)]
    on, goal = True, None
    steps = math.ceil(rec.time[-1] / 0.001 - 1e-9)
    for k in range(steps):
        i = int(np.searchsorted(rec.time, k * 0.001 + 1e-9, side="right")) - 1
        i = max(i, 0)
        torque = True if rec.torque is None else bool(rec.torque[i])
        if torque != on:
            on = torque
            if on:
                arm.enable()
                goal = None
            else:
                arm.disable()
        if on and rec.command[i] != goal:
            goal = float(rec.command[i])
            arm.set_position(goal)
        sim.step()
        grid.append(float(arm.position))
    return np.interp(rec.time, np.arange(steps + 1) * 0.001, grid)


def test_a_bam_log_reads_with_its_bench_and_torque(tmp_path):
    path = tmp_path / "drop.json"
    path.write_text(json.dumps(bam_log(lift_and_drop())))
    rec = read_recording(path)
    assert rec.bench == Bench(mass=0.49, length=0.1, kp=100.0, vin=7.4)
    assert rec.time[0] == 0.0 and rec.time[-1] == pytest.approx(399 * 0.005)
    assert rec.torque is not None and rec.torque.sum() == 200 and not rec.torque[200]
    fields = rec.bench.fields()
    assert fields["inertia"] == pytest.approx(0.49 * 0.01)
    assert fields["load.gravity_angle"] == pytest.approx(math.pi / 2)
    assert fields["actuator.gains.p"] == 100 and fields["actuator.supply_voltage"] == 7.4


def test_the_bench_hangs_the_mass_at_zero_both_sides():
    """The pendulum's gravity torque on the joint is -m g l sin(x): restoring both ways
    (hand calculation: 0.49 * 9.81 * 0.1 = 0.48069 N*m at +-pi/2)."""
    fields: dict = {}
    for name, value in Bench(0.49, 0.1).fields().items():
        set_field(fields, name, value)
    for x, torque in ((math.pi / 2, -0.48069), (-math.pi / 2, 0.48069), (0.0, 0.0),
                      (math.pi / 6, -0.240345)):
        sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
            {"name": "arm", "position": x, **fields}]}))
        arm = sim.motor("arm")
        arm.disable()  # free: the first step's velocity is the load's impulse / inertia
        sim.step()
        assert arm.velocity == pytest.approx(torque * 0.001 / 0.0049, rel=1e-3, abs=1e-9)


def test_the_replay_is_the_documented_loop_with_the_torque_switched_off(tmp_path):
    path = tmp_path / "drop.json"
    path.write_text(json.dumps(bam_log(lift_and_drop())))
    rec = read_recording(path)
    motor = {"servo": "XL330-M288-T", "inertia": 0.0049,
             "load": {"gravity_mass": 0.49, "gravity_distance": 0.1,
                      "gravity_angle": math.pi / 2},
             "actuator": {"gains": [100, 0, 0], "supply_voltage": 7.4}}
    expected = documented_loop(rec, motor)
    result = replay(rec, {"servo": "XL330-M288-T"})
    assert result.simulated == pytest.approx(expected, abs=1e-12)
    # the lift moved the arm; after the torque went off it fell back towards 0
    half = len(rec.time) // 2
    assert result.simulated[half - 1] > 0.2
    assert abs(result.simulated[-1]) < 0.5 * result.simulated[half - 1]


def test_mae_and_rms_are_of_the_samples():
    rec = Recording(np.arange(4.0), np.zeros(4), np.array([0.0, 1.0, -1.0, 2.0]))
    r = Replay(rec, np.array([0.5, 1.0, 0.0, -2.0]))  # errors 0.5, 0, 1, -4
    assert r.mae == pytest.approx(5.5 / 4)
    assert r.rms == pytest.approx(math.sqrt((0.25 + 1 + 16) / 4))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=10, max_size=40),
       st.lists(st.booleans(), min_size=10, max_size=40))
def test_a_csv_recording_round_trips_with_its_torque(tmp_path_factory, values, torque):
    n = min(len(values), len(torque))
    t = np.arange(n) * 0.01
    on = np.array(torque[:n])
    rec = Recording(t, np.array(values[:n]), -np.array(values[:n]),
                    None if on.all() else on)
    path = tmp_path_factory.mktemp("rec") / "rec.csv"
    write_recording(path, rec)
    back = read_recording(path)
    assert back.time == pytest.approx(t, abs=1e-9)
    assert back.command == pytest.approx(rec.command, rel=1e-8, abs=1e-12)
    if rec.torque is None:
        assert back.torque is None
    else:
        assert (back.torque == rec.torque).all()


def test_servo_sim_replay_prints_each_mae_and_the_mean(tmp_path, capsys):
    paths = []
    for k, kp in enumerate((100, 400)):
        path = tmp_path / f"r{k}.json"
        path.write_text(json.dumps(bam_log(lift_and_drop(), kp=kp)))
        paths.append(path)
    assert cli.main(["replay", *map(str, paths), "--servo", "XL330-M288-T"]) == 0
    out = capsys.readouterr().out.splitlines()
    maes = [float(re.search(r"MAE ([\d.]+) mrad", line).group(1)) for line in out[1:3]]
    for path, mae in zip(paths, maes, strict=True):
        expected = replay(read_recording(path), {"servo": "XL330-M288-T"}).mae * 1000
        assert mae == pytest.approx(expected, abs=0.05)
    assert "P 400" in out[2] and "RMS" in out[2]
    mean = float(re.fullmatch(r"mean MAE ([\d.]+) mrad over 2 recordings", out[3]).group(1))
    assert mean == pytest.approx(sum(maes) / 2, abs=0.1)


def test_set_overrides_the_bench_and_a_one_motor_config_needs_no_motor(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(bam_log(lift_and_drop(200))))
    config = tmp_path / "c.yaml"
    config.write_text("motors:\n  - {name: arm, servo: XL330-M288-T}\n")
    assert cli.main(["replay", str(path), "--config", str(config),
                     "--set", "actuator.gains.p=400"]) == 0
    got = float(re.search(r"mean MAE ([\d.]+)", capsys.readouterr().out).group(1))
    expected = replay(read_recording(path).with_bench(kp=400), {"servo": "XL330-M288-T"})
    assert got == pytest.approx(expected.mae * 1000, abs=0.05)


@pytest.mark.skipif(not DROP.exists(), reason="the shared recordings are not here")
def test_the_shared_lift_and_drop_replays(capsys):
    assert cli.main(["replay", str(DROP), "--servo", "XL330-M288-T"]) == 0
    out = capsys.readouterr().out
    assert "torque off 75% of samples" in out and "mean MAE" in out


ENTRY = bam_entry(0.1, 0.0, 0.0)
#: a log of twelve entries at 0, 0.5 ... 5.5 s: entry 7 is the one at 3.5 s
TWELVE = json.dumps(bam_log([bam_entry(0.5 * k, 0.0, 0.0) for k in range(12)]))


BAD_BAM = [
    ('{"mass": 0.49, "entries": [', "not JSON (truncated?): "),
    (TWELVE[:TWELVE.index('"timestamp": 3.5') + 14], "not JSON (truncated?) in entry 7: "),
    (json.dumps(bam_log([ENTRY, 3])), "entry 1: 3: expected an object"),
    (json.dumps(bam_log([ENTRY] * 3, kp="x")), "header field 'kp' = 'x': expected a number"),
    (json.dumps(bam_log([ENTRY] * 3, vin=True)), "header field 'vin' = True"),
    ('{"mass": 0.49}', "field 'entries': expected a list"),
    (json.dumps(bam_log([ENTRY] * 3, mass=-1)), "header field 'mass' = -1"),
    (json.dumps(bam_log([ENTRY, {k: v for k, v in ENTRY.items() if k != "position"}])),
     "entry 1: no field 'position'"),
    (json.dumps(bam_log([ENTRY, {**ENTRY, "torque_enable": 1}])),
     "entry 1: field 'torque_enable' = 1: expected true or false"),
    (json.dumps(bam_log([ENTRY, {**ENTRY, "goal_position": "x"}])),
     "entry 1: field 'goal_position' = 'x'"),
    (json.dumps(bam_log([ENTRY, {**ENTRY, "timestamp": 0.2}, ENTRY])),
     "entry 2: field 'timestamp' = 0.1: time does not increase"),
    (json.dumps(bam_log([bam_entry(0.01 * k, 0, 0) for k in range(3)])), "3 samples"),
]
BAD_CSV = [
    ("t,command,position\n", "no column 'time'"),
    ("time,command,position\n" + "0,0,0\n" * 3, "line 3: field 'time' = 0.0: time does not"),
    ("time,command,position\n0,0,x\n", "line 2: field 'position' = 'x': expected a number"),
    ("time,command,position\n0,0,nan\n", "line 2: field 'position' = 'nan': not finite"),
    ("time,command,position\n0,0,0\n1,0\n", "line 3: ['1', '0']: 2 fields, the header has 3"),
    ("time,command,position,torque\n0,0,0,2\n", "line 2: field 'torque' = '2': expected 0"),
    ("time,command,position\n0,0,0\n1,0,0\n", "2 samples; a replay or fit needs at least 10"),
    ("", "empty"),
]


@pytest.mark.parametrize(("suffix", "text", "message"),
                         [(".json", *bad) for bad in BAD_BAM] + [(".csv", *bad) for bad in BAD_CSV])
def test_a_bad_recording_is_one_error_naming_file_entry_and_field(tmp_path, suffix, text,
                                                                  message):
    """bam's JSON: the entry (from 0) and field; CSV: the line (from 1) and field."""
    path = tmp_path / f"rec{suffix}"
    path.write_text(text)
    with pytest.raises(RecordingError) as err:
        read_recording(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_bad_recording_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "rec.json"
    path.write_text('{"entries": [')
    assert cli.main(["replay", str(path), "--servo", "XL330-M288-T"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"servo-sim: error: {path}: not JSON") and "\n" not in err
    good = tmp_path / "drop.json"  # (a recording of the test's own: the shared ones may
    good.write_text(json.dumps(bam_log(lift_and_drop(200))))  # not be on this machine)
    assert cli.main(["replay", str(good), "--servo", "XL999"]) == 2
    assert "no servo profile 'XL999'" in capsys.readouterr().err
