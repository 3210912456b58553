"""Webots controllers run unchanged through ``servo-sim controller`` (subprocesses).

Each controller here is written as for Webots; what it does is then done again through
the model's Python API (``Simulation``), and the two trajectories must be equal to the
last bit: the ``--csv`` record, and the sensor values the controller printed (as
``repr``). The expected rows are built here from the ``Simulation``'s state, not with
the command's CSV code.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shlex
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.emulators import dxl_emulator as emu
from servo_sim.emulators import sts_emulator as sts
from servo_sim.model import Simulation

DT = 8  # ms

ARM = {"name": "arm", "max_torque": 5.0, "max_velocity": 4.0, "inertia": 0.02,
       "damping_constant": 0.1, "min_position": -2.0, "max_position": 2.0}
SLIDE = {"name": "slide", "type": "linear", "max_force": 30.0, "max_velocity": 0.5,
         "load": {"gravity_mass": 0.5}, "brake_name": "slide brake",
         "position_sensor_name": "slide encoder"}
CONFIG = {"basic_time_step_ms": DT, "motors": [ARM, SLIDE]}


def controller(tmp_path: Path, source: str, config: dict | None = None, *args: str,
               module: str = "servo_sim.cli", timeout: float = 120
               ) -> subprocess.CompletedProcess:
    """Run ``source`` as a controller script on ``config`` (a YAML file)."""
    script = tmp_path / "my_controller.py"
    script.write_text(textwrap.dedent(source))
    cfg = tmp_path / "robot.yaml"
    cfg.write_text(yaml.safe_dump(config or CONFIG))
    head = ["controller"] if module == "servo_sim.cli" else []
    return subprocess.run([sys.executable, "-m", module, *head, str(script), str(cfg),
                           *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=timeout)


def read_csv(path: Path) -> tuple[list[str], list[list[float]]]:
    with path.open() as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in row] for row in rows[1:]]


def expected(config: dict, steps: int, actions: dict[int, Callable[[Simulation], None]]
             ) -> tuple[list[str], list[list[float]], Simulation]:
    """The same run through the Python API: ``actions[k]`` after step k (0: before any)."""
    sim = Simulation.from_config(config)
    header = ["time"] + [f"{m.name}.{q}" for m in sim
                         for q in ("position", "velocity", "motor_force", "energy")]

    def row() -> list[float]:
        return [sim.time] + [v for m in sim for v in
                             (m.position, m.velocity, m.motor_force, m.energy)]

    rows = [row()]
    if 0 in actions:
        actions[0](sim)
    for k in range(1, steps + 1):
        sim.step()
        rows.append(row())
        if k in actions:
            actions[k](sim)
    return header, rows, sim


def plain(value):
    """NaN as None (NaN != NaN), recursively: for comparing readings."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def printed(stdout: str) -> list:
    """What the controller printed with json.dumps (floats exact), NaN as None."""
    return [plain(json.loads(line)) for line in stdout.splitlines() if line.startswith("[")]


# --------------------------------------------------------------------------- trajectories


