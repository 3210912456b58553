"""The feetech plugin against an emulated STS/SCS bus on a pseudo-terminal.

The emulator (``servo_sim.emulators.sts_emulator``) runs in a child process, speaks the
wire protocol and moves each servo with servo_sim's model; the plugin drives the other
end through the real feetech-servo-sdk. Expected register values are computed by hand
from the STS units (4096 ticks per turn, ticks/s, 100 ticks/s^2, 0.1 %).
"""

from __future__ import annotations

import json
import logging
import math
import re
import subprocess
import sys
import time

import pytest
import scservo_sdk as scs
from conftest import (
    bus_config,
    bus_fixture,
    cycle_until,
    interrupt_inside_a_transaction,
    recover,
    start_on_a_bus,
    start_refused,
    started,
    started_fixture,
)
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.emulators import sts_emulator as emu
from servo_sim.hardware import (
    Capabilities,
    CommandRefusedError,
    HardwareSystem,
    LifecycleState,
    PluginError,
    StateFlags,
)
from servo_sim.hardware import system as system_module
from servo_sim.model import Command, parse_config

STALL = 1.91  # N*m: the plugin's default stall torque (STS3215, 7.4 V)
TICK = 2 * math.pi / 4096  # rad per tick
STEPS_PER_RETRY = system_module.RECOVERY_PERIOD_MS // 8


bus = bus_fixture(emu)


def config(port, motors=("a", "b", "c"), limits=(-2.5, 2.5), **extra):
    return bus_config("feetech", port, motors, motor={
        "max_torque": 1.5, "max_velocity": 4.0, "min_position": limits[0],
        "max_position": limits[1]}, **extra)


hw = started_fixture(config)


# --------------------------------------------------------------------------- the protocol


def test_checksums_of_the_manuals_examples():
    # Feetech's protocol manual: ping id 1 is FF FF 01 02 01 FB; reading 2 bytes of
    # Present Position (0x38) of id 1 is FF FF 01 04 02 38 02 BE
    assert emu.packet(1, emu.PING) == bytes.fromhex("FFFF010201FB")
    assert emu.packet(1, emu.READ, bytes((0x38, 2))) == bytes.fromhex("FFFF0104023802BE")


@given(st.integers(-32767, 32767))
def test_sign_magnitude_matches_the_sdk(value):
    assert emu.to_sign_magnitude(value, 15) == scs.SCS_TOSCS(value, 15)
    assert emu.from_sign_magnitude(scs.SCS_TOSCS(value, 15), 15) == value


def _sdk_on(bus):
    """The vendor SDK on the emulated bus, open: (port, packet handler)."""
    port, ph = scs.PortHandler(bus.port), scs.protocol_packet_handler()
    assert port.openPort() and port.setBaudRate(1000000)
    return port, ph


def test_the_emulators_eeprom_file_keeps_what_a_servo_keeps_across_restarts(tmp_path):
    """Issue 35: with --eeprom, what is written to EEPROM while Lock is 0 (LeRobot's
    calibration: homing offset and limits, between Lock 0 and Lock 1) is there at the
    next start; what is written while Lock is 1 takes effect and is gone after a restart,
    as on a real servo. Through the vendor's SDK, bytes by hand (little-endian)."""
    path = tmp_path / "arm.json"

    with emu.EmulatorProcess([1, 2], eeprom=path, realtime=True) as bus:
        port, ph = _sdk_on(bus)
        try:
            assert ph.writeTxRx(port, 1, emu.LOCK, 1, [0]) == (scs.COMM_SUCCESS, 0)
            # homing offset -300: sign bit 11, 300 | 0x800 = 0x092C
            assert ph.writeTxRx(port, 1, emu.HOMING_OFFSET, 2, [0x2C, 0x09])[0] == 0
            assert ph.writeTxRx(port, 1, emu.MIN_POSITION_LIMIT, 4,
                                [0xE8, 0x03, 0xB8, 0x0B])[0] == 0  # 1000, 3000
            assert ph.writeTxRx(port, 1, emu.LOCK, 1, [1])[0] == 0
            assert ph.writeTxRx(port, 2, emu.P_COEFFICIENT, 1, [16])[0] == 0  # locked
            assert ph.readTxRx(port, 2, emu.P_COEFFICIENT, 1)[0] == [16]  # in effect now
        finally:
            port.closePort()
    with emu.EmulatorProcess([1, 2], eeprom=path, realtime=True) as bus:  # the arm powered up again
        assert bus.get(1, emu.HOMING_OFFSET, 2) == -300
        assert (bus.get(1, emu.MIN_POSITION_LIMIT, 2),
                bus.get(1, emu.MAX_POSITION_LIMIT, 2)) == (1000, 3000)
        assert bus.get(2, emu.P_COEFFICIENT, 1) == 32  # the factory value: not kept
        assert [bus.get(i, emu.LOCK, 1) for i in (1, 2)] == [1, 1]  # RAM: its default
        assert bus.get(1, emu.ID, 1) == 1
    # without the file, the factory registers
    with emu.EmulatorProcess([1], realtime=True) as bus:
        assert bus.get(1, emu.HOMING_OFFSET, 2) == 0


def test_a_servo_answers_at_the_id_written_and_keeps_it_as_a_real_one(tmp_path):
    """Issue 35: the ID register (5) is the id a servo answers at, from the next packet
    on (LeRobot's setup_motors writes it); written while Lock is 0 it is kept across a
    restart (--eeprom), while Lock is 1 it is gone after one. The parent still names the
    servos by --ids."""
    path = tmp_path / "arm.json"
    with emu.EmulatorProcess([1, 2], eeprom=path, realtime=True) as bus:
        port, ph = _sdk_on(bus)
        try:
            assert ph.writeTxRx(port, 2, emu.LOCK, 1, [0])[0] == scs.COMM_SUCCESS
            assert ph.writeTxRx(port, 2, emu.ID, 1, [7]) == (scs.COMM_SUCCESS, 0)
            assert ph.ping(port, 7)[:2] == (777, scs.COMM_SUCCESS)
            assert ph.ping(port, 2)[1] == scs.COMM_RX_TIMEOUT  # nobody there now
            assert ph.readTxRx(port, 7, emu.ID, 1)[0] == [7]
            # the sync read LeRobot's bus uses, at the new id
            group = scs.GroupSyncRead(port, ph, emu.MODEL_NUMBER, 2)
            assert group.addParam(1) and group.addParam(7)
            assert group.txRxPacket() == scs.COMM_SUCCESS
            assert [group.getData(i, emu.MODEL_NUMBER, 2) for i in (1, 7)] == [777, 777]
            assert ph.writeTxRx(port, 1, emu.ID, 1, [9])[0] == scs.COMM_SUCCESS  # Lock 1
            assert ph.ping(port, 9)[:2] == (777, scs.COMM_SUCCESS)
        finally:
            port.closePort()
        assert bus.get(2, emu.ID, 1) == 7
    with emu.EmulatorProcess([1, 2], eeprom=path, realtime=True) as bus:  # powered up again
        port, ph = _sdk_on(bus)
        try:
            assert [ph.ping(port, i)[1] for i in (1, 7, 2, 9)] == [
                scs.COMM_SUCCESS, scs.COMM_SUCCESS, scs.COMM_RX_TIMEOUT, scs.COMM_RX_TIMEOUT]
        finally:
            port.closePort()
    saved = json.loads(path.read_text())
    assert saved["first_address"] == emu.ID and saved["servos"]["2"][0] == 7


