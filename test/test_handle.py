"""The runtime is the one handle on a running system, and it cannot be bypassed: nothing
public on a :class:`~servo_sim.runtime.Runtime` or on the read-only motor view it hands
out reaches the model's Motors, its bank, the simulation or the hardware system, and no
door lets a command past the hardware's capability check.

The hardware here is the sim plugin with a device that takes no position command (nor a
trapezoidal move): every door must refuse ``set_position`` with the hardware's own
reason and change nothing. The doors that talk to real devices over their protocols
(Robot Raconteur, the Dynamixel and Feetech emulators) are walked command by command in
test_doors.py, against the same check.
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from servo_sim import cli
from servo_sim.hardware import Capabilities, HardwareComponent, HardwareSystem
from servo_sim.hardware.sim import SimHardware
from servo_sim.model import Command, CommandRefusedError, Motor, MotorView, Simulation, parse_config
from servo_sim.model.bank import MotorBank
from servo_sim.model.commands import COMMAND, MOTOR_COMMANDS, MotorCommand
from servo_sim.model.view import GETTERS, PROPERTIES
from servo_sim.runtime import Runtime

PLUGIN = "test_handle:NoPosition"
#: the hardware's reason, written out (the check's message format, SPEC's wording)
REFUSED = (f"motor 'arm': set_position not supported by hardware {PLUGIN!r} "
           "(needs position_command)")
CONFIG = {"basic_time_step_ms": 8, "hardware": {"plugin": PLUGIN},
          "motors": [{"name": "arm", "max_velocity": 2.0, "max_torque": 5.0,
                      "min_position": -1.5, "max_position": 1.5,
                      "position_sensor_name": "arm_sensor"},
                     {"name": "grip::left", "type": "linear", "max_force": 20.0},
                     {"name": "grip::right", "type": "linear", "max_force": 20.0}]}
#: what the model holds that a host must never hold
INTERNALS = (Motor, MotorBank, Simulation, HardwareSystem, HardwareComponent)


class NoPosition(SimHardware):
    """The model, on a device that takes no position command and no trapezoidal move."""

    def capabilities(self, index: int) -> Capabilities:
        return super().capabilities(index) & ~(Capabilities.POSITION_COMMAND
                                               | Capabilities.TRAPEZOIDAL_COMMAND)


class NoHalt(SimHardware):
    """A device that runs trapezoidal moves but takes no position command, so no halt:
    a taken move's cancel (a halt) must be refused."""

    def capabilities(self, index: int) -> Capabilities:
        return super().capabilities(index) & ~Capabilities.POSITION_COMMAND


NO_HALT = "test_handle:NoHalt"
#: the hardware's reason for a halt, written out
HALT_REFUSED = (f"motor 'arm': halt not supported by hardware {NO_HALT!r} "
                "(needs position_command)")


def opened(plugin: str = PLUGIN) -> Runtime:
    config = {**CONFIG, "hardware": {"plugin": plugin}}
    rt = Runtime.open(parse_config(config), paused=True)
    rt.start()
    return rt


def state(rt: Runtime) -> tuple:
    """What a refused command must leave as it was, read through the public API."""
    arm = rt.motor("arm")
    return (arm.get_target_position(), arm.target_position, arm.get_velocity(), arm.mode,
            arm.flags, arm.position, rt.time_ms, tuple(rt.report()[0].tolist()))


def reachable(root: object, name: str) -> tuple[list[str], list[str]]:
    """(paths to what a host must not hold, paths to writable arrays) among everything
    reachable from ``root`` by public attributes (properties evaluated), through our
    own objects and containers."""
    held, writable, seen = [], [], set()
    stack = [(name, root)]
    while stack:
        path, obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, INTERNALS):
            held.append(f"{path}: {type(obj).__name__}")
        elif isinstance(obj, np.ndarray):
            if obj.flags.writeable:
                writable.append(path)
        elif isinstance(obj, list | tuple):
            stack.extend((f"{path}[{k}]", v) for k, v in enumerate(obj))
        elif isinstance(obj, dict):
            stack.extend((f"{path}[{k!r}]", v) for k, v in obj.items())
        elif type(obj).__module__.startswith("servo_sim"):
            for attr in dir(obj):
                if attr.startswith("_"):
                    continue
                try:
                    value = getattr(obj, attr)
                except (AttributeError, ValueError, RuntimeError):  # needs what is not there
                    continue
                if not (inspect.ismethod(value) or inspect.isbuiltin(value)):
                    stack.append((f"{path}.{attr}", value))
    return held, writable


