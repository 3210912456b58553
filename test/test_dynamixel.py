"""The dynamixel plugin against an emulated Protocol 2.0 bus on a pseudo-terminal.

The emulator (``servo_sim.emulators.dxl_emulator``) runs in a child process and speaks
the wire protocol; the plugin drives the other end through the real dynamixel-sdk.
Expected register values are computed by hand from the X-series units.
"""

from __future__ import annotations

import logging
import math
import re
import time

import dynamixel_sdk as dxl
import pytest
from conftest import (
    bus_config,
    bus_fixture,
    cycle_until,
    interrupt_inside_a_transaction,
    recover,
    start_on_a_bus,
    started_fixture,
)
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.emulators import dxl_emulator as emu
from servo_sim.hardware import (
    Capabilities,
    CommandRefusedError,
    HardwareSystem,
    LifecycleState,
    PluginError,
    StateFlags,
)
from servo_sim.hardware import system as system_module
from servo_sim.model import Command, ServoMode, parse_config

KT = 1.78  # N*m/A
STEPS_PER_RETRY = system_module.RECOVERY_PERIOD_MS // 8


bus = bus_fixture(emu)


def config(port, motors=("a", "b", "c"), **extra):
    return bus_config("dynamixel", port, motors, servo={"torque_constant": KT},
                      motor={"max_torque": 3.0, "max_velocity": 5.0}, **extra)


hw = started_fixture(config)


# --------------------------------------------------------------------------- the protocol


def test_a_long_gap_between_packets_does_not_make_the_servo_overshoot():
    """A starved emulator advances its motors by a long gap at once: the same motion as
    in short steps, no overshoot of the goal (it once read 5.08 rad for a 3 rad goal)."""
    def servo():
        s = emu.Servo(1)
        s.put(emu.OPERATING_MODE, 1, emu.MODE_EXTENDED_POSITION)
        s.put(emu.TORQUE_ENABLE, 1, 1)
        s.put(emu.GOAL_POSITION, 4, 4000)
        return s

    at_once, in_gaps, in_steps = servo(), servo(), servo()
    at_once.advance(1.0)
    for _ in range(20):  # 50 ms gaps against 1 ms steps, compared at every gap
        in_gaps.advance(0.05)
        for _ in range(50):
            in_steps.advance(0.001)
        assert in_gaps.position == pytest.approx(in_steps.position, abs=5.0)
    assert at_once.position == pytest.approx(in_steps.position, abs=5.0)
    assert at_once.position == pytest.approx(4000, abs=2.0)


def test_crc_of_the_manuals_read_example():
    # e-Manual, Protocol 2.0, Read: id 1 reads 4 bytes at 132 -> ... 1D 15
    frame = bytes.fromhex("FFFFFD0001070002840004 00".replace(" ", ""))
    assert emu.crc16(frame) == 0x151D
    assert emu.packet(1, emu.READ, bytes.fromhex("84000400")) == frame + b"\x1d\x15"


@given(st.binary(max_size=64))
def test_crc_matches_the_sdk(data):
    assert emu.crc16(data) == dxl.Protocol2PacketHandler().updateCRC(0, list(data), len(data))


@given(st.lists(st.sampled_from([0x00, 0xFD, 0xFF]), max_size=40))
def test_byte_stuffing_round_trip_and_matches_the_sdk(params):
    body = bytes([emu.WRITE, *params])
    assert emu.unstuff(emu.stuff(body)) == body
    sdk = dxl.Protocol2PacketHandler()
    tx = [0xFF, 0xFF, 0xFD, 0x00, 1, *(len(body) + 2).to_bytes(2, "little"), *body, 0, 0]
    stuffed = sdk.addStuffing(tx)
    assert bytes(stuffed[7:-2]) == emu.stuff(body)


