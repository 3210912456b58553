"""The ``dynamixel`` plugin: ROBOTIS X-series servos over Protocol 2.0 (dynamixel-sdk).

Settings (the ``hardware`` group)::

    hardware:
      plugin: dynamixel
      port: /dev/ttyUSB0
      baud_rate: 4000000           # one of dynamixel-sdk's rates; default 1000000
      arm:                         # per motor, by ROS name
        id: 1
        torque_constant: 1.78      # N*m per A (XM430-W350: 4.1 N*m / 2.3 A)
        # optional, X-series defaults:
        zero_ticks: 2048           # the tick count at 0 rad
        ticks_per_rev: 4096
        velocity_unit_rpm: 0.229   # Goal/Present Velocity, Profile Velocity
        acceleration_unit_rpm2: 214.577   # Profile Acceleration
        current_unit_ma: 2.69      # Goal/Present Current, Current Limit
        current_limit_max: 1193    # the model's highest Current Limit, in units
        pid_scale: [128, 65536, 16]       # register = gain * scale (KPP = P/128 ...)
        current_control: true      # false for servos without current sensing (XL430)

Mapping of the Webots commands (the command interfaces) to the control table:

=====================  =======================================================
position control       Operating Mode 4 (extended position), Goal Position;
                       speed limit -> Profile Velocity (0 rad/s -> 1 unit)
halt, trapezoidal      position control: the model's set-point each cycle
velocity control       Operating Mode 1 (velocity), Goal Velocity (a halt: its ramp)
disable, e-stop        Torque Enable off
force/torque control   Operating Mode 0 (current), Goal Current = F / kt
available force        Current Limit = F / kt; 0 = Torque Enable off
acceleration           Profile Acceleration (-1 unlimited -> 0)
control_pid            Position P/I/D Gain registers (times pid_scale)
=====================  =======================================================

Every value is clamped to its register's range (Goal Position +-1,048,575 ticks,
Profile Velocity/Acceleration <= 32767, |Goal Velocity| <= 1023, currents <=
current_limit_max), so no command can overflow a register.

Per cycle on the bus: one group sync read (Present Current, Velocity, Position: 10
bytes from address 126 of every servo), tried once more where a reply is missing or
corrupt, as every read while configuring is (ping, Hardware Error Status), and one group
sync write (Goal Current, Goal Velocity, Profile Acceleration, Profile Velocity, Goal
Position: 18 bytes from 102).
Mode, Current Limit and gains are written to a servo only when they change (mode and
Current Limit sit in EEPROM: the torque is briefly switched off to write them).

The alert bit of a status packet makes the plugin read Hardware Error Status; its
bits become the motor's ``faults`` and the ERROR flag, and the cycle returns ERROR.
A transaction that fails or times out (a read: twice) flags COMMUNICATION_FAILURE and
returns ERROR.
``on_error()`` reboots servos with a hardware error (what clears it); the system then
retries configure + activate until every servo answers.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

try:
    import dynamixel_sdk as dxl
except ImportError as exc:  # pragma: no cover - the registry reports it
    raise ImportError(f"{exc}; install the vendor SDK: pip install dynamixel-sdk") from exc

from ..model.config import MotorConfig
from .base import CallbackReturn, Capabilities, HardwareInfo, Mode, StateFlags
from .serial_bus import SerialBusHardware, integer_in, positive_number
from .serial_bus import register as _register

log = logging.getLogger("servo_sim")

# X-series control table (Protocol 2.0)
OPERATING_MODE, CURRENT_LIMIT, TORQUE_ENABLE, HARDWARE_ERROR_STATUS = 11, 38, 64, 70
POSITION_D_GAIN = 80  # D, I, P gains: 3 x 2 bytes
GOALS, GOALS_SIZE = 102, 18  # Goal Current(2) Velocity(4) Profile Acc(4) Vel(4) Goal Position(4)
PRESENT, PRESENT_SIZE = 126, 10  # Present Current(2) Velocity(4) Position(4)
MODE_CURRENT, MODE_VELOCITY, MODE_EXTENDED_POSITION = 0, 1, 4
OPERATING_MODE_OF = {Mode.POSITION: MODE_EXTENDED_POSITION, Mode.VELOCITY: MODE_VELOCITY,
                     Mode.EFFORT: MODE_CURRENT}

#: Hardware Error Status bits (X-series e-Manual)
HARDWARE_ERRORS = {0x01: "input voltage error", 0x04: "overheating",
                   0x08: "motor encoder error", 0x10: "electrical shock",
                   0x20: "overload"}
#: Model numbers of X-series servos with current sensing (current mode, Current Limit)
CURRENT_SENSING_MODELS = {1020: "XM430-W350", 1030: "XM430-W210", 1120: "XM540-W270",
                          1130: "XM540-W150", 1010: "XH430-W350", 1000: "XH430-W210",
                          1110: "XH540-W270", 1100: "XH540-W150"}
BAUD_RATES = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600,
              1000000, 1152000, 2000000, 2500000, 3000000, 3500000, 4000000)
MAX_ID = 252
MAX_GAIN = 16383  # Position P/I/D Gain registers
# X-series register ranges (e-Manual)
MAX_GOAL_VELOCITY = 1023  # |Goal Velocity| <= Velocity Limit <= 1023
MAX_PROFILE = 32767  # Profile Acceleration, Profile Velocity
MAX_EXTENDED_POSITION = 1_048_575  # Goal Position in extended position mode (+-256 rev)
MAX_CURRENT_REGISTER = 32767  # Current Limit / Goal Current are 2 bytes

_DEFAULTS: dict[str, Any] = {
    "zero_ticks": 2048, "ticks_per_rev": 4096, "velocity_unit_rpm": 0.229,
    "acceleration_unit_rpm2": 214.577, "current_unit_ma": 2.69,
    "pid_scale": [128.0, 65536.0, 16.0], "current_control": None,
    "current_limit_max": 1193,
}


def _le(value: int, size: int) -> list[int]:
    return list(int(value).to_bytes(size, "little", signed=True))


class DynamixelHardware(SerialBusHardware):
    """X-series servos on one Protocol 2.0 bus (see the module docstring)."""

    FREE_RUNNING_MODES = (MODE_VELOCITY, MODE_CURRENT)  # would go on turning or pushing
    COMMAND_INTERFACES = ("mode", "target_position", "velocity_setpoint", "speed_limit",
                          "applied_force", "available_force", "acceleration",
                          "control_p", "control_i", "control_d")

    SETTINGS: ClassVar[Mapping[str, str]] = {
        "port": "Serial port of the bus, e.g. /dev/ttyUSB0.",
        "baud_rate": "Bus baud rate (a dynamixel-sdk rate, default 1000000).",
        "<motor>.id": "Servo id on the bus (0..252).",
        "<motor>.torque_constant": "Torque per current, N*m/A (> 0).",
    }

    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        super().on_init(info)
        why = self.parse_bus(info, BAUD_RATES)
        if why:
            return self.fail(why)
        for m in info.motors:
            reason = self._parse_motor(m, info.motor_settings(m))
            if reason:
                return self.fail(f"motor {m.name!r}: {reason}")
        return self.check_ids()

    def _parse_motor(self, m: MotorConfig, group: Mapping[str, Any]) -> str:
        """Validate one motor's settings into ``self.ids``/``self.units``; '' or why not."""
        if m.type != "rotational":
            return "the dynamixel plugin drives rotational motors only"
        unknown = sorted(set(group) - {"id", "torque_constant", *_DEFAULTS})
        if unknown:
            return f"unknown hardware setting {unknown[0]!r} (known: id, torque_constant, " \
                + ", ".join(_DEFAULTS) + ")"
        s = {**_DEFAULTS, **group}
        dxl_id = s.get("id")
        if not integer_in(dxl_id, 0, MAX_ID):
            return f"hardware setting 'id' = {dxl_id!r}: must be an integer 0..{MAX_ID}"
        for key in ("torque_constant", "ticks_per_rev", "velocity_unit_rpm",
                    "acceleration_unit_rpm2", "current_unit_ma"):
            value = s.get(key)
            if not positive_number(value):
                return f"hardware setting {key!r} = {value!r}: must be a number > 0"
        for key, high in (("zero_ticks", MAX_EXTENDED_POSITION),
                          ("current_limit_max", MAX_CURRENT_REGISTER)):
            if not integer_in(s[key], 0, high):
                return f"hardware setting {key!r} = {s[key]!r}: must be an integer 0..{high}"
        scale = s["pid_scale"]
        if not (isinstance(scale, (list, tuple)) and len(scale) == 3
                and all(positive_number(v) for v in scale)):
            return f"hardware setting 'pid_scale' = {scale!r}: must be 3 finite numbers > 0"
        if s["current_control"] not in (None, True, False):
            return f"hardware setting 'current_control' = {s['current_control']!r}: true/false"
        rpm = 2.0 * math.pi / 60.0
        self.ids.append(dxl_id)
        self.units.append({
            "rad_per_tick": 2.0 * math.pi / s["ticks_per_rev"], "zero": s["zero_ticks"],
            "velocity": s["velocity_unit_rpm"] * rpm,  # rad/s per unit
            "acceleration": s["acceleration_unit_rpm2"] * rpm / 60.0,  # rad/s^2 per unit
            "current": s["current_unit_ma"] / 1000.0,  # A per unit
            "kt": float(s["torque_constant"]), "pid_scale": [float(v) for v in scale],
            "current_control": s["current_control"], "current_limit_max": s["current_limit_max"]})
        return ""

    # ------------------------------------------------------------------ lifecycle

    def on_configure(self) -> CallbackReturn:
        """Open the port, ping every servo, check its error status, read its state."""
        self.packet = dxl.PacketHandler(2.0)
        if not self.open_port(dxl.PortHandler(self.port_name)):
            return CallbackReturn.FAILURE
        for i in range(len(self.ids)):  # each read tried again on a lost reply (ask)
            got = self.ask(i, "ping", self.packet.ping)
            if got is None:
                return CallbackReturn.FAILURE
            if self.units[i]["current_control"] is None:
                self.units[i]["current_control"] = got[0] in CURRENT_SENSING_MODELS
            got = self.ask(i, "read Hardware Error Status", self.packet.read1ByteTxRx,
                           HARDWARE_ERROR_STATUS)
            if got is None:
                return CallbackReturn.FAILURE
            errors = got[0]
            if errors:
                self._hardware_error(i, errors)
                return self.fail(self.faults[i], CallbackReturn.ERROR)  # on_error reboots
        self.reader = dxl.GroupSyncRead(self.port, self.packet, PRESENT, PRESENT_SIZE)
        self.writer = dxl.GroupSyncWrite(self.port, self.packet, GOALS, GOALS_SIZE)
        for dxl_id in self.ids:
            self.reader.addParam(dxl_id)
        self.flags[:] = StateFlags.READY
        self.faults = [""] * len(self.ids)
        self.reason = ""
        self._gains: dict[int, tuple] = {}
        return self._read_present()

    def _clear_error(self, i: int) -> None:
        """A reboot clears a hardware error (and switches the torque off)."""
        self.packet.reboot(self.port, self.ids[i])

    # ------------------------------------------------------------------ cycle

    def capabilities(self, index: int) -> Capabilities:
        caps = (Capabilities.POSITION_COMMAND | Capabilities.VELOCITY_COMMAND
                | Capabilities.TRAPEZOIDAL_COMMAND | Capabilities.PID_GAINS
                | Capabilities.VELOCITY_LIMIT | Capabilities.ACCELERATION_LIMIT)
        if self.units[index]["current_control"]:
            caps |= Capabilities.EFFORT_COMMAND | Capabilities.AVAILABLE_FORCE
        return caps

    # ------------------------------------------------------------------ the bus

    def _read_present(self) -> CallbackReturn:
        """One sync read of Present Current/Velocity/Position for every servo, tried once
        more where a reply is missing or corrupt (``read_tried``)."""
        replies, ret = self.read_tried(self._read_all)
        if ret is not CallbackReturn.SUCCESS:
            return ret
        state = self.state
        alerts = []
        for i, (raw, error) in replies.items():
            u = self.units[i]
            current = int.from_bytes(raw[0:2], "little", signed=True)
            velocity = int.from_bytes(raw[2:6], "little", signed=True)
            ticks = int.from_bytes(raw[6:10], "little", signed=True)
            state.position[i] = (ticks - u["zero"]) * u["rad_per_tick"]
            state.velocity[i] = velocity * u["velocity"]
            state.effort[i] = current * u["current"] * u["kt"]
            if error & 0x80:
                alerts.append(i)
        for i in alerts:
            got = self.ask(i, "read Hardware Error Status", self.packet.read1ByteTxRx,
                           HARDWARE_ERROR_STATUS, code=CallbackReturn.ERROR)
            if got is None:
                return CallbackReturn.ERROR
            self._hardware_error(i, got[0])
        if alerts:
            return self.fail("; ".join(self.faults[i] for i in alerts), CallbackReturn.ERROR)
        return CallbackReturn.SUCCESS

    def _read_all(self) -> tuple[dict[int, tuple[bytes, int]], tuple | None]:
        """({motor: (present bytes, error bits)}, None), or what failed: (motor or None,
        what, the SDK's result)."""
        replies: dict[int, tuple[bytes, int]] = {}
        result = self.reader.txPacket()
        if result != dxl.COMM_SUCCESS:
            return replies, (None, "sync read", result)
        for i, dxl_id in enumerate(self.ids):
            data, result, error = self.packet.readRx(self.port, dxl_id, PRESENT_SIZE)
            if result != dxl.COMM_SUCCESS:
                return replies, (i, "sync read", result)
            replies[i] = (bytes(data), error)
        return replies, None

    def _goal_bytes(self, i: int, mode: int) -> list[int]:
        """The 18 bytes from Goal Current to Goal Position for motor ``i``, each value
        clamped to its register's range (Python floats: a huge command cannot overflow)."""
        command, u = self.commands, self.units[i]
        current = velocity = profile_velocity = 0
        ticks = float(self.state.position[i]) / u["rad_per_tick"]  # hold where it is
        if mode == Mode.EFFORT:
            limit = u["current_limit_max"]
            current = _register(float(command.applied_force[i]) / u["kt"] / u["current"],
                                -limit, limit)
        elif mode == Mode.VELOCITY:
            velocity = _register(float(command.velocity_setpoint[i]) / u["velocity"],
                                 -MAX_GOAL_VELOCITY, MAX_GOAL_VELOCITY)
        elif mode == Mode.POSITION:
            ticks = float(command.target_position[i]) / u["rad_per_tick"]
            profile_velocity = _register(float(command.speed_limit[i]) / u["velocity"],
                                         1, MAX_PROFILE)
        position = _register(u["zero"] + ticks, -MAX_EXTENDED_POSITION, MAX_EXTENDED_POSITION)
        a = float(command.acceleration[i])
        profile_acceleration = 0 if a < 0 else _register(a / u["acceleration"], 1, MAX_PROFILE)
        return (_le(current, 2) + _le(velocity, 4) + _le(profile_acceleration, 4)
                + _le(profile_velocity, 4) + _le(position, 4))

    def _write_settings(self, modes: np.ndarray) -> CallbackReturn:
        """Operating mode, Current Limit, torque and gains of the servos where they changed."""
        available_force = self.commands.available_force
        for i, u in enumerate(self.units):
            mode = int(modes[i])
            limit = _register(float(available_force[i]) / u["kt"] / u["current"], 0,
                              u["current_limit_max"]) if u["current_control"] else None
            previous = self._written.get(i, (None, None, None))
            # off keeps the last operating mode: only the torque goes
            operating = OPERATING_MODE_OF.get(Mode(mode), previous[0])
            wanted = (operating, limit, mode != Mode.OFF)
            if wanted != previous:
                steps = [(TORQUE_ENABLE, 1, 0)]
                if operating is not None and operating != previous[0]:
                    steps.append((OPERATING_MODE, 1, operating))
                if limit is not None and limit != previous[1]:
                    steps.append((CURRENT_LIMIT, 2, limit))
                if wanted[2]:
                    steps.append((TORQUE_ENABLE, 1, 1))
                for address, size, value in steps:
                    ret = self._write(i, address, _le(value, size), "write")
                    if ret is not CallbackReturn.SUCCESS:
                        return ret
                self._written[i] = wanted
            gains, warnings = self._gain_registers(i)
            if self._gains.get(i) != gains:
                for warning in warnings:
                    log.warning(warning)
                data = [b for g in gains for b in _le(g, 2)]
                ret = self._write(i, POSITION_D_GAIN, data, "write gains")
                if ret is not CallbackReturn.SUCCESS:
                    return ret
                self._gains[i] = gains
        return CallbackReturn.SUCCESS

    def _gain_registers(self, i: int) -> tuple[tuple[int, int, int], list[str]]:
        """Position D, I, P Gain registers of motor ``i`` (clipped to 0..16383) and a
        warning per clipped gain."""
        command, scale = self.commands, self.units[i]["pid_scale"]
        registers, warnings = [], []
        for name, gain, k in (("D", float(command.control_d[i]), scale[2]),
                              ("I", float(command.control_i[i]), scale[1]),
                              ("P", float(command.control_p[i]), scale[0])):
            value = _register(gain * k, 0, MAX_GAIN)
            if gain * k >= MAX_GAIN + 0.5:  # rounds beyond the register
                warnings.append(f"motor {self.info.motor_names[i]!r}: {name} gain {gain:g} is "
                                f"{gain * k:g} register units, beyond {MAX_GAIN}; clipped")
            registers.append(value)
        return (registers[0], registers[1], registers[2]), warnings

    def _write(self, i: int, address: int, data: list[int], what: str) -> CallbackReturn:
        result, error = self.packet.writeTxRx(self.port, self.ids[i], address, len(data), data)
        if result != dxl.COMM_SUCCESS:
            return self._lost(i, what, result)
        if error & 0x7F:
            return self.fail(f"motor {self.info.motor_names[i]!r} (id {self.ids[i]}): {what} at "
                             f"{address}: {self.packet.getRxPacketError(error)}",
                             CallbackReturn.ERROR)
        return CallbackReturn.SUCCESS

    def _torque(self, i: int, value: int) -> int:
        return self.packet.write1ByteTxRx(self.port, self.ids[i], TORQUE_ENABLE, value)[0]

    def _hardware_error(self, i: int, bits: int) -> None:
        names = [text for bit, text in HARDWARE_ERRORS.items() if bits & bit] or [f"0x{bits:02x}"]
        self.faults[i] = (f"motor {self.info.motor_names[i]!r} (id {self.ids[i]}): hardware error: "
                          + ", ".join(names))
        self._flag(i, StateFlags.ERROR)