def test_a_robot_subclass_in_position_control_matches_the_api_bit_for_bit(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot

        class Arm(Robot):
            def __init__(self):
                super().__init__()
                self.ts = int(self.getBasicTimeStep())
                self.arm = self.getDevice("arm")
                self.sensor = self.arm.getPositionSensor()
                self.sensor.enable(2 * self.ts)
                self.arm.enableTorqueFeedback(self.ts)

            def run(self):
                self.arm.setPosition(1.2)
                self.arm.setVelocity(3.0)
                k = 0
                while self.step(self.ts) != -1:
                    k += 1
                    print(json.dumps([k, self.sensor.getValue(),
                                      self.arm.getTorqueFeedback()]))
                    if k == 40:
                        self.arm.setControlPID(20, 1, 0.5)
                        self.arm.target_position = -0.5   # the property form
                        self.arm.setAcceleration(30)

        Arm().run()
    """, None, "--duration", "1.0", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    steps = 125  # 1 s of 8-ms steps

    def start(sim):
        a = sim.motor("arm")
        a.enable_position(16), a.enable_torque_feedback(8)
        a.set_position(1.2), a.set_velocity(3.0)

    def change(sim):
        a = sim.motor("arm")
        a.set_control_pid(20, 1, 0.5), a.set_position(-0.5), a.set_acceleration(30)

    header, rows, _ = expected(CONFIG, steps, {0: start, 40: change})
    assert read_csv(tmp_path / "out.csv") == (header, rows)
    # the sensor values the controller read after each step, as the API reads them
    sim = Simulation.from_config(CONFIG)
    start(sim)
    values = []
    for k in range(1, steps):  # the step reaching 1.0 s returns -1: no reading after it
        sim.step()
        a = sim.motor("arm")
        values.append([k, a.get_position(), a.get_torque_feedback()])
        if k == 40:
            change(sim)
    got = printed(r.stdout)
    assert [v[0] for v in got] == [v[0] for v in values]
    assert got[0][1] is None  # period 16 ms: not sampled after the first step
    assert got == plain(values)


def test_a_plain_script_in_velocity_control_with_inf(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot, Motor
        robot = Robot()
        slide = robot.getDevice("slide")
        assert isinstance(slide, Motor) and slide.getType() == Motor.LINEAR
        slide.setPosition(float("inf"))
        slide.setVelocity(0.3)
        for _ in range(50):
            robot.step(32)                 # 4 basic steps each
        slide.setVelocity(-0.2)
        while robot.step(32) != -1:
            pass
    """, None, "--duration", "2.0", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr

    def start(sim):
        sim.motor("slide").set_position(math.inf), sim.motor("slide").set_velocity(0.3)

    # 50 steps of 32 ms are 200 basic steps; 2 s are 250
    header, rows, _ = expected(CONFIG, 250, {
        0: start, 200: lambda s: s.motor("slide").set_velocity(-0.2)})
    assert read_csv(tmp_path / "out.csv") == (header, rows)
    assert rows[200][5] > rows[-1][5] > 0  # up at 0.3 m/s, then down at 0.2 m/s


def test_sensors_start_disabled_whatever_the_config_says(tmp_path):
    config = {**CONFIG, "motors": [
        {**ARM, "force_feedback_sampling_period_ms": 8,
         "position_sensor": {"sampling_period_ms": 8, "noise": 0.01}}, SLIDE]}
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        arm = robot.getDevice("arm")
        sensor = arm.getPositionSensor()
        print(json.dumps([sensor.getSamplingPeriod(), arm.getTorqueFeedbackSamplingPeriod()]))
        robot.step(16)
        print(json.dumps([sensor.getValue(), arm.getTorqueFeedback()]))
        sensor.enable(8)
        arm.enableTorqueFeedback(8)
        arm.setPosition(1.0)
        for _ in range(3):
            robot.step(8)
            print(json.dumps([sensor.getValue(), arm.getTorqueFeedback()]))
    """, config)
    assert r.returncode == 0, r.stderr
    assert "wb_position_sensor_get_value() called for a disabled device" in r.stderr
    assert "wb_motor_get_torque_feedback() called for a disabled device" in r.stderr
    sim = Simulation.from_config(config)  # the same, the sensors off from the start
    arm = sim.motor("arm")
    arm.disable_position(), arm.disable_force_feedback()
    sim.step(2)
    arm.enable_position(8), arm.enable_force_feedback(8), arm.set_position(1.0)
    values = []
    for _ in range(3):
        sim.step()
        values.append([arm.get_position(), arm.get_force_feedback()])
    assert printed(r.stdout) == [[0, 0], [None, None], *values]


def test_torque_control_and_the_deprecated_getters(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        arm = robot.getMotor("arm")               # deprecated, still found
        sensor = robot.getPositionSensor("arm sensor")
        sensor.enable(8)
        arm.setTorque(0.4)
        while robot.step() != -1:
            if robot.getTime() >= 0.2 and arm.getAvailableTorque() == 5.0:
                arm.torque = 0.1                    # the property form
                arm.setAvailableTorque(2.0)
    """, None, "--duration", "0.5", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("DEPRECATION: Robot.getMotor is deprecated") == 1
    assert "DEPRECATION: Robot.getPositionSensor is deprecated" in r.stderr

    def later(sim):
        sim.motor("arm").set_torque(0.1), sim.motor("arm").set_available_torque(2.0)

    # --duration 0.5: 62.5 steps of 8 ms, rounded up to 63
    header, rows, _ = expected(CONFIG, 63, {0: lambda s: s.motor("arm").set_torque(0.4),
                                            25: later})  # 25 * 8 ms = 0.2 s
    assert read_csv(tmp_path / "out.csv") == (header, rows)


def test_coupled_motors_by_their_webots_names(tmp_path):
    config = {"basic_time_step_ms": 4, "motors": [
        {"name": "finger::left", "type": "linear", "max_velocity": 0.1, "max_force": 20.0,
         "max_position": 0.04},
        {"name": "finger::right", "type": "linear", "max_velocity": 0.2, "max_force": 20.0,
         "multiplier": -2.0, "min_position": -0.08}]}
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        left = robot.getDevice("finger::left")
        right = robot.getDevice("finger::right")
        left.setPosition(0.03)                  # relayed to the right finger, times -2
        print(json.dumps([left.getTargetPosition(), right.getTargetPosition()]))
        robot.step(400)
        right.setPosition(-0.02)
        while robot.step(4) != -1:
            pass
    """, config, "--duration", "0.6", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[0.03, 0.03]]  # the argument, relayed (the model's rule)
    header, rows, _ = expected(config, 150, {
        0: lambda s: s.motor("finger::left").set_position(0.03),
        100: lambda s: s.motor("finger::right").set_position(-0.02)})
    assert read_csv(tmp_path / "out.csv") == (header, rows)


def test_a_brake_adds_its_damping_to_the_joints_own(tmp_path):
    config = {**CONFIG, "motors": [ARM, {**SLIDE, "damping_constant": 2.0}]}
    r = controller(tmp_path, """
        import json
        from controller import Robot, Brake, Node
        robot = Robot()
        slide = robot.getDevice("slide")
        brake = robot.getDevice("slide brake")
        assert isinstance(brake, Brake) and brake is slide.getBrake()
        assert brake.getNodeType() == Node.BRAKE and brake.getMotor() is slide
        assert brake.getPositionSensor() is robot.getDevice("slide encoder")
        slide.setAvailableForce(0)              # passive: it falls under its load
        robot.step(80)
        brake.setDampingConstant(40.0)
        brake.setDampingConstant(float("nan"))  # refused, warned: still 40
        brake.setDampingConstant(-1)            # refused, warned
        robot.step(80)
        brake.dampingConstant = 10              # replaces the brake's 40 (property form)
        while robot.step(8) != -1:
            pass
    """, config, "--duration", "0.3", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    for refused in ("nan rejected: must be finite.", "-1 rejected: must be >= 0."):
        assert f"Warning: brake 'slide brake' (motor 'slide'): damping constant {refused}" \
            in r.stderr
    # the joint's damping: its own 2 N*s/m, plus the brake's 40, then plus 10
    header, rows, _ = expected(config, 38, {
        0: lambda s: s.motor("slide").set_available_force(0),
        10: lambda s: s.set_parameter("slide", "damping_constant", 42.0),
        20: lambda s: s.set_parameter("slide", "damping_constant", 12.0)})
    assert read_csv(tmp_path / "out.csv") == (header, rows)
    falls = [row[5] for row in rows]
    assert falls[10] - falls[11] > falls[15] - falls[16] > 0  # braked
    assert falls[-2] - falls[-1] > falls[15] - falls[16]  # less braked


def test_bad_sampling_periods_are_refused_by_the_models_rule(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        arm = robot.getDevice("arm")
        arm.enableForceFeedback(16)
        arm.enableTorqueFeedback(-8)            # refused: still 16
        sensor = arm.getPositionSensor()
        sensor.enable(2.5)                      # refused: still disabled
        print(json.dumps([arm.getForceFeedbackSamplingPeriod(), sensor.getSamplingPeriod()]))
    """, None)
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[16, 0]]
    assert "servo-sim: warning: motor 'arm': force feedback sampling period = -8 rejected: " \
        "the sampling period must be >= 0" in r.stderr
    assert "servo-sim: warning: motor 'arm': position sampling period = 2.5 rejected: the " \
        "sampling period must be an integer number of ms" in r.stderr