def test_a_sync_write_of_ids_finds_each_servo_at_the_id_it_had_when_it_came():
    """One SYNC WRITE of the ID register, 1 -> 2 and 2 -> 3: servo 1 becomes 2 and
    servo 2 becomes 3 (each servo matches its id once, as the packet arrives; not 1 -> 2
    -> 3 in a cascade)."""
    with emu.EmulatorProcess([1, 2, 3], realtime=True) as bus:
        port, ph = _sdk_on(bus)
        try:
            group = scs.GroupSyncWrite(port, ph, emu.ID, 1)
            assert group.addParam(1, [2]) and group.addParam(2, [3])
            assert group.txPacket() == scs.COMM_SUCCESS
        finally:
            port.closePort()
        assert [bus.get(i, emu.ID, 1) for i in (1, 2, 3)] == [2, 3, 3]


def test_an_eeprom_file_from_before_the_id_was_kept_still_loads(tmp_path):
    """Files written before the ID was kept start at byte 6 (34 bytes): read as they
    were, the servos at their --ids."""
    path = tmp_path / "arm.json"
    kept = list(emu.Servo(1).table[6:40])  # as shipped
    kept[emu.HOMING_OFFSET - 6:emu.HOMING_OFFSET - 4] = [0x2C, 0x09]  # -300
    path.write_text(json.dumps({"first_address": 6, "servos": {"1": kept}}))
    with emu.EmulatorProcess([1], eeprom=path, realtime=True) as bus:
        assert bus.get(1, emu.HOMING_OFFSET, 2) == -300
        assert bus.get(1, emu.ID, 1) == 1