def test_emulator_over_the_pty_with_the_sdk(bus):
    port, ph = dxl.PortHandler(bus.port), dxl.PacketHandler(2.0)
    assert port.openPort() and port.setBaudRate(4000000)
    try:
        model, result, error = ph.ping(port, 2)
        assert (model, result, error) == (1020, dxl.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 2, emu.TORQUE_ENABLE, 1) == (dxl.COMM_SUCCESS, 0)
        # EEPROM is locked while the torque is on: access error, value unchanged
        assert ph.write1ByteTxRx(port, 2, emu.OPERATING_MODE, 1) == (dxl.COMM_SUCCESS,
                                                                     emu.ERR_ACCESS)
        assert ph.read1ByteTxRx(port, 2, emu.OPERATING_MODE) == (3, dxl.COMM_SUCCESS, 0)
        # a goal position containing FF FF FD is stuffed on the wire and lands intact
        assert ph.write4ByteTxRx(port, 2, emu.GOAL_POSITION, 0xFDFFFF) == (dxl.COMM_SUCCESS, 0)
        assert bus.get(2, emu.GOAL_POSITION, 4) == 0xFDFFFF
        # sync read: several ids, one instruction packet
        before = bus.counts().get("0x82", 0)
        reader = dxl.GroupSyncRead(port, ph, emu.MODEL_NUMBER, 2)
        for i in (1, 2, 3):
            reader.addParam(i)
        assert reader.txRxPacket() == dxl.COMM_SUCCESS
        assert [reader.getData(i, emu.MODEL_NUMBER, 2) for i in (1, 2, 3)] == [1020] * 3
        assert bus.counts()["0x82"] == before + 1
        # a hardware error raises the alert bit of every status packet
        bus.hardware_error(3, 0x20)
        assert ph.read1ByteTxRx(port, 3, emu.HARDWARE_ERROR_STATUS) == (0x20, dxl.COMM_SUCCESS,
                                                                         emu.ALERT)
        assert ph.reboot(port, 3) == (dxl.COMM_SUCCESS, emu.ALERT)  # answered, then reboots
        assert bus.get(3, emu.HARDWARE_ERROR_STATUS, 1) == 0
        # silence, and a corrupted CRC
        bus.silence([1])
        assert ph.ping(port, 1)[1] == dxl.COMM_RX_TIMEOUT
        bus.silence([])
        bus.corrupt(1)
        assert ph.ping(port, 1)[1] == dxl.COMM_RX_CORRUPT
        assert ph.ping(port, 1)[1] == dxl.COMM_SUCCESS
    finally:
        port.closePort()


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("change, message", [
    ({"port": None}, "setting 'port' = None: must be a serial port path"),
    ({"baud_rate": 1234}, "setting 'baud_rate' = 1234: must be one of 9600, "),
    ({"a": {"id": 300, "torque_constant": KT}},
     "motor 'a': hardware setting 'id' = 300: must be an integer 0..252"),
    ({"a": {"id": 2, "torque_constant": KT}}, "id 2 is given to more than one motor"),
    ({"a": {"id": 1}}, "motor 'a': hardware setting 'torque_constant' = None: must be a "
                       "number > 0"),
    ({"a": {"id": 1, "torque_constant": KT, "zero_tick": 0}},
     "motor 'a': unknown hardware setting 'zero_tick'"),
    ({"serial": "/dev/ttyUSB1"}, "unknown setting(s) 'serial'"),
    ({"a": {"id": 1, "torque_constant": KT, "pid_scale": [float("inf"), 1, 1]}},
     "motor 'a': hardware setting 'pid_scale' = [inf, 1, 1]: must be 3 finite numbers > 0"),
    ({"a": {"id": 1, "torque_constant": KT, "current_limit_max": 40000}},
     "motor 'a': hardware setting 'current_limit_max' = 40000: must be an integer 0..32767"),
    ({"a": {"id": 1, "torque_constant": float("nan")}},
     "motor 'a': hardware setting 'torque_constant' = nan: must be a number > 0"),
])
def test_bad_settings_fail_at_start_up_with_one_message(change, message):
    raw = config("/dev/null", motors=("a", "b"))
    hardware = {**raw.hardware, **change}
    hardware = {k: v for k, v in hardware.items() if v is not None}
    with pytest.raises(PluginError, match="^" + re.escape("<dict>: hardware 'dynamixel': "
                                                           + message)):
        HardwareSystem(parse_config({"hardware": hardware,
                                     "motors": [{"name": "a"}, {"name": "b"}]}))


def test_linear_motors_are_refused():
    with pytest.raises(PluginError, match="motor 'g': the dynamixel plugin drives "
                       "rotational motors only"):
        HardwareSystem(parse_config({
            "hardware": {"plugin": "dynamixel", "port": "/dev/null", "g": {"id": 1}},
            "motors": [{"name": "g", "type": "linear"}]}))


def test_a_missing_port_does_not_start_and_does_not_raise(caplog):
    hw = HardwareSystem(config("/dev/servo_sim_no_such_port"))
    with caplog.at_level(logging.WARNING, "servo_sim"):
        assert not hw.start()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert "cannot open /dev/servo_sim_no_such_port" in caplog.text
    hw.step(3)  # retried, still absent, still running
    assert hw.state is LifecycleState.UNCONFIGURED


# --------------------------------------------------------------------------- lifecycle