def test_the_battery_drains_with_the_motors_energy_and_ends_the_run(tmp_path):
    config = {**CONFIG, "battery": [2.0, 3.0]}
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        print(json.dumps([robot.batterySensorGetValue()]))
        robot.batterySensorEnable(16)
        robot.getDevice("arm").setPosition(1.5)
        while robot.step(8) != -1:
            print(json.dumps([robot.getTime(), robot.batterySensorGetValue()]))
        print("ended at", robot.getTime())
    """, config, "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    assert "wb_robot_battery_sensor_get_value() called for a disabled device" in r.stderr
    got = printed(r.stdout)
    assert got[0] == [None]
    sim = Simulation.from_config(config)
    sim.motor("arm").set_position(1.5)
    values, level = [], math.nan
    while True:
        sim.step()
        left = max(0.0, 2.0 - (sim.motor("arm").energy + sim.motor("slide").energy))
        if sim.time_ms % 16 == 0:
            level = left
        if left <= 0:
            break
        values.append([sim.time, level])
    assert got[1:] == plain(values)  # the sensor refreshes every 16 ms
    assert r.stdout.splitlines()[-1] == f"ended at {sim.time}"  # empty: step() returned -1
    assert len(read_csv(tmp_path / "out.csv")[1]) == sim.time_ms // DT + 1


# --------------------------------------------------------------------------- Webots rules


def test_bad_values_warn_on_stderr_and_change_nothing(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        arm = robot.getDevice("arm")
        arm.setPosition(0.5)
        arm.setPosition(float("nan"))
        arm.setVelocity(99)                     # clipped to max_velocity, warned
        arm.setAvailableTorque(-1)
        arm.setControlPID(0, 0, 0)
        arm.setVelocity(float("inf"))
        print(json.dumps([arm.getTargetPosition(), arm.getVelocity(), arm.getAvailableTorque(),
                    arm.getAcceleration()]))
        print(json.dumps([robot.getDevice("elbow")]))
        robot.step(8)
    """, None, "--duration", "0.1")
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[0.5, 4.0, 5.0, -1.0], [None]]
    for message in ("motor 'arm': position = nan rejected: NaN",
                    "motor 'arm': velocity 99 exceeds max_velocity [-4, 4]; clipped to 4",
                    "motor 'arm': available_torque = -1.0 rejected: must be >= 0",
                    "motor 'arm': p = 0.0 rejected: must be > 0",
                    "motor 'arm': velocity = inf rejected: must be finite",
                    'Device "elbow" was not found on robot "robot"'):
        assert message in r.stderr


def test_the_same_refusal_step_after_step_is_warned_once(tmp_path):
    r = controller(tmp_path, """
        from controller import Robot
        robot = Robot()
        arm, slide = robot.getDevice("arm"), robot.getDevice("slide")
        for _ in range(10):
            arm.setPosition(float("nan"))
            slide.setPosition(float("nan"))
            arm.setVelocity(float("nan"))
            robot.step(8)
        arm.setPosition(0.5)
        arm.setPosition(float("nan"))  # after an accepted command: said again
    """, None)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("motor 'arm': position = nan rejected: NaN") == 2
    assert r.stderr.count("motor 'slide': position = nan rejected: NaN") == 1
    assert r.stderr.count("motor 'arm': velocity = nan rejected: NaN") == 1


def test_devices_are_listed_and_linked_as_webots_does(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot, Motor, PositionSensor, Node, AnsiCodes
        robot = Robot()
        names = [robot.getDeviceByIndex(i).getName() for i in range(robot.getNumberOfDevices())]
        enc = robot.getDevice("slide encoder")
        arm_sensor = PositionSensor("arm sensor")      # by name: enabled at the time step
        print(json.dumps([names, robot.getName(), robot.getBasicTimeStep(), robot.getTime(),
                    enc.getType() == PositionSensor.LINEAR, enc.getMotor().getName(),
                    enc.getBrake().getName(), arm_sensor.getSamplingPeriod(),
                    robot.getDevice("arm").getNodeType() == Node.ROTATIONAL_MOTOR,
                    AnsiCodes.RED_FOREGROUND, Motor("slide").getMaxForce(),
                    robot.getDevice("arm").getBrake()]))
    """, None)
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[["arm", "arm sensor", "slide", "slide encoder",
                                   "slide brake"], "robot", 8.0, 0.0, True, "slide",
                                  "slide brake", 8, True, "\x1b[31m", 30.0, None]]


def test_a_controller_that_ignores_minus_one_is_ended(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        robot.getDevice("arm").setPosition(1.0)
        results = []
        try:
            while True:
                results.append(robot.step(16))
        finally:
            print(json.dumps([len(results), results[-1], results.count(-1)]))
    """, None, "--duration", "0.4", "--csv", "out.csv")
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[25, -1, 1]]  # 400 ms in 16-ms steps; one -1, then ended
    assert "stepped again after step() returned -1 (--duration reached at t = 0.4 s): it " \
        "is ended, as Webots ends it" in r.stderr
    assert len(read_csv(tmp_path / "out.csv")[1]) == 51  # t = 0 .. 0.4 s