def test_a_bad_eeprom_file_stops_the_emulator_with_its_name(tmp_path):
    path = tmp_path / "arm.json"
    path.write_text('{"first_address": 6, "servos": {"1": [1, 2]}}')
    run = subprocess.run([sys.executable, "-m", "servo_sim.emulators.sts_emulator",
                          "--ids", "1", "--eeprom", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert f"--eeprom {path}: servo 1: 2 bytes, expected 34" in run.stderr


def test_emulator_over_the_pty_with_the_sdk():
    with emu.EmulatorProcess([1, 2], scs=[2], realtime=True) as bus:
        port, ph = _sdk_on(bus)
        try:
            # model numbers: 777 little-endian (STS3215), 1284 big-endian (SCS0009)
            assert ph.readTxRx(port, 1, emu.MODEL_NUMBER, 2) == ([0x09, 0x03], scs.COMM_SUCCESS, 0)
            assert ph.readTxRx(port, 2, emu.MODEL_NUMBER, 2) == ([0x05, 0x04], scs.COMM_SUCCESS, 0)
            # a packet with a wrong checksum is ignored: no reply at all
            before = bus.counts()
            port.writePort(bytes.fromhex("FFFF010201FA"))  # ping, checksum off by one
            port.setPacketTimeout(6)
            assert ph.rxPacket(port)[1] == scs.COMM_RX_TIMEOUT
            after = bus.counts()
            assert after["checksum_error"] == before.get("checksum_error", 0) + 1
            assert after.get("0x01", 0) == before.get("0x01", 0)
            # a read-only register is left alone by a write
            assert ph.writeTxRx(port, 1, emu.PRESENT_POSITION, 2, [0, 0]) == (scs.COMM_SUCCESS, 0)
            assert bus.get(1, emu.PRESENT_POSITION, 2) != 0
            # each servo its own byte order: 4095 little-endian, 1023 big-endian
            assert ph.readTxRx(port, 1, emu.MAX_POSITION_LIMIT, 2)[0] == [0xFF, 0x0F]
            assert ph.readTxRx(port, 2, emu.MAX_POSITION_LIMIT, 2)[0] == [0x03, 0xFF]
            # sync read: one instruction packet, each listed STS answers; an SCS does not
            count = bus.counts().get("0x82", 0)
            reader = scs.GroupSyncRead(port, ph, emu.MAX_POSITION_LIMIT, 2)
            reader.addParam(1)
            assert reader.txRxPacket() == scs.COMM_SUCCESS
            assert reader.data_dict == {1: [0xFF, 0x0F]}
            assert bus.counts()["0x82"] == count + 1
            reader.addParam(2)
            assert reader.txRxPacket() == scs.COMM_RX_TIMEOUT
            # a fault is in the error byte of every status packet, and in Status
            bus.fault(1, emu.OVERLOAD)
            assert ph.readTxRx(port, 1, emu.STATUS, 1) == ([0x20], scs.COMM_SUCCESS, 0x20)
            bus.fault(1, 0)
            assert ph.readTxRx(port, 1, emu.STATUS, 1) == ([0], scs.COMM_SUCCESS, 0)
            # silence, and a wrong checksum on the reply
            bus.silence([1])
            assert ph.readTxRx(port, 1, emu.STATUS, 1)[1] == scs.COMM_RX_TIMEOUT
            bus.silence([])
            bus.corrupt(1)
            assert ph.readTxRx(port, 1, emu.STATUS, 1)[1] == scs.COMM_RX_CORRUPT
            assert ph.readTxRx(port, 1, emu.STATUS, 1)[1] == scs.COMM_SUCCESS
        finally:
            port.closePort()


def test_the_emulated_servo_moves_as_its_model():
    """A goal 1024 ticks away at Goal Speed 1000 ticks/s: the motor inside runs at the
    speed limit, 1000 x 2 pi / 4096 = 1.534 rad/s, then closes the rest at P = 32 / 3.2
    = 10 /s (Webots' P control: e(t) = e0 exp(-10 t)) and settles on the goal."""
    b = emu.Bus([1])
    b.servos[1].write(emu.TORQUE_ENABLE, bytes((1,)))
    b.servos[1].write(emu.GOAL_POSITION, (3072).to_bytes(2, "little") + bytes(2)
                      + (1000).to_bytes(2, "little"))
    b._apply(1)
    b.sim.step(100)  # 0.2 s: accelerating (1.91 N*m / 0.002 kg*m^2) then at the limit
    assert b.motors[1].velocity == pytest.approx(1000 * TICK, rel=1e-9)
    b.sim.step(1000)  # 2 s more: ~1 s at the limit, then e0 = 1.534 / 10 rad decays
    b._present(1)
    assert b.servos[1].get(emu.PRESENT_POSITION, 2) == pytest.approx(3072, abs=1)
    assert b.servos[1].get(emu.MOVING, 1) == 0


def test_a_stepped_emulators_servo_moves_only_as_its_parent_runs_its_clock():
    """The move above through the SDK, on the parent's clock: the servo stands however
    long the bus works; after run_to(t) it moves to t as the next read comes, with every
    packet sent before that read in force, and is where the model is after t."""
    with emu.EmulatorProcess([1], stepped=True, realtime=True) as bus:
        port, ph = _sdk_on(bus)
        try:
            assert ph.write1ByteTxRx(port, 1, emu.TORQUE_ENABLE, 1) == (scs.COMM_SUCCESS, 0)
            for _ in range(50):  # packets, and the emulator's own 20 ms ticks between them
                assert ph.read2ByteTxRx(port, 1, emu.PRESENT_POSITION)[0] == 2048
            assert bus.time() == 0.0
            bus.run_to(0.2009)
            # a goal written after run_to but before the next read: in force for the whole
            # 0.2 s (a servo moved at run_to itself would have stood still under the old one)
            goal = (3072).to_bytes(2, "little") + bytes(2) + (1000).to_bytes(2, "little")
            assert ph.writeTxRx(port, 1, emu.GOAL_POSITION, 6, list(goal)) == \
                (scs.COMM_SUCCESS, 0)
            assert ph.read2ByteTxRx(port, 1, emu.PRESENT_SPEED)[0] == 1000  # at the limit
            # to the nearest model step (2 ms): 0.2009 s is 100 steps, 0.2011 s 101
            assert bus.time() == pytest.approx(0.2, abs=1e-12)
            bus.run_to(0.2011)
            assert bus.time() == pytest.approx(0.202, abs=1e-12)
            bus.run_to(2.2)
            assert bus.time() == pytest.approx(2.2, abs=1e-12)  # (1,000 steps: now, not
            # inside the next read, which the SDK waits 34 ms for)
            assert ph.read2ByteTxRx(port, 1, emu.PRESENT_POSITION)[0] == \
                pytest.approx(3072, abs=1)
            assert ph.read1ByteTxRx(port, 1, emu.MOVING)[0] == 0
        finally:
            port.closePort()


def test_run_to_is_refused_by_an_emulator_in_wall_clock_time():
    with emu.EmulatorProcess([1], realtime=True) as bus:
        with pytest.raises(RuntimeError, match=r"run_to\(1\.0\): the Feetech emulator was "
                                               "not started stepped"):
            bus.run_to(1.0)


def test_run_to_a_time_that_is_not_finite_is_refused_and_the_servo_stays():
    with emu.EmulatorProcess([1], stepped=True, realtime=True) as bus:
        for bad in (math.nan, math.inf, -math.inf):
            with pytest.raises(ValueError, match=r"the time must be a finite number"):
                bus.run_to(bad)
        bus.run_to(0.01)
        assert bus.time() == pytest.approx(0.01, abs=1e-12)  # still answering, on time


@pytest.mark.parametrize(("module", "args", "message"), [
    ("sts_emulator", ["--stepped"], "--stepped needs --control"),
    ("dxl_emulator", ["--control", "--stepped"],
     "--stepped: this emulator cannot run on its parent's clock"),
])
def test_stepped_without_a_parent_or_on_the_dynamixel_emulator_is_a_usage_error(module, args,
                                                                               message):
    run = subprocess.run([sys.executable, "-m", f"servo_sim.emulators.{module}", *args],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    assert message in run.stderr


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("change, message", [
    ({"port": None}, "setting 'port' = None: must be a serial port path"),
    ({"baud_rate": 4000000}, "setting 'baud_rate' = 4000000: must be one of 4800, "),
    ({"a": {"id": 300}}, "motor 'a': hardware setting 'id' = 300: must be an integer 0..252"),
    ({"a": {"id": 2}}, "id 2 is given to more than one motor"),
    ({"a": {"id": 1, "direction": 2}},
     "motor 'a': hardware setting 'direction' = 2: must be 1 or -1"),
    ({"a": {"id": 1, "homing_offset": 3000}},
     "motor 'a': hardware setting 'homing_offset' = 3000: must be an integer -2047..2047"),
    ({"a": {"id": 1, "coefficients": [16, 32]}},
     "motor 'a': hardware setting 'coefficients' = [16, 32]: must be 3 integers 0..254"),
    ({"a": {"id": 1, "stall_torque": 0}},
     "motor 'a': hardware setting 'stall_torque' = 0: must be a number > 0"),
    ({"a": {"id": 1, "torque_constant": 1.0}},
     "motor 'a': unknown hardware setting 'torque_constant'"),
    ({"serial": "/dev/ttyACM1"}, "unknown setting(s) 'serial'"),
])
def test_bad_settings_fail_at_start_up_with_one_message(change, message):
    raw = config("/dev/null", motors=("a", "b"))
    hardware = {k: v for k, v in {**raw.hardware, **change}.items() if v is not None}
    with pytest.raises(PluginError, match="^" + re.escape("<dict>: hardware 'feetech': "
                                                           + message)):
        HardwareSystem(parse_config({"hardware": hardware,
                                     "motors": [{"name": "a"}, {"name": "b"}]}))


LEROBOT = {  # LeRobot's calibration file form (one entry per motor name)
    "a": {"id": 1, "drive_mode": 0, "homing_offset": -300, "range_min": 900,
          "range_max": 3200},
    "b": {"id": 2, "drive_mode": 1, "homing_offset": 120, "range_min": 800,
          "range_max": 3400},
    "c": {"id": 3, "drive_mode": 0, "homing_offset": 0, "range_min": 0, "range_max": 4095},
}


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.pop("c"), "motor 'c': not in calibration {path!r} (it has a, b)"),
    (lambda c: c["b"].update(id=7),
     "motor 'b': hardware setting 'id' = 2, but calibration {path!r} gives id 7"),
    (lambda c: c["a"].pop("range_max"), "calibration {path!r}: motor 'a': no 'range_max'"),
    (lambda c: c["a"].update(range_min=3500),
     "calibration {path!r}: motor 'a': range_min 3500 > range_max 3200"),
    (lambda c: c["a"].update(homing_offset=3000),  # 11 bits and a sign bit
     "calibration {path!r}: motor 'a': 'homing_offset' = 3000: must be an integer "
     "-2047..2047"),
    (lambda c: c["b"].update(range_min=-10),
     "calibration {path!r}: motor 'b': 'range_min' = -10: must be an integer 0..4095"),
    (lambda c: c["c"].update(drive_mode=2),
     "calibration {path!r}: motor 'c': 'drive_mode' = 2: must be an integer 0..1"),
])
def test_a_calibration_file_that_does_not_match_the_config_is_one_error(tmp_path, edit,
                                                                       message):
    calibration = json.loads(json.dumps(LEROBOT))
    edit(calibration)
    path = tmp_path / "so101.json"
    path.write_text(json.dumps(calibration))
    with pytest.raises(PluginError, match="^" + re.escape(
            "<dict>: hardware 'feetech': " + message.format(path=str(path)))):
        HardwareSystem(config("/dev/null", calibration=str(path)))