def test_configure_and_activate_write_the_settings(bus, hw):
    assert hw.state is LifecycleState.ACTIVE
    for i in (1, 2, 3):
        assert bus.get(i, emu.TORQUE_ENABLE, 1) == 1
        assert bus.get(i, emu.OPERATING_MODE, 1) == emu.MODE_EXTENDED_POSITION
        # max_torque 3 N*m / 1.78 N*m/A / 2.69 mA = 626.5 units
        assert bus.get(i, emu.CURRENT_LIMIT, 2) == 627
        assert bus.get(i, emu.POSITION_P_GAIN, 2) == 10 * 128  # default P 10 = KPP 10
        assert hw.flags(f"{'abc'[i - 1]}") == StateFlags.READY | StateFlags.ENABLED
    assert hw.component.capabilities(0) == (Capabilities.all_webots()
                                            | Capabilities.TRAPEZOIDAL_COMMAND)
    hw.deactivate()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]


def test_activation_holds_the_present_position(bus):
    bus.freeze()
    bus.set(2, emu.PRESENT_POSITION, 4, 2048 + 512)  # 45 degrees off the config's 0
    system = HardwareSystem(config(bus.port))
    start_on_a_bus(system)
    b = system.sim.motor("b")
    assert b.get_target_position() == pytest.approx(math.pi / 4)
    assert bus.get(2, emu.GOAL_POSITION, 4) == 2048 + 512
    system.shutdown()


# --------------------------------------------------------------------------- commands


def test_commands_become_registers(bus, hw):
    bus.freeze()  # the goals below stay put: nothing moves
    hw.command("a", Command.POSITION, math.pi / 2)
    hw.command("a", Command.VELOCITY, 1.0)
    hw.command("a", Command.ACCELERATION, 10.0)
    hw.command("b", Command.POSITION, math.inf)
    hw.command("b", Command.VELOCITY, -2.0)
    hw.command("c", Command.TORQUE, 0.5)
    hw.command("c", Command.CONTROL_PID, 20.0, 0.2, 0.1)
    hw.cycle()
    rpm = 0.229 * 2 * math.pi / 60  # rad/s per velocity unit
    assert bus.get(1, emu.GOAL_POSITION, 4) == 2048 + 1024  # pi/2 = a quarter of 4096
    assert bus.get(1, emu.PROFILE_VELOCITY, 4) == round(1.0 / rpm) == 42
    rpm2 = 214.577 * 2 * math.pi / 3600  # rad/s^2 per acceleration unit
    assert bus.get(1, emu.PROFILE_ACCELERATION, 4) == round(10.0 / rpm2) == 27
    assert bus.get(2, emu.OPERATING_MODE, 1) == emu.MODE_VELOCITY
    assert bus.get(2, emu.GOAL_VELOCITY, 4) == round(-2.0 / rpm) == -83
    assert bus.get(3, emu.OPERATING_MODE, 1) == emu.MODE_CURRENT
    assert bus.get(3, emu.GOAL_CURRENT, 2) == round(0.5 / KT / 0.00269) == 104
    assert bus.get(3, emu.POSITION_P_GAIN, 2) == 2560
    assert bus.get(3, emu.POSITION_I_GAIN, 2) == 13107  # 0.2 * 65536 = 13107.2
    assert bus.get(3, emu.POSITION_D_GAIN, 2) == 2  # 0.1 * 16 = 1.6
    assert all(bus.get(i, emu.TORQUE_ENABLE, 1) == 1 for i in (1, 2, 3))
    hw.command("c", Command.AVAILABLE_TORQUE, 1.0)
    hw.command("a", Command.AVAILABLE_TORQUE, 0.0)  # Webots: the motor is off
    hw.cycle()
    assert bus.get(3, emu.CURRENT_LIMIT, 2) == round(1.0 / KT / 0.00269) == 209
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0
    assert bus.get(3, emu.TORQUE_ENABLE, 1) == 1


def test_gains_beyond_the_registers_are_clipped_with_a_warning(bus, hw, caplog):
    with caplog.at_level(logging.WARNING, "servo_sim"):
        hw.command("b", Command.CONTROL_PID, 200.0, 0.0, 0.0)
        hw.cycle()
    assert bus.get(2, emu.POSITION_P_GAIN, 2) == 16383
    assert "motor 'b': P gain 200 is 25600 register units, beyond 16383; clipped" in caplog.text


def test_huge_commands_saturate_the_registers_and_keep_the_bus_up(bus, hw, caplog):
    """Valid Webots commands beyond a register's range are clamped to it, not an ERROR."""
    bus.freeze()
    with caplog.at_level(logging.WARNING, "servo_sim"):
        hw.command("a", Command.POSITION, 1e7)  # no soft limits: 1.6e9 ticks
        hw.command("a", Command.ACCELERATION, 1e9)
        hw.command("b", Command.CONTROL_PID, 1e308, 0.0, 0.0)  # inf register units
        hw.command("c", Command.POSITION, math.inf)
        hw.command("c", Command.VELOCITY, 5.0)  # max_velocity: 208 units, within 1023
        hw.step(3)
    assert hw.active, hw.component.reason
    assert bus.get(1, emu.GOAL_POSITION, 4) == 1_048_575  # extended mode: +-256 rev
    assert bus.get(1, emu.PROFILE_ACCELERATION, 4) == 32767
    assert bus.get(2, emu.POSITION_P_GAIN, 2) == 16383
    assert bus.get(3, emu.GOAL_VELOCITY, 4) == round(5.0 / (0.229 * 2 * math.pi / 60)) == 208
    assert caplog.text.count("P gain 1e+308 is inf register units") == 1


