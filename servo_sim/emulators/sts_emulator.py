"""A Feetech bus of STS (and SCS) servos, emulated on a pseudo-terminal, each servo
driven by servo_sim's own motor model.

A test and demo peer for the ``feetech`` plugin, written from Feetech's protocol and
memory-table documents (not from the SDK, so that the SDK's side is what the tests
exercise): packets ``FF FF ID LEN INSTR PARAMS CHK`` with ``CHK = ~(ID + LEN + INSTR +
PARAMS) & 0xFF``; ping, read, write, reg write + action, sync read (each listed servo
answers in turn; an SCS servo does not) and sync write; a packet with a wrong checksum
is ignored (no reply), as a real servo does; status packets carry the servo's fault bits
(0x01 voltage, 0x02 angle sensor, 0x04 overheat, 0x08 over-current, 0x20 overload).

Each servo is an STS3215 (model 777, little-endian words, sign-magnitude fields: goal
and present position and speed in bit 15, present load in bit 10, homing offset in bit
11) or, with ``--scs``, an SCS0009 (model 1284, big-endian words, unsigned positions, no
torque limit, current or homing offset in RAM; Lock at 48). Inside, the servos are
motors of one :class:`servo_sim.model.Simulation` (the ideal motor of the STS3215 at
7.4 V: the profile's 1.91 N*m stall torque and 5.45 rad/s no-load speed; with ``--servo``,
the profile's whole actuator), stepped in wall-clock time:

==========================  ====================================================
Torque Enable 0, or a fault   available torque 0 (the passive joint)
in Unloading Condition
Torque Limit / Max Torque     available torque = min of the two / 1000 x stall
Operating Mode 0 (position)   set_position(goal + homing offset, clamped to the
                              Min/Max Position Limit unless both are 0);
                              Goal Speed: the speed limit (0: the no-load speed)
Operating Mode 1 (wheel)      velocity control at Goal Speed
Acceleration                  x 100 steps/s^2 (0: unlimited)
P Coefficient                 the model's P gain = P / 3.2 (the factory 32: Webots'
                              default 10); D and I are stored, not modelled
Present Position              raw - homing offset; in mode 0 with limits, modulo
                              one turn
Present Load / Current        motor torque / stall x 1000 (0.1 %) / x 2.7 A in 6.5 mA
==========================  ====================================================

With ``--servo NAME`` (a servo profile, e.g. ``STS3215-12V``) the servos are that
profile's motor instead, stepped every 1 ms: its torque-speed envelope, encoder and the
Feetech firmware law (``servo_sim.model.actuator``), whose gains are the P/I/D
Coefficient registers (they start at the profile's); ``--set FIELD=VALUE`` gives the
motor fields a recording should find (inertia, friction...).

Modes 2 (PWM) and 3 (step) hold still. EEPROM writes take effect whatever Lock says
(Lock only decides whether a real servo keeps them after power-off). With ``--eeprom
FILE`` the bus keeps what a real servo keeps across power cycles: the EEPROM bytes
(addresses 5-39: id, limits, gains, dead zones, homing offset, operating mode...)
written while Lock is 0 go to FILE (JSON, by the servo's place in ``--ids``) and are the
servos' registers at the next start.

A servo answers at its ID register (5): written, the servo answers the write from the
old id and the next packets at the new one, as LeRobot's setup_motors expects of a real
servo (two servos given one id both answer, as on a real bus). ``--ids`` are the
servos as shipped (the arm's joints, in order); the parent's requests (``get``,
``set``, ``silence``, faults) name a servo by them.

Run it in a child process (:class:`EmulatorProcess`), as for ``dxl_emulator``; the
parent injects faults (no reply, a wrong checksum on replies, overload, overheat,
voltage...), peeks and pokes registers and counts packets.

Command line (a bus to try the plugin with)::

    servo-sim-sts-emulator --ids 1 2 3 4 5 6     # prints the port, e.g. /dev/pts/5
    servo-sim-sts-emulator --ids 1 2 3 4 5 6 --eeprom arm.json   # a calibration kept
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..model.commands import Command
from ..model.profiles import servo_profile
from . import emulator

BROADCAST_ID = 0xFE
PING, READ, WRITE, REG_WRITE, ACTION, SYNC_READ, SYNC_WRITE = 0x01, 0x02, 0x03, 0x04, 0x05, \
    0x82, 0x83
# fault bits (status packets' error byte, Status register)
VOLTAGE, ANGLE, OVERHEAT, OVERCURRENT, OVERLOAD = 0x01, 0x02, 0x04, 0x08, 0x20

# the memory table (STS3215; the SCS0009 differs where noted)
MODEL_NUMBER, ID, BAUD_RATE, RESPONSE_LEVEL = 3, 5, 6, 8
MIN_POSITION_LIMIT, MAX_POSITION_LIMIT, MAX_TEMPERATURE, MAX_VOLTAGE, MIN_VOLTAGE = 9, 11, 13, \
    14, 15
MAX_TORQUE, UNLOADING_CONDITION, P_COEFFICIENT, D_COEFFICIENT, I_COEFFICIENT = 16, 19, 21, 22, 23
CW_DEAD_ZONE, CCW_DEAD_ZONE = 26, 27
HOMING_OFFSET, OPERATING_MODE = 31, 33  # STS only
TORQUE_ENABLE, ACCELERATION, GOAL_POSITION, GOAL_TIME, GOAL_SPEED = 40, 41, 42, 44, 46
TORQUE_LIMIT, LOCK = 48, 55  # SCS: Lock at 48, no Torque Limit
SCS_LOCK = 48
PRESENT_POSITION, PRESENT_SPEED, PRESENT_LOAD, PRESENT_VOLTAGE = 56, 58, 60, 62
PRESENT_TEMPERATURE, STATUS, MOVING, PRESENT_CURRENT = 63, 65, 66, 69
TABLE_SIZE = 87
EEPROM_FIRST, RAM_FIRST, READ_ONLY_FIRST = 5, 40, 56
#: the EEPROM bytes a servo keeps across power cycles in --eeprom's file
KEPT = range(ID, RAM_FIRST)
#: files written before the ID was kept start at the byte after it
KEPT_WITHOUT_ID = ID + 1

STS3215, SCS0009 = 777, 1284
#: address -> (size, default) of what each series holds (unlisted bytes read 0)
STS_TABLE: dict[int, tuple[int, int]] = {
    0: (1, 3), 1: (1, 10), MODEL_NUMBER: (2, STS3215), ID: (1, 1), BAUD_RATE: (1, 0),
    RESPONSE_LEVEL: (1, 1), MIN_POSITION_LIMIT: (2, 0), MAX_POSITION_LIMIT: (2, 4095),
    MAX_TEMPERATURE: (1, 70), MAX_VOLTAGE: (1, 80), MIN_VOLTAGE: (1, 40),
    MAX_TORQUE: (2, 1000), UNLOADING_CONDITION: (1, OVERHEAT | OVERCURRENT | OVERLOAD),
    P_COEFFICIENT: (1, 32), D_COEFFICIENT: (1, 32), I_COEFFICIENT: (1, 0),
    CW_DEAD_ZONE: (1, 1), CCW_DEAD_ZONE: (1, 1),  # steps (Waveshare ST3215 register map)
    HOMING_OFFSET: (2, 0), OPERATING_MODE: (1, 0), TORQUE_ENABLE: (1, 0),
    ACCELERATION: (1, 0), GOAL_POSITION: (2, 2048), GOAL_TIME: (2, 0), GOAL_SPEED: (2, 0),
    TORQUE_LIMIT: (2, 1000), LOCK: (1, 1), PRESENT_POSITION: (2, 2048),
    PRESENT_SPEED: (2, 0), PRESENT_LOAD: (2, 0), PRESENT_VOLTAGE: (1, 74),
    PRESENT_TEMPERATURE: (1, 30), STATUS: (1, 0), MOVING: (1, 0), PRESENT_CURRENT: (2, 0),
}
SCS_TABLE: dict[int, tuple[int, int]] = {
    **{a: v for a, v in STS_TABLE.items()
       if a not in (HOMING_OFFSET, OPERATING_MODE, TORQUE_LIMIT, LOCK, PRESENT_CURRENT)},
    MODEL_NUMBER: (2, SCS0009), MAX_POSITION_LIMIT: (2, 1023), GOAL_POSITION: (2, 512),
    PRESENT_POSITION: (2, 512), SCS_LOCK: (1, 1),
}
#: sign-magnitude fields: address -> the sign bit
STS_SIGNS = {HOMING_OFFSET: 11, GOAL_POSITION: 15, GOAL_SPEED: 15, PRESENT_POSITION: 15,
             PRESENT_SPEED: 15, PRESENT_LOAD: 10, PRESENT_CURRENT: 15}
SCS_SIGNS = {GOAL_SPEED: 15, PRESENT_SPEED: 15, PRESENT_LOAD: 10}

#: the motor inside: the STS3215-7.4V profile's stall torque (N*m) and no-load speed
#: (rad/s), the servo_sim/model/profiles.yaml entry names their sources; 2.7 A stall current
_STS3215 = servo_profile("STS3215-7.4V").motor
STALL_TORQUE = _STS3215["max_torque"]
NO_LOAD_SPEED = _STS3215["max_velocity"]
STALL_CURRENT = 2.7  # A
CURRENT_UNIT = 0.0065  # A per Present Current unit
INERTIA = 0.002  # kg*m^2: the horn and a light link
P_PER_GAIN = 3.2  # P Coefficient per unit of the model's P gain
ACCELERATION_UNIT = 100  # steps/s^2 per Acceleration unit
STEP_MS = 2  # the model's time step (with --servo: emulator.PROFILE_STEP_MS)


def checksum(body: bytes) -> int:
    """``~(ID + LEN + INSTR + PARAMS) & 0xFF`` of the bytes after the header."""
    return ~sum(body) & 0xFF


def packet(servo_id: int, instruction_or_error: int, params: bytes = b"") -> bytes:
    """A whole packet (instruction or status): header, id, length, ..., checksum."""
    body = bytes((servo_id, len(params) + 2, instruction_or_error)) + params
    return b"\xff\xff" + body + bytes((checksum(body),))


def to_sign_magnitude(value: int, bit: int) -> int:
    return (-value) | (1 << bit) if value < 0 else value


def from_sign_magnitude(raw: int, bit: int) -> int:
    return -(raw & ~(1 << bit)) if raw & (1 << bit) else raw


class Servo:
    """One servo's memory table; its motor is ``bus.sim``'s motor ``s<id>``."""

    def __init__(self, servo_id: int, scs: bool = False) -> None:
        self.id, self.scs = servo_id, scs
        self.order = "big" if scs else "little"
        self.layout = SCS_TABLE if scs else STS_TABLE
        self.signs = SCS_SIGNS if scs else STS_SIGNS
        self.ticks_per_rev = 1024 if scs else 4096
        self.table = bytearray(TABLE_SIZE)
        for address, (size, default) in self.layout.items():
            self.put(address, size, default)
        self.put(ID, 1, servo_id)
        self.faults = 0
        self.pending: tuple[int, bytes] | None = None  # a reg write, until ACTION
        self.lock = SCS_LOCK if scs else LOCK
        #: what the servo's EEPROM keeps (KEPT): written while Lock is 0
        self.kept = bytes(self.table[KEPT.start:KEPT.stop])

    def raw(self, address: int, size: int) -> int:
        return int.from_bytes(self.table[address:address + size], self.order)

    def get(self, address: int, size: int) -> int:
        """A field's value (sign-magnitude fields decoded)."""
        raw = self.raw(address, size)
        return from_sign_magnitude(raw, self.signs[address]) if address in self.signs else raw

    def put(self, address: int, size: int, value: int) -> None:
        if address in self.signs:
            value = to_sign_magnitude(int(value), self.signs[address])
        self.table[address:address + size] = (int(value) & ((1 << 8 * size) - 1)).to_bytes(
            size, self.order)

    def write(self, address: int, data: bytes) -> bool:
        """A write's effect: read-only bytes (below 5 and from 56 on) are left alone.
        Whether it changed what the EEPROM keeps (a KEPT byte, Lock 0)."""
        for k, byte in enumerate(data):
            if EEPROM_FIRST <= address + k < min(READ_ONLY_FIRST, TABLE_SIZE):
                self.table[address + k] = byte
        if self.faults & self.get(UNLOADING_CONDITION, 1):
            self.put(TORQUE_ENABLE, 1, 0)  # unloaded until the fault is gone
        kept = bytes(self.table[KEPT.start:KEPT.stop])
        if self.get(self.lock, 1) == 0 and kept != self.kept:
            self.kept = kept
            return True
        return False