def test_a_controller_that_raises_gives_its_traceback_and_status_1(tmp_path):
    r = controller(tmp_path, """
        from controller import Robot
        robot = Robot()
        robot.step(8)

        def plan(k):
            return 1 / k

        plan(0)
    """, None, "--duration", "1")
    assert r.returncode == 1
    assert r.stderr.startswith("Traceback (most recent call last):\n")
    assert 'my_controller.py", line 9, in <module>' in r.stderr
    assert 'my_controller.py", line 7, in plan' in r.stderr
    assert r.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "runpy" not in r.stderr and "servo_sim" not in r.stderr


def spawn(tmp_path: Path, source: str) -> subprocess.Popen:
    """The controller ``source`` on CONFIG as a child process, its output piped."""
    script = tmp_path / "c.py"
    script.write_text(textwrap.dedent(source))
    cfg = tmp_path / "robot.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    return subprocess.Popen([sys.executable, "-m", "servo_sim.cli", "controller", str(script),
                             str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_ctrl_c_is_webots_quit_step_returns_minus_one_then_cleanup(tmp_path):
    process = spawn(tmp_path, """\
        from controller import Robot
        robot = Robot()
        robot.getDevice("arm").setPosition(1.0)
        robot.step(8)
        print("ready", flush=True)
        while robot.step(8) != -1:
            pass
        print("cleaned up after", robot.getTime() >= 0.008)
    """)
    try:
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert out == "cleaned up after True\n"


def test_a_second_signal_interrupts_at_once(tmp_path):
    process = spawn(tmp_path, """\
        from controller import Robot
        robot = Robot()
        print("ready", flush=True)
        while robot.step(8) != -1:
            pass
        print("stuck in cleanup", flush=True)
        while True:
            pass
    """)
    try:
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        assert process.stdout.readline() == "stuck in cleanup\n"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err == "servo-sim: controller interrupted\n"


def test_webots_devices_not_simulated_say_so(tmp_path):
    r = controller(tmp_path, """
        from controller import Robot, Camera
    """, None)
    assert r.returncode == 1
    assert r.stderr.endswith("ImportError: servo-sim controller: Camera is not available: "
                             "servo_sim provides the motors, their position sensors and "
                             "brakes (AnsiCodes, Brake, Device, Motor, Node, PositionSensor, "
                             "Robot)\n")
    assert "servo_sim" not in r.stderr.split("ImportError")[0]  # the script's frame only


def test_property_forms_and_generic_devices(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot, Device, Node
        robot = Robot()
        arm = robot.getDevice("arm")
        arm.target_velocity = 2.5
        arm.target_acceleration = 12
        arm.available_torque = 3
        arm.force_feedback_sampling_period = 16
        arm.position_sensor.sampling_period = 8
        robot.battery_sensor_sampling_period = 32
        generic = Device("slide brake")
        robot.step(16)
        print(json.dumps([arm.target_velocity, arm.target_acceleration, arm.available_torque,
                          arm.available_force, arm.max_torque, arm.max_velocity,
                          arm.min_position, arm.max_position, arm.multiplier, arm.type,
                          arm.torque_feedback_sampling_period,
                          arm.position_sensor.value == arm.position_sensor.getValue(),
                          arm.force_feedback == arm.torque_feedback,
                          robot.battery_sensor_sampling_period, robot.time, robot.name,
                          generic.getNodeType() == Node.BRAKE, generic.name,
                          robot.getDeviceByIndex(7)]))
    """, None)
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[2.5, 12.0, 3.0, 3.0, 5.0, 4.0, -2.0, 2.0, 1.0, 0, 16,
                                  True, True, 32, 0.016, "robot", True, "slide brake", None]]
    assert "The index of wb_robot_get_device_by_index() is out of the bounds" in r.stderr


def test_the_robots_property_forms_and_user_input_not_simulated(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        robot.battery_sensor_sampling_period = None     # Webots: the basic time step
        print(json.dumps([robot.mode, robot.world_path, robot.project_path, robot.supervisor,
                          robot.synchronization, robot.battery_sensor_sampling_period,
                          [robot.getMode(), robot.getWorldPath(), robot.getProjectPath(),
                           robot.getSupervisor(), robot.getSynchronization()]]))
        for get in (robot.getKeyboard, robot.getMouse, robot.getJoystick):
            try:
                get()
            except NotImplementedError as exc:
                print(exc)
        robot.keyboard.enable(8)
    """, None)
    assert r.returncode == 1
    provided = ("is not available: servo_sim provides the motors, their position sensors "
                "and brakes (AnsiCodes, Brake, Device, Motor, Node, PositionSensor, Robot)")
    assert printed(r.stdout) == [[0, "", "", False, True, 8, [0, "", "", False, True]]]
    assert r.stdout.splitlines()[1:] == [f"servo-sim controller: {name} {provided}"
                                         for name in ("Keyboard", "Mouse", "Joystick")]
    assert r.stderr.endswith("NotImplementedError: servo-sim controller: Keyboard "
                             f"{provided}\n")
    assert 'my_controller.py", line 15, in <module>' in r.stderr
    assert "servo_sim" not in r.stderr.split("NotImplementedError")[0]


def test_a_real_device_that_does_not_answer_is_one_line_exit_2(tmp_path):
    config = {"motors": [{"name": "pan"}], "hardware": {
        "plugin": "dynamixel", "port": str(tmp_path / "no-such-port"), "baud_rate": 4000000,
        "pan": {"id": 1, "torque_constant": 1.78}}}
    r = controller(tmp_path, "", config)
    assert r.returncode == 2
    assert r.stderr.startswith(f"servo-sim: error: {tmp_path / 'robot.yaml'}: hardware "
                               "'dynamixel': ")
    assert r.stderr.count("servo-sim: error:") == 1


def test_sys_exit_status_argv_and_the_working_directory(tmp_path):
    r = controller(tmp_path, """
        import json
        import os, sys
        from controller import Robot
        robot = Robot()
        here = os.path.dirname(os.path.abspath(__file__))
        print(json.dumps([sys.argv[1:], os.getcwd() == here]))
        sys.exit(3)
    """, None, "--", "--speed", "2")
    assert r.returncode == 3, r.stderr
    assert printed(r.stdout) == [[["--speed", "2"], True]]


