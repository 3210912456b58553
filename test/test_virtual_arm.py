"""The virtual SO-101 (``servo-sim-so101``) through the vendor's scservo_sdk and through
LeRobot's own SO101Follower.

The arm runs in a child process (:class:`VirtualSO101Process`); the SDK drives it over
its pseudo-terminal. The weight each servo holds is checked against
:mod:`servo_sim.model.chain` (itself checked against closed forms in test_chain.py).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import scservo_sdk as scs

from servo_sim.emulators import sts_emulator as emu
from servo_sim.emulators.virtual_arm import VirtualSO101Process
from servo_sim.model.chain import KinematicTree
from servo_sim.model.config import STANDARD_GRAVITY as G
from servo_sim.model.profiles import servo_profile

REPO = Path(__file__).resolve().parents[1]
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
IDS = dict(zip(JOINTS, range(1, 7), strict=True))  # LeRobot's SO-101 ids
TICKS_PER_RAD = 4096 / (2 * math.pi)
PROFILE = servo_profile("STS3215-7.4V").motor
STALL = PROFILE["max_torque"]  # N*m at Present Load 1000
#: the P_Coefficient LeRobot's SO101Follower writes to each servo (so_follower.py)
LEROBOT_P = 16
FRICTION = 0.052393  # N*m: Coulomb (Rhoban/bam params/feetech_sts3215_7_4V/m1.json)
#: the gear's load-dependent friction at rest, Rhoban/bam params/feetech/m6.json (an
#: STS3250, as profiles.yaml takes it): the load's factor and the motor torque's, each
#: its base + Stribeck term
AT_REST_EXTERNAL = (0.195734, 0.417901)
AT_REST_MOTOR = (9.09184e-7, 0.0295310)
TIMEOUT = 60.0


def ticks(rad: float) -> int:
    return round(2048 + rad * TICKS_PER_RAD)


@pytest.fixture
def arm(tmp_path):
    with VirtualSO101Process(tmp_path / "eeprom.json", realtime=True) as process:
        yield process


@pytest.fixture
def sdk(arm):
    """The vendor SDK on the arm's port: (port, packet handler)."""
    port = scs.PortHandler(arm.port)
    assert port.openPort() and port.setBaudRate(1_000_000)
    yield port, scs.PacketHandler(0)
    port.closePort()


def written(write, port, *args) -> bool:
    """A write acknowledged, sent again after a reply missed (the SDK's packet timeout is
    a few ms of wall time: this process, at normal priority beside a busy core, can miss
    it); the writes here are idempotent. Any other error fails at once."""
    for _ in range(3):
        result = write(port, *args)[0]
        if result != scs.COMM_RX_TIMEOUT:
            return result == scs.COMM_SUCCESS
    return False


def read(arm, address: int, size: int) -> dict[str, int]:
    return {j: arm.get(i, address, size) for j, i in IDS.items()}


def wait_at_rest(arm, hold_s: float = 0.3, timeout_s: float = TIMEOUT) -> None:
    """Until every Present Speed has read 0 for ``hold_s`` of the servos' own time."""
    deadline, since = time.monotonic() + timeout_s, arm.time()
    while arm.time() - since < hold_s:
        if any(read(arm, emu.PRESENT_SPEED, 2).values()):
            since = arm.time()
        assert time.monotonic() < deadline, f"still moving: {read(arm, emu.PRESENT_SPEED, 2)}"


def gravity_torques(positions: dict[str, float]) -> dict[str, float]:
    """The weight's torque on each joint at ``positions`` (config/so101.urdf)."""
    loads = KinematicTree((REPO / "config" / "so101.urdf").read_text()).loads(positions)
    out = {}
    for joint, fields in loads.items():
        load = fields["load"]
        out[joint] = -load["gravity_mass"] * G * load.get("gravity_distance", 0.0) * math.cos(
            positions[joint] - load.get("gravity_angle", 0.0))
    return out


def holding_budget(external: float, motor: float) -> float:
    """The most the gear's friction holds at rest (N*m) against the weight's torque
    ``external`` and the motor's ``motor`` (each as it acts on the joint): Rhoban/bam's
    directional model, written out by hand."""
    return FRICTION + sum(abs(external * ke - motor * km)
                          for ke, km in zip(AT_REST_EXTERNAL, AT_REST_MOTOR, strict=True))


