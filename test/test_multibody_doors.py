"""The MuJoCo body through the doors without ROS: ``servo-sim run --physics mujoco``,
the virtual SO-101 (``servo-sim-so101 --physics mujoco``) through the vendor's SDK and
LeRobot's own SO101Follower, and the ros2_control launch file's ``physics:=`` argument
(checked without ROS; the launch itself in test_ros2_control where ros2_control is).
The node's door: test_multibody_node.py."""

from __future__ import annotations

import csv
import subprocess
import sys

import mujoco
import pytest
import scservo_sdk as scs
from conftest import REPO
from test_virtual_arm import (
    IDS,
    JOINTS,
    LEROBOT_P,
    STALL,
    TICKS_PER_RAD,
    _calibration,
    _follow,
    _lerobot_python,
    holding_budget,
    read,
    sdk,  # noqa: F401  (a fixture: the SDK on this module's arm)
    ticks,
    wait_at_rest,
    written,
)

from servo_sim.emulators import sts_emulator as emu
from servo_sim.emulators.virtual_arm import VirtualSO101Process
from servo_sim.model import ConfigError, Simulation
from servo_sim.model.body import with_physics
from servo_sim.model.config import load_config
from servo_sim.ros.launch_args import physics_parameters

URDF = REPO / "config" / "so101.urdf"


def holding_torques(positions: dict[str, float]) -> dict[str, float]:
    """MuJoCo's inverse dynamics of so101.urdf at rest at ``positions``: the torque
    each joint's servo holds."""
    model = mujoco.MjModel.from_xml_path(str(URDF))
    data = mujoco.MjData(model)
    data.qpos[:] = [positions[j] for j in JOINTS]
    mujoco.mj_inverse(model, data)
    return dict(zip(JOINTS, data.qfrc_inverse, strict=True))


def test_servo_sim_run_drives_the_arm_in_mujoco(tmp_path):
    """``servo-sim run config/so101.yaml --physics mujoco --model so101.urdf``: the
    model simulates the real-servo config (hardware sim), its rows the library's."""
    out = tmp_path / "run.csv"
    config = str(REPO / "config" / "so101.yaml")
    command = [sys.executable, "-m", "servo_sim.cli", "run", config,
               "--physics", "mujoco", "--model", "so101.urdf", "--duration", "1.0",
               "--quiet", "--csv", str(out), "--command", "elbow_flex.position=0.8",
               "--command", "shoulder_lift.position=-0.5@0.096"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open()))
    sim = Simulation(with_physics(load_config(REPO / "config" / "so101.yaml"), "mujoco",
                                  "so101.urdf"))
    sim.motor("elbow_flex").set_position(0.8)
    sim.step(12)  # 96 ms
    sim.motor("shoulder_lift").set_position(-0.5)
    sim.step(113)  # to 1 s
    last = rows[-1]
    for m in sim:
        assert float(last[f"{m.name}.position"]) == pytest.approx(m.position, abs=1e-9)
    assert float(last["elbow_flex.position"]) == pytest.approx(0.8, abs=0.05)


