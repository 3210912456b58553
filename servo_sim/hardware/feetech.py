"""The ``feetech`` plugin: Feetech STS (and SCS) serial bus servos (feetech-servo-sdk).

Settings (the ``hardware`` group)::

    hardware:
      plugin: feetech
      port: /dev/ttyACM0
      baud_rate: 1000000           # one of the SDK's rates (4800 ... 1000000)
      calibration: so101.json      # optional: a LeRobot calibration file of the arm
      shoulder_pan:                # per motor, by ROS name
        id: 1
        # optional:
        zero_ticks: 2048           # Present Position at 0 rad (STS; 512 on an SCS)
        direction: 1               # -1: the joint turns against the servo
        homing_offset: 0           # STS Homing_Offset, written where it differs
        stall_torque: 1.91         # N*m at 100 % (STS3215 at 7.4 V: 19.5 kg*cm)
        coefficients: [16, 32, 0]  # P, D, I Coefficient registers; default: the servo's

With ``calibration`` (LeRobot's JSON: per motor name ``id``, ``drive_mode``,
``homing_offset``, ``range_min``, ``range_max``), a motor's id must equal the file's;
its Homing_Offset and Min/Max_Position_Limit become the file's (written where the servo
differs, after the range is checked against the config), 0 rad is Present Position 2047
(the pose LeRobot's half-turn homing calibrated: the SO-101 URDF's zero pose) and
drive_mode 1 is direction -1. A motor may not also set ``zero_ticks``, ``direction`` or
``homing_offset`` then.

Units: 4096 ticks per turn (STS; 1024 SCS), speeds in ticks/s, Acceleration in 100
ticks/s^2, Torque Limit and Present Load in 0.1 % of ``stall_torque``, Present Voltage
in 0.1 V, Present Current in 6.5 mA; sign-magnitude fields (STS: positions and speeds
bit 15, load bit 10, homing offset bit 11). The series is told by the model number
(STS3215 777, STS3250 2825, SM8512BL 11272 little-endian; SCS0009 1284 big-endian); the
byte order is per servo, so a bus may mix them (the SDK's ``PacketHandler`` sets one
order for the whole process; the plugin uses only its byte-level calls).

At configure, every read (Model Number, Status, the limits, Homing_Offset, Operating
Mode) is tried once more where the reply is missing or corrupt, as the cycle's reads are;
a bus that answers neither try fails the start with the SDK's error. Every servo's
Min/Max_Position_Limit is read and the config's
min_position/max_position must lie within them (an error names the servo, the field
and both values); both 0 (multi-turn) accept any.

=====================  =======================================================
position control       Operating Mode 0, Goal Position; speed limit -> Goal Speed
halt, trapezoidal      position control: the model's set-point each cycle
velocity control       Operating Mode 1 (wheel), Goal Speed (a halt: its ramp); STS
disable, e-stop        Torque Enable 0
available force        Torque Limit = F / stall_torque x 1000 (STS); 0: torque off
acceleration           Acceleration (-1 unlimited -> 0)
=====================  =======================================================

Per cycle on the bus: one sync read (Present Position ... Present Current: 15 bytes
from 56) of the STS servos, a read of each SCS servo (no sync read), a read tried once
more where a reply is missing or corrupt, and one sync write (Acceleration, Goal
Position, Goal Time, Goal Speed: 7 bytes from 41). Mode (EEPROM, torque off for the
write), Torque Limit and torque are written to a servo only when they change. Effort is
Present Load (the drive's duty, 0.1 %) x stall_torque: the torque at that duty at
standstill, an estimate while moving. Feetech servos have no torque (current) control mode and their
P/D/I coefficients have no documented units: effort commands and set_control_pid are
refused; ``coefficients`` sets the registers themselves.

The error bits of every status packet are the motor's ``faults``: input voltage is a
WARNING (the servo keeps going); angle sensor, overheat, over-current and overload are
an ERROR (the factory Unloading Condition unloads the servo for the last three): the
cycle returns ERROR, on_error switches the torque off there and on wheel-mode servos,
and the system retries configure + activate, which succeed once the servo's Status is
clear. A transaction that fails or
times out flags COMMUNICATION_FAILURE, as for the dynamixel plugin.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

try:
    import scservo_sdk as scs
except ImportError as exc:  # pragma: no cover - the registry reports it
    raise ImportError(f"{exc}; install the vendor SDK: pip install feetech-servo-sdk") from exc

from ..model.config import MotorConfig, ros_name
from .base import CallbackReturn, Capabilities, HardwareInfo, Mode, StateFlags
from .serial_bus import SerialBusHardware, positive_number
from .serial_bus import integer_in as _integer
from .serial_bus import register as _register

# the memory table (STS/SMS; SCS where noted)
MODEL_NUMBER, MIN_POSITION_LIMIT, MAX_POSITION_LIMIT = 3, 9, 11
P_COEFFICIENT, HOMING_OFFSET, OPERATING_MODE = 21, 31, 33  # P, D, I at 21, 22, 23
TORQUE_ENABLE, TORQUE_LIMIT, STATUS = 40, 48, 65
GOALS, GOALS_SIZE = 41, 7  # Acceleration(1) Goal Position(2) Goal Time(2) Goal Speed(2)
PRESENT, PRESENT_SIZE = 56, 15  # Position(2) Speed(2) Load(2) Voltage Temperature . Status
#                                 Moving . . Current(2)
SCS_PRESENT_SIZE = 11  # to Moving: an SCS has no Present Current
MODE_POSITION, MODE_WHEEL = 0, 1
#: model number (as stored, in the series' byte order) -> (name, series)
MODELS: dict[tuple[int, str], tuple[str, str]] = {
    (777, "little"): ("STS3215", "sts"), (2825, "little"): ("STS3250", "sts"),
    (11272, "little"): ("SM8512BL", "sts"), (1284, "big"): ("SCS0009", "scs")}
TICKS_PER_REV = {"sts": 4096, "scs": 1024}
#: status error bits (Feetech's memory table); VOLTAGE alone is a warning
VOLTAGE = 0x01
ERRORS = {0x01: "input voltage error", 0x02: "angle sensor error", 0x04: "overheating",
          0x08: "over-current", 0x20: "overload"}
BAUD_RATES = (4800, 9600, 14400, 19200, 38400, 57600, 115200, 128000, 250000, 500000,
              1000000)
MAX_ID = 252
MAX_MAGNITUDE = 32767  # a sign-magnitude word with the sign in bit 15
MAX_ACCELERATION = 254
TICKS_PER_ACCELERATION_UNIT = 100  # ticks/s^2
PER_MILLE = 1000  # Torque Limit, Present Load: 0.1 %
VOLTAGE_UNIT, CURRENT_UNIT = 0.1, 0.0065  # V, A
#: STS3215 at 7.4 V (Feetech datasheet: 19.5 kg*cm stall)
DEFAULT_STALL_TORQUE = 1.91

_MOTOR_KEYS = ("id", "zero_ticks", "direction", "homing_offset", "stall_torque",
               "coefficients")
_CALIBRATION_KEYS = ("id", "drive_mode", "homing_offset", "range_min", "range_max")
HOMING_OFFSET_RANGE = (-2047, 2047)  # 11 bits and a sign bit
#: what a LeRobot calibration file may hold (STS: 4096 ticks, an 11-bit homing offset)
CALIBRATION_RANGES = {"id": (0, MAX_ID), "drive_mode": (0, 1),
                      "homing_offset": HOMING_OFFSET_RANGE, "range_min": (0, 4095),
                      "range_max": (0, 4095)}
#: where LeRobot's half-turn homing puts the pose the arm was calibrated in (Present
#: Position 2047: ``homing_offset = position - 2047``), the zero pose of its SO-101 URDF
LEROBOT_HOMED = 2047


def _signed(raw: int, bit: int) -> int:
    """A sign-magnitude field's value."""
    return -(raw & ((1 << bit) - 1)) if raw & (1 << bit) else raw & ((1 << bit) - 1)