@pytest.mark.parametrize("text, message", [
    (None, "calibration {path!r}: cannot read: No such file or directory"),
    ("{'a': 1}", "calibration {path!r}: not JSON: Expecting property name enclosed in "
                 "double quotes: line 1 column 2 (char 1)"),
    ("[]", "calibration {path!r}: must be an object of motors"),
])
def test_an_unreadable_calibration_file_is_one_error(tmp_path, text, message):
    path = tmp_path / "so101.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(PluginError, match="^" + re.escape(
            "<dict>: hardware 'feetech': " + message.format(path=str(path)))):
        HardwareSystem(config("/dev/null", calibration=str(path)))


def test_a_calibration_and_the_motors_own_zero_are_one_error(tmp_path):
    path = tmp_path / "so101.json"
    path.write_text(json.dumps(LEROBOT))
    raw = config("/dev/null", calibration=str(path))
    hardware = {**raw.hardware, "b": {"id": 2, "direction": -1}}
    with pytest.raises(PluginError, match=re.escape(
            f"motor 'b': hardware setting 'direction': given by calibration {str(path)!r} "
            "already")):
        HardwareSystem(parse_config({"hardware": hardware,
                                     "motors": [{"name": m} for m in "abc"]}))


def test_a_missing_port_does_not_start_and_does_not_raise(caplog):
    hw = HardwareSystem(config("/dev/servo_sim_no_such_port"))
    with caplog.at_level(logging.WARNING, "servo_sim"):
        assert not hw.start()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert "cannot open /dev/servo_sim_no_such_port" in caplog.text
    hw.step(3)
    assert hw.state is LifecycleState.UNCONFIGURED


# --------------------------------------------------------------------------- start-up


def test_configure_and_activate_write_the_settings(bus, hw):
    assert hw.state is LifecycleState.ACTIVE
    for i in (1, 2, 3):
        assert bus.get(i, emu.TORQUE_ENABLE, 1) == 1
        assert bus.get(i, emu.OPERATING_MODE, 1) == 0
        assert bus.get(i, emu.TORQUE_LIMIT, 2) == 785  # 1.5 / 1.91 = 78.53 %
        assert bus.get(i, emu.P_COEFFICIENT, 1) == 32  # the servo's own, left alone
        assert hw.flags("abc"[i - 1]) == StateFlags.READY | StateFlags.ENABLED
    assert hw.component.capabilities(0) == (
        Capabilities.POSITION_COMMAND | Capabilities.VELOCITY_COMMAND
        | Capabilities.TRAPEZOIDAL_COMMAND | Capabilities.VELOCITY_LIMIT
        | Capabilities.ACCELERATION_LIMIT | Capabilities.AVAILABLE_FORCE)
    for call, args in ((Command.TORQUE, (0.5,)), (Command.CONTROL_PID, (10.0, 0.0, 0.0))):
        with pytest.raises(CommandRefusedError, match=f"motor 'a': {call.name} not "
                           "supported by hardware 'feetech'"):
            hw.command("a", call, *args)
    hw.deactivate()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]


@pytest.mark.parametrize("limits, message", [
    ((-2.5, 3.2), "motor 'a' (id 1): max_position 3.2 rad is beyond the servo's "
                  "Max_Position_Limit 4095 ticks (3.1401 rad)"),  # 2047 x 2 pi / 4096 = 3.14006
    ((-3.2, 2.5), "motor 'a' (id 1): min_position -3.2 rad is beyond the servo's "
                  "Min_Position_Limit 0 ticks (-3.1416 rad)"),
    ((0.0, 0.0), "motor 'a' (id 1): the config has no min_position/max_position, but the "
                 "servo turns only within Min_Position_Limit 0 (-3.1416 rad) .. "
                 "Max_Position_Limit 4095 (3.1401 rad): set them within those"),
])
def test_the_servos_angle_limits_are_checked_against_the_config(bus, limits, message):
    system = HardwareSystem(config(bus.port, limits=limits))
    assert start_refused(system) == message
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0  # nothing moves
    system.shutdown()


def test_a_read_while_configuring_is_tried_again_on_a_corrupt_reply(bus):
    """Servo 1's Model Number reply corrupt: read again, and the start goes on (a real
    bus loses a reply now and then, and a busy machine starves an emulated one)."""
    before = bus.counts().get("0x02", 0)
    system = HardwareSystem(config(bus.port))
    bus.corrupt(1)
    assert system.start(), system.component.reason
    # per servo Model Number, Status, the limits and Operating Mode; servo 1's first twice
    assert bus.counts()["0x02"] - before == 3 * 4 + 1
    system.shutdown()


@pytest.mark.parametrize("lose, error", [("corrupt", "Incorrect status packet!"),
                                         ("silence", "There is no status packet!")])