def test_python_dash_m_form(tmp_path):
    r = controller(tmp_path, """
        import json
        from controller import Robot
        robot = Robot()
        while robot.step(8) != -1:
            pass
        print(json.dumps([robot.getTime()]))
    """, None, "--duration", "0.2", module="servo_sim.webots")
    assert r.returncode == 0, r.stderr
    assert printed(r.stdout) == [[0.2]]


def test_controller_is_importable_only_during_the_run(tmp_path):
    script = tmp_path / "c.py"
    script.write_text("import controller\nfrom controller.motor import Motor\n"
                      "assert controller.Motor is Motor\n")
    from servo_sim.model import parse_config
    from servo_sim.webots.runner import run_controller
    from servo_sim.webots.session import Session

    assert "controller" not in sys.modules
    status = run_controller(script, Session(parse_config(CONFIG)))
    assert status == 0
    assert "controller" not in sys.modules and "controller.motor" not in sys.modules
    with pytest.raises(ImportError):
        import controller  # noqa: F401


@pytest.mark.parametrize("args, message", [
    (["missing.py"], "missing.py: no such controller script"),
    (["{script}", "--real-time-factor", "-1"], "--real-time-factor must be >= 0"),
    (["{script}", "--duration", "0"], "--duration must be > 0"),
    (["{script}", "--csv", "no/such/dir/out.csv"],
     "--csv no/such/dir/out.csv: cannot write: No such file or directory"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, args, message):
    script = tmp_path / "c.py"
    script.write_text("")
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "controller",
                        *(a.format(script=script) for a in args)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1


def test_a_config_with_duplicate_device_names_is_refused(tmp_path):
    config = {"motors": [{"name": "a", "brake_name": "b"}, {"name": "b"}]}
    r = controller(tmp_path, "", config)
    assert r.returncode == 2
    assert "motor 'b': duplicate" not in r.stderr
    assert "motor 'a': field 'brake_name' = 'b': device name already used by motor 'b'" \
        in r.stderr


# --------------------------------------------------------------------------- a JetBot


#: A robot PROTO as JetBot's (cyberbotics/webots, projects/robots/nvidia/jetbot): two
#: wheels in velocity control, a Display and, in a slot, a camera PROTO of its own.
ROVER = """\
#VRML_SIM R2023b utf8
EXTERNPROTO "RoverCamera.proto"
PROTO Rover [
  field SFString name       "rover"
  field SFNode   cameraSlot RoverCamera {
  }
]
{
  Robot {
    name IS name
    children [
      HingeJoint {
        jointParameters HingeJointParameters {
          axis 0 1 0
        }
        device [
          RotationalMotor {
            name "left wheel"
            maxVelocity 50
            maxTorque 5
          }
        ]
      }
      HingeJoint {
        jointParameters HingeJointParameters {
          axis 0 1 0
        }
        device [
          RotationalMotor {
            name "right wheel"
            maxVelocity 50
            maxTorque 5
          }
        ]
      }
      Display {
        width 128
        height 32
      }
      Slot {
        endPoint IS cameraSlot
      }
    ]
  }
}
"""
ROVER_CAMERA = """\
#VRML_SIM R2023b utf8
PROTO RoverCamera [
  field SFString name "camera"
]
{
  Solid {
    children [
      Camera {
        name IS name
        width 224
      }
    ]
  }
}
"""
#: jetbot.py's shape: every device fetched in init(), the display and camera never used
#: (USE: a line that uses one); then forward, stop, turn, stop, as its step_* do.
ROVER_CONTROLLER = """
    from controller import Robot

    class Rover(Robot):
        def init(self):
            self.left_motor = self.getDevice("left wheel")
            self.right_motor = self.getDevice("right wheel")
            self.camera = self.getDevice("camera")
            self.display = self.getDevice("display")
            self.right_motor.setPosition(float("+inf"))
            self.left_motor.setPosition(float("+inf"))

        def drive(self, left, right, ms):
            self.left_motor.setVelocity(left)
            self.right_motor.setVelocity(right)
            self.step(ms)

    robot = Rover()
    robot.init()
    print(robot.display.getName(), robot.camera.getName())
    USE
    robot.drive(4, 4, 512)
    robot.drive(0, 0, 480)
    robot.drive(-3, 3, 512)
    robot.drive(0, 0, 480)
"""


def rover(tmp_path: Path, use: str = "") -> subprocess.CompletedProcess:
    """ROVER_CONTROLLER run on Rover.proto (``use``: its USE line), recorded in out.csv."""
    (tmp_path / "Rover.proto").write_text(ROVER)
    (tmp_path / "RoverCamera.proto").write_text(ROVER_CAMERA)
    script = tmp_path / "rover.py"
    script.write_text(textwrap.dedent(ROVER_CONTROLLER).replace("USE", use))
    return subprocess.run([sys.executable, "-m", "servo_sim.cli", "controller", "rover.py",
                           "Rover.proto", "--csv", "out.csv"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)


def test_a_jetbot_that_fetches_its_display_and_never_uses_it_runs_as_in_webots(tmp_path):
    """Issue 52, jetbot_proto: the controller runs to its end, its wheels as the same
    commands through the Python API give them, to the last bit."""
    from servo_sim.load.world import load_world

    r = rover(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["display camera"]
    assert "not simulated" not in r.stderr and "Traceback" not in r.stderr
    config = load_world(tmp_path / "Rover.proto").config
    assert config.basic_time_step_ms == 32  # Webots' default: 512 ms = 16 steps, 480 = 15

    def drive(left, right):
        def act(sim):
            sim.motor("left wheel").set_velocity(left)
            sim.motor("right wheel").set_velocity(right)
        return act

    def start(sim):
        sim.motor("left wheel").set_position(math.inf)
        sim.motor("right wheel").set_position(math.inf)
        drive(4, 4)(sim)

    header, rows, _ = expected(config, 62, {0: start, 16: drive(0, 0), 31: drive(-3, 3),
                                            47: drive(0, 0)})
    assert read_csv(tmp_path / "out.csv") == (header, rows)
    # the motion, by hand: forward at 4 rad/s, stopped, turning at -3 and +3, stopped
    velocity = {name: header.index(f"{name} wheel.velocity") for name in ("left", "right")}
    for k, left, right in ((16, 4, 4), (31, 0, 0), (47, -3, 3), (62, 0, 0)):
        assert rows[k][velocity["left"]] == pytest.approx(left, abs=1e-6)
        assert rows[k][velocity["right"]] == pytest.approx(right, abs=1e-6)


@pytest.mark.parametrize("use, device, what, call", [
    ("robot.display.setColor(0xFFFFFF)", "display", "Display, line 36", "setColor"),
    ("robot.camera.enable(32)", "camera", "Camera, RoverCamera.proto, line 8", "enable"),
])
def test_the_first_use_of_a_device_not_simulated_raises_naming_it(tmp_path, use, device,
                                                                   what, call):
    r = rover(tmp_path, use)
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["display camera"]
    last = r.stderr.strip().splitlines()
    assert last[-1] == (
        f'servo_sim.webots.api.NotSimulatedError: servo-sim controller: device "{device}" '
        f"({what}) is in the world but not simulated, so its {call} cannot run: servo_sim "
        "simulates the motors of joints, their position sensors and brakes, and passive "
        "joints' sensors and brakes")
    frame = max(i for i, line in enumerate(last) if line.lstrip().startswith("File "))
    assert "rover.py" in last[frame] and last[frame + 1].strip() == use  # the use's line
    assert len((tmp_path / "out.csv").read_text().splitlines()) == 2  # no step ran


# --------------------------------------------------------------------------- in-process


@contextmanager
def in_process(config: dict = CONFIG, **session_args) -> Iterator[tuple]:
    """The controller API (servo_sim.webots.api) serving a Session on ``config`` here,
    in this process: (api, session)."""
    from servo_sim.model import parse_config
    from servo_sim.webots import api
    from servo_sim.webots.session import Session

    session = Session(parse_config(config), **session_args)
    api.activate(session)
    try:
        yield api, session
    finally:
        api.activate(None)
        session.close()


def test_a_device_built_by_an_unknown_name_is_a_value_error(capsys):
    with in_process() as (api, _):
        robot = api.Robot()
        for make in (api.Device, api.Motor, api.PositionSensor, api.Brake):
            with pytest.raises(ValueError, match=r"^no device 'nope' on robot 'robot'$"):
                make("nope")
        assert robot.getDevice("nope") is None  # Webots' message, None
    assert capsys.readouterr().err == 'Device "nope" was not found on robot "robot"\n'


#: What the world says of the devices it has and servo_sim does not simulate.
UNSIMULATED = {"display": "Display, line 221",
               "camera": "Camera, JetBotRaspberryPiCamera.proto, line 51"}


def not_simulated(name: str, use: str) -> str:
    """The message of a first use, written out by hand."""
    return (f'servo-sim controller: device "{name}" ({UNSIMULATED[name]}) is in the world '
            f"but not simulated, so its {use} cannot run: servo_sim simulates the motors "
            "of joints, their position sensors and brakes, and passive joints' sensors "
            "and brakes")


def test_a_device_not_simulated_is_a_handle_that_raises_where_it_is_used(capsys):
    """Issue 52 (JetBot's jetbot.py fetches its display and never uses it): getDevice
    gives a handle, as Webots does for a device the robot has; its name answers, its
    first use raises the message naming the device, its type, line and the call."""
    with in_process(unsimulated=UNSIMULATED) as (api, session):
        robot = api.Robot()
        display = robot.getDevice("display")
        camera = robot.getMotor("camera")  # the deprecated getter: the same handle
        assert display is not None and camera is not None
        assert display is robot.getDevice("display") and camera is robot.getDevice("camera")
        assert isinstance(display, api.Device)
        assert (display.getName(), display.name, camera.getName()) == ("display", "display",
                                                                      "camera")
        assert repr(display) == "<NotSimulatedDevice 'display'>"
        uses = [(display, "setColor", lambda d: d.setColor(0xFFFFFF)),
                (display, "width", lambda d: d.width),
                (display, "getNodeType", lambda d: d.getNodeType()),
                (camera, "enable", lambda d: d.enable(32))]
        for device, use, call in uses:
            with pytest.raises(api.NotSimulatedError) as e:
                call(device)
            assert str(e.value) == not_simulated(device.name, use)
        assert issubclass(api.NotSimulatedError, NotImplementedError)
        # the robot's own devices are as before, and nothing ran
        assert robot.getDevice("arm").getName() == "arm"
        assert robot.getNumberOfDevices() == 5 and session.time_ms == 0
    err = capsys.readouterr().err
    assert err == "DEPRECATION: Robot.getMotor is deprecated, please use Robot.getDevice " \
                  "instead.\n"  # no "not found" line: the devices are there


def test_node_types_are_the_numbers_of_the_current_webots_header():
    """WbNodeType of cyberbotics/webots include/controller/c/webots/nodes.h: POSE after
    POINT_SET, VACUUM_GRIPPER after TOUCH_SENSOR (counted there by hand)."""
    with in_process() as (api, _):
        robot = api.Robot()
        assert [robot.getDevice(name).getNodeType() for name in
                ("arm", "arm sensor", "slide", "slide brake")] == [57, 52, 50, 37]
        node = api.Node
        assert (node.NO_NODE, node.POSE, node.SHAPE, node.ROBOT, node.VACUUM_GRIPPER,
                node.BALL_JOINT, node.RADIO) == (0, 26, 27, 34, 61, 62, 87)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-12, 44), min_size=1, max_size=12))
def test_step_durations_run_whole_basic_steps(durations):
    """Property: step(d) advances ceil(d / dt) basic steps (a d that is not a multiple of
    dt: Webots' warning, once) and returns 0 while the run lasts; a negative d is an
    error and advances nothing; the step that reaches --duration returns -1."""
    stderr = io.StringIO()
    with in_process(duration=0.2) as (api, session), redirect_stderr(stderr):
        robot = api.Robot()
        done, off_grid, negative = 0, False, 0
        for d in durations:
            result = robot.step(d)
            if d < 0:
                negative += 1
            else:
                done = min(done + -(-d // DT), 25)  # ceil, in integers
                off_grid = off_grid or d % DT != 0
            assert session.time_ms == done * DT
            assert result == (-1 if done == 25 else 0)
            if result == -1:
                break
    said = stderr.getvalue()
    assert said.count("Error: wb_robot_step() called with an invalid duration") == negative
    assert said.count("is not a multiple of WorldInfo.basicTimeStep (8 ms)") == off_grid


@pytest.mark.parametrize("step_ms, duration, steps", [
    (8, 0.5, 63),       # 62.5 steps: rounded up (0.504 s), not half-to-even (62)
    (8, 0.003, 1),      # less than a step: the first step reaches it
    (8, 0.2, 25),
    (7, 2.023, 289),    # 289.00000000000006 steps in floats: a whole number
    (4, 0.6, 150),
])
def test_the_duration_is_rounded_up_to_whole_steps(step_ms, duration, steps):
    config = {**CONFIG, "basic_time_step_ms": step_ms}
    with in_process(config, duration=duration) as (api, session):
        robot = api.Robot()
        results = [robot.step() for _ in range(steps)]
        assert results == [0] * (steps - 1) + [-1]
        assert session.time_ms == steps * step_ms


_VALUES = st.floats(-20, 20) | st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -1.0])
_CALLS = st.one_of(
    st.tuples(st.just("setPosition"), st.tuples(_VALUES)),
    st.tuples(st.just("setVelocity"), st.tuples(_VALUES)),
    st.tuples(st.just("setAcceleration"), st.tuples(_VALUES)),
    st.tuples(st.just("setAvailableTorque"), st.tuples(_VALUES)),
    st.tuples(st.just("setTorque"), st.tuples(_VALUES)),
    st.tuples(st.just("setControlPID"), st.tuples(_VALUES, _VALUES, _VALUES)),
)
_MODEL = {"setPosition": "set_position", "setVelocity": "set_velocity",
          "setAcceleration": "set_acceleration", "setAvailableTorque": "set_available_torque",
          "setTorque": "set_torque", "setControlPID": "set_control_pid"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), _CALLS), max_size=15))