def test_a_motor_switched_off_is_written_once(bus, hw):
    hw.command("a", Command.AVAILABLE_TORQUE, 0.0)
    hw.cycle()
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0
    before = bus.counts().get("0x03", 0)
    hw.step(10)
    assert bus.counts().get("0x03", 0) == before  # no Torque Enable write every cycle
    hw.command("a", Command.AVAILABLE_TORQUE, 2.0)
    hw.cycle()
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 1
    assert bus.get(1, emu.OPERATING_MODE, 1) == emu.MODE_EXTENDED_POSITION
    assert bus.get(1, emu.CURRENT_LIMIT, 2) == round(2.0 / KT / 0.00269)


def test_state_conversions(bus, hw):
    bus.freeze()
    bus.set(1, emu.PRESENT_POSITION, 4, 4096)
    bus.set(1, emu.PRESENT_VELOCITY, 4, -100)
    bus.set(1, emu.PRESENT_CURRENT, 2, 200)
    hw.cycle()
    a = hw.sim.motor("a")
    assert a.position == pytest.approx(math.pi)  # 2048 ticks past zero
    assert a.velocity == pytest.approx(-100 * 0.229 * 2 * math.pi / 60)  # -2.398 rad/s
    assert a.motor_force == pytest.approx(200 * 0.00269 * KT)  # 0.9576 N*m


def test_one_sync_read_and_one_sync_write_per_cycle(bus, hw):
    before = bus.counts()
    hw.step(20)
    after = bus.counts()
    assert after["0x82"] - before["0x82"] == 20
    assert after["0x83"] - before["0x83"] == 20
    assert after.get("0x02", 0) == before.get("0x02", 0)  # no single reads
    assert after.get("0x03", 0) == before.get("0x03", 0)  # nothing changed: no writes


def test_the_servo_follows_a_position_command(bus, hw):
    hw.command("a", Command.POSITION, 1.0)
    cycle_until(hw, lambda: abs(hw.sim.motor("a").position - 1.0) < 0.01, "at 1 rad")
    assert hw.sim.motor("a").position == pytest.approx(1.0, abs=0.01)
    hw.command("a", Command.ENABLE_POSITION, 16)  # sensors sample what read() got
    hw.step(2)
    assert hw.sim.motor("a").get_position() == pytest.approx(1.0, abs=0.01)


def test_a_servo_without_current_sensing_refuses_effort(bus):
    bus.set(3, emu.MODEL_NUMBER, 2, 1060)  # XL430-W250
    system = HardwareSystem(config(bus.port))
    start_on_a_bus(system)
    assert not system.component.capabilities(2) & Capabilities.EFFORT_COMMAND
    with pytest.raises(CommandRefusedError, match="motor 'c': set_torque not supported by hardware "
                       r"'dynamixel' \(needs effort_command\)"):
        system.command("c", Command.TORQUE, 0.5)
    system.command("b", Command.TORQUE, 0.5)  # an XM430 takes it
    system.shutdown()


# --------------------------------------------------------------------------- faults


def test_silent_servo_halts_then_recovers(bus, hw, caplog):
    bus.silence([2])
    with caplog.at_level(logging.INFO, "servo_sim"):
        hw.cycle()
        assert hw.state is LifecycleState.UNCONFIGURED
        assert hw.flags("b") & StateFlags.COMMUNICATION_FAILURE
        assert not hw.flags("b") & StateFlags.ENABLED
        assert not hw.flags("a") & StateFlags.COMMUNICATION_FAILURE
        with pytest.raises(CommandRefusedError, match=r"motor 'a': set_position refused: hardware "
                           r"'dynamixel' is unconfigured \(motor 'b' \(id 2\): sync read: "
                           r"\[TxRxResult\] There is no status packet!\)"):
            hw.command("a", Command.POSITION, 1.0)
        writes = bus.counts()["0x83"]
        hw.step(STEPS_PER_RETRY + 2)  # a retry pings; b is still silent
        assert hw.state is LifecycleState.UNCONFIGURED
        assert bus.counts()["0x83"] == writes  # no command output while failed
        bus.silence([])
        recover(hw, 3 * STEPS_PER_RETRY)
    assert hw.flags("b") == StateFlags.READY | StateFlags.ENABLED
    assert "hardware 'dynamixel': recovered (was: motor 'b' (id 2): ping" in caplog.text
    hw.command("a", Command.POSITION, 1.0)


