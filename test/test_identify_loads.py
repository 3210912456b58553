"""What ``servo-sim identify`` writes loads everywhere a config goes: ``replay
--config``, ``servo-sim run`` (its own process) and the ROS node (its ``config_file``),
each running the fitted motor: the same trajectory as the model's API gives the file
(the node: test_identify_node.py)."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml
from test_identify_bench import BENCH, HIDDEN, STEP_MS, made
from test_identify_motor import HIDDEN_MOTOR

from servo_sim import cli
from servo_sim.identification.recordings import write_recording
from servo_sim.identification.replay import replay
from servo_sim.model import Simulation, load_config

GOAL = 0.5
DURATION_S = 0.3


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> dict:
    """``servo-sim identify`` on a swing made with the hidden gear and motor, fitting
    the friction and the motor's constants (written as stall torque and no-load speed)."""
    tmp = tmp_path_factory.mktemp("fitted")
    recording = made("swing", {**HIDDEN, **HIDDEN_MOTOR}, 21, duration=1.2)
    path = tmp / "swing.csv"
    write_recording(path, recording)
    out = tmp / "fitted.yaml"
    known = {k: v for k, v in HIDDEN.items() if k != "actuator.friction"}
    sets = [f"--set={k}={v}" for k, v in {**BENCH.fields(), **known}.items()]
    argv = ["identify", str(path), "--servo", "XL330-M288-T", "--step-ms", str(STEP_MS),
            "--pattern-runs", "4", "--iterations", "3", *sets, "--fit", "actuator.friction",
            *HIDDEN_MOTOR, "--out", str(out), "--plot", str(tmp / "fit.png")]
    assert cli.main(argv) == 0
    return {"path": out, "recording": recording, "dir": tmp,
            "motor": yaml.safe_load(out.read_text())["motors"][0]}


def trajectory(path, steps: int) -> np.ndarray:
    """The file's motor under a position goal of GOAL, by the model's API: its position
    before each step and after the last."""
    sim = Simulation(load_config(path))
    motor = sim.motor("servo")
    motor.set_position(GOAL)
    out = [motor.position]
    for _ in range(steps):
        sim.step()
        out.append(motor.position)
    return np.array(out)


def test_the_fitted_config_is_the_fitted_motor(fitted):
    """The friction and motor it fitted, not the profile's (0.0195 N*m, 0.52 N*m)."""
    actuator = fitted["motor"]["actuator"]
    assert actuator["friction"] == pytest.approx(HIDDEN["actuator.friction"], rel=0.05)
    assert actuator["stall_torque"] == pytest.approx(0.33 * 5.0 / 3.2, rel=0.05)


def test_replay_config_loads_it(fitted, capsys):
    """``replay --config`` (a one-motor config: no --motor) scores the fitted motor as
    the replay API does, within the recording's noise."""
    bench = [f"--set={k}={v}" for k, v in {**BENCH.fields(), **HIDDEN}.items()
             if k != "actuator.friction"]
    path = fitted["dir"] / "swing.csv"
    assert cli.main(["replay", str(path), "--config", str(fitted["path"]), "--step-ms",
                     str(STEP_MS), *bench]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    mae = float(re.fullmatch(r"mean MAE ([\d.]+) mrad over 1 recordings", line).group(1))
    settings = {k: v for k, v in {**BENCH.fields(), **HIDDEN}.items()
                if k != "actuator.friction"}
    expected = replay(fitted["recording"], fitted["motor"], settings, STEP_MS).mae
    assert mae == pytest.approx(1000.0 * expected, abs=0.05)
    assert mae < 2.5  # the noise's 2 mrad: a mean |error| of 1.6


def test_servo_sim_run_runs_it_in_its_own_process(fitted):
    """``servo-sim run FITTED`` as a user starts it: every step of its CSV is the
    fitted motor's, as the model's API gives it, and not the profile's."""
    csv_path = fitted["dir"] / "run.csv"
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    done = subprocess.run([sys.executable, "-m", "servo_sim.cli", "run",
                           str(fitted["path"]), "--duration", str(DURATION_S), "--command",
                           f"servo.position={GOAL}", "--csv", str(csv_path), "--quiet"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    with open(csv_path) as handle:
        rows = list(csv.DictReader(handle))
    ran = np.array([float(r["servo.position"]) for r in rows])
    steps = round(DURATION_S * 1000 / STEP_MS)
    assert len(ran) == steps + 1
    expected = trajectory(fitted["path"], steps)
    np.testing.assert_allclose(ran, expected, rtol=0, atol=1e-12)
    profile = fitted["dir"] / "profile.yaml"
    profile.write_text(yaml.safe_dump({"basic_time_step_ms": STEP_MS, "motors": [
        {"name": "servo", "servo": "XL330-M288-T"}]}))
    assert np.abs(trajectory(profile, steps) - ran).max() > 0.01
    assert 0.0 < ran[-1] <= GOAL + 0.01