def test_the_webots_motor_is_the_model_motor(calls):
    """Property: any commands, good or bad, through the Webots API leave the bank
    exactly as the same commands through the model's Motor (bad ones: warned, and
    changing nothing in both)."""
    sim = Simulation.from_config(CONFIG)
    with in_process() as (api, session):
        robot = api.Robot()
        arm = robot.getDevice("arm")
        for steps, (method, args) in calls:
            getattr(arm, method)(*args)
            try:
                getattr(sim.motor("arm"), _MODEL[method])(*args)
            except ValueError:
                pass
            robot.step(steps * DT)
            sim.step(steps)
            # the whole state, bit for bit: the bank's arrays (no getter gives them all)
            for name in ("position", "velocity", "motor_force", "energy", "target_position",
                         "requested_position", "requested_velocity", "available_force",
                         "acceleration", "control_p"):
                assert getattr(session.runtime._sim.bank, name).tobytes() == \
                    getattr(sim.bank, name).tobytes(), name


# --------------------------------------------------------------------------- dynamixel


@pytest.fixture
def bus():
    with emu.EmulatorProcess([1, 2]) as process:
        yield process


def test_the_same_controller_drives_dynamixel_servos_in_real_time(tmp_path, bus):
    config = {"basic_time_step_ms": 8, "motors": [
        {"name": "pan", "max_torque": 3.0, "max_velocity": 4.8, "brake_name": "pan brake",
         "position_sensor": {"sampling_period_ms": 8}},
        {"name": "tilt", "max_torque": 3.0, "max_velocity": 4.8}],
        "hardware": {"plugin": "dynamixel", "port": bus.port, "baud_rate": 4000000,
                     "pan": {"id": 1, "torque_constant": 1.78},
                     "tilt": {"id": 2, "torque_constant": 1.78}}}
    r = controller(tmp_path, """
        import json
        import time
        from controller import Robot
        robot = Robot()
        pan = robot.getDevice("pan")
        sensor = pan.getPositionSensor()
        sensor.enable(8)
        pan.getBrake().setDampingConstant(1.0)
        wall = time.monotonic()
        while robot.step(8) != -1:
            pan.setPosition(1.0)  # again after a recovery (a loaded machine's timeout)
        print(json.dumps([robot.getTime(), time.monotonic() - wall, sensor.getValue()]))
    """, config, "--duration", "2.0")
    assert r.returncode == 0, r.stderr
    [[t, wall, position]] = printed(r.stdout)
    assert t == 2.0
    assert wall >= 1.95  # step() waited for the wall clock (2 s of 8-ms steps)
    assert position == pytest.approx(1.0, abs=0.02)  # the emulated servo got there
    assert "Warning: brake 'pan brake': hardware 'dynamixel' has no brake; the damping " \
        "changes the model's joint only." in r.stderr
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0  # torque off at exit
    assert bus.get(2, emu.TORQUE_ENABLE, 1) == 0
    goal = bus.get(1, emu.GOAL_POSITION, 4)
    assert goal == 2048 + round(1.0 / (2 * math.pi) * 4096)  # 1 rad past the zero tick