def test_a_shutdown_before_activation_ended_leaves_every_torque_off(bus):
    """A signal can end the node inside on_activate, after some servos took Torque
    Enable 1 and before the system is ACTIVE: the shutdown from INACTIVE (cleanup) still
    switches every torque off (once, it stayed on: a node stopped at start-up left the
    servos holding)."""
    system = HardwareSystem(config(bus.port))
    assert system.configure() and system.state is LifecycleState.INACTIVE
    bus.set(1, emu.TORQUE_ENABLE, 1, 1)  # what the interrupted activation had written
    bus.set(3, emu.TORQUE_ENABLE, 1, 1)
    system.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]


def test_a_signal_inside_a_bus_transaction_still_leaves_every_torque_off(bus, hw, caplog):
    """Ctrl-C's KeyboardInterrupt inside the SDK's wait for an answer left its port 'in
    use': the SDK then refused the shutdown's torque off without sending it, and a node
    stopped that way left the servos holding (seen as CI's one red test)."""
    interrupt_inside_a_transaction(hw)
    hw.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]
    assert "torque off" not in caplog.text


def test_a_torque_off_without_an_answer_is_retried_then_said(bus, hw, caplog):
    """A servo that does not answer the torque off may still be on: the warning names it
    (after a second attempt)."""
    bus.silence([2])
    hw.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 3)] == [0, 0]
    assert "motor 'b' (id 2): torque off got no answer" in caplog.text
    assert "it may still be on" in caplog.text


def test_one_corrupted_crc_is_read_again_two_are_a_communication_failure(bus, hw):
    before = bus.counts()["0x82"]
    bus.corrupt(1)  # servo 1's reply to the sync read
    hw.cycle()
    assert hw.active
    assert bus.counts()["0x82"] - before == 2  # read once more, within the cycle
    bus.corrupt(4)  # the 3 replies of the first sync read and the first of the second
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert "[TxRxResult] Incorrect status packet!" in hw.component.reason
    assert hw.flags("a") & StateFlags.COMMUNICATION_FAILURE
    recover(hw, 3 * STEPS_PER_RETRY)
    assert hw.flags("a") == StateFlags.READY | StateFlags.ENABLED


def test_a_read_while_configuring_is_tried_again_on_a_corrupt_reply(bus):
    """The first ping's reply corrupt: pinged again, and the start goes on (a real bus
    loses a reply now and then, and a busy machine starves an emulated one)."""
    before = bus.counts().get("0x01", 0)
    system = HardwareSystem(config(bus.port))
    bus.corrupt(1)
    assert system.start(), system.component.reason
    assert bus.counts()["0x01"] - before == 3 + 1  # a ping per servo, servo 1's twice
    system.shutdown()


def test_a_read_while_configuring_that_fails_twice_fails_the_start_with_the_buss_error(bus):
    system = HardwareSystem(config(bus.port))
    bus.corrupt(2)
    assert not system.start()
    assert system.component.reason == \
        "motor 'a' (id 1): ping: [TxRxResult] Incorrect status packet!"
    assert system.flags("a") & StateFlags.COMMUNICATION_FAILURE
    system.shutdown()


def test_overload_sets_error_flags_reboots_and_recovers(bus, hw, caplog):
    with caplog.at_level(logging.INFO, "servo_sim"):
        bus.hardware_error(3, 0x20)
        hw.cycle()
        assert hw.state is LifecycleState.UNCONFIGURED
        assert hw.flags("c") & StateFlags.ERROR
        assert hw.component.faults[2] == "motor 'c' (id 3): hardware error: overload"
        assert bus.get(3, emu.HARDWARE_ERROR_STATUS, 1) == 0  # on_error rebooted it
        recover(hw, 3 * STEPS_PER_RETRY)
    assert bus.get(3, emu.TORQUE_ENABLE, 1) == 1
    assert hw.flags("c") == StateFlags.READY | StateFlags.ENABLED
    assert "read: motor 'c' (id 3): hardware error: overload; commands halted" in caplog.text


def test_the_shipped_dynamixel_config_drives_the_bus(bus):
    from dataclasses import replace
    from pathlib import Path

    from servo_sim.model import load_config

    shipped = load_config(Path(__file__).resolve().parents[1] / "config" / "dynamixel.yaml")
    system = HardwareSystem(replace(shipped, hardware={**shipped.hardware, "port": bus.port}))
    start_on_a_bus(system)
    assert bus.get(1, emu.POSITION_P_GAIN, 2) == 800  # the factory gain, as the file says
    assert bus.get(2, emu.CURRENT_LIMIT, 2) == 627
    system.shutdown()


