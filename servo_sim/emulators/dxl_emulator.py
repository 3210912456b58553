"""A Dynamixel Protocol 2.0 bus of X-series servos, emulated on a pseudo-terminal.

A test and demo peer for the ``dynamixel`` plugin: it speaks the real wire protocol
(header ``FF FF FD 00``, CRC-16 of the Protocol 2.0 manual, byte stuffing, status
packets with error and alert bits) and answers ping, read, write, reboot, sync read
and sync write. Written from the protocol manual, independently of dynamixel-sdk, so
that the SDK's side is what the tests exercise.

Each servo has an X-series control table (XM430-W350 defaults) and a simple motor
inside: a first-order velocity response to the operating mode's goal (extended
position, velocity or current), integrated in wall-clock time between packets. With
``--servo NAME`` (a servo profile, e.g. ``XM430-W350-T``) the motor inside is servo_sim's
model of that servo instead, stepped every 1 ms: the envelope, the encoder and the
Dynamixel firmware law, with Position P/I/D Gain, Profile Velocity and Profile
Acceleration as the e-Manual defines them (velocity mode: Goal Velocity; current mode is
not modelled: the motor is unpowered); ``--set FIELD=VALUE`` gives motor fields of the
servos (what identification should find).

Run it in a child process (:class:`EmulatorProcess`): dynamixel-sdk busy-waits for
replies while holding the GIL, so a peer thread in the same process starves. The
parent controls it through a pipe: silence, corrupt CRCs, hardware errors, peek and
poke registers, packet counts.

Command line (a bus to try the plugin with)::

    servo-sim-dxl-emulator --ids 1 2     # prints the port, e.g. /dev/pts/5
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ..model.commands import Command
from . import emulator

HEADER = bytes((0xFF, 0xFF, 0xFD, 0x00))
BROADCAST_ID = 0xFE
# instructions
PING, READ, WRITE, REBOOT, STATUS, SYNC_READ, SYNC_WRITE = 0x01, 0x02, 0x03, 0x08, 0x55, 0x82, 0x83
# status packet error numbers (low 7 bits) and the alert bit
ERR_RESULT_FAIL, ERR_INSTRUCTION, ERR_CRC, ERR_DATA_RANGE = 0x01, 0x02, 0x03, 0x04
ERR_DATA_LENGTH, ERR_DATA_LIMIT, ERR_ACCESS = 0x05, 0x06, 0x07
ALERT = 0x80

# X-series control table (XM430-W350): address -> (size, writable, default)
MODEL_NUMBER, FIRMWARE, ID, BAUD_RATE, OPERATING_MODE = 0, 6, 7, 8, 11
CURRENT_LIMIT, VELOCITY_LIMIT, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT = 38, 44, 48, 52
TORQUE_ENABLE, HARDWARE_ERROR_STATUS = 64, 70
POSITION_D_GAIN, POSITION_I_GAIN, POSITION_P_GAIN = 80, 82, 84
GOAL_CURRENT, GOAL_VELOCITY, PROFILE_ACCELERATION, PROFILE_VELOCITY = 102, 104, 108, 112
GOAL_POSITION, MOVING, PRESENT_CURRENT, PRESENT_VELOCITY, PRESENT_POSITION = 116, 122, 126, 128, 132
CURRENT_LIMIT_MAX = 1193  # XM430-W350
EEPROM_END = 64  # addresses below are writable only with the torque off

MODE_CURRENT, MODE_VELOCITY, MODE_POSITION, MODE_EXTENDED_POSITION = 0, 1, 3, 4

TABLE: dict[int, tuple[int, bool, int]] = {
    MODEL_NUMBER: (2, False, 1020), FIRMWARE: (1, False, 48), ID: (1, True, 1),
    BAUD_RATE: (1, True, 1), OPERATING_MODE: (1, True, MODE_POSITION),
    CURRENT_LIMIT: (2, True, 1193), VELOCITY_LIMIT: (4, True, 200),
    MAX_POSITION_LIMIT: (4, True, 4095), MIN_POSITION_LIMIT: (4, True, 0),
    TORQUE_ENABLE: (1, True, 0), HARDWARE_ERROR_STATUS: (1, False, 0),
    POSITION_D_GAIN: (2, True, 0), POSITION_I_GAIN: (2, True, 0),
    POSITION_P_GAIN: (2, True, 800), GOAL_CURRENT: (2, True, 0),
    GOAL_VELOCITY: (4, True, 0), PROFILE_ACCELERATION: (4, True, 0),
    PROFILE_VELOCITY: (4, True, 0), GOAL_POSITION: (4, True, 2048),
    MOVING: (1, False, 0), PRESENT_CURRENT: (2, False, 0),
    PRESENT_VELOCITY: (4, False, 0), PRESENT_POSITION: (4, False, 2048),
}
SIGNED = {GOAL_CURRENT, GOAL_VELOCITY, GOAL_POSITION, PRESENT_CURRENT, PRESENT_VELOCITY,
          PRESENT_POSITION}
TABLE_SIZE = 147

#: The motor inside: velocity time constant (s), position loop gain (1/s), current per
#: unit of velocity error (current units per velocity unit) and velocity per current unit
VELOCITY_TAU_S = 0.02
POSITION_GAIN = 20.0
#: the longest explicit step of the motor inside (VELOCITY_TAU_S / 10: stable, smooth)
MAX_STEP_S = 0.002
CURRENT_PER_VELOCITY_ERROR = 2.0
VELOCITY_PER_CURRENT = 0.5
#: X-series units: 0.229 rpm per velocity unit, 4096 ticks per revolution
TICKS_PER_VELOCITY_UNIT_S = 0.229 / 60.0 * 4096
TICKS_PER_REV = 4096
#: rad/s per Profile Velocity / Goal Velocity unit (0.229 rpm); rad/s^2 per Profile
#: Acceleration unit (214.577 rev/min^2)
VELOCITY_UNIT = 0.229 * 2.0 * math.pi / 60.0
ACCELERATION_UNIT = 214.577 * 2.0 * math.pi / 3600.0


def crc16(data: bytes) -> int:
    """CRC-16 of Protocol 2.0 (polynomial 0x8005, initial 0, not reflected), bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def stuff(body: bytes) -> bytes:
    """Byte stuffing: FF FF FD in the instruction/parameters becomes FF FF FD FD."""
    out = bytearray()
    for byte in body:
        out.append(byte)
        if out[-3:] == b"\xff\xff\xfd":
            out.append(0xFD)
    return bytes(out)