def test_a_read_while_configuring_that_fails_twice_fails_the_start_with_the_buss_error(
        bus, lose, error):
    """Both tries of servo 1's Model Number lost (two corrupt replies, or none at all):
    the start fails with the SDK's error for it."""
    system = HardwareSystem(config(bus.port))
    bus.corrupt(2) if lose == "corrupt" else bus.silence([1])
    assert not system.start()
    assert system.component.reason == \
        f"motor 'a' (id 1): read Model Number: [TxRxResult] {error}"
    assert system.flags("a") & StateFlags.COMMUNICATION_FAILURE
    system.shutdown()


def test_multi_turn_servos_take_any_limits(bus):
    bus.set(1, emu.MAX_POSITION_LIMIT, 2, 0)  # 0 .. 0: multi-turn
    system = HardwareSystem(config(bus.port, motors=("a",), limits=(0.0, 0.0)))
    start_on_a_bus(system)
    system.shutdown()


def test_an_unknown_model_number_is_one_error_and_nothing_moves(bus):
    bus.set(2, emu.MODEL_NUMBER, 2, 1234)
    system = HardwareSystem(config(bus.port))
    assert start_refused(system) == (
        "motor 'b' (id 2): unknown model number 1234 (bytes d2 04): not a servo this plugin "
        "knows (STS3215 777, STS3250 2825, SM8512BL 11272, SCS0009 1284)")
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]
    system.shutdown()


def test_the_lerobot_calibration_is_written_and_used(bus, tmp_path):
    path = tmp_path / "so101.json"
    path.write_text(json.dumps(LEROBOT))
    bus.freeze()
    system = HardwareSystem(config(bus.port, limits=(-1.5, 1.5), calibration=str(path)))
    start_on_a_bus(system)
    # the file's homing offset (sign-magnitude, bit 11) and range are in the servos now
    assert bus.get(1, emu.HOMING_OFFSET, 2) == -300
    assert bus.get(2, emu.HOMING_OFFSET, 2) == 120
    assert (bus.get(2, emu.MIN_POSITION_LIMIT, 2), bus.get(2, emu.MAX_POSITION_LIMIT, 2)) \
        == (800, 3400)
    # 0 rad is the pose the arm was calibrated in: LeRobot's homing puts it at 2047;
    # drive_mode 1 turns the joint the other way
    bus.set(1, emu.PRESENT_POSITION, 2, 2047 + 512)  # a quarter turn more
    bus.set(2, emu.PRESENT_POSITION, 2, 2047 + 512)  # the same, drive_mode 1
    system.cycle()
    assert system.sim.motor("a").position == pytest.approx(math.pi / 4)
    assert system.sim.motor("b").position == pytest.approx(-math.pi / 4)
    system.command("b", Command.POSITION, 0.5)
    system.cycle()
    assert bus.get(2, emu.GOAL_POSITION, 2) == 2047 - 326  # 0.5 / (2 pi / 4096) = 325.95
    system.shutdown()


def test_a_calibrated_range_narrower_than_the_config_is_refused(bus, tmp_path):
    path = tmp_path / "so101.json"
    path.write_text(json.dumps(LEROBOT))
    system = HardwareSystem(config(bus.port, limits=(-2.0, 1.5), calibration=str(path)))
    # a: range 900 .. 3200 about 2047: -1147 ticks = -1147 x 2 pi / 4096 = -1.75948 rad
    assert start_refused(system) == ("motor 'a' (id 1): min_position -2 rad is beyond the "
                                       "servo's Min_Position_Limit 900 ticks (-1.7595 rad)")
    # refused before anything was written to the servo
    assert bus.get(1, emu.HOMING_OFFSET, 2) == 0
    assert bus.get(1, emu.MIN_POSITION_LIMIT, 2) == 0
    system.shutdown()


# --------------------------------------------------------------------------- commands


def test_start_up_writes_torque_limit_and_torque_only(bus):
    """The servos already in position mode: no Operating Mode (EEPROM) write at start,
    per servo one Torque Limit and one Torque Enable write."""
    before = bus.counts().get("0x03", 0)
    system = HardwareSystem(config(bus.port))
    start_on_a_bus(system)
    assert bus.counts().get("0x03", 0) - before == 2 * 3
    system.shutdown()


def test_deactivate_then_activate_switches_the_torque_on_again(bus, hw):
    hw.deactivate()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]
    assert hw.activate()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [1, 1, 1]


def test_a_new_torque_limit_does_not_unload_the_servo(bus, hw):
    """Torque Limit is in RAM: one write, the torque stays on (no off/on around it)."""
    before = bus.counts().get("0x03", 0)
    hw.command("c", Command.AVAILABLE_TORQUE, 0.955)
    hw.cycle()
    assert bus.counts().get("0x03", 0) - before == 1
    assert bus.get(3, emu.TORQUE_LIMIT, 2) == 500
    assert bus.get(3, emu.TORQUE_ENABLE, 1) == 1


def test_commands_become_registers(bus, hw):
    bus.freeze()
    hw.command("a", Command.POSITION, math.pi / 2)
    hw.command("a", Command.VELOCITY, 1.0)
    hw.command("a", Command.ACCELERATION, 10.0)
    hw.command("b", Command.POSITION, math.inf)
    hw.command("b", Command.VELOCITY, -2.0)
    hw.command("c", Command.AVAILABLE_TORQUE, 0.955)
    hw.cycle()
    assert bus.get(1, emu.GOAL_POSITION, 2) == 2048 + 1024  # pi/2 = a quarter of 4096
    assert bus.get(1, emu.GOAL_SPEED, 2) == round(1.0 / TICK) == 652
    assert bus.get(1, emu.ACCELERATION, 1) == round(10.0 / TICK / 100) == 65
    assert bus.get(2, emu.OPERATING_MODE, 1) == 1  # wheel
    assert bus.get(2, emu.GOAL_SPEED, 2) == round(-2.0 / TICK) == -1304
    assert bus.get(3, emu.TORQUE_LIMIT, 2) == 500  # 0.955 / 1.91
    hw.command("a", Command.AVAILABLE_TORQUE, 0.0)  # Webots: the motor is off
    hw.cycle()
    assert bus.get(1, emu.TORQUE_ENABLE, 1) == 0
    assert bus.get(3, emu.TORQUE_ENABLE, 1) == 1
    before = bus.counts().get("0x03", 0)
    hw.step(10)
    assert bus.counts().get("0x03", 0) == before  # written once, not every cycle