# --------------------------------------------------------------------------- modes, safety


def test_e_stop_switches_the_torque_off_and_enable_holds_where_the_servo_is(bus, hw):
    hw.command("a", Command.POSITION, 1.0)
    hw.step(2)
    hw.command("a", Command.E_STOP)
    hw.step(1)
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 1, 1]
    modes, flags = hw.report()
    assert (modes[0], flags[0]) == (ServoMode.DISABLED, StateFlags.E_STOP)
    with pytest.raises(CommandRefusedError, match="motor 'a': set_position refused: e-stop"):
        hw.command("a", Command.POSITION, 0.0)
    hw.command("a", Command.RESET_E_STOP)
    bus.freeze()
    bus.set(1, emu.PRESENT_POSITION, 4, 2048 + 300)  # pushed by hand while off
    hw.step(1)
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0  # reset alone does not enable
    hw.command("a", Command.ENABLE)  # holds the 300 ticks it read
    hw.step(1)
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 1
    assert bus.get(1, emu.GOAL_POSITION, 4) == 2048 + 300
    assert hw.sim.motor("a").mode is ServoMode.HALT


def test_a_failed_bus_reports_mode_error_and_still_takes_the_e_stop(bus, hw):
    hw.command("b", Command.POSITION, 0.5)
    bus.silence([2])
    hw.cycle()
    hw.command("b", Command.E_STOP)  # accepted whatever the device's state
    modes, flags = hw.report()
    assert modes.tolist() == [ServoMode.ERROR] * 3  # the whole bus is down
    assert flags[1] == StateFlags.E_STOP | StateFlags.COMMUNICATION_FAILURE
    level, why = hw.status()[1]
    assert level == 2 and why == ("motor 'b' (id 2): sync read: [TxRxResult] There is no "
                                  "status packet!")
    assert hw.status()[0][0] == 2  # a: no flag of its own, the plugin's reason
    bus.silence([])
    recover(hw, 3 * STEPS_PER_RETRY)
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [1, 0, 1]
    modes, _ = hw.report()
    assert modes.tolist() == [ServoMode.HALT, ServoMode.DISABLED, ServoMode.HALT]


@pytest.mark.parametrize("sign", [1, -1])
def test_a_trapezoidal_move_is_streamed_as_goal_positions(bus, hw, sign):
    from test_safety import closed_form  # the independent closed-form profile

    bus.freeze()  # the servo stays at 0: the set-points do not depend on it
    hw.step(1)
    move = hw.command("a", Command.TRAPEZOIDAL_MOVE, sign * 0.5, 0.0, 2.0, 8.0)
    rad_per_tick = 2 * math.pi / 4096
    goals, expected = [], []
    for k in range(1, 70):
        hw.cycle()
        goals.append(bus.get(1, emu.GOAL_POSITION, 4))
        expected.append(2048 + round(sign * closed_form(k * 0.008, 0.5, 2.0, 8.0)[0]
                                     / rad_per_tick))
    assert goals == expected
    assert goals[-1] == 2048 + round(sign * 0.5 / rad_per_tick)
    assert move.state == "succeeded"  # 0.5 s: done at the cycle starting at 504 ms
    assert bus.get(1, emu.OPERATING_MODE, 1) == emu.MODE_EXTENDED_POSITION


@pytest.mark.parametrize("sign", [1, -1])
def test_a_goal_between_ticks_is_written_as_the_nearest_tick(bus, hw, sign):
    """Goals 100.3, 100.7, 2.5 and 3.5 ticks from the centre (2048), either way: the
    Goal Position written is the nearest tick (half to even, as Python's round: 2.5 ->
    2, 3.5 -> 4), not the one below or the one towards zero."""
    rad_per_tick = 2 * math.pi / 4096
    bus.freeze()
    for ticks, nearest in ((100.3, 100), (100.7, 101), (2.5, 2), (3.5, 4)):
        hw.command("a", Command.POSITION, sign * ticks * rad_per_tick)
        hw.cycle()
        assert bus.get(1, emu.GOAL_POSITION, 4) == 2048 + sign * nearest, ticks