def test_real_hardware_refuses_another_pace(tmp_path, bus):
    config = {"motors": [{"name": "pan"}], "hardware": {
        "plugin": "dynamixel", "port": bus.port, "baud_rate": 4000000,
        "pan": {"id": 1, "torque_constant": 1.78}}}
    r = controller(tmp_path, "", config, "--real-time-factor", "0")
    assert r.returncode == 2
    assert "hardware 'dynamixel' is real: it runs in real time (--real-time-factor 1), " \
        "not 0" in r.stderr


def test_the_readme_pan_tilt_example_on_the_shipped_dynamixel_config(tmp_path, bus):
    shipped = yaml.safe_load((REPO / "config" / "dynamixel.yaml").read_text())
    shipped["/**/servo_sim"]["ros__parameters"]["hardware"]["port"] = bus.port
    cfg = tmp_path / "dxl.yaml"
    cfg.write_text(yaml.safe_dump(shipped))
    # The script commands once: a reply lost on both tries (a busy machine starving the
    # emulator: "[TxRxResult]", then a recovery that refuses the commands meanwhile, as a
    # real bus would) leaves the servos short of the example's end; run again then, at
    # most 3 times in all
    for _ in range(3):
        r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "controller",
                            REPO / "examples" / "webots" / "pan_tilt.py", cfg,
                            "--duration", "3"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        if "[TxRxResult]" not in r.stderr:
            break
    lines = r.stdout.splitlines()
    assert [line.split()[2] for line in lines] == ["0.01", "0.50", "1.00", "1.50", "2.00",
                                                   "2.50"]
    # the emulated servos move in wall time: 1.5 s after the tilt command they are there
    words = lines[-1].split()
    assert (float(words[5]), float(words[8])) == (pytest.approx(1.0, abs=0.01),
                                                  pytest.approx(-0.5, abs=0.01)), r.stderr
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0 and bus.get(2, emu.TORQUE_ENABLE, 1) == 0