def test_the_arm_answers_as_six_sts3215_and_starts_at_rest_on_its_stop(arm, sdk):
    """Model number 777 at ids 1-6, torque off; the arm fell from the URDF's zero pose
    (the shoulder's weight torque there is +0.54 N*m, ten times the gear's friction)
    onto shoulder_lift's upper stop, 1.74533 rad = tick 3186, and lies still."""
    port, packet = sdk
    assert [packet.ping(port, i)[:2] for i in IDS.values()] == [(777, scs.COMM_SUCCESS)] * 6
    assert set(read(arm, emu.TORQUE_ENABLE, 1).values()) == {0}
    assert set(read(arm, emu.PRESENT_SPEED, 2).values()) == {0}
    assert read(arm, emu.PRESENT_POSITION, 2)["shoulder_lift"] == ticks(1.74533)


@pytest.mark.parametrize("pose", [
    {"shoulder_pan": 0.3, "shoulder_lift": -0.4, "elbow_flex": 0.5, "wrist_flex": 0.2,
     "wrist_roll": 0.0, "gripper": 0.4},
    {"shoulder_pan": -0.5, "shoulder_lift": 0.6, "elbow_flex": 1.2, "wrist_flex": -0.8,
     "wrist_roll": 1.0, "gripper": 0.1},
], ids=["reaching", "folded"])
def test_servos_hold_a_pose_at_rest_against_the_arms_weight(arm, sdk, pose):
    """Goals written, torque on: every servo comes to rest (Present Speed 0), and each
    pushes back the weight's torque at the pose it reached, less what the gear's friction
    holds at rest (|Present Load x stall + torque| within the holding budget + one
    unit); the joints that carry no weight (the pan's vertical axis) end on the goal
    within the firmware's dead band (one tick). The folded pose's wrist (0.10 N*m, twice
    the gear's Coulomb friction) crept in and out of its dead zone before the gear's
    load-dependent friction was in (Present Speed +-1-2 steps/s)."""
    port, packet = sdk
    for joint, i in IDS.items():
        assert written(packet.write2ByteTxRx, port, i, emu.GOAL_POSITION, ticks(pose[joint]))
        assert written(packet.write1ByteTxRx, port, i, emu.TORQUE_ENABLE, 1)
    wait_at_rest(arm, timeout_s=20.0)  # at rest in 2 s of the servos' time
    present = read(arm, emu.PRESENT_POSITION, 2)
    load = read(arm, emu.PRESENT_LOAD, 2)
    reached = {j: (present[j] - 2048) / TICKS_PER_RAD for j in JOINTS}
    torque = gravity_torques(reached)
    for joint in JOINTS:
        motor = load[joint] * STALL / 1000
        assert abs(motor + torque[joint]) <= holding_budget(torque[joint], motor) + (
            STALL / 1000), (joint, load, torque)
    assert abs(present["shoulder_pan"] - ticks(pose["shoulder_pan"])) <= 1
    assert torque["shoulder_lift"] != pytest.approx(0.0, abs=0.1)  # a real load held


# ------------------------------------------------------------------------- LeRobot

def _lerobot_python() -> tuple[str | None, str]:
    """A Python with LeRobot: SERVO_SIM_LEROBOT_PYTHON, else .venv-lerobot's
    (scripts/setup-lerobot-venv), else this one if it has lerobot; else why not."""
    python = os.environ.get("SERVO_SIM_LEROBOT_PYTHON")
    if python:
        return python, ""
    if (REPO / ".venv-lerobot" / "bin" / "python").exists():
        return str(REPO / ".venv-lerobot" / "bin" / "python"), ""
    if importlib.util.find_spec("lerobot") is not None:
        return sys.executable, ""
    return None, ("lerobot not importable here, no .venv-lerobot and SERVO_SIM_LEROBOT_PYTHON "
                  "not set: LeRobot (torch, about 6 GB) lives in a venv of its own: "
                  "scripts/setup-lerobot-venv (docs/hardware.md, 'A virtual SO-101 for "
                  "LeRobot')")


def _calibration(directory: Path) -> dict[str, dict[str, int]]:
    """A LeRobot calibration of the virtual arm: homing offset 0 (its joints' 0 rad is
    tick 2048), ranges the URDF's limits, the wrist roll a full turn."""
    limits = {"shoulder_pan": 1.91986, "shoulder_lift": 1.74533, "elbow_flex": 1.69,
              "wrist_flex": 1.65806}
    calibration = {j: {"id": IDS[j], "drive_mode": 0, "homing_offset": 0,
                       "range_min": ticks(-limit), "range_max": ticks(limit)}
                   for j, limit in limits.items()}
    calibration["wrist_roll"] = {"id": 5, "drive_mode": 0, "homing_offset": 0,
                                 "range_min": 0, "range_max": 4095}
    calibration["gripper"] = {"id": 6, "drive_mode": 0, "homing_offset": 0,
                              "range_min": ticks(-0.174533), "range_max": ticks(1.74533)}
    directory.mkdir()
    (directory / "virtual.json").write_text(json.dumps(calibration))
    return calibration