def test_halt_ramps_the_goal_velocity_down_then_holds(bus, hw):
    bus.freeze()
    hw.command("c", Command.ACCELERATION, 10.0)
    hw.command("c", Command.POSITION, math.inf)
    hw.command("c", Command.VELOCITY, 2.0)
    unit = 0.229 * 2 * math.pi / 60  # rad/s per Goal Velocity unit
    bus.set(3, emu.PRESENT_VELOCITY, 4, 83)  # 1.990 rad/s
    hw.step(1)
    assert bus.get(3, emu.GOAL_VELOCITY, 4) == round(2.0 / unit)
    hw.command("c", Command.HALT)
    registers, expected = [], []
    for k in range(1, 27):
        hw.cycle()
        registers.append(bus.get(3, emu.GOAL_VELOCITY, 4))
        expected.append(round(max(83 * unit - k * 10.0 * 0.008, 0.0) / unit))
    assert registers[:25] == expected[:25] and expected[24] == 0  # 1.99 / 0.08: 25 cycles
    assert bus.get(3, emu.OPERATING_MODE, 1) == emu.MODE_EXTENDED_POSITION  # then holds
    assert hw.sim.motor("c").mode is ServoMode.HALT


def test_a_failed_bus_stops_the_servos_that_follow_a_velocity(bus, hw):
    """on_error: a servo in velocity mode would go on turning while the bus recovers;
    its torque goes off (the others hold their goal positions)."""
    hw.command("c", Command.POSITION, math.inf)
    hw.command("c", Command.VELOCITY, 1.0)
    hw.cycle()
    assert bus.get(3, emu.OPERATING_MODE, 1) == emu.MODE_VELOCITY
    bus.silence([2])
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 3)] == [1, 0]


@pytest.mark.parametrize("sign", [1, -1])
def test_a_servo_not_in_position_control_has_its_goal_position_where_it_is(bus, hw, sign):
    """Velocity (a), current (b) and off (c): the Goal Position written is the present
    position (2048 +- 300 ticks), so that a torque-on or a mode switch before the next
    goal holds the servo where it is rather than sending it to a stale or zero goal."""
    bus.freeze()
    hw.command("a", Command.POSITION, math.inf)
    hw.command("a", Command.VELOCITY, sign * 1.0)
    hw.command("b", Command.TORQUE, sign * 0.5)
    hw.command("c", Command.AVAILABLE_TORQUE, 0.0)
    for servo in (1, 2, 3):
        bus.set(servo, emu.PRESENT_POSITION, 4, 2048 + sign * 300)
    hw.cycle()
    for servo in (1, 2, 3):
        assert bus.get(servo, emu.GOAL_POSITION, 4) == 2048 + sign * 300


@pytest.mark.parametrize("speed", [0.0, 0.01, -0.01])
def test_a_speed_limit_or_acceleration_of_about_0_is_the_slowest_profile_not_unlimited(
        bus, hw, speed):
    """Profile Velocity / Acceleration 0 mean 'unlimited' on an X servo (e-Manual): a speed
    limit of 0 or +-0.01 rad/s (0.42 units of 0.229 rpm) and an acceleration of 0 are
    written as 1, the slowest profile; only acceleration -1 (Webots' unlimited) is 0."""
    bus.freeze()
    hw.command("a", Command.POSITION, 0.5)
    hw.command("a", Command.VELOCITY, speed)
    hw.command("a", Command.ACCELERATION, 0.0)
    hw.cycle()
    assert bus.get(1, emu.PROFILE_VELOCITY, 4) == 1
    assert bus.get(1, emu.PROFILE_ACCELERATION, 4) == 1
    hw.command("a", Command.ACCELERATION, -1.0)
    hw.cycle()
    assert bus.get(1, emu.PROFILE_ACCELERATION, 4) == 0


def test_i_and_d_gains_beyond_the_registers_are_clipped_each_with_its_own_warning(
        bus, hw, caplog):
    """I 1.0 is 65536 units (x 65536), D 2000 is 32000 (x 16): both clipped to 16383 and
    each said by its own name; P 1.0 (128 units) fits and is not."""
    with caplog.at_level(logging.WARNING, "servo_sim"):
        hw.command("c", Command.CONTROL_PID, 1.0, 1.0, 2000.0)
        hw.cycle()
    assert bus.get(3, emu.POSITION_P_GAIN, 2) == 128
    assert bus.get(3, emu.POSITION_I_GAIN, 2) == 16383
    assert bus.get(3, emu.POSITION_D_GAIN, 2) == 16383
    assert "motor 'c': I gain 1 is 65536 register units, beyond 16383; clipped" in caplog.text
    assert "motor 'c': D gain 2000 is 32000 register units, beyond 16383; clipped" \
        in caplog.text
    assert "P gain" not in caplog.text