def test_a_controller_drives_the_so101_arm_on_feetech_servos(tmp_path):
    """Issue 21: ``servo-sim controller`` on the shipped SO-101 config, its port the
    emulated STS3215 bus: the same script as on the model, in real time, torque off at
    the end."""
    shipped = yaml.safe_load((REPO / "config" / "so101.yaml").read_text())
    parameters = shipped["/**/servo_sim"]["ros__parameters"]
    with sts.EmulatorProcess(list(range(1, 7))) as bus:
        parameters["hardware"]["port"] = bus.port
        r = controller(tmp_path, """
            import json
            from controller import Robot
            robot = Robot()
            pan, elbow = robot.getDevice("shoulder_pan"), robot.getDevice("elbow_flex")
            sensor = pan.getPositionSensor()
            sensor.enable(8)
            while robot.step(8) != -1:
                pan.setPosition(0.5)  # again after a recovery (a loaded machine's timeout)
                elbow.setPosition(-0.3)
            print(json.dumps([robot.getTime(), sensor.getValue()]))
        """, shipped, "--duration", "2.0")
        assert r.returncode == 0, r.stderr
        [[t, position]] = printed(r.stdout)
        assert t == 2.0
        assert position == pytest.approx(0.5, abs=0.01)  # the emulated servo got there
        # 0.5 rad = 326 ticks past 2048; -0.3 rad = 196 ticks before it
        assert bus.get(1, sts.GOAL_POSITION, 2) == 2048 + round(0.5 / (2 * math.pi) * 4096)
        assert bus.get(3, sts.GOAL_POSITION, 2) == 2048 - round(0.3 / (2 * math.pi) * 4096)
        assert [bus.get(i, sts.TORQUE_ENABLE, 1) for i in range(1, 7)] == [0] * 6


def readme_example(command: str) -> tuple[list[str], list[str]]:
    """The ``command`` of docs/webots.md split into arguments, and the output the page
    shows for it, line by line."""
    section = (REPO / "docs" / "webots.md").read_text()
    match = re.search(re.escape(command) + r"[^\n]*\n```\n```\n(.*?)```\n", section, re.S)
    assert match, f"docs/webots.md: no output block after {command!r}"
    line = match.group(0).splitlines()[0]
    return shlex.split(line), match.group(1).splitlines()


def without_a_webots_installation(lines: list[str]) -> list[str]:
    """The docs show the warning of a machine without Webots: where Webots is installed,
    the world's background and arena are found and there is no warning."""
    from servo_sim.load.protos import webots_homes

    if webots_homes()[0]:
        return [line for line in lines if "PROTOs not found" not in line]
    return lines


def test_the_readme_example_prints_what_the_readme_shows(tmp_path):
    args, shown = readme_example("servo-sim controller examples/webots/arm_controller.py")
    assert args[-2:] == ["--csv", "arm.csv"]
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", *args[1:-1],
                        str(tmp_path / "arm.csv")], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    # the warning first (said when the world is read), then the controller's lines
    assert r.stderr.splitlines() + r.stdout.splitlines() == without_a_webots_installation(shown)
    csv_lines = len((tmp_path / "arm.csv").read_text().splitlines())
    readme = (REPO / "docs" / "webots.md").read_text()
    assert "`arm.csv` has what `servo-sim run --csv` records" in readme
    assert f"({csv_lines} lines with the header)" in readme


def test_the_readme_check_example_prints_what_the_readme_shows():
    args, shown = readme_example("servo-sim check examples/webots/arm.wbt")
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", *args[1:]],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() + r.stdout.splitlines() == without_a_webots_installation(shown)


def test_the_robot_window_calls_behave_as_webots_with_no_robot_window(tmp_path):
    """Webots' robot.py: wwiSendText encodes its text (a non-str is a TypeError) and the
    message goes to no window; wwiReceiveText is None while no window sent anything."""
    r = controller(tmp_path, """
        from controller import Robot
        robot = Robot()
        robot.wwiSendText("configure")
        robot.step(8)
        print(robot.wwiReceiveText(), robot.wwiReceiveText())
        try:
            robot.wwiSendText(3)
        except TypeError as exc:
            print("TypeError", exc)
    """, None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["None None", "TypeError descriptor 'encode' for 'str' "
                                     "objects doesn't apply to a 'int' object"]