def test_huge_commands_saturate_the_registers_and_keep_the_bus_up(bus):
    system = HardwareSystem(config(bus.port, limits=(0.0, 0.0)))
    bus.set(1, emu.MAX_POSITION_LIMIT, 2, 0)
    bus.set(2, emu.MAX_POSITION_LIMIT, 2, 0)
    bus.set(3, emu.MAX_POSITION_LIMIT, 2, 0)
    start_on_a_bus(system)
    bus.freeze()
    system.command("a", Command.POSITION, 1e7)
    system.command("a", Command.ACCELERATION, 1e9)
    system.command("b", Command.POSITION, -1e7)
    system.step(3)
    assert system.active, system.component.reason
    assert bus.get(1, emu.GOAL_POSITION, 2) == 32767
    assert bus.get(1, emu.ACCELERATION, 1) == 254
    assert bus.get(2, emu.GOAL_POSITION, 2) == -32767
    system.shutdown()


def test_state_conversions_and_telemetry(bus, hw):
    bus.freeze()
    bus.set(1, emu.PRESENT_POSITION, 2, 3072)
    bus.set(1, emu.PRESENT_SPEED, 2, -100)
    bus.set(1, emu.PRESENT_LOAD, 2, -500)  # sign in bit 10
    bus.set(1, emu.PRESENT_CURRENT, 2, 200)
    bus.set(1, emu.PRESENT_VOLTAGE, 1, 73)
    hw.cycle()
    a = hw.sim.motor("a")
    assert a.position == pytest.approx(math.pi / 2)
    assert a.velocity == pytest.approx(-100 * TICK)  # -0.1534 rad/s
    assert a.motor_force == pytest.approx(-0.5 * STALL)  # 50 % of the stall torque
    assert hw.component.telemetry(0) == {"voltage": "7.3", "temperature": "30",
                                         "moving": "0", "current": "1.3000"}  # 200 x 6.5 mA


def test_a_negative_present_current_is_read_with_its_sign(bus, hw):
    """Present Current is signed in bit 15 (the SDK's sign-magnitude): -200 is -1.3 A."""
    bus.freeze()
    bus.set(1, emu.PRESENT_CURRENT, 2, -200)
    hw.cycle()
    assert hw.component.telemetry(0)["current"] == "-1.3000"  # -200 x 6.5 mA


@pytest.fixture
def reversed_b(bus):
    """The three servos, b's joint turning against its servo (direction -1)."""
    with started(config(bus.port, b={"id": 2, "direction": -1})) as system:
        bus.freeze()
        yield system


@pytest.mark.parametrize("sign", [1, -1])
def test_state_conversions_in_both_directions(bus, reversed_b, sign):
    """The same registers on a (direction 1) and b (-1): every state value turns sign
    on b, for speeds and loads of either sign."""
    for servo in (1, 2):
        bus.set(servo, emu.PRESENT_POSITION, 2, 2048 + sign * 300)
        bus.set(servo, emu.PRESENT_SPEED, 2, sign * 100)
        bus.set(servo, emu.PRESENT_LOAD, 2, sign * 500)  # sign in bit 10
    reversed_b.cycle()
    for name, d in (("a", 1), ("b", -1)):
        m = reversed_b.sim.motor(name)
        assert m.position == pytest.approx(d * sign * 300 * TICK)  # 0.4602 rad
        assert m.velocity == pytest.approx(d * sign * 100 * TICK)  # 0.1534 rad/s
        assert m.motor_force == pytest.approx(d * sign * 0.5 * STALL)  # 50 % of stall


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("ticks, toward, away", [(100.3, 2148, 1948), (100.7, 2149, 1947)])
def test_goals_are_rounded_to_the_nearest_tick_in_both_directions(
        bus, reversed_b, sign, ticks, toward, away):
    """A target of +-100.3 or +-100.7 ticks from 2048: the nearest tick (2148.3 -> 2148,
    2148.7 -> 2149, 1947.7 -> 1948, 1947.3 -> 1947), not the floor or the ceiling; on
    b (direction -1) the other side of 2048."""
    for name in ("a", "b"):
        reversed_b.command(name, Command.POSITION, sign * ticks * TICK)
    reversed_b.cycle()
    ahead, behind = (toward, away) if sign > 0 else (away, toward)
    assert bus.get(1, emu.GOAL_POSITION, 2) == ahead
    assert bus.get(2, emu.GOAL_POSITION, 2) == behind


def test_one_sync_read_and_one_sync_write_per_cycle(bus, hw):
    before = bus.counts()
    hw.step(20)
    after = bus.counts()
    assert after["0x82"] - before["0x82"] == 20
    assert after["0x83"] - before["0x83"] == 20
    assert after.get("0x02", 0) == before.get("0x02", 0)
    assert after.get("0x03", 0) == before.get("0x03", 0)


def test_the_servo_follows_a_position_command(bus, hw):
    hw.command("a", Command.POSITION, 1.0)
    cycle_until(hw, lambda: abs(hw.sim.motor("a").position - 1.0) < 0.005, "at 1 rad")
    assert hw.sim.motor("a").position == pytest.approx(1.0, abs=0.005)


def test_a_mixed_bus_with_an_scs_servo():
    with emu.EmulatorProcess([1, 2], scs=[2], realtime=True) as bus:
        bus.freeze()
        system = HardwareSystem(config(bus.port, motors=("a", "b"), limits=(-2.5, 2.5)))
        start_on_a_bus(system)
        bus.set(2, emu.PRESENT_POSITION, 2, 512 + 128)  # SCS: 1024 per turn, 512 at 0
        system.cycle()
        assert system.sim.motor("b").position == pytest.approx(math.pi / 4)
        system.command("b", Command.POSITION, -math.pi / 2)
        system.cycle()
        assert bus.get(2, emu.GOAL_POSITION, 2) == 512 - 256  # big-endian on the wire
        # no Torque Limit, no wheel mode on an SCS: refused; no sync read either: the
        # STS servo is sync read, the SCS read on its own
        with pytest.raises(CommandRefusedError, match="motor 'b': set_available_torque not "
                           r"supported by hardware 'feetech' \(needs available_force\)"):
            system.command("b", Command.AVAILABLE_TORQUE, 0.5)
        with pytest.raises(CommandRefusedError, match="motor 'b': set_position not supported "
                           r"by hardware 'feetech' \(needs velocity_command\)"):
            system.command("b", Command.POSITION, math.inf)
        before = bus.counts()
        system.step(5)
        after = bus.counts()
        assert (after["0x82"] - before["0x82"], after["0x02"] - before["0x02"]) == (5, 5)
        system.shutdown()
        assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2)] == [0, 0]