def unstuff(body: bytes) -> bytes:
    """Undo :func:`stuff`."""
    out = bytearray()
    i = 0
    while i < len(body):
        out.append(body[i])
        if out[-3:] == b"\xff\xff\xfd" and i + 1 < len(body) and body[i + 1] == 0xFD:
            i += 1
        i += 1
    return bytes(out)


def packet(dxl_id: int, instruction: int, params: bytes = b"") -> bytes:
    """A whole packet: header, id, length, stuffed instruction + params, CRC."""
    body = stuff(bytes((instruction,)) + params)
    head = HEADER + bytes((dxl_id,)) + (len(body) + 2).to_bytes(2, "little")
    crc = crc16(head + body)
    return head + body + crc.to_bytes(2, "little")


def status(dxl_id: int, error: int, params: bytes = b"") -> bytes:
    return packet(dxl_id, STATUS, bytes((error,)) + params)


@dataclass
class Servo:
    """One X-series servo: its control table and the motor inside."""

    dxl_id: int
    table: bytearray = field(default_factory=lambda: bytearray(TABLE_SIZE))
    velocity: float = 0.0  # ticks/s
    position: float = 2048.0  # ticks

    def __post_init__(self) -> None:
        for address, (size, _, default) in TABLE.items():
            self.put(address, size, default)
        self.put(ID, 1, self.dxl_id)

    def get(self, address: int, size: int) -> int:
        return int.from_bytes(self.table[address:address + size], "little",
                              signed=address in SIGNED)

    def put(self, address: int, size: int, value: int) -> None:
        self.table[address:address + size] = int(value).to_bytes(
            size, "little", signed=address in SIGNED and value < 0)

    def write(self, address: int, data: bytes) -> int:
        """A write instruction's effect; returns the status error number (0 = ok)."""
        end = address + len(data)
        if end > TABLE_SIZE:
            return ERR_ACCESS
        torque = self.get(TORQUE_ENABLE, 1)
        for a in range(address, end):
            entry = next(((s, w) for start, (s, w, _) in TABLE.items()
                          if start <= a < start + s), None)
            if entry is not None and not entry[1]:
                return ERR_ACCESS  # read-only
            if a < EEPROM_END and torque:
                return ERR_ACCESS  # EEPROM is locked while the torque is on
        if address <= TORQUE_ENABLE < end and self.get(HARDWARE_ERROR_STATUS, 1) \
                and data[TORQUE_ENABLE - address]:
            data = bytearray(data)
            data[TORQUE_ENABLE - address] = 0  # shutdown: torque stays off until reboot
        if address <= CURRENT_LIMIT < end - 1:
            limit = int.from_bytes(data[CURRENT_LIMIT - address:CURRENT_LIMIT - address + 2],
                                   "little")
            if limit > CURRENT_LIMIT_MAX:
                return ERR_DATA_RANGE
        self.table[address:end] = data
        return 0

    def advance(self, dt: float) -> None:
        """The motor inside, ``dt`` s on, in steps of at most :data:`MAX_STEP_S` (a long
        gap between packets, a starved emulator, must not make the loop overshoot)."""
        while dt > 0:
            h = min(dt, MAX_STEP_S)
            self._step(h)
            dt -= h

    def _step(self, dt: float) -> None:
        """One explicit step: first-order velocity towards the mode's goal."""
        mode = self.get(OPERATING_MODE, 1)
        limit = self.get(CURRENT_LIMIT, 2)
        vmax = self.get(VELOCITY_LIMIT, 4) * TICKS_PER_VELOCITY_UNIT_S
        if not self.get(TORQUE_ENABLE, 1):
            goal_velocity = 0.0
        elif mode == MODE_VELOCITY:
            goal_velocity = self.get(GOAL_VELOCITY, 4) * TICKS_PER_VELOCITY_UNIT_S
        elif mode == MODE_CURRENT:
            current = max(-limit, min(limit, self.get(GOAL_CURRENT, 2)))
            goal_velocity = current * VELOCITY_PER_CURRENT * TICKS_PER_VELOCITY_UNIT_S
        else:
            goal_velocity = POSITION_GAIN * (self.get(GOAL_POSITION, 4) - self.position)
            profile = self.get(PROFILE_VELOCITY, 4) * TICKS_PER_VELOCITY_UNIT_S
            if profile > 0:
                goal_velocity = max(-profile, min(profile, goal_velocity))
        goal_velocity = max(-vmax, min(vmax, goal_velocity))
        error = goal_velocity - self.velocity
        self.velocity += error * min(1.0, dt / VELOCITY_TAU_S)
        self.position += self.velocity * dt
        if mode == MODE_POSITION:
            self.position = max(self.get(MIN_POSITION_LIMIT, 4),
                                min(self.get(MAX_POSITION_LIMIT, 4), self.position))
        current = error / TICKS_PER_VELOCITY_UNIT_S * CURRENT_PER_VELOCITY_ERROR
        if mode == MODE_CURRENT and self.get(TORQUE_ENABLE, 1):
            current = self.get(GOAL_CURRENT, 2)
        self.put(PRESENT_CURRENT, 2, round(max(-limit, min(limit, current))))
        self.put(PRESENT_VELOCITY, 4, round(self.velocity / TICKS_PER_VELOCITY_UNIT_S))
        self.put(PRESENT_POSITION, 4, round(self.position))
        self.put(MOVING, 1, int(abs(self.velocity) > 1.0))

    def reboot(self) -> None:
        self.put(HARDWARE_ERROR_STATUS, 1, 0)
        self.put(TORQUE_ENABLE, 1, 0)
        self.velocity = 0.0