def test_servo_sim_run_says_a_bad_model_in_one_line(tmp_path):
    command = [sys.executable, "-m", "servo_sim.cli", "run", "--physics", "mujoco",
               "--model", "absent.xml", "--duration", "0.1", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "field 'multibody.model' = 'absent.xml': no such file" in lines[0]


@pytest.fixture
def arm(tmp_path):
    with VirtualSO101Process(tmp_path / "eeprom.json", realtime=True,
                             physics="mujoco") as process:
        yield process


def test_the_virtual_so101_in_mujoco_holds_a_pose_by_inverse_dynamics(arm, sdk):  # noqa: F811
    """Six STS3215 answer on the bus (model number 777); goals and torque written
    through the SDK, the arm comes to rest, and each servo's Present Load pushes back
    MuJoCo's inverse-dynamics torque at the pose it reached, less what the gear's
    friction holds at rest (within the holding budget + one unit of load)."""
    port, packet = sdk
    assert [packet.ping(port, i)[:2] for i in IDS.values()] == [(777, scs.COMM_SUCCESS)] * 6
    pose = {"shoulder_pan": 0.3, "shoulder_lift": -0.6, "elbow_flex": -1.5, "wrist_flex": 0.2,
            "wrist_roll": 0.0, "gripper": 0.4}
    for joint, i in IDS.items():
        assert written(packet.write2ByteTxRx, port, i, emu.GOAL_POSITION, ticks(pose[joint]))
        assert written(packet.write1ByteTxRx, port, i, emu.TORQUE_ENABLE, 1)
    wait_at_rest(arm, timeout_s=30.0)
    present = read(arm, emu.PRESENT_POSITION, 2)
    load = read(arm, emu.PRESENT_LOAD, 2)
    reached = {j: (present[j] - 2048) / TICKS_PER_RAD for j in JOINTS}
    torque = holding_torques(reached)
    for joint in JOINTS:
        motor = load[joint] * STALL / 1000
        assert abs(motor - torque[joint]) <= holding_budget(-torque[joint], motor) + (
            STALL / 1000), (joint, load, torque)
    assert torque["shoulder_lift"] > 0.2  # the folded elbow: the shoulder holds it up
    assert abs(present["shoulder_pan"] - ticks(pose["shoulder_pan"])) <= 1


def test_lerobots_so101_follower_drives_the_multibody_arm(tmp_path):
    """LeRobot's own client moves the arm in MuJoCo through the documented actions and
    reads it back (where a LeRobot venv exists, as test_virtual_arm's)."""
    python, why = _lerobot_python()
    if python is None:
        pytest.skip(why)
    calibration = _calibration(tmp_path / "calibration")
    action = {"shoulder_pan": 30.0, "shoulder_lift": -20.0, "elbow_flex": 20.0,
              "wrist_flex": 10.0, "wrist_roll": 0.0, "gripper": 40.0}
    with VirtualSO101Process(tmp_path / "eeprom.json", realtime=True,
                             physics="mujoco") as arm:
        events = {e["event"]: e for e in _follow(python, arm.port, tmp_path / "calibration",
                                                 action)}
        wait_at_rest(arm)
        present = read(arm, emu.PRESENT_POSITION, 2)
    observed = events["followed"]["observation"]
    torque = holding_torques({j: (present[j] - 2048) / TICKS_PER_RAD for j in JOINTS})
    for joint, goal in action.items():
        c = calibration[joint]
        low, high = c["range_min"], c["range_max"]
        gripper = joint == "gripper"
        expected = low + goal / 100 * (high - low) if gripper else \
            (low + high) / 2 + goal * 4095 / 360
        # held off the goal by the weight: the servo's torque at LeRobot's P 16 (duty = P
        # e / 1000 of the stall torque, e in ticks) carries MuJoCo's inverse dynamics at
        # the pose, within what the gear's friction holds at rest and a tick or so (the
        # goal's rounding, the dead zone)
        motor = LEROBOT_P * (expected - present[joint]) / 1000 * STALL
        assert abs(motor - torque[joint]) <= holding_budget(-torque[joint], motor) + (
            2 * LEROBOT_P * STALL / 1000), (joint, present, expected, torque)
        # LeRobot read back where the arm is, in its units (degrees; the gripper in %)
        reading = 100 * (present[joint] - low) / (high - low) if gripper else \
            (present[joint] - (low + high) / 2) * 360 / 4095
        assert observed[f"{joint}.pos"] == pytest.approx(reading, abs=1.5), observed


def test_the_launch_files_physics_argument():
    """``physics:=mujoco``: the robot's URDF in MuJoCo on simulated hardware; empty: the
    config's; real hardware or an unknown engine refused in one line."""
    assert physics_parameters("", "feetech", "so101.urdf") == {}
    assert physics_parameters("mujoco", "", "/x/so101.urdf") == {
        "physics": "mujoco", "multibody.model": "/x/so101.urdf", "hardware.plugin": "sim"}
    assert physics_parameters("mujoco", "sim", "a.urdf")["hardware.plugin"] == "sim"
    with pytest.raises(ValueError, match=r"physics:='mujoco' simulates the robot; "
                                         r"hardware:='feetech' moves real servos"):
        physics_parameters("mujoco", "feetech", "a.urdf")
    with pytest.raises(ValueError, match=r"physics:='bullet': must be empty"):
        physics_parameters("bullet", "", "a.urdf")


def test_real_hardware_with_a_multibody_body_is_refused():
    """A config cannot put real servos in MuJoCo: one message at load."""
    with pytest.raises(ConfigError, match=r"field 'physics' = 'mujoco': a multibody body "
                                          r"is the model's; hardware 'feetech'"):
        Simulation.from_config({"physics": "mujoco", "multibody": {"model": "so101.urdf"},
                                "hardware": {"plugin": "feetech"},
                                "motors": [{"name": "gripper"}]})