# --------------------------------------------------------------------------- no way around


def test_nothing_public_on_the_runtime_reaches_the_model_or_writes_its_state():
    with opened() as rt:
        rt.command("arm", Command.ENABLE_POSITION, 8)  # a refreshed sensor: its arrays
        list(rt.step(2))
        held, writable = reachable(rt, "runtime")
        assert (held, writable) == ([], [])
        for view in (rt.motor("arm"), *rt.motors):
            assert reachable(view, repr(view)) == ([], [])
        for attr in ("system", "sim", "bank"):
            assert not hasattr(rt, attr), attr


def test_the_view_answers_getters_only_and_cannot_be_written():
    with opened() as rt:
        rt.command("arm", Command.ENABLE_POSITION, 8)
        rt.command("arm", Command.ENABLE_TORQUE_FEEDBACK, 8)
        list(rt.step(2))
        view = rt.motor("arm")
        public = {a for a in dir(view) if not a.startswith("_")}
        assert public == {"name", *GETTERS, *PROPERTIES}
        commands = {c.name for c in MOTOR_COMMANDS} | {
            a for a in dir(Motor) if a.startswith(("set_", "enable", "disable"))}
        assert not public & commands
        assert all(name.startswith("get_") for name in public if callable(getattr(view, name)))
        before = state(rt)
        for name in GETTERS:  # every getter answers as the model's Motor, changing nothing
            assert getattr(view, name)() == getattr(rt._sim.motor("arm"), name)()  # (the
        for name in PROPERTIES:  # Motor itself, only to compare: a test's internals)
            assert getattr(view, name) == getattr(rt._sim.motor("arm"), name)
        assert state(rt) == before
        for attr, value in (("name", "other"), ("position", 1.0), ("set_position", print),
                            ("_MotorView__motor", None)):
            with pytest.raises(AttributeError, match="motor 'arm': the view is read-only"):
                setattr(view, attr, value)
        assert view.name == "arm" and state(rt) == before
        with pytest.raises(KeyError, match="no motor 'wrist'; known motors: 'arm', "
                           "'grip::left', 'grip::right'"):
            rt.motor("wrist")
        assert [v.name for v in rt.motors] == rt.motor_names


@pytest.mark.parametrize("read", ["position", "get_target_position", "report"])
def test_a_view_and_a_report_read_between_two_steps_of_another_thread(read):
    """The model writes its rows in place (a step, a reset): a host's read through the
    runtime (a view's property or getter, the report of modes) waits for the bank's
    lock, so it never sees a row mid-write. Here another thread holds the lock with the
    rows in a state no step leaves (a sentinel); the read waits, then reads the state
    the holder leaves."""
    import threading

    with opened() as rt:
        bank = rt._sim.bank  # (the model itself: only to stand for a step in progress)
        index = rt.motor_names.index("arm")
        rows = (bank.position, bank.target_position, bank.mode)
        kept = [row.copy() for row in rows]
        started, got = threading.Event(), []

        def reader() -> None:
            started.set()
            if read == "report":
                got.append(int(rt.report()[0][index]))
            else:
                value = getattr(rt.motor("arm"), read)
                got.append(value() if callable(value) else value)

        with bank.lock:  # a step (or a reset) half done
            for row in rows:
                row[index] = 99
            thread = threading.Thread(target=reader)
            thread.start()
            assert started.wait(60.0)
            thread.join(1.0)
            assert thread.is_alive() and not got  # waiting for the lock, nothing read
            for row, old in zip(rows, kept, strict=True):
                row[...] = old
        thread.join(60.0)
        expected = {"position": kept[0][index], "get_target_position": kept[1][index],
                    "report": int(kept[2][index])}[read]
        assert got == [expected] and got != [99]