def _follow(python: str, port: str, directory: Path, action: dict[str, float]) -> list[dict]:
    out = subprocess.run(
        [python, str(REPO / "examples" / "lerobot_so101.py"), "--port", port,
         "--calibration-dir", str(directory), "--yes", "--keep-torque", "--seconds", "2",
         "--action",
         *(f"{j}={v}" for j, v in action.items())],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def test_lerobots_so101_follower_drives_the_virtual_arm_and_its_calibration_is_kept(
        tmp_path):
    """LeRobot's own client: the first connection finds the servos' registers unlike
    the calibration file and writes it (LeRobot asks, ENTER); the arm follows 2 s of
    actions at 30 Hz; restarted on the same EEPROM file, the next connection finds the
    calibration in the servos (no question), and the arm follows again and comes to rest."""
    python, why = _lerobot_python()
    if python is None:
        pytest.skip(why)
    calibration = _calibration(tmp_path / "calibration")
    eeprom = tmp_path / "eeprom.json"
    action = {"shoulder_pan": 30.0, "shoulder_lift": -20.0, "elbow_flex": 20.0,
              "wrist_flex": 10.0, "wrist_roll": 0.0, "gripper": 40.0}  # deg; gripper %
    for run in range(2):
        with VirtualSO101Process(eeprom, realtime=True) as arm:
            events = {e["event"]: e for e in _follow(python, arm.port, tmp_path / "calibration",
                                                     action)}
            wait_at_rest(arm)
            present = read(arm, emu.PRESENT_POSITION, 2)
        assert bool(events["connected"]["asked"]) is (run == 0), events["connected"]
        assert events["connected"]["is_calibrated"]
        observed = events["followed"]["observation"]
        for joint, goal in action.items():
            c = calibration[joint]
            low, high = c["range_min"], c["range_max"]
            # LeRobot 0.4.4's SO-101 units, by hand: degrees from the range's middle
            # (4095 ticks a turn) for the body (use_degrees), 0..100 of the range for the
            # gripper
            expected = low + goal / 100 * (high - low) if joint == "gripper" else \
                (low + high) / 2 + goal * 4095 / 360
            # held off the goal by the weight: the servo's torque at LeRobot's P 16 (duty
            # = P e / 1000 of the stall torque, e in ticks) pushes back the weight's at
            # the pose, within what the gear's friction holds at rest and a tick or so
            # (the goal's rounding, the dead zone); 16.5 ticks at the elbow, once
            torque = gravity_torques({j: (present[j] - 2048) / TICKS_PER_RAD for j in JOINTS})
            motor = LEROBOT_P * (expected - present[joint]) / 1000 * STALL
            assert abs(motor + torque[joint]) <= holding_budget(torque[joint], motor) + (
                2 * LEROBOT_P * STALL / 1000), (joint, present, expected, torque)
            assert observed[f"{joint}.pos"] == pytest.approx(goal, abs=1.5), observed


SETUP_MOTOR = """
import sys
from lerobot.motors import Motor, MotorNormMode
from lerobot.motors.feetech import FeetechMotorsBus
bus = FeetechMotorsBus(port=sys.argv[1],
                       motors={"gripper": Motor(6, "sts3215", MotorNormMode.RANGE_0_100)})
bus.setup_motor("gripper")
print(bus.broadcast_ping())
"""


def test_lerobots_setup_motor_gives_a_servo_its_id_and_the_servo_keeps_it(tmp_path):
    """LeRobot's setup_motor (what lerobot-setup-motors runs for each servo, connected
    alone): it finds the servo by a broadcast ping (factory id 1), writes its ID (6, the
    gripper's) and Baud Rate; the servo answers at 6 from then on and after a restart
    (--eeprom), as a real one does."""
    python, why = _lerobot_python()
    if python is None:
        pytest.skip(why)
    eeprom = tmp_path / "gripper.json"
    with emu.EmulatorProcess([1], servo="STS3215-7.4V", eeprom=eeprom, realtime=True) as bus:
        out = subprocess.run([python, "-c", SETUP_MOTOR, bus.port], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.strip().splitlines()[-1] == "{6: 777}"
    with emu.EmulatorProcess([1], servo="STS3215-7.4V", eeprom=eeprom, realtime=True) as bus:
        port, packet = scs.PortHandler(bus.port), scs.PacketHandler(0)
        assert port.openPort() and port.setBaudRate(1_000_000)
        try:
            assert packet.ping(port, 6)[:2] == (777, scs.COMM_SUCCESS)
            assert packet.ping(port, 1)[1] == scs.COMM_RX_TIMEOUT
        finally:
            port.closePort()