@pytest.mark.parametrize(("p", "units", "warned"), [
    (127.994140625, "", False),  # x 128 = 16383.25: rounds to 16383, fits
    (127.99609375, "16383.5", True),  # x 128 = 16383.5: rounds to 16384, beyond
])
def test_a_gain_is_said_clipped_only_where_it_rounds_beyond_the_register(
        bus, hw, caplog, p, units, warned):
    with caplog.at_level(logging.WARNING, "servo_sim"):
        hw.command("c", Command.CONTROL_PID, p, 0.0, 0.0)
        hw.cycle()
    assert bus.get(3, emu.POSITION_P_GAIN, 2) == 16383
    assert ("P gain" in caplog.text) == warned
    if warned:
        assert f"motor 'c': P gain {p:g} is {units} register units, beyond 16383; clipped" \
            in caplog.text


@pytest.mark.parametrize("sign", [1, -1])
def test_present_values_of_either_sign_are_read_with_their_signs(bus, hw, sign):
    """Present Position, Velocity and Current are signed little-endian (4, 4 and 2 bytes;
    Present Position below 0 in extended position mode): 2048 + 6144 and 2048 - 6144 =
    -4096 ticks are +-3 pi rad (2048 at 0, 4096 a turn), +-100 x 0.229 rpm is +-2.398
    rad/s, +-200 x 2.69 mA x 1.78 N*m/A is +-0.9576 N*m."""
    bus.freeze()
    bus.set(1, emu.PRESENT_POSITION, 4, 2048 + sign * 6144)
    bus.set(1, emu.PRESENT_VELOCITY, 4, sign * 100)
    bus.set(1, emu.PRESENT_CURRENT, 2, sign * 200)
    hw.cycle()
    a = hw.sim.motor("a")
    assert a.position == pytest.approx(sign * 3 * math.pi)
    assert a.velocity == pytest.approx(sign * 100 * 0.229 * 2 * math.pi / 60)
    assert a.motor_force == pytest.approx(sign * 200 * 0.00269 * KT)


def test_two_servos_faulting_at_once_are_both_said_in_one_error(bus, hw, caplog):
    """Each faulted servo's text, joined by "; ", in the one read error."""
    bus.hardware_error(1, 0x20)
    bus.hardware_error(3, 0x04)
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert ("read: motor 'a' (id 1): hardware error: overload; motor 'c' (id 3): hardware "
            "error: overheating; commands halted") in caplog.text


def test_an_error_number_in_the_sync_reads_replies_is_not_the_alert(bus, hw):
    """Protocol 2.0's Error field: bit 7 is the alert (a Hardware Error Status set), bits
    0-6 an instruction's error number (1 Result Fail ...). Result Fail in the cycle's
    three replies: no alert, no Hardware Error Status read, the bus stays up."""
    reads = bus.counts().get("0x02", 0)  # READ: what an alert would add
    bus.error_number(1, 3)
    hw.cycle()
    assert hw.active, hw.component.reason
    assert all(hw.flags(m) == StateFlags.READY | StateFlags.ENABLED for m in "abc")
    assert bus.counts().get("0x02", 0) == reads


def test_a_hardware_error_status_read_lost_after_a_good_sync_read_is_said_as_that_read(
        bus, hw):
    """Servo 2 alerts in a good sync read; its Hardware Error Status read is then lost
    on both tries (the next 2 status packets after the sync read's 3 corrupt): the bus
    fails naming that read, not the sync read."""
    bus.hardware_error(2, 0x20)
    bus.corrupt(2, after=3)
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert hw.component.reason == ("motor 'b' (id 2): read Hardware Error Status: "
                                   "[TxRxResult] Incorrect status packet!")
    assert hw.flags("b") & StateFlags.COMMUNICATION_FAILURE


@pytest.mark.parametrize("sign", [1, -1])
def test_in_velocity_mode_the_servo_turns_the_way_its_goal_velocity_says(sign):
    """Goal Velocity's sign is the servo's direction in velocity mode: an XM430-W350's
    model (``--servo``) reaches half the goal's 42 units (1 rad/s in 0.229 rpm) of
    Present Velocity with that sign, on its own clock (waited for, generous timeout)."""
    from conftest import started

    with emu.EmulatorProcess([1], realtime=True, servo="XM430-W350-T") as bus, \
            started(config(bus.port, motors=("a",))) as system:
        system.command("a", Command.POSITION, math.inf)
        system.command("a", Command.VELOCITY, sign * 1.0)
        system.cycle()
        assert (bus.get(1, emu.OPERATING_MODE, 1), bus.get(1, emu.GOAL_VELOCITY, 4)) == (
            emu.MODE_VELOCITY, sign * round(1.0 / (0.229 * 2 * math.pi / 60)))
        deadline = time.monotonic() + 30.0
        while sign * bus.get(1, emu.PRESENT_VELOCITY, 4) < 21:
            assert time.monotonic() < deadline, bus.get(1, emu.PRESENT_VELOCITY, 4)
            time.sleep(0.01)  # a poll of the emulator's own clock, not a wait for time