@pytest.mark.parametrize("sign", [1, -1])
def test_an_scs_servos_big_endian_speed_and_load_are_read_with_their_signs(sign):
    """SCS (big-endian, 1024 ticks a turn): Present Speed +-100 ticks/s is +-0.6136
    rad/s, Present Load +-500 (sign in bit 10) 50 % of the 1.91 N*m stall: each from its
    own two bytes (a third, the next field's, would be the low byte on a big-endian bus)."""
    with emu.EmulatorProcess([1, 2], scs=[2], realtime=True) as bus:
        bus.freeze()
        system = HardwareSystem(config(bus.port, motors=("a", "b"), limits=(-2.5, 2.5)))
        start_on_a_bus(system)
        bus.set(2, emu.PRESENT_SPEED, 2, sign * 100)
        bus.set(2, emu.PRESENT_LOAD, 2, sign * 500)
        system.cycle()
        b = system.sim.motor("b")
        assert b.velocity == pytest.approx(sign * 100 * 2 * math.pi / 1024)  # 0.6136 rad/s
        assert b.motor_force == pytest.approx(sign * 0.5 * STALL)
        system.shutdown()


@pytest.mark.parametrize("ticks", [5000, -300])
def test_a_multi_turn_servos_position_below_zero_is_read_with_its_sign(bus, ticks):
    """Multi-turn (limits 0 .. 0): Present Position is signed in bit 15; -300 ticks is
    2348 below the 2048 of 0 rad, -3.602 rad; 5000 is 2952 above, 4.528 rad."""
    bus.set(1, emu.MAX_POSITION_LIMIT, 2, 0)
    system = HardwareSystem(config(bus.port, motors=("a",), limits=(0.0, 0.0)))
    start_on_a_bus(system)
    bus.freeze()
    bus.set(1, emu.PRESENT_POSITION, 2, ticks)
    system.cycle()
    assert system.sim.motor("a").position == pytest.approx((ticks - 2048) * TICK)
    system.shutdown()


# --------------------------------------------------------------------------- faults


def test_a_signal_inside_a_bus_transaction_still_leaves_every_torque_off(bus, hw, caplog):
    """Ctrl-C's KeyboardInterrupt inside scservo_sdk's wait for an answer leaves its port
    'in use' (as dynamixel-sdk's): the shutdown's torque off reaches every servo all the
    same."""
    interrupt_inside_a_transaction(hw)
    hw.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]
    assert "torque off" not in caplog.text


def test_a_torque_off_without_an_answer_is_retried_then_said(bus, hw, caplog):
    bus.silence([3])
    hw.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2)] == [0, 0]
    assert "motor 'c' (id 3): torque off got no answer ([TxRxResult] There is no status " \
        "packet!): it may still be on" in caplog.text


def test_silent_servo_halts_then_recovers(bus, hw, caplog):
    bus.silence([2])
    with caplog.at_level(logging.INFO, "servo_sim"):
        hw.cycle()
        assert hw.state is LifecycleState.UNCONFIGURED
        assert hw.flags("b") & StateFlags.COMMUNICATION_FAILURE
        assert not hw.flags("a") & StateFlags.COMMUNICATION_FAILURE
        assert hw.component.reason == ("motor 'b' (id 2): sync read: [TxRxResult] There is "
                                       "no status packet!")
        writes = bus.counts()["0x83"]
        hw.step(STEPS_PER_RETRY + 2)
        assert hw.state is LifecycleState.UNCONFIGURED
        assert bus.counts()["0x83"] == writes
        bus.silence([])
        recover(hw, 3 * STEPS_PER_RETRY)
    assert hw.flags("b") == StateFlags.READY | StateFlags.ENABLED
    assert "hardware 'feetech': recovered (was: motor 'b' (id 2): read Model Number" \
        in caplog.text


def test_one_corrupt_reply_is_read_again_two_are_a_communication_failure(bus, hw):
    before = bus.counts()["0x82"]
    bus.corrupt(1)  # servo 1's reply to the sync read
    hw.cycle()
    assert hw.active
    assert bus.counts()["0x82"] - before == 2  # read once more, within the cycle
    bus.corrupt(4)  # the 3 replies of the first sync read and the first of the second
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert "[TxRxResult] Incorrect status packet!" in hw.component.reason
    recover(hw, 3 * STEPS_PER_RETRY)


def test_two_servos_faulting_at_once_are_both_said_in_one_error(bus, hw, caplog):
    """Each faulted servo's text, joined by "; ", in the one read error."""
    bus.fault(1, emu.OVERLOAD)
    bus.fault(3, emu.OVERHEAT)
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert ("read: motor 'a' (id 1): hardware error: overload; motor 'c' (id 3): hardware "
            "error: overheating; commands halted") in caplog.text


@pytest.mark.parametrize("bits, text", [
    (emu.OVERLOAD, "overload"), (emu.OVERHEAT, "overheating"),
    (emu.OVERLOAD | emu.OVERCURRENT, "over-current, overload")])
def test_a_servo_fault_halts_unloads_and_recovers_when_it_clears(bus, hw, caplog, bits, text):
    with caplog.at_level(logging.INFO, "servo_sim"):
        bus.fault(3, bits)
        hw.cycle()
        assert hw.state is LifecycleState.UNCONFIGURED
        assert hw.flags("c") & StateFlags.ERROR
        assert hw.component.faults[2] == f"motor 'c' (id 3): hardware error: {text}"
        assert bus.get(3, emu.TORQUE_ENABLE, 1) == 0  # the servo unloaded
        hw.step(STEPS_PER_RETRY + 2)  # still there: configure refuses
        assert hw.state is LifecycleState.UNCONFIGURED
        bus.fault(3, 0)
        recover(hw, 3 * STEPS_PER_RETRY)
    assert bus.get(3, emu.TORQUE_ENABLE, 1) == 1
    assert hw.flags("c") == StateFlags.READY | StateFlags.ENABLED
    assert f"read: motor 'c' (id 3): hardware error: {text}; commands halted" in caplog.text


def test_a_failed_bus_stops_the_servos_in_wheel_mode(bus, hw):
    """on_error: a wheel would go on turning while the bus recovers; its torque goes
    off (the others hold their goal positions)."""
    hw.command("c", Command.POSITION, math.inf)
    hw.command("c", Command.VELOCITY, 1.0)
    hw.cycle()
    assert bus.get(3, emu.OPERATING_MODE, 1) == 1
    bus.silence([2])
    hw.cycle()
    assert hw.state is LifecycleState.UNCONFIGURED
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 3)] == [1, 0]