def test_a_command_is_a_row_of_the_table_never_a_function():
    with opened() as rt:
        before = state(rt)
        for call in (Motor.set_position, "set_position", MotorView.get_velocity):
            with pytest.raises(TypeError, match=r"motor 'arm': command .*: not a row of the "
                               r"command table"):
                rt.command("arm", call, 1.0)
        assert state(rt) == before
        names = {a: getattr(Command, a) for a in vars(Command) if a.isupper()}
        assert sorted(c.name for c in names.values()) == sorted(COMMAND)  # each row once
        assert all(isinstance(c, MotorCommand) for c in names.values())
        assert (Command.POSITION.name, Command.ENABLE_POSITION.name, Command.HALT.name,
                repr(Command.CONTROL_PID)) == ("set_position", "enable_position", "halt",
                                               "Command.CONTROL_PID")
        with pytest.raises(TypeError):
            Command()


# --------------------------------------------------------------------------- every door


@pytest.mark.parametrize("target", [1.0, -1.0])
def test_the_runtime_refuses_what_the_device_cannot_take(target):
    with opened() as rt:
        before = state(rt)
        with pytest.raises(CommandRefusedError) as refused:
            rt.command("arm", Command.POSITION, target)
        assert str(refused.value) == REFUSED
        for command, args in ((Command.HALT, ()),
                              (Command.TRAPEZOIDAL_MOVE, (target, 0.0, 1.0, 4.0))):
            with pytest.raises(CommandRefusedError, match=f"motor 'arm': {command.name} not "
                               f"supported by hardware {PLUGIN!r}"):
                rt.command("arm", command, *args)
        list(rt.step(3))
        after = state(rt)
        assert after[:6] == before[:6] and after[6] == 24  # only time moved
        # what the device takes goes through: velocity control (+-inf) and a speed
        rt.command("arm", Command.POSITION, math.copysign(math.inf, target))
        rt.command("arm", Command.VELOCITY, target)
        assert rt.motor("arm").get_velocity() == target


@pytest.mark.parametrize("target", [0.5, -0.5])
def test_a_taken_moves_cancel_passes_the_hardwares_check_of_a_halt(target):
    """Move.cancel halts: on a device that takes no halt it is refused with the hardware's
    reason, the move goes on to its target, and the check cannot be replaced."""
    with opened(NO_HALT) as rt:
        move = rt.command("arm", Command.TRAPEZOIDAL_MOVE, target, 0.0, 1.0, 4.0)
        # 0.25 s up to 1 rad/s (0.125 rad), 0.25 s at 1 rad/s, 0.25 s down: 0.75 s
        assert move.plan.duration == pytest.approx(0.75)
        list(rt.step(10))
        before = state(rt)
        with pytest.raises(CommandRefusedError) as refused:
            move.cancel()
        assert str(refused.value) == HALT_REFUSED
        assert (move.state, move.reason, state(rt)) == ("active", "", before)
        with pytest.raises(CommandRefusedError, match=re.escape(HALT_REFUSED)):
            rt.command("arm", Command.HALT)  # the same check as the command
        with pytest.raises(RuntimeError, match="motor 'arm': the move's cancel is already "
                           "checked"):
            move.check_cancel_with(lambda: None)  # no host swaps the check for a no-op
        with pytest.raises(CommandRefusedError):
            move.cancel()
        # 750 ms end at the start of the step at ceil(750 / 8) * 8 = 752 ms (the 95th)
        list(rt.step(94 - 10))
        assert move.state == "active"
        list(rt.step(1))
        assert (move.state, move.finished_ms - move.start_ms) == ("succeeded", 752)
        assert rt.motor("arm").get_target_position() == target
        move.cancel()  # ended: nothing to halt, nothing to refuse
        assert move.state == "succeeded"


