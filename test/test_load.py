"""One loader for every kind of config file (servo_sim.load): a YAML config, a Webots
world or PROTO, by the suffix; ``servo-sim record`` reads a world as it reads YAML.

The world and the YAML below describe one motor, written by hand twice; the figures
asserted are the ones written in them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from servo_sim import cli
from servo_sim.load import load
from servo_sim.model import ConfigError, load_config
from servo_sim.resources import default_config_path

#: A robot with one motor, as a Webots world.
WORLD = """\
#VRML_SIM R2023b utf8
WorldInfo {
  basicTimeStep 2
}
Robot {
  name "bench"
  children [
    HingeJoint {
      jointParameters HingeJointParameters {
        dampingConstant 0.05
      }
      device [
        RotationalMotor {
          name "wrist"
          maxVelocity 0.5
          maxTorque 10
          minPosition -2
          maxPosition 2
        }
        PositionSensor {
          name "wrist sensor"
        }
      ]
    }
  ]
}
"""
#: The same robot as a PROTO file (no WorldInfo: the step given by the instance's world)
PROTO = ("#VRML_SIM R2023b utf8\nPROTO Bench [\n]\n{\n"
         + WORLD[WORLD.index("Robot {"):] + "}\n")
#: The same motor as a servo_sim YAML config.
YAML = """\
basic_time_step_ms: 2
motors:
  - name: wrist
    max_velocity: 0.5
    max_torque: 10
    min_position: -2
    max_position: 2
    damping_constant: 0.05
    position_sensor_name: wrist sensor
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "text", "robot", "step_ms"), [
    ("bench.wbt", WORLD, "bench", 2), ("BENCH.WBT", WORLD, "bench", 2),
    ("Bench.proto", PROTO, "bench", 32),  # Webots' default basicTimeStep
    ("bench.yaml", YAML, "robot", 2), ("bench.yml", YAML, "robot", 2)])
def test_every_kind_is_read_by_its_suffix(tmp_path, name, text, robot, step_ms):
    path = write(tmp_path, name, text)
    loaded = load(path)
    (motor,) = loaded.config.motors
    assert (motor.name, motor.type, motor.max_velocity, motor.max_force, motor.min_position,
            motor.max_position, motor.damping_constant, motor.position_sensor_name) == (
        "wrist", "rotational", 0.5, 10.0, -2.0, 2.0, 0.05, "wrist sensor")
    assert loaded.config.basic_time_step_ms == step_ms
    assert loaded.config.source == str(path)
    assert loaded.robot_name == robot
    assert loaded.world_path == (str(path) if robot == "bench" else "")


def test_no_path_is_the_packaged_config():
    assert load(None).config == load_config(default_config_path())


def test_a_urdf_is_not_a_config(tmp_path):
    path = write(tmp_path, "arm.urdf", '<robot name="arm"/>')
    with pytest.raises(ConfigError, match=rf"^{path}: a URDF gives joint limits, not motors: "
                                          r"give a YAML config or a Webots \.wbt/\.proto file"):
        load(path)


@pytest.mark.parametrize("name", ["gone.wbt", "gone.yaml"])
def test_a_file_that_is_not_there_is_one_error_naming_it(tmp_path, name):
    with pytest.raises(ConfigError, match=rf"^{tmp_path / name}: cannot read: No such file"):
        load(tmp_path / name)


def test_record_reads_a_world_as_it_reads_yaml(tmp_path, capsys):
    """``servo-sim record`` of the world's motor through the model: the recording of the
    YAML config of the same motor, and at most the world's maxVelocity (0.5 rad/s; a
    YAML default would allow 10)."""
    recordings = []
    for name, text in (("bench.wbt", WORLD), ("bench.yaml", YAML)):
        out = tmp_path / f"{name}.csv"
        assert cli.main(["record", str(write(tmp_path, name, text)), "--motor", "wrist",
                         "--out", str(out)]) == 0
        assert "recorded 'wrist' through 'sim': 2250 samples over 4.50 s" in \
            capsys.readouterr().out
        recordings.append(out.read_text())
    assert recordings[0] == recordings[1]
    time, _, position = np.loadtxt(tmp_path / "bench.wbt.csv", delimiter=",", skiprows=1).T
    speed = np.diff(position) / np.diff(time)
    assert speed.max() == pytest.approx(0.5, abs=1e-6)  # both directions at the limit
    assert speed.min() == pytest.approx(-0.5, abs=1e-6)


def test_record_names_a_motor_the_world_has_not(tmp_path, capsys):
    path = write(tmp_path, "bench.wbt", WORLD)
    assert cli.main(["record", str(path), "--motor", "elbow",
                     "--out", str(tmp_path / "r.csv")]) == 2
    assert f"servo-sim: error: {path}: no motor 'elbow'" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()
