"""Every command of the command table through every door that offers it, on the sim
plugin and on each real plugin (emulated buses): the same value is accepted or refused,
with the same reason, whether it comes by ``servo-sim run --command``, the Webots API, a
ROS service, a parameter, ``joint_commands`` or the action. The reference is one call of
``HardwareSystem.command`` on a system in the same state (one check, one validation)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from importlib import import_module

import numpy as np
import pytest
import yaml
from conftest import start_on_a_bus

from servo_sim import cli
from servo_sim.hardware import HardwareSystem
from servo_sim.model import Command, parse_config
from servo_sim.model.commands import ACTION, COMMAND, MOTOR_COMMANDS, TRIGGER

NAN = math.nan
#: (command, a value every device takes, a value the model refuses); triggers take none
VALUES: dict[str, tuple[tuple, tuple]] = {
    "set_position": ((0.3,), (NAN,)),
    "set_velocity": ((1.0,), (NAN,)),
    "set_acceleration": ((5.0,), (NAN,)),
    "set_available_force": ((0.5,), (-1.0,)),
    "set_available_torque": ((0.5,), (-1.0,)),
    "set_force": ((0.1,), (NAN,)),
    "set_torque": ((0.1,), (NAN,)),
    "set_control_pid": ((12.0, 0.0, 0.5), (0.0, 0.0, 0.5)),
    "enable_position": ((16,), (-5,)),
    "enable_force_feedback": ((16,), (-5,)),
    "enable_torque_feedback": ((16,), (-5,)),
    "trapezoidal_move": ((0.5, 0.0, 1.0, 4.0), (NAN, 0.0, 1.0, 4.0)),
}
#: every command once with each value, the triggers last (an e-stop, then its reset)
SEQUENCE = [(c.name, args) for c in MOTOR_COMMANDS if c.kind != TRIGGER
            for args in VALUES[c.name]] + [
    (name, ()) for name in ("halt", "disable", "enable", "e_stop", "reset_e_stop", "enable")]


def test_the_sequence_walks_every_command():
    assert {name for name, _ in SEQUENCE} == set(COMMAND)


@pytest.fixture(params=["sim", "dynamixel", "feetech"])
def hardware(request) -> Iterator[dict]:
    """The hardware group of a one-motor config: the model, or an emulated bus."""
    if request.param == "sim":
        yield {"plugin": "sim"}
        return
    if request.param == "dynamixel":  # an XM430-W350 (its torque constant: test_dynamixel)
        from servo_sim.emulators.dxl_emulator import EmulatorProcess
        motor, baud = {"id": 1, "torque_constant": 1.78}, 4000000
    else:
        from servo_sim.emulators.sts_emulator import EmulatorProcess
        motor, baud = {"id": 1}, 1000000
    with EmulatorProcess([1], realtime=True) as bus:  # answers in time on a busy machine
        yield {"plugin": request.param, "port": bus.port, "baud_rate": baud, "a": motor}


def config(hardware: dict) -> dict:
    return {"basic_time_step_ms": 8, "hardware": hardware,
            "motors": [{"name": "a", "max_torque": 1.5, "max_velocity": 4.0,
                        "min_position": -2.5, "max_position": 2.5,
                        "position_sensor_name": "a_sensor"}]}


def outcome(call: Callable[..., object], *args: object) -> str | None:
    """None if ``call(*args)`` is taken, else the reason it was refused."""
    try:
        call(*args)
    except ValueError as exc:
        return str(exc)
    return None


@contextmanager
def started(cfg: dict) -> Iterator[HardwareSystem]:
    system = HardwareSystem(parse_config(cfg))
    try:
        start_on_a_bus(system)
        yield system
    finally:
        system.shutdown()


def reference(cfg: dict, name: str, args: tuple) -> str | None:
    """The command on a fresh system: taken (None) or why not."""
    with started(cfg) as system:
        return outcome(system.command, "a", COMMAND[name], *args)


def test_cli_and_webots_doors_answer_as_the_hardware_system(hardware, tmp_path, capsys,
                                                           caplog):
    from servo_sim.webots import api
    from servo_sim.webots.session import Session

    cfg = config(hardware)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    refused = walked = 0
    for command in MOTOR_COMMANDS:
        if not (command.key or command.webots):
            continue
        walked += 1
        for args in VALUES[command.name]:
            expected = reference(cfg, command.name, args)
            refused += expected is not None
            if command.key:  # servo-sim run --command a.KEY=V: exit 2 with the reason
                given = ",".join(str(float(v)) for v in args)
                status = cli.main(["run", str(path), "--duration", "0.016", "--quiet",
                                   "--command", f"a.{command.key}={given}"])
                err = capsys.readouterr().err
                assert (status, err) == ((0, "") if expected is None else
                                         (2, f"servo-sim: error: {expected}\n")), command.name
            if command.webots:  # the Webots API: a warning with the reason, and on
                session = Session(parse_config(cfg))
                api.activate(session)
                caplog.clear()
                try:
                    device = api.Robot().getDevice(
                        "a" if command.webots_device == "Motor" else "a_sensor")
                    with caplog.at_level(logging.WARNING, logger="servo_sim"):
                        getattr(device, command.webots)(*args)
                finally:
                    api.activate(None)
                    session.close()
                said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
                assert said == ([] if expected is None else [expected]), command.name
    assert walked == 10 and refused >= walked  # every bad value refused (more on a real bus)
    if hardware["plugin"] == "feetech":  # a capability the device lacks, the same way
        assert reference(cfg, "set_control_pid", (12.0, 0.0, 0.5)) == (
            "motor 'a': set_control_pid not supported by hardware 'feetech' (needs pid_gains)")


# --------------------------------------------------------------------------- ROS doors


@pytest.mark.ros
def test_ros_doors_answer_as_the_hardware_system(hardware):
    """Service, parameter, joint_commands and action, in one node, against a reference
    system fed the same sequence."""
    from conftest import require_ros

    require_ros("rclpy")
    from rcl_interfaces.msg import Log
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from test_ros_node import Harness

    from servo_sim import action as servo_actions
    from servo_sim import srv as servo_srvs
    from servo_sim.ros.interface import MOTOR_ACTIONS, MOTOR_SERVICES, MOTOR_TRIGGERS

    cfg = config(hardware)
    base = {"basic_time_step_ms": 8, "motors": ["a"], "publish_clock": False,
            **{f"a.{k}": v for k, v in cfg["motors"][0].items() if k != "name"},
            **{f"hardware.{k}": v for k, v in hardware.items() if k != "a"},
            **{f"hardware.a.{k}": v for k, v in hardware.get("a", {}).items()}}
    services = {row.name: row for row in MOTOR_SERVICES}
    bank = None
    h = Harness(base=base)
    try:
        # the commanded effort has no getter (Webots has none): the bank's, read only
        bank = h.node.runtime._sim.bank
        logs = h.listen("/rosout", Log)
        # a packet missed at start: the node retries every second (its recovery)
        h.wait_for(lambda: h.node.runtime.hardware_state == "active", "the bus active")
        joint_commands = h.client.create_publisher(JointState, "/joint_commands", 10)
        h.wait_for(lambda: h.node.count_subscribers("/joint_commands") >= 1, "a subscriber")
        mover = ActionClient(h.client, servo_actions.TrapezoidalMove,
                             f"/a/{MOTOR_ACTIONS[0].name}")
        assert mover.wait_for_server(timeout_sec=30.0)

        def warned(text: str) -> None:
            h.wait_for(lambda: any(m.msg == text for m in logs), repr(text))

        with started(cfg) as ref:
            for name, args in SEQUENCE:
                command = COMMAND[name]
                expected = outcome(ref.command, "a", command, *args)
                if command.kind == TRIGGER:
                    row = next(r for r in MOTOR_TRIGGERS if r.name == command.ros_service)
                    answer = h.call(f"/a/{row.name}", Trigger)
                    assert (answer.success, answer.message if expected else None) == (
                        expected is None, expected), name
                elif command.kind == ACTION:
                    goal = servo_actions.TrapezoidalMove.Goal(
                        **dict(zip(command.args, args, strict=True)))
                    sent = mover.send_goal_async(goal)
                    h.executor.spin_until_future_complete(sent, timeout_sec=30.0)
                    if expected is None:  # taken: cancel it (both sides)
                        ref.command("a", Command.HALT)
                        canceled = sent.result().cancel_goal_async()
                        h.executor.spin_until_future_complete(canceled, timeout_sec=30.0)
                    result = sent.result().get_result_async()
                    h.executor.spin_until_future_complete(result, timeout_sec=30.0)
                    if expected is not None:
                        assert result.result().result.message == expected, name
                else:
                    row = services[command.ros_service]
                    fields = dict(zip(row.request_fields, args, strict=True))
                    answer = h.call(f"/a/{row.name}", getattr(servo_srvs, row.srv), **fields)
                    assert bool(answer.success) is (expected is None), name
                    if expected is not None:
                        warned(f"a/{row.name}: {expected}")
                    if command.field:  # the parameter door: the same answer and reason
                        value = list(args) if len(args) > 1 else args[0]
                        result = h.set_remote(f"a.{command.field}", value)
                        assert (result.successful, result.reason or None) == (
                            expected is None, expected), name
                    if name in ("set_position", "set_force") and not math.isnan(args[0]):
                        # joint_commands (NaN there means "no value", not a command),
                        # with a new value, so that a taken one shows
                        value = args[0] / 2
                        expected = outcome(ref.command, "a", command, value)
                        msg = JointState(name=["a"])
                        if name == "set_position":
                            msg.position = [value]
                        else:
                            msg.effort = [value]
                        joint_commands.publish(msg)
                        if expected is not None:
                            warned(f"joint_commands: {expected}")
                        elif name == "set_position":
                            arm = h.node.runtime.motor("a")
                            h.wait_for(lambda v=value, m=arm: m.target_position == v,
                                       "target")
                        else:
                            h.wait_for(lambda v=value: bank.applied_force[0] == v, "effort")
    finally:
        h.close()


# --------------------------------------------------------------------------- Robot Raconteur


def test_robot_raconteur_door_answers_as_the_hardware_system(hardware, tmp_path):
    """``servo-sim-rr`` in a child process on the same hardware, driven by Robot
    Raconteur's client: each command by the member that carries it (a command wire in
    its mode, a parameter, a signal, mode, halt, trapezoidal_move) is taken or refused
    as the reference system takes or refuses it, with the same reason (a function's or
    property's exception; a wire has no reply: the server's log says why it dropped)."""
    import RobotRaconteur as RR  # noqa: N817 - the name its docs use
    import test_rr
    from test_rr import StateWire, serving, until

    from servo_sim.rr.client import client_node, connect, servo_command
    from servo_sim.rr.servo import STATUS_WINDOW

    cfg = config(hardware)
    ref_cfg, bus = cfg, nullcontext()
    if hardware["plugin"] != "sim":  # the reference on a bus of its own (one host a bus)
        module = "dxl_emulator" if hardware["plugin"] == "dynamixel" else "sts_emulator"
        bus = import_module(f"servo_sim.emulators.{module}").EmulatorProcess(
            [1], realtime=True)
    params = {"set_acceleration": ("acceleration", "double"),
              "set_control_pid": ("control_pid", "double[]"),
              "enable_position": ("position_sensor.sampling_period_ms", "int32"),
              "enable_force_feedback": ("force_feedback_sampling_period_ms", "int32"),
              "enable_torque_feedback": ("force_feedback_sampling_period_ms", "int32")}
    wires = {"set_position": ("position_command", test_rr.POSITION, "position_command"),
             "set_velocity": ("velocity_command", test_rr.VELOCITY, "velocity_command"),
             "set_torque": ("effort_command", test_rr.EFFORT, "effort_command")}
    walked = set()
    with bus as ref_bus, serving(cfg, tmp_path) as server, client_node() as node:
        if ref_bus is not None:
            ref_cfg = config({**hardware, "port": ref_bus.port})
        ref = HardwareSystem(parse_config(ref_cfg))
        start_on_a_bus(ref)
        servo = connect(node, server.urls["a"])
        state = StateWire(servo)
        state.when(lambda s: s.servo_state_flags & test_rr.READY, "the bus active")
        sent = 0

        def door(name: str, args: tuple) -> tuple[bool, str | None]:
            """(offered, None if taken else the reason)."""
            nonlocal sent
            try:
                if name in params:
                    field, kind = params[name]
                    value = np.array(args, dtype=float) if len(args) > 1 else args[0]
                    servo.setf_param(field, RR.VarValue(value, kind))
                elif name in wires:
                    wire_name, mode, field = wires[name]
                    servo.mode = mode
                    wire = getattr(servo, wire_name).Connect()
                    # a command whose status_seqno the door finds stale (it reached the
                    # door more than STATUS_WINDOW samples after the seqno peeked: three
                    # CPU hogs) is the door's rule, not the answer walked here: sent
                    # again, 10 times at most (a stale drop is logged once in 5 s: one
                    # not logged shows as neither taken nor dropped 40 samples later)
                    for _ in range(10):
                        sent += 1
                        status = servo.servo_state.PeekInValue()[0].seqno  # the seqno now
                        wire.OutValue = servo_command(node, servo, sent, status, args[0])
                        until(lambda s=status: getattr(state.now, field)[0] == args[0]
                              or server.said(f"{wire_name} dropped: ")
                              or state.now.seqno > s + 4 * STATUS_WINDOW, f"{name} {args}")
                        dropped = [line for line in server.err
                                   if f"{wire_name} dropped: " in line]
                        for line in dropped:
                            server.err.remove(line)
                        if getattr(state.now, field)[0] == args[0] and not dropped:
                            break
                        if dropped and not dropped[-1].rstrip().endswith("(stale)"):
                            break
                    wire.Close()
                    if dropped:
                        return True, dropped[-1].split(" dropped: ", 1)[1].strip()
                elif name == "halt":
                    servo.halt()
                elif name in ("enable", "disable"):
                    servo.mode = test_rr.HALT if name == "enable" else test_rr.DISABLED
                elif name in ("e_stop", "reset_e_stop"):
                    servo.setf_signal("e_stop", RR.VarValue(name == "e_stop", "bool"))
                elif name == "trapezoidal_move":
                    servo.trapezoidal_move(*([v] for v in args))
                    servo.halt()  # taken: stopped (as the reference below)
                else:
                    return False, None  # available force: no member of the standard
            except RR.RobotRaconteurException as exc:
                return True, exc.message
            return True, None

        for name, args in SEQUENCE:
            if name == "set_force":  # a rotational motor's effort is set_torque's
                continue
            if name == "set_velocity":  # velocity mode needs velocity control
                try:
                    ref.check(ref.sim.motor("a"), Command.POSITION.name, (math.inf,))
                except ValueError:
                    continue
            expected = outcome(ref.command, "a", COMMAND[name], *args)
            if name == "trapezoidal_move" and expected is None:
                ref.command("a", Command.HALT)
            offered, given = door(name, args)
            if offered:
                walked.add(name)
                assert given == expected, (name, args)
        ref.shutdown()
    assert walked >= {"set_position", "set_acceleration", "set_control_pid", "enable_position",
                      "halt", "enable", "disable", "e_stop", "reset_e_stop", "trapezoidal_move"}