@pytest.mark.parametrize("target", [0.5, -0.5])
def test_a_taken_moves_cancel_halts_where_the_device_takes_a_halt(target):
    with Runtime.open(parse_config({**CONFIG, "hardware": {"plugin": "sim"}}),
                      paused=True) as rt:
        rt.start()
        move = rt.command("arm", Command.TRAPEZOIDAL_MOVE, target, 0.0, 1.0, 4.0)
        list(rt.step(10))
        arm = rt.motor("arm")
        moved = arm.position  # set-point of the step at 80 ms: 0.5 * 4 * 0.08^2 = 0.0128
        assert math.copysign(1.0, moved) == math.copysign(1.0, target) and moved != 0.0
        move.cancel()
        assert (move.state, move.reason) == ("canceled", "canceled")
        assert (arm.mode.name, arm.get_target_position()) == ("HALT", moved)  # holds there


@pytest.mark.parametrize("target", [0.5, -0.5])
def test_the_cli_and_webots_doors_refuse_with_the_hardwares_reason(target, tmp_path, capsys,
                                                                   caplog):
    from servo_sim.webots import api
    from servo_sim.webots.session import Session

    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    assert cli.main(["run", str(path), "--duration", "0.016", "--quiet",
                     "--command", f"arm.position={target}"]) == 2
    assert capsys.readouterr().err == f"servo-sim: error: {REFUSED}\n"
    session = Session(parse_config(CONFIG))
    api.activate(session)
    try:
        robot = api.Robot()
        motor = robot.getDevice("arm")
        before = (motor.getTargetPosition(), session.runtime.motor("arm").mode)
        with caplog.at_level(logging.WARNING, logger="servo_sim"):
            motor.setPosition(target)
            robot.step(16)
        said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert said == [REFUSED]
        assert (motor.getTargetPosition(), session.runtime.motor("arm").mode) == before
    finally:
        api.activate(None)
        session.close()


@pytest.mark.ros
def test_the_ros_doors_refuse_with_the_hardwares_reason():
    """Service, joint_commands and the trapezoidal_move action."""
    from conftest import require_ros

    require_ros("rclpy")
    from rcl_interfaces.msg import Log
    from sensor_msgs.msg import JointState
    from test_ros_node import Harness

    from servo_sim import action as servo_actions
    from servo_sim import srv as servo_srvs

    base = {"basic_time_step_ms": 8, "motors": ["arm", "grip::left", "grip::right"],
            "hardware.plugin": PLUGIN, "arm.min_position": -1.5, "arm.max_position": 1.5,
            "publish_clock": False, "start_paused": True}
    h = Harness(base=base)
    try:
        rt = h.node.runtime
        logs = h.listen("/rosout", Log)
        before = state(rt)
        for target in (1.0, -1.0):
            assert not h.call("/arm/set_position", servo_srvs.SetFloat, value=target).success
            h.wait_for(lambda: any(m.msg == f"arm/set_position: {REFUSED}" for m in logs),
                       "the service's warning")
        commands = h.client.create_publisher(JointState, "/joint_commands", 10)
        h.wait_for(lambda: h.node.count_subscribers("/joint_commands") >= 1, "a subscriber")
        commands.publish(JointState(name=["arm"], position=[0.5]))
        h.wait_for(lambda: any(m.msg == f"joint_commands: {REFUSED}" for m in logs),
                   "the joint_commands warning")
        from rclpy.action import ActionClient
        mover = ActionClient(h.client, servo_actions.TrapezoidalMove, "/arm/trapezoidal_move")
        assert mover.wait_for_server(timeout_sec=30.0)
        sent = mover.send_goal_async(servo_actions.TrapezoidalMove.Goal(
            target_position=0.5, target_velocity=0.0, max_velocity=1.0, max_acceleration=4.0))
        h.executor.spin_until_future_complete(sent, timeout_sec=30.0)
        result = sent.result().get_result_async()
        h.executor.spin_until_future_complete(result, timeout_sec=30.0)
        assert result.result().result.message == (
            f"motor 'arm': trapezoidal_move not supported by hardware {PLUGIN!r} "
            "(needs trapezoidal_command)")
        assert state(rt) == before
    finally:
        h.close()