def _sign_magnitude(value: int, bit: int) -> int:
    return (-value) | (1 << bit) if value < 0 else value


def read_calibration(path: str | Path) -> dict[str, dict[str, int]]:
    """A LeRobot calibration file: {motor: {id, drive_mode, homing_offset, range_min,
    range_max}}; ValueError saying what is wrong with it."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"calibration {str(path)!r}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"calibration {str(path)!r}: not JSON: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"calibration {str(path)!r}: must be an object of motors")
    for name, entry in data.items():
        missing = [k for k in _CALIBRATION_KEYS if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise ValueError(f"calibration {str(path)!r}: motor {name!r}: no {missing[0]!r}")
        for key, (low, high) in CALIBRATION_RANGES.items():
            if not _integer(entry[key], low, high):
                raise ValueError(f"calibration {str(path)!r}: motor {name!r}: {key!r} = "
                                 f"{entry[key]!r}: must be an integer {low}..{high}")
        if entry["range_min"] > entry["range_max"]:
            raise ValueError(f"calibration {str(path)!r}: motor {name!r}: range_min "
                             f"{entry['range_min']} > range_max {entry['range_max']}")
    return data


class FeetechHardware(SerialBusHardware):
    """Feetech STS/SCS servos on one bus (see the module docstring)."""

    FREE_RUNNING_MODES = (MODE_WHEEL,)  # a wheel would go on turning

    SETTINGS: ClassVar[Mapping[str, str]] = {
        "port": "Serial port of the bus, e.g. /dev/ttyACM0.",
        "baud_rate": "Bus baud rate (a feetech-servo-sdk rate, default 1000000).",
        "calibration": "LeRobot calibration file (JSON) of the arm; empty: none.",
        "<motor>.id": "Servo id on the bus (0..252).",
    }

    BUS_SETTINGS = ("calibration",)
    COMMAND_INTERFACES = ("mode", "target_position", "velocity_setpoint", "speed_limit",
                          "available_force", "acceleration")

    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        super().on_init(info)
        why = self.parse_bus(info, BAUD_RATES)
        if why:
            return self.fail(why)
        calibration: dict[str, dict[str, int]] = {}
        path = info.settings.get("calibration") or ""
        if not isinstance(path, str):
            return self.fail(f"setting 'calibration' = {path!r}: must be a file path")
        if path:
            try:
                calibration = read_calibration(path)
            except ValueError as exc:
                return self.fail(str(exc))
        for m in info.motors:
            reason = self._parse_motor(m, info.motor_settings(m), calibration, path)
            if reason:
                return self.fail(f"motor {m.name!r}: {reason}")
        self.telemetry_values: list[dict[str, str]] = [{} for _ in self.ids]
        return self.check_ids()

    def _parse_motor(self, m: MotorConfig, group: Mapping[str, Any],
                     calibration: Mapping[str, Mapping[str, int]], path: str) -> str:
        """Validate one motor's settings into ``self.ids``/``self.units``; '' or why not."""
        if m.type != "rotational":
            return "the feetech plugin drives rotational motors only"
        unknown = sorted(set(group) - set(_MOTOR_KEYS))
        if unknown:
            return f"unknown hardware setting {unknown[0]!r} (known: {', '.join(_MOTOR_KEYS)})"
        servo_id = group.get("id")
        entry = calibration.get(ros_name(m.name)) or calibration.get(m.name)
        if calibration:
            if entry is None:
                return f"not in calibration {path!r} (it has {', '.join(calibration)})"
            if servo_id is None:
                servo_id = entry["id"]
            elif servo_id != entry["id"]:
                return (f"hardware setting 'id' = {servo_id!r}, but calibration {path!r} "
                        f"gives id {entry['id']}")
            both = sorted({"zero_ticks", "direction", "homing_offset"} & set(group))
            if both:
                return f"hardware setting {both[0]!r}: given by calibration {path!r} already"
        if not _integer(servo_id, 0, MAX_ID):
            return f"hardware setting 'id' = {servo_id!r}: must be an integer 0..{MAX_ID}"
        if entry is not None:
            zero = LEROBOT_HOMED
            direction = -1 if entry["drive_mode"] else 1
            homing: int | None = entry["homing_offset"]
            limits: tuple[int, int] | None = (entry["range_min"], entry["range_max"])
        else:
            zero, direction = group.get("zero_ticks"), group.get("direction", 1)
            homing, limits = group.get("homing_offset"), None
            if zero is not None and not _integer(zero, 0, MAX_MAGNITUDE):
                return f"hardware setting 'zero_ticks' = {zero!r}: must be an integer " \
                    f"0..{MAX_MAGNITUDE}"
            if direction not in (1, -1) or isinstance(direction, bool):
                return f"hardware setting 'direction' = {direction!r}: must be 1 or -1"
            if homing is not None and not _integer(homing, *HOMING_OFFSET_RANGE):
                return f"hardware setting 'homing_offset' = {homing!r}: must be an integer " \
                    "{}..{}".format(*HOMING_OFFSET_RANGE)
        stall = group.get("stall_torque", DEFAULT_STALL_TORQUE)
        if not positive_number(stall):
            return f"hardware setting 'stall_torque' = {stall!r}: must be a number > 0"
        coefficients = group.get("coefficients")
        if coefficients is not None and not (
                isinstance(coefficients, (list, tuple)) and len(coefficients) == 3
                and all(_integer(c, 0, 254) for c in coefficients)):
            return f"hardware setting 'coefficients' = {coefficients!r}: must be 3 integers " \
                "0..254 (P, D, I)"
        self.ids.append(servo_id)
        self.units.append({"zero": zero, "direction": direction, "homing": homing,
                           "limits": limits, "stall": float(stall),
                           "coefficients": None if coefficients is None else list(coefficients),
                           "min": m.min_position, "max": m.max_position})
        return ""

    # ------------------------------------------------------------------ lifecycle

    def on_configure(self) -> CallbackReturn:
        """Open the port; per servo: its model, Status, calibration and angle limits."""
        self.packet = scs.protocol_packet_handler()  # byte-level calls only: no byte order
        if not self.open_port(scs.PortHandler(self.port_name)):
            return CallbackReturn.FAILURE
        self.faults = [""] * len(self.ids)
        for i in range(len(self.ids)):
            ret = self._configure_servo(i)
            if ret is not CallbackReturn.SUCCESS:
                return ret
        # the STS servos answer one sync read, in order; then each SCS (no sync read)
        self._synced = [i for i, u in enumerate(self.units) if u["series"] == "sts"]
        self._read_order = self._synced + [i for i in range(len(self.ids))
                                           if i not in self._synced]
        self.reader = scs.GroupSyncRead(self.port, self.packet, PRESENT, PRESENT_SIZE)
        self.writer = scs.GroupSyncWrite(self.port, self.packet, GOALS, GOALS_SIZE)
        for i in self._synced:
            self.reader.addParam(self.ids[i])
        self.flags[:] = StateFlags.READY
        self.reason = ""
        return self._read_present()

    def _configure_servo(self, i: int) -> CallbackReturn:
        servo_id, u = self.ids[i], self.units[i]
        read = self.packet.readTxRx  # each read tried again on a lost reply (ask)
        got = self.ask(i, "read Model Number", read, MODEL_NUMBER, 2)
        if got is None:
            return CallbackReturn.FAILURE
        raw = bytes(got[0])
        known = [(name, series, order) for (number, order), (name, series) in MODELS.items()
                 if int.from_bytes(raw, order) == number]
        if not known:
            return self.fail(
                f"motor {self._name(i)} (id {servo_id}): unknown model number "
                f"{int.from_bytes(raw, 'little')} (bytes {raw.hex(' ')}): not a servo this "
                "plugin knows (" + ", ".join(f"{name} {number}" for (number, _), (name, _s)
                                             in MODELS.items()) + ")")
        u["model"], u["series"], u["order"] = known[0]
        u["ticks_per_rev"] = ticks = TICKS_PER_REV[u["series"]]
        u["rad_per_tick"] = 2.0 * math.pi / ticks
        if u["zero"] is None:
            u["zero"] = ticks // 2
        got = self.ask(i, "read Status", read, STATUS, 1)
        if got is None:
            return CallbackReturn.FAILURE
        bits = got[0][0] | got[1]
        if bits & ~VOLTAGE:
            self._fault(i, bits)
            return self.fail(self.faults[i])
        got = self.ask(i, "read Min/Max_Position_Limit", read, MIN_POSITION_LIMIT, 4)
        if got is None:
            return CallbackReturn.FAILURE
        data = got[0]
        held = {MIN_POSITION_LIMIT: int.from_bytes(bytes(data[0:2]), u["order"]),
                MAX_POSITION_LIMIT: int.from_bytes(bytes(data[2:4]), u["order"])}
        low, high = u["limits"] or (held[MIN_POSITION_LIMIT], held[MAX_POSITION_LIMIT])
        why = self._check_limits(i, low, high)  # the file's range: before it is written
        if why:
            return self.fail(why)
        wanted = {}
        if u["limits"] is not None:
            wanted = {MIN_POSITION_LIMIT: low, MAX_POSITION_LIMIT: high}
        if u["series"] == "sts" and u["homing"] is not None:
            got = self.ask(i, "read Homing_Offset", read, HOMING_OFFSET, 2)
            if got is None:
                return CallbackReturn.FAILURE
            held[HOMING_OFFSET] = int.from_bytes(bytes(got[0]), u["order"])
            wanted[HOMING_OFFSET] = _sign_magnitude(u["homing"], 11)
        writes = [(address, value) for address, value in wanted.items()
                  if held[address] != value]
        if writes:  # EEPROM: with the torque off
            ret = self._write(i, TORQUE_ENABLE, 1, 0, "write Torque Enable")
            for address, value in writes:
                if ret is CallbackReturn.SUCCESS:
                    ret = self._write(i, address, 2, value, f"write calibration at {address}")
            if ret is not CallbackReturn.SUCCESS:
                return ret
        u["mode"] = MODE_POSITION
        if u["series"] == "sts":  # what the servo has: written only if it must change
            got = self.ask(i, "read Operating Mode", read, OPERATING_MODE, 1)
            if got is None:
                return CallbackReturn.FAILURE
            u["mode"] = got[0][0]
        return CallbackReturn.SUCCESS

    def _check_limits(self, i: int, low: int, high: int) -> str:
        """Why the config's position limits are not within the servo's ('' if they are)."""
        if low == 0 and high == 0:
            return ""  # multi-turn: no limits
        u = self.units[i]
        ends = sorted([(self._rad(i, low), "Min_Position_Limit", low),
                       (self._rad(i, high), "Max_Position_Limit", high)])
        (lo, lo_field, lo_ticks), (hi, hi_field, hi_ticks) = ends
        half = u["rad_per_tick"] / 2.0
        where = f"motor {self._name(i)} (id {self.ids[i]})"
        if u["min"] == u["max"]:
            return (f"{where}: the config has no min_position/max_position, but the servo "
                    f"turns only within {lo_field} {lo_ticks} ({lo:.4f} rad) .. {hi_field} "
                    f"{hi_ticks} ({hi:.4f} rad): set them within those")
        if u["min"] < lo - half:
            return (f"{where}: min_position {u['min']:g} rad is beyond the servo's {lo_field} "
                    f"{lo_ticks} ticks ({lo:.4f} rad)")
        if u["max"] > hi + half:
            return (f"{where}: max_position {u['max']:g} rad is beyond the servo's {hi_field} "
                    f"{hi_ticks} ticks ({hi:.4f} rad)")
        return ""

    def _activate_settings(self) -> CallbackReturn:
        """The P/D/I Coefficient registers where ``coefficients`` gives them."""
        for i, u in enumerate(self.units):
            if u["coefficients"] is not None:
                ret = self._write_bytes(i, P_COEFFICIENT, bytes(u["coefficients"]),
                                        "write P/D/I Coefficient")
                if ret is not CallbackReturn.SUCCESS:
                    return ret
        return CallbackReturn.SUCCESS

    def _clear_error(self, i: int) -> None:
        """Feetech servos have no reboot: a fault clears when its cause does. Torque off
        until then."""
        self._torque_off(i)

    # ------------------------------------------------------------------ cycle

    def capabilities(self, index: int) -> Capabilities:
        caps = (Capabilities.POSITION_COMMAND | Capabilities.TRAPEZOIDAL_COMMAND
                | Capabilities.VELOCITY_LIMIT | Capabilities.ACCELERATION_LIMIT)
        if self.units[index].get("series", "sts") == "sts":  # SCS: no wheel, no Torque Limit
            caps |= Capabilities.VELOCITY_COMMAND | Capabilities.AVAILABLE_FORCE
        return caps

    def telemetry(self, index: int) -> dict[str, str]:
        return self.telemetry_values[index]

    # ------------------------------------------------------------------ the bus

    def _name(self, i: int) -> str:
        return repr(self.info.motor_names[i])

    def _rad(self, i: int, ticks: float) -> float:
        u = self.units[i]
        return u["direction"] * (ticks - u["zero"]) * u["rad_per_tick"]

    def _ticks(self, i: int, rad: float) -> float:
        u = self.units[i]
        return u["zero"] + u["direction"] * rad / u["rad_per_tick"]

    def _read_present(self) -> CallbackReturn:
        """The present values of every servo: one sync read of the STS servos and a read
        of each SCS servo (it has no sync read), tried once more where a reply is missing
        or corrupt (a busy bus loses one now and then)."""
        replies, ret = self.read_tried(self._read_all)
        if ret is not CallbackReturn.SUCCESS:
            return ret
        state = self.state
        errors = []
        for i, (raw, error) in replies.items():
            u = self.units[i]
            order, sts = u["order"], u["series"] == "sts"
            position = int.from_bytes(raw[0:2], order)
            if sts:
                position = _signed(position, 15)
            speed = _signed(int.from_bytes(raw[2:4], order), 15)
            load = _signed(int.from_bytes(raw[4:6], order), 10)
            d = u["direction"]
            state.position[i] = self._rad(i, position)
            state.velocity[i] = d * speed * u["rad_per_tick"]
            state.effort[i] = d * load / PER_MILLE * u["stall"]
            values = {"voltage": f"{raw[6] * VOLTAGE_UNIT:.1f}", "temperature": f"{raw[7]}",
                      "moving": str(raw[10])}
            if sts:
                current = _signed(int.from_bytes(raw[13:15], order), 15)
                values["current"] = f"{current * CURRENT_UNIT:.4f}"
            self.telemetry_values[i] = values
            if error & ~VOLTAGE:
                errors.append(i)
            self._fault(i, error)
        if errors:
            return self.fail("; ".join(self.faults[i] for i in errors), CallbackReturn.ERROR)
        return CallbackReturn.SUCCESS

    def _read_all(self) -> tuple[dict[int, tuple[bytes, int]], tuple | None]:
        """({motor: (present bytes, error bits)}, None), or what failed: (motor or None,
        what, the SDK's result)."""
        replies: dict[int, tuple[bytes, int]] = {}
        if self._synced:
            result = self.reader.txPacket()
            if result != scs.COMM_SUCCESS:
                return replies, (None, "sync read", result)
        for i in self._read_order:
            synced = self.units[i]["series"] == "sts"
            if synced:  # the sync read's replies, in order
                data, result, error = self.packet.readRx(self.port, self.ids[i], PRESENT_SIZE)
            else:
                data, result, error = self.packet.readTxRx(self.port, self.ids[i], PRESENT,
                                                           SCS_PRESENT_SIZE)
            if result != scs.COMM_SUCCESS:
                return replies, (i, "sync read" if synced else "read", result)
            replies[i] = (bytes(data), error)
        return replies, None

    def _goal_bytes(self, i: int, mode: int) -> list[int]:
        """The 7 bytes from Acceleration to Goal Speed for motor ``i``, each value clamped
        to its register's range."""
        command, u = self.commands, self.units[i]
        speed = 0
        ticks = self._ticks(i, float(self.state.position[i]))  # hold where it is
        if mode == Mode.VELOCITY:
            speed = _register(u["direction"] * float(command.velocity_setpoint[i])
                              / u["rad_per_tick"], -MAX_MAGNITUDE, MAX_MAGNITUDE)
        elif mode == Mode.POSITION:
            ticks = self._ticks(i, float(command.target_position[i]))
            speed = _register(float(command.speed_limit[i]) / u["rad_per_tick"], 1, MAX_MAGNITUDE)
        sts = u["series"] == "sts"
        position = _register(ticks, -MAX_MAGNITUDE, MAX_MAGNITUDE) if sts else \
            _register(ticks, 0, u["ticks_per_rev"] - 1)  # an SCS goal is within one turn
        a = float(command.acceleration[i])
        acceleration = 0 if a < 0 else _register(
            a / u["rad_per_tick"] / TICKS_PER_ACCELERATION_UNIT, 1, MAX_ACCELERATION)
        words = (_sign_magnitude(position, 15) if sts else position, 0,
                 _sign_magnitude(speed, 15))
        return [acceleration] + [b for w in words for b in w.to_bytes(2, u["order"])]

    def _write_settings(self, modes: np.ndarray) -> CallbackReturn:
        """Operating Mode, Torque Limit and torque of the servos where they changed (the
        torque goes off only to change the mode, in EEPROM, or to switch the servo off)."""
        available_force = self.commands.available_force
        for i, u in enumerate(self.units):
            mode = int(modes[i])
            sts = u["series"] == "sts"
            limit = _register(float(available_force[i]) / u["stall"] * PER_MILLE, 0,
                              PER_MILLE) if sts else None
            previous = self._written.get(i, (u["mode"], None, None))  # torque unknown
            operating = {Mode.POSITION: MODE_POSITION, Mode.VELOCITY: MODE_WHEEL}.get(
                Mode(mode), previous[0])  # off keeps the last mode: only the torque goes
            wanted = (operating, limit, mode != Mode.OFF)
            if wanted == previous:
                continue
            new_mode = sts and operating != previous[0]  # EEPROM: with the torque off
            steps = []
            if previous[2] is not False and (new_mode or not wanted[2]):
                steps.append((TORQUE_ENABLE, 1, 0))
            if new_mode:
                steps.append((OPERATING_MODE, 1, operating))
            if limit is not None and limit != previous[1]:  # RAM: the torque stays on
                steps.append((TORQUE_LIMIT, 2, limit))
            if wanted[2] and (new_mode or previous[2] is not True):
                steps.append((TORQUE_ENABLE, 1, 1))
            for address, size, value in steps:
                ret = self._write(i, address, size, value, "write")
                if ret is not CallbackReturn.SUCCESS:
                    return ret
            self._written[i] = wanted
        return CallbackReturn.SUCCESS

    def _write(self, i: int, address: int, size: int, value: int, what: str) -> CallbackReturn:
        return self._write_bytes(i, address, value.to_bytes(size, self.units[i]["order"]), what)

    def _write_bytes(self, i: int, address: int, data: bytes, what: str) -> CallbackReturn:
        result, error = self.packet.writeTxRx(self.port, self.ids[i], address, len(data),
                                              list(data))
        if result != scs.COMM_SUCCESS:
            return self._lost(i, what, result)
        if error & ~VOLTAGE:
            self._fault(i, error)
            return self.fail(f"{self.faults[i]} ({what} at {address})", CallbackReturn.ERROR)
        return CallbackReturn.SUCCESS

    def _torque(self, i: int, value: int) -> int:
        return self.packet.writeTxRx(self.port, self.ids[i], TORQUE_ENABLE, 1, [value])[0]

    def _fault(self, i: int, bits: int) -> None:
        """The error bits of servo ``i``'s status: its fault text and flags."""
        flags = int(self.flags[i]) & ~int(StateFlags.WARNING)
        if not bits:
            self.flags[i] = flags
            self.faults[i] = ""
            return
        names = [text for bit, text in ERRORS.items() if bits & bit] or [f"0x{bits:02x}"]
        self.faults[i] = (f"motor {self._name(i)} (id {self.ids[i]}): "
                          + ("hardware error: " if bits & ~VOLTAGE else "warning: ")
                          + ", ".join(names))
        if bits & ~VOLTAGE:
            self.flags[i] = flags
            self._flag(i, StateFlags.ERROR)
        else:
            self.flags[i] = flags | StateFlags.WARNING