class Bus(emulator.EmulatedBus):
    """Servos on one bus: turns instruction packets into status packets, and moves the
    motors inside in wall-clock time (or on the parent's clock)."""

    TICK_S = 0.02  # serve() calls tick() at least this often
    STEPPABLE = True

    def __init__(self, ids: list[int], scs: list[int] | tuple[int, ...] = (),
                 fields: dict[str, Any] | None = None, eeprom: Path | None = None,
                 per_servo: dict[int, dict[str, Any]] | None = None,
                 arm: emulator.Arm | None = None) -> None:
        """``per_servo``: motor fields of some servos over ``fields``; ``arm``: the
        servos are an arm's joints (see :class:`servo_sim.emulators.emulator.Arm`)."""
        super().__init__(ids)
        self.servos = {i: Servo(i, i in scs) for i in ids}
        self.eeprom = eeprom
        #: with a servo profile (``--servo``): its fields and the firmware's own law
        self.profiled = bool(fields)
        self.model = emulator.ModelMotors(
            ids, {"inertia": INERTIA, **fields} if fields else {
                "max_torque": STALL_TORQUE, "max_velocity": NO_LOAD_SPEED, "inertia": INERTIA},
            emulator.PROFILE_STEP_MS if fields else STEP_MS, per_servo, arm)
        self.sim, self.motors = self.model.sim, self.model.motors
        first = self.model.config
        self.stall, self.no_load = first.max_force, first.max_velocity
        if self.profiled:  # the registers start at the profile's model number and gains
            p, i_, d = (round(g) for g in first.actuator.gains)
            number = emulator.model_number(fields)
            for s in self.servos.values():
                if number is not None and not s.scs:
                    s.put(MODEL_NUMBER, 2, number)
                s.put(P_COEFFICIENT, 1, p)
                s.put(D_COEFFICIENT, 1, d)
                s.put(I_COEFFICIENT, 1, i_)
                s.kept = bytes(s.table[KEPT.start:KEPT.stop])
        if eeprom is not None and eeprom.exists():
            self._load_eeprom(eeprom)
        self._route()
        for i in ids:
            self._apply(i)
            self._present(i)

    # ------------------------------------------------------------------ the model

    def settle(self, seconds: float) -> None:
        """Let the motors move for ``seconds`` of model time at once (see
        :meth:`servo_sim.emulators.emulator.ModelMotors.settle`)."""
        self.model.settle(seconds)
        for i in self.servos:
            self._present(i)

    def _rad(self, servo: Servo, ticks: float) -> float:
        """Raw encoder ticks (2048 = 0 rad for an STS, 512 for an SCS) -> model rad."""
        middle = servo.ticks_per_rev // 2
        return (ticks - middle) * 2.0 * math.pi / servo.ticks_per_rev

    def _apply(self, i: int) -> None:
        """The registers' commands to the motor inside (each model command only when its
        value changed: a command costs the model a refresh)."""
        s = self.servos[i]
        rad_per_tick = 2.0 * math.pi / s.ticks_per_rev
        limit = s.get(MAX_TORQUE, 2) if s.scs else min(s.get(MAX_TORQUE, 2),
                                                        s.get(TORQUE_LIMIT, 2))
        on = s.get(TORQUE_ENABLE, 1) == 1 and not s.faults & s.get(UNLOADING_CONDITION, 1)
        acceleration = s.get(ACCELERATION, 1)
        speed = s.get(GOAL_SPEED, 2) * rad_per_tick
        mode = 0 if s.scs else s.get(OPERATING_MODE, 1)
        if mode == 0:
            goal = s.get(GOAL_POSITION, 2)
            low, high = s.get(MIN_POSITION_LIMIT, 2), s.get(MAX_POSITION_LIMIT, 2)
            if low or high:
                goal = max(low, min(high, goal))
            offset = 0 if s.scs else s.get(HOMING_OFFSET, 2)
            position = self._rad(s, goal + offset)
            velocity = min(abs(speed), self.no_load) if speed else self.no_load
        else:
            position = math.inf
            velocity = max(-self.no_load, min(self.no_load, speed)) if mode == 1 else 0.0
        gains = (s.get(P_COEFFICIENT, 1), s.get(I_COEFFICIENT, 1), s.get(D_COEFFICIENT, 1))
        commands = {
            Command.AVAILABLE_TORQUE: (min(limit, 1000) / 1000.0 * self.stall if on else 0.0,),
            Command.ACCELERATION: (acceleration * ACCELERATION_UNIT * rad_per_tick
                                 if acceleration else -1.0,),
            Command.POSITION: (position,), Command.VELOCITY: (velocity,)}
        if self.profiled:  # the firmware's P/D/I, in its units, and its dead zone (the
            # model's is one band both ways: the wider of the two registers)
            commands["actuator.gains"] = gains
            commands["actuator.deadband"] = (max(s.get(CW_DEAD_ZONE, 1),
                                                 s.get(CCW_DEAD_ZONE, 1)) * rad_per_tick,)
        else:
            commands[Command.CONTROL_PID] = (gains[0] / P_PER_GAIN, 0.0, 0.0)
        self.model.drive_motor(i, commands)

    def _present(self, i: int) -> None:
        """The motor inside to the Present registers."""
        s, motor = self.servos[i], self.motors[i]
        per_rad = s.ticks_per_rev / (2.0 * math.pi)
        raw = s.ticks_per_rev // 2 + motor.position * per_rad
        present = round(raw - (0 if s.scs else s.get(HOMING_OFFSET, 2)))
        limited = s.get(MIN_POSITION_LIMIT, 2) or s.get(MAX_POSITION_LIMIT, 2)
        if s.scs or (s.get(OPERATING_MODE, 1) == 0 and limited):  # 0/0: multi-turn
            present %= s.ticks_per_rev
        s.put(PRESENT_POSITION, 2, present)
        s.put(PRESENT_SPEED, 2, round(motor.velocity * per_rad))
        load = max(-1000, min(1000, round(motor.motor_force / self.stall * 1000)))
        s.put(PRESENT_LOAD, 2, 1000 if s.faults & OVERLOAD else load)
        if not s.scs:
            current = abs(load) / 1000.0 * STALL_CURRENT / CURRENT_UNIT
            s.put(PRESENT_CURRENT, 2, round(current))
        s.put(MOVING, 1, int(abs(motor.velocity) * per_rad > 10))

    def tick(self) -> None:
        """Step the model up to now (wall-clock time), at most MAX_CATCH_UP_S at once;
        on the parent's clock (``--stepped``) nothing: an instruction that reads moves it
        (:meth:`handle`)."""
        self.catch_up_unless_stepped()

    # ------------------------------------------------------------------ the protocol

    def _reply(self, i: int, params: bytes = b"", as_id: int | None = None) -> bytes:
        """Servo ``i``'s status packet, from its id (``as_id``: the one it had when the
        instruction came, as after a write of its ID)."""
        if i in self.silent:
            return b""
        servo = self.servos[i]
        return self.garbled(packet(servo.get(ID, 1) if as_id is None else as_id,
                                   servo.faults, params))

    def _write(self, i: int, address: int, data: bytes) -> None:
        if self.servos[i].write(address, data) and self.eeprom is not None:
            self._save_eeprom(self.eeprom)
        if address <= ID < address + len(data):
            self._route()
        self._apply(i)

    def _route(self) -> None:
        """Which servos answer each id: their ID registers."""
        self.answering: dict[int, list[int]] = {}
        for i, servo in self.servos.items():
            self.answering.setdefault(servo.get(ID, 1), []).append(i)

    def _at(self, servo_id: int) -> list[int]:
        """The servos (by their ``--ids``) whose ID register is ``servo_id``."""
        return self.answering.get(servo_id, [])

    # ------------------------------------------------------------------ --eeprom

    def _load_eeprom(self, path: Path) -> None:
        """The kept bytes of each servo of ``path`` (ValueError naming the file and
        servo where it cannot be read)."""
        try:
            saved = json.loads(path.read_text())
            first = saved.get("first_address") if isinstance(saved, dict) else None
            if first not in (KEPT.start, KEPT_WITHOUT_ID):
                raise ValueError(f"not a servo_sim STS EEPROM file (first_address "
                                 f"{KEPT.start}, or {KEPT_WITHOUT_ID} from before the ID "
                                 f"was kept)")
            for key, values in saved.get("servos", {}).items():
                servo = self.servos.get(int(key))
                if servo is None:
                    continue  # a servo not on this bus (--ids)
                kept = bytes(values)
                if len(kept) != KEPT.stop - first:
                    raise ValueError(f"servo {key}: {len(kept)} bytes, expected "
                                     f"{KEPT.stop - first}")
                servo.table[first:KEPT.stop] = kept
                servo.kept = bytes(servo.table[KEPT.start:KEPT.stop])
        except (OSError, ValueError, TypeError) as exc:
            raise ValueError(f"--eeprom {path}: {exc}") from None

    def _save_eeprom(self, path: Path) -> None:
        """Every servo's kept bytes to ``path`` (written whole, then renamed)."""
        saved = {"first_address": KEPT.start,
                 "servos": {str(i): list(s.kept) for i, s in self.servos.items()}}
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(saved, indent=1) + "\n")
        os.replace(partial, path)

    def handle(self, servo_id: int, instruction: int, params: bytes) -> bytes:
        """The bytes the bus sends back for one (checksum-verified) instruction (serve()
        has stepped the motors up to now just before; on the parent's clock, an
        instruction that reads steps them here)."""
        self.counts[f"0x{instruction:02x}"] += 1
        if self.model.parent_time is not None and instruction in (READ, SYNC_READ, PING):
            self.catch_up()  # stepped: to the parent's time, every write before in force
        if instruction == SYNC_READ and servo_id == BROADCAST_ID and len(params) >= 2:
            address, size = params[0], params[1]
            out = b""
            for asked in params[2:]:
                servos = self._at(asked)
                if not servos or any(i in self.silent or self.servos[i].scs for i in servos):
                    break  # those after a silent one (an SCS: no sync read) wait for it
                for i in servos:
                    out += self._reply(i, bytes(self.servos[i].table[address:address + size]))
            return out
        if instruction == SYNC_WRITE and servo_id == BROADCAST_ID and len(params) >= 2:
            address, size = params[0], params[1]
            # each servo finds its id once, as the packet arrives (ids may change in it)
            writes = [(i, params[k + 1:k + 1 + size])
                      for k in range(2, len(params) - size, size + 1)
                      for i in self._at(params[k]) if i not in self.silent]
            for i, data in writes:
                self._write(i, address, data)
            return b""
        targets = list(self.servos) if servo_id == BROADCAST_ID else self._at(servo_id)
        out = b""
        for i in targets:
            s = self.servos[i]
            was = s.get(ID, 1)  # a write of the ID is answered from the id written to
            answer = instruction in (PING, READ) or s.get(RESPONSE_LEVEL, 1) == 1
            if instruction == READ and len(params) == 2:
                out += self._reply(i, bytes(s.table[params[0]:params[0] + params[1]]))
                continue
            if instruction == WRITE and params:
                self._write(i, params[0], params[1:])
            elif instruction == REG_WRITE and params:
                s.pending = (params[0], params[1:])
            elif instruction == ACTION and s.pending is not None:
                self._write(i, *s.pending)
                s.pending = None
            elif instruction != PING:
                continue  # not an instruction of this servo: no reply
            if answer:
                out += self._reply(i, as_id=was)
        # a broadcast is answered by nobody, a broadcast ping by every servo (LeRobot's
        # setup finds a servo that way)
        return out if servo_id != BROADCAST_ID or instruction == PING else b""

    def feed(self, buffer: bytearray) -> bytes:
        """Consume every whole packet at the front of ``buffer``; the replies."""
        out = b""
        while True:
            start = buffer.find(b"\xff\xff")
            if start < 0:
                del buffer[:max(0, len(buffer) - 1)]
                return out
            del buffer[:start]
            if len(buffer) >= 3 and buffer[2] == 0xFF:
                del buffer[:1]  # FF FF FF: the header is the last two
                continue
            if len(buffer) < 4:
                return out
            length = buffer[3]
            if length < 2:
                del buffer[:2]
                continue
            if len(buffer) < 4 + length:
                return out
            frame = bytes(buffer[:4 + length])
            del buffer[:4 + length]
            if checksum(frame[2:-1]) != frame[-1]:
                self.counts["checksum_error"] += 1
                continue  # ignored, as a real servo does
            out += self.handle(frame[2], frame[4], frame[5:-1])

    # ------------------------------------------------------------------ the parent

    def catch_up(self) -> None:
        if self.model.advance(time.monotonic(), self.frozen):
            for i in self.servos:
                self._present(i)

    def device_time(self) -> float:
        return self.sim.time

    def device_control(self, kind: str, args: list) -> Any:
        """fault (see :class:`EmulatorProcess`)."""
        if kind == "fault":
            servo_id, bits = args
            s = self.servos[servo_id]
            s.faults = bits
            s.put(STATUS, 1, bits)
            s.put(PRESENT_VOLTAGE, 1, s.get(MIN_VOLTAGE, 1) - 1 if bits & VOLTAGE else 74)
            s.put(PRESENT_TEMPERATURE, 1,
                  s.get(MAX_TEMPERATURE, 1) + 1 if bits & OVERHEAT else 30)
            s.write(TORQUE_ENABLE, b"")  # unloads if the fault is one that does
            self._apply(servo_id)
        else:
            return super().device_control(kind, args)
        return None

    def register_set(self, servo_id: int, address: int, value: int) -> None:
        s = self.servos[servo_id]
        if address == PRESENT_POSITION:  # move the motor inside there
            offset = 0 if s.scs else s.get(HOMING_OFFSET, 2)
            self.sim.bank.position[list(self.servos).index(servo_id)] = \
                self._rad(s, value + offset)
        elif address < PRESENT_POSITION:
            if address == ID:
                self._route()
            self._apply(servo_id)