def test_a_voltage_error_is_a_warning_and_the_servo_keeps_going(bus, hw):
    bus.fault(1, emu.VOLTAGE)
    hw.cycle()
    assert hw.active
    assert hw.flags("a") == StateFlags.READY | StateFlags.ENABLED | StateFlags.WARNING
    assert hw.component.faults[0] == "motor 'a' (id 1): warning: input voltage error"
    assert hw.component.telemetry(0)["voltage"] == "3.9"  # below Min_Voltage_Limit 4.0 V
    bus.fault(1, 0)
    hw.cycle()
    assert hw.flags("a") == StateFlags.READY | StateFlags.ENABLED
    assert hw.component.faults[0] == ""


def test_shutdown_switches_every_torque_off(bus):
    system = HardwareSystem(config(bus.port))
    start_on_a_bus(system)
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [1, 1, 1]
    system.shutdown()
    assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2, 3)] == [0, 0, 0]


@pytest.mark.parametrize("sign", [1, -1])
def test_a_servo_not_in_position_control_has_its_goal_position_where_it_is(
        bus, reversed_b, sign):
    """Wheel mode (a; b turning against its servo) and off (c): the Goal Position written
    is the present position (2048 +- 300 ticks), the round trip through either direction,
    so that a torque-on or mode switch before the next goal holds the servo where it is."""
    for name in ("a", "b"):
        reversed_b.command(name, Command.POSITION, math.inf)
        reversed_b.command(name, Command.VELOCITY, sign * 1.0)
    reversed_b.command("c", Command.AVAILABLE_TORQUE, 0.0)
    for servo in (1, 2, 3):
        bus.set(servo, emu.PRESENT_POSITION, 2, 2048 + sign * 300)
    reversed_b.cycle()
    for servo in (1, 2, 3):
        assert bus.get(servo, emu.GOAL_POSITION, 2) == 2048 + sign * 300


@pytest.mark.parametrize("speed", [0.0, 0.0005, -0.0005])
def test_a_speed_limit_or_acceleration_of_about_0_is_the_slowest_not_unlimited(bus, hw, speed):
    """Goal Speed / Acceleration 0 mean 'as fast as it can' on an STS servo: a speed limit
    of 0 or +-0.0005 rad/s (0.33 ticks/s) and an acceleration of 0 are written as 1, the
    slowest; only acceleration -1 (Webots' unlimited) is 0."""
    bus.freeze()
    hw.command("a", Command.POSITION, 0.5)
    hw.command("a", Command.VELOCITY, speed)
    hw.command("a", Command.ACCELERATION, 0.0)
    hw.cycle()
    assert bus.get(1, emu.GOAL_SPEED, 2) == 1
    assert bus.get(1, emu.ACCELERATION, 1) == 1
    hw.command("a", Command.ACCELERATION, -1.0)
    hw.cycle()
    assert bus.get(1, emu.ACCELERATION, 1) == 0


@pytest.mark.parametrize(("goal", "register"), [(1e7, 1023), (-1e7, 0), (-2.5, 105)])
def test_an_scs_goal_is_clamped_to_one_turn(goal, register):
    """An SCS servo's Goal Position is 0 to 1023 (one turn, 512 at 0; no sign bit): a goal
    far beyond either end, without soft limits, is written as that end, 1023 or 0, not
    as an STS's +-32767 nor a tick further in or out; a goal within the turn, -2.5 rad,
    is 512 - 407.4 ticks (1024 a turn), 104.6, rounded."""
    with emu.EmulatorProcess([1, 2], scs=[2], realtime=True) as bus:
        bus.freeze()
        system = HardwareSystem(config(bus.port, motors=("a", "b"), limits=(0.0, 0.0)))
        for servo in (1, 2):
            bus.set(servo, emu.MAX_POSITION_LIMIT, 2, 0)
        start_on_a_bus(system)
        system.command("b", Command.POSITION, goal)
        system.cycle()
        assert bus.get(2, emu.GOAL_POSITION, 2) == register
        system.shutdown()


@pytest.mark.parametrize("sign", [1, -1])
def test_the_goal_time_is_0_and_an_off_servo_in_wheel_mode_is_told_speed_0(bus, hw, sign):
    """Feetech's own SMS_STS::WritePosEx writes Acceleration, Goal Position, a Goal Time
    of 0 and Goal Speed: so do the goals here, in every mode. A servo switched off in wheel
    mode keeps that mode (only the torque goes): its Goal Speed is 0, so that the torque
    coming on before the next goal leaves it standing, not creeping at 1 tick/s."""
    bus.freeze()
    hw.command("a", Command.POSITION, math.inf)
    hw.command("a", Command.VELOCITY, sign * 1.0)
    hw.command("b", Command.POSITION, sign * 1.0)
    hw.command("c", Command.AVAILABLE_TORQUE, 0.0)
    hw.cycle()
    assert bus.get(1, emu.GOAL_SPEED, 2) == sign * 652  # 1 rad/s in 2 pi / 4096 ticks
    assert [bus.get(i, emu.GOAL_TIME, 2) for i in (1, 2, 3)] == [0, 0, 0]
    hw.command("a", Command.AVAILABLE_TORQUE, 0.0)
    hw.cycle()
    assert (bus.get(1, emu.TORQUE_ENABLE, 1), bus.get(1, emu.OPERATING_MODE, 1)) == (0, 1)
    assert (bus.get(1, emu.GOAL_SPEED, 2), bus.get(1, emu.GOAL_TIME, 2)) == (0, 0)


@pytest.mark.parametrize("sign", [1, -1])
def test_in_wheel_mode_the_servo_turns_the_way_its_goal_speed_says(bus, hw, sign):
    """Goal Speed's sign is the servo's direction in wheel mode: the emulated motor's
    Present Speed reaches half the goal's 652 ticks/s (1 rad/s) with that sign, on its
    own clock (waited for, with a generous timeout)."""
    hw.command("a", Command.POSITION, math.inf)
    hw.command("a", Command.VELOCITY, sign * 1.0)
    hw.cycle()
    assert (bus.get(1, emu.OPERATING_MODE, 1), bus.get(1, emu.GOAL_SPEED, 2)) == (1, sign * 652)
    deadline = time.monotonic() + 30.0
    while sign * bus.get(1, emu.PRESENT_SPEED, 2) < 326:
        assert time.monotonic() < deadline, bus.get(1, emu.PRESENT_SPEED, 2)
        time.sleep(0.01)  # a poll of the emulator's own clock, not a wait standing for time