class Bus(emulator.EmulatedBus):
    """Servos on one bus: turns instruction packets into status packets."""

    def __init__(self, ids: list[int], fields: dict[str, Any] | None = None) -> None:
        super().__init__(ids)
        self.servos = {i: Servo(i) for i in ids}
        self.error_number, self.error_numbers = 0, 0  # the parent's error_number
        self._last = time.monotonic()
        self._moved = 0.0  # without a profile: how long the servos have moved, s
        #: with a servo profile (``--servo``): the motors are servo_sim's model
        self.model = emulator.ModelMotors(ids, fields, emulator.PROFILE_STEP_MS) \
            if fields else None
        if self.model is not None:
            p, i_, d = (round(g) for g in self.model.config.actuator.gains)
            number = emulator.model_number(fields)
            for servo in self.servos.values():
                if number is not None:
                    servo.put(MODEL_NUMBER, 2, number)
                servo.put(POSITION_P_GAIN, 2, p)
                servo.put(POSITION_I_GAIN, 2, i_)
                servo.put(POSITION_D_GAIN, 2, d)
                self._apply(servo)

    def catch_up(self) -> None:
        now = time.monotonic()
        if self.model is not None:
            if self.model.advance(now, self.frozen):
                for servo in self.servos.values():
                    self._present(servo)
        elif not self.frozen:
            for servo in self.servos.values():
                servo.advance(now - self._last)
            self._moved += now - self._last
        self._last = now

    def device_time(self) -> float:
        return self.model.sim.time if self.model is not None else self._moved

    # ------------------------------------------------------------------ --servo

    def _apply(self, s: Servo) -> None:
        """The registers' commands to the model's motor (``--servo``)."""
        rad = 2.0 * math.pi / TICKS_PER_REV
        on = s.get(TORQUE_ENABLE, 1) == 1 and not s.get(HARDWARE_ERROR_STATUS, 1)
        mode = s.get(OPERATING_MODE, 1)
        no_load = self.model.config.max_velocity
        profile = s.get(PROFILE_VELOCITY, 4) * VELOCITY_UNIT
        acceleration = s.get(PROFILE_ACCELERATION, 4) * ACCELERATION_UNIT
        if mode in (MODE_POSITION, MODE_EXTENDED_POSITION):
            goal = s.get(GOAL_POSITION, 4)
            if mode == MODE_POSITION:
                goal = max(s.get(MIN_POSITION_LIMIT, 4), min(s.get(MAX_POSITION_LIMIT, 4), goal))
            position = (goal - TICKS_PER_REV // 2) * rad
            velocity = min(profile, no_load) if profile else no_load
        else:  # velocity mode; current mode is not modelled: unpowered
            position = math.inf
            goal = s.get(GOAL_VELOCITY, 4) * VELOCITY_UNIT
            velocity = max(-no_load, min(no_load, goal)) if mode == MODE_VELOCITY else 0.0
            on = on and mode == MODE_VELOCITY
        gains = (s.get(POSITION_P_GAIN, 2), s.get(POSITION_I_GAIN, 2), s.get(POSITION_D_GAIN, 2))
        self.model.drive_motor(s.dxl_id, {
            Command.AVAILABLE_TORQUE: (self.model.config.max_force if on else 0.0,),
            Command.ACCELERATION: (acceleration if acceleration else -1.0,),
            Command.POSITION: (position,), Command.VELOCITY: (velocity,),
            "actuator.gains": gains})

    def _present(self, s: Servo) -> None:
        """The model's motor to the Present registers (``--servo``)."""
        motor = self.model.motors[s.dxl_id]
        s.position = TICKS_PER_REV // 2 + motor.position * TICKS_PER_REV / (2.0 * math.pi)
        s.put(PRESENT_POSITION, 4, round(s.position))
        s.put(PRESENT_VELOCITY, 4, round(motor.velocity / VELOCITY_UNIT))
        current = motor.motor_force / self.model.config.max_force * CURRENT_LIMIT_MAX
        s.put(PRESENT_CURRENT, 2, round(current))
        s.put(MOVING, 1, int(abs(motor.velocity) / VELOCITY_UNIT > 1.0))

    def _reply(self, dxl_id: int, error: int, params: bytes = b"") -> bytes:
        if dxl_id in self.silent:
            return b""
        servo = self.servos[dxl_id]
        if servo.get(HARDWARE_ERROR_STATUS, 1):
            error |= ALERT
        if self.error_numbers:  # the parent's error_number: an instruction's result
            self.error_numbers -= 1
            error |= self.error_number
        return self.garbled(status(dxl_id, error, params))

    def handle(self, dxl_id: int, instruction: int, params: bytes) -> bytes:
        """The bytes the bus sends back for one (CRC-checked, unstuffed) instruction."""
        self.catch_up()
        self.counts[f"0x{instruction:02x}"] += 1
        targets = list(self.servos) if dxl_id == BROADCAST_ID else (
            [dxl_id] if dxl_id in self.servos else [])
        if instruction == PING:
            return b"".join(self._reply(i, 0, self.servos[i].table[0:2]
                                        + self.servos[i].table[FIRMWARE:FIRMWARE + 1])
                            for i in targets)
        if instruction == SYNC_READ and dxl_id == BROADCAST_ID and len(params) >= 4:
            address = int.from_bytes(params[0:2], "little")
            size = int.from_bytes(params[2:4], "little")
            out = b""
            for i in params[4:]:
                if i in self.servos and i not in self.silent:
                    if address + size > TABLE_SIZE:
                        out += self._reply(i, ERR_ACCESS)
                    else:
                        data = bytes(self.servos[i].table[address:address + size])
                        out += self._reply(i, 0, data)
                else:
                    break  # the servos after a silent one wait for its reply forever
            return out
        if instruction == SYNC_WRITE and dxl_id == BROADCAST_ID and len(params) >= 4:
            address = int.from_bytes(params[0:2], "little")
            size = int.from_bytes(params[2:4], "little")
            for k in range(4, len(params) - size, size + 1):
                i = params[k]
                if i in self.servos and i not in self.silent:
                    self.servos[i].write(address, params[k + 1:k + 1 + size])
            if self.model is not None:
                for servo in self.servos.values():
                    self._apply(servo)
            return b""
        out = b""
        for i in targets:
            servo = self.servos[i]
            if instruction == READ and len(params) == 4:
                address = int.from_bytes(params[0:2], "little")
                size = int.from_bytes(params[2:4], "little")
                if address + size > TABLE_SIZE:
                    out += self._reply(i, ERR_ACCESS)
                else:
                    out += self._reply(i, 0, bytes(servo.table[address:address + size]))
            elif instruction == WRITE and len(params) >= 3:
                error = servo.write(int.from_bytes(params[0:2], "little"), params[2:])
                out += self._reply(i, error)
            elif instruction == REBOOT:
                out += self._reply(i, 0)
                servo.reboot()
            else:
                out += self._reply(i, ERR_INSTRUCTION)
        if self.model is not None and instruction in (WRITE, SYNC_WRITE, REBOOT):
            for servo in self.servos.values():
                self._apply(servo)
        return out if dxl_id != BROADCAST_ID or instruction == PING else b""

    def feed(self, buffer: bytearray) -> bytes:
        """Consume every whole packet at the front of ``buffer``; the replies."""
        out = b""
        while True:
            start = buffer.find(HEADER)
            if start < 0:
                del buffer[:max(0, len(buffer) - 3)]
                return out
            del buffer[:start]
            if len(buffer) < 7:
                return out
            length = int.from_bytes(buffer[5:7], "little")
            if len(buffer) < 7 + length:
                return out
            frame = bytes(buffer[:7 + length])
            del buffer[:7 + length]
            dxl_id = frame[4]
            if crc16(frame[:-2]) != int.from_bytes(frame[-2:], "little"):
                self.counts["crc_error"] += 1
                if dxl_id in self.servos:
                    out += self._reply(dxl_id, ERR_CRC)
                continue
            body = unstuff(frame[7:-2])
            out += self.handle(dxl_id, body[0], body[1:])

    def device_control(self, kind: str, args: list) -> Any:
        """hardware_error, error_number (see :class:`EmulatorProcess`)."""
        if kind == "error_number":
            self.error_number, self.error_numbers = args
            return None
        if kind == "hardware_error":
            dxl_id, bits = args
            self.servos[dxl_id].put(HARDWARE_ERROR_STATUS, 1, bits)
            if bits:
                self.servos[dxl_id].put(TORQUE_ENABLE, 1, 0)
            return None
        return super().device_control(kind, args)

    def register_set(self, servo_id: int, address: int, value: int) -> None:
        if address == PRESENT_POSITION:
            self.servos[servo_id].position = float(value)


class EmulatorProcess(emulator.EmulatorProcess):
    """The emulated Dynamixel bus in a child process; ``port`` is the path to open
    (``realtime``: see :class:`servo_sim.emulators.emulator.EmulatorProcess`)."""

    MODULE = "servo_sim.emulators.dxl_emulator"
    WHAT = "Dynamixel emulator"

    def __init__(self, ids: list[int], realtime: bool = False, servo: str | None = None,
                 fields: dict[str, Any] | None = None) -> None:
        super().__init__(["--ids", *map(str, ids), *emulator.profile_args(servo, fields)],
                         realtime)

    def hardware_error(self, dxl_id: int, bits: int) -> None:
        """Set Hardware Error Status (e.g. 0x20 overload): alert bit, torque off."""
        self._ask("hardware_error", dxl_id, bits)

    def error_number(self, number: int, n: int = 1) -> None:
        """The next ``n`` status packets carry the error number ``number`` in their
        Error field's bits 0-6 (Protocol 2.0: 1 Result Fail ... 7 Access Error)."""
        self._ask("error_number", number, n)


def main(argv: list[str] | None = None) -> int:
    """``servo-sim-dxl-emulator --ids 1 2``: print the port, serve until Ctrl-C."""
    return emulator.main(argv, __doc__.split("\n\n")[0],
                         lambda args, _: Bus(args.ids, args.fields))


if __name__ == "__main__":
    sys.exit(main())