class EmulatorProcess(emulator.EmulatorProcess):
    """The emulated Feetech bus in a child process; ``port`` is the path to open
    (``realtime``, ``stepped``: see :class:`servo_sim.emulators.emulator.EmulatorProcess`)."""

    MODULE = "servo_sim.emulators.sts_emulator"
    WHAT = "Feetech emulator"

    def __init__(self, ids: list[int], scs: list[int] | tuple[int, ...] = (),
                 realtime: bool = False, servo: str | None = None,
                 fields: dict[str, Any] | None = None, eeprom: Path | None = None,
                 stepped: bool = False) -> None:
        super().__init__(["--ids", *map(str, ids)] + (["--scs", *map(str, scs)] if scs
                                                        else [])
                         + emulator.profile_args(servo, fields)
                         + (["--eeprom", str(eeprom)] if eeprom is not None else []),
                         realtime, stepped)

    def fault(self, servo_id: int, bits: int) -> None:
        """A fault condition (VOLTAGE, OVERHEAT, OVERLOAD... or'ed; 0 ends it): in the
        Status register and every status packet; the servo unloads for those in its
        Unloading Condition (overheat, over-current, overload)."""
        self._ask("fault", servo_id, bits)


def _bus(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Bus:
    unknown = sorted(set(args.scs) - set(args.ids))
    if unknown:
        parser.error(f"--scs {unknown[0]}: not one of --ids")
    return Bus(args.ids, args.scs, args.fields, args.eeprom)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scs", type=int, nargs="*", default=[],
                        help="those ids are SCS0009 servos (big-endian), not STS3215")
    parser.add_argument("--eeprom", type=Path, metavar="FILE",
                        help="keep the servos' EEPROM (written while Lock is 0: id, "
                             "calibration, limits, gains) in FILE across restarts, as real "
                             "servos do")


def main(argv: list[str] | None = None) -> int:
    """``servo-sim-sts-emulator --ids 1 2``: print the port, serve until Ctrl-C."""
    return emulator.main(argv, __doc__.split("\n\n")[0], _bus, _options)


if __name__ == "__main__":
    sys.exit(main())