@pytest.mark.ros
def test_the_ros_action_door_rejects_a_cancel_the_hardware_refuses():
    """A trapezoidal_move goal on a device that takes no halt: its cancel is rejected
    with the hardware's reason, and the goal goes on to succeed at its target."""
    from conftest import require_ros

    require_ros("rclpy")
    from rcl_interfaces.msg import Log
    from rclpy.action import ActionClient
    from test_ros_node import Harness

    from servo_sim import action as servo_actions

    base = {"basic_time_step_ms": 8, "motors": ["arm"], "hardware.plugin": NO_HALT,
            "publish_clock": False, "start_paused": True}
    h = Harness(base=base)
    try:
        logs = h.listen("/rosout", Log)
        mover = ActionClient(h.client, servo_actions.TrapezoidalMove, "/arm/trapezoidal_move")
        assert mover.wait_for_server(timeout_sec=30.0)
        sent = mover.send_goal_async(servo_actions.TrapezoidalMove.Goal(
            target_position=-0.5, target_velocity=0.0, max_velocity=1.0, max_acceleration=4.0))
        h.wait_for(sent.done, "the goal response")
        goal = sent.result()
        assert goal.accepted
        result = goal.get_result_async()
        h.step(10)
        cancel = goal.cancel_goal_async()
        h.wait_for(cancel.done, "the cancel answer")
        assert list(cancel.result().goals_canceling) == []  # rejected: none canceling
        h.wait_for(lambda: any(m.msg == f"arm: {HALT_REFUSED}" for m in logs),
                   "the cancel's warning")
        assert h.node.runtime.motor("arm").mode.name == "TRAPEZOIDAL"
        h.step(85)  # the 95th step, at 752 ms, ends the 0.75 s profile
        h.wait_for(result.done, "the result")
        r = result.result()
        assert (r.result.success, r.result.message) == (True, "reached -0.5")
        assert r.result.duration == pytest.approx(0.752)
    finally:
        h.close()


@pytest.mark.parametrize("target", [0.5, -0.5])
def test_the_robot_raconteur_door_refuses_with_the_hardwares_reason(target, tmp_path,
                                                                    monkeypatch):
    """``servo-sim-rr`` in a child process on the same device (this module, importable
    there), driven by Robot Raconteur's client: mode position, halt and a trapezoidal move
    are refused with the hardware's reason, and the motor stays as it was."""
    import RobotRaconteur as RR  # noqa: N817 - the name its docs use
    from test_rr import serving

    from servo_sim.model import ServoMode
    from servo_sim.rr.client import client_node, connect

    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH")) if p))
    with client_node() as node, serving(CONFIG, tmp_path) as server:
        servo = connect(node, server.urls["arm"])
        before = (servo.mode, servo.position.PeekInValue()[0][0])
        for call, reason in (
                (lambda: setattr(servo, "mode", int(ServoMode.POSITION)), REFUSED),
                (servo.halt, REFUSED.replace("set_position", "halt")),
                (lambda: servo.trapezoidal_move([target], [0.0], [1.0], [4.0]),
                 f"motor 'arm': trapezoidal_move not supported by hardware {PLUGIN!r} "
                 "(needs trapezoidal_command)")):
            with pytest.raises(RR.InvalidOperationException) as refused:
                call()
            assert refused.value.message == reason
        assert (servo.mode, servo.position.PeekInValue()[0][0]) == before


def test_the_runtimes_pause_goes_through_pause_and_resume_only():
    """``paused`` is read-only: setting it would skip pause()'s refusal on real
    hardware; pause() and resume() change it."""
    with opened() as rt:
        assert rt.paused
        with pytest.raises(AttributeError):
            rt.paused = False
        assert rt.paused
        rt.resume()
        assert not rt.paused
        rt.pause()
        assert rt.paused
