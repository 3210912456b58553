"""One motor as a ``com.robotraconteur.servo.Servo`` service object.

Every member goes through the runtime (``Runtime.command`` and
``set_parameter``: the command table's check, the model's validation), as the other
doors do; a refusal is one Robot Raconteur exception with the model's message (motor,
field, value, why): ``InvalidOperationException`` for a command the motor's state or
device refuses, ``InvalidArgumentException`` for a bad value.

Modes (``mode``): ``disabled`` is ``disable``; ``halt`` is ``enable`` from disabled, else
``halt``; ``position_command`` holds where the motor stands (its held target, or its
position) with the full speed limit; ``velocity_command`` holds at velocity 0;
``effort_command`` applies 0. ``trapezoidal_command`` is entered by ``trapezoidal_move``
and ``error`` is reported by the device: writing either is refused.

The command wires follow robotraconteur_abstract_robot's rule: a command is taken only in
its mode and only if its ``seqno`` is not below the last one taken from the same client
endpoint (the count restarts with a new endpoint), its ``status_seqno`` is within
:data:`STATUS_WINDOW` samples of the ``servo_state`` seqno now (the samples the door
sent: every cycle's while it keeps up), and it holds one value. A
dropped command changes nothing, is logged (motor, field, value, why) and clears
``valid_command`` until a command is taken again.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import RobotRaconteur as RR  # noqa: N817 - the name its docs use

from ..model import Command, CommandRefusedError, MotorCommand, MotorView, ServoMode, StateFlags
from ..model.motor import ROTATIONAL
from ..runtime import Runtime
from . import info, params

log = logging.getLogger("servo_sim")

#: How far a command's status_seqno may be from the servo_state seqno now
#: (robotraconteur_abstract_robot: 10).
STATUS_WINDOW = 10
#: A value on a read-only wire is given to a client connecting later for this many of
#: the runtime's periods only (the door sends only to wires with clients, so the last
#: value sent may be seconds old): then the client waits for the next sample.
FRESH_PERIODS = 4
#: The modes a command wire streams in, and its field's name in the messages.
WIRE_MODES = {"position_command": ServoMode.POSITION, "velocity_command": ServoMode.VELOCITY,
              "effort_command": ServoMode.EFFORT}
#: Seed 004's names of the modes, as ``mode`` takes them.
MODE_NAMES = {ServoMode.ERROR: "error", ServoMode.DISABLED: "disabled",
              ServoMode.HALT: "halt", ServoMode.POSITION: "position_command",
              ServoMode.VELOCITY: "velocity_command", ServoMode.EFFORT: "effort_command",
              ServoMode.TRAPEZOIDAL: "trapezoidal_command"}
#: How often a wire's drops of one kind are logged at most, s (another kind: at once).
DROP_LOG_PERIOD_S = 5.0
#: The numbers in a drop's message (seqnos, values): masked, what is left is its kind
NUMBER = re.compile(r"(?<![\w.])-?(?:\d[\d.]*(?:e[-+]?\d+)?|nan|inf)(?!\w)")


def rr_error(exc: ValueError) -> Exception:
    """The Robot Raconteur exception a client gets for a refusal (same message)."""
    if isinstance(exc, CommandRefusedError):
        return RR.InvalidOperationException(str(exc))
    return RR.InvalidArgumentException(str(exc))


def effort_command(motor: MotorView) -> MotorCommand:
    """The effort command of a motor: torque (rotational) or force."""
    return Command.TORQUE if motor.get_type() == ROTATIONAL else Command.FORCE


def write_mode(runtime: Runtime, motor: str, value: Any) -> None:
    """Mode ``value`` (seed 004 ``ServoMode``) for ``motor`` through the hardware
    runtime's commands (see the module docstring); ValueError when refused."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or int(value) not in MODE_NAMES:
        raise ValueError(f"motor {motor!r}: mode = {value!r} rejected: not a ServoMode "
                         f"({', '.join(f'{int(m)} {n}' for m, n in MODE_NAMES.items())})")
    mode = ServoMode(int(value))
    handle = runtime.motor(motor)
    if mode is ServoMode.DISABLED:
        runtime.command(motor, Command.DISABLE)
    elif mode is ServoMode.HALT:
        runtime.command(motor, Command.ENABLE if handle.mode is ServoMode.DISABLED
                        else Command.HALT)
    elif mode is ServoMode.POSITION:
        held = handle.get_target_position()
        if handle.mode not in (ServoMode.HALT, ServoMode.POSITION) or not math.isfinite(held):
            held = handle.position / handle.get_multiplier()
        runtime.command(motor, Command.POSITION, held)
        try:  # the full speed limit, where the device has one
            runtime.check(motor, Command.VELOCITY)
        except CommandRefusedError:
            return
        runtime.command(motor, Command.VELOCITY,
                        handle.get_max_velocity() / abs(handle.get_multiplier()))
    elif mode is ServoMode.VELOCITY:
        runtime.check(motor, Command.POSITION, (math.inf,))  # both, before either changes
        runtime.command(motor, Command.VELOCITY, 0.0)
        runtime.command(motor, Command.POSITION, math.inf)
    elif mode is ServoMode.EFFORT:
        runtime.command(motor, effort_command(handle), 0.0)
    else:
        why = ("entered by trapezoidal_move()" if mode is ServoMode.TRAPEZOIDAL
               else "reported when the device fails, never commanded")
        raise CommandRefusedError(f"motor {motor!r}: mode = {int(mode)} ({MODE_NAMES[mode]}) "
                                  f"refused: {why}")


class CommandWire:
    """One command wire's rule (see the module docstring) and its last outcome."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.mode = WIRE_MODES[name]
        self.endpoint = 0
        self.seqno = 0
        #: False after a dropped command, until one is taken
        self.valid = True
        #: when each kind of drop was last logged, monotonic s
        self._logged: dict[str, float] = {}

    def drop(self, why: str) -> None:
        """A dropped command: ``valid`` cleared; ``why`` logged unless a drop of the same
        kind (the message with its numbers masked: a stale one's seqnos change every
        time) was logged less than DROP_LOG_PERIOD_S ago."""
        self.valid = False
        now, kind = time.monotonic(), NUMBER.sub("#", why)
        if now - self._logged.get(kind, -math.inf) >= DROP_LOG_PERIOD_S:
            self._logged[kind] = now
            log.warning("%s dropped: %s", self.name, why)


class Servo:
    """The service object of one motor (see the module docstring)."""

    # set by Robot Raconteur as it registers the object (an attribute that exists
    # already would be given the bare wire, not its broadcaster or receiver)
    position: Any
    velocity: Any
    servo_state: Any
    servo_state_sensor_data: Any
    position_command: Any
    velocity_command: Any
    effort_command: Any
    device_clock_now: Any

    def __init__(self, door: Any, motor: str, service: str) -> None:
        """``door``: the :class:`~servo_sim.rr.door.Door` serving it."""
        self._door = door
        self._runtime = door.runtime
        self.motor = motor
        self.service = service
        self.index = door.runtime.motor_names.index(motor)
        self._wires = {name: CommandWire(name) for name in WIRE_MODES}
        self._downsampler: Any = None
        self._info = info.device_info(door.types, door.runtime, motor, service)
        self._state: Any = None
        self._sensor_data: Any = None
        self._header: Any = None
        #: which of position, velocity, servo_state, device_clock_now and the pipe have
        #: a client (see :attr:`listened`): only those are sent to
        self._heard = (False,) * 5
        #: whether a client ever asked for a downsample (until then no step is counted:
        #: every client takes every sample)
        self._downsampled = False

    def RRServiceObjectInit(self, context: Any, service_path: str) -> None:  # noqa: N802
        """Robot Raconteur's call once registered: the wires exist now."""
        self._downsampler = RR.BroadcastDownsampler(context, 0)
        for wire in (self.position, self.velocity, self.servo_state, self.device_clock_now):
            self._downsampler.AddWireBroadcaster(wire)
        self._downsampler.AddPipeBroadcaster(self.servo_state_sensor_data)
        # a new client gets no value older than a few periods (the door sends only to
        # wires with clients: the last value sent may be old), and PeekInValue the one
        # now
        fresh = FRESH_PERIODS * self._door.period
        for wire, peek in ((self.position, lambda: np.array([self._peek()[2][0]])),
                           (self.velocity, lambda: np.array([self._peek()[2][1]])),
                           (self.servo_state, self._peek_state),
                           (self.device_clock_now, lambda: self._clock(self._peek()[0]))):
            wire.OutValueLifespan = fresh
            wire.PeekInValueCallback = lambda _endpoint, f=peek: f()
        for name in WIRE_MODES:
            getattr(self, name).InValueChanged += (
                lambda value, ts, ep, n=name: self._on_command(n, value, ep))
        types = self._door.types
        self._state = types.new("com.robotraconteur.servo.ServoState")
        self._sensor_data = types.new("com.robotraconteur.servo.ServoStateSensorData")
        self._sensor_data.extended = {}
        self._header = types.new("com.robotraconteur.sensordata.SensorDataHeader")
        source = types.new("com.robotraconteur.sensordata.SensorDataSourceInfo")
        source.source = self._info.device
        source.source_world_pose = np.zeros((1,), types.pose)
        source.source_config_nonce = ""
        source.source_params = {}
        source.extended = {}
        self._header.source_info = source

    # ------------------------------------------------------------------ refusals

    def _run(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except ValueError as exc:
            log.warning("%s", exc)
            raise rr_error(exc) from None

    # ------------------------------------------------------------------ properties

    @property
    def device_info(self) -> Any:
        return self._info

    @property
    def servo_info(self) -> Any:
        return info.servo_info(self._door.types, self._runtime, self.motor, self.service)

    @property
    def isoch_info(self) -> Any:
        return self._door.isoch_info()

    @property
    def isoch_downsample(self) -> int:
        return self._downsampler.GetClientDownsample(RR.ServerEndpoint.GetCurrentEndpoint())

    @isoch_downsample.setter
    def isoch_downsample(self, value: int) -> None:
        if not 0 <= int(value) <= 1000:
            raise RR.InvalidArgumentException(
                f"motor {self.motor!r}: isoch_downsample = {value!r} rejected: 0 to 1000")
        self._downsampler.SetClientDownsample(RR.ServerEndpoint.GetCurrentEndpoint(),
                                              int(value))
        self._downsampled = self._downsampled or int(value) > 0

    @property
    def mode(self) -> int:
        return int(self._runtime.report()[0][self.index])

    @mode.setter
    def mode(self, value: int) -> None:
        self._run(write_mode, self._runtime, self.motor, value)
        for wire in self._wires.values():  # a new mode: no dropped command in it yet
            wire.valid = True

    # ------------------------------------------------------------------ functions

    def halt(self) -> None:
        """Hold at once (a trapezoidal move in progress ends, aborted)."""
        self._run(self._runtime.command, self.motor, Command.HALT)

    def trapezoidal_move(self, target_pos: Any, target_vel: Any, vel: Any,
                         accel: Any) -> None:
        """Start the model's trapezoidal move (one value per axis: one)."""
        args = []
        for field, value in (("target_position", target_pos), ("target_velocity", target_vel),
                             ("max_velocity", vel), ("max_acceleration", accel)):
            values = np.asarray(value, dtype=float).reshape(-1)
            if values.size != 1:
                raise RR.InvalidArgumentException(
                    f"motor {self.motor!r}: {field} = {values.tolist()!r} rejected: one "
                    f"value per axis (axis_count 1), not {values.size}")
            args.append(float(values[0]))
        self._run(self._runtime.command, self.motor, Command.TRAPEZOIDAL_MOVE, *args)

    def getf_param(self, param_name: str) -> Any:
        value = self._run(params.get, self._runtime, self.motor, param_name)
        return info.to_varvalue(value)

    def setf_param(self, param_name: str, value: Any) -> None:
        self._run(params.set_, self._runtime, self.motor, param_name,
                  None if value is None else value.data)

    def getf_signal(self, signal_name: str) -> Any:
        self._signal(signal_name)
        latched = bool(self._runtime.report()[1][self.index] & StateFlags.E_STOP)
        return RR.VarValue(np.array([latched]), "bool[]")

    def setf_signal(self, signal_name: str, value: Any) -> None:
        self._signal(signal_name)
        data = None if value is None else np.asarray(value.data).reshape(-1)
        if data is None or data.size != 1 or data.dtype.kind not in "biuf" \
                or not np.isfinite(data.astype(float)).all():
            raise RR.InvalidArgumentException(
                f"motor {self.motor!r}: signal {signal_name!r} = "
                f"{params.shown(None if value is None else value.data)} rejected: one "
                "boolean (true latches the e-stop, false releases it)")
        call = Command.E_STOP if bool(data[0]) else Command.RESET_E_STOP
        self._run(self._runtime.command, self.motor, call)

    def _signal(self, name: str) -> None:
        if name != info.E_STOP_SIGNAL:
            raise RR.InvalidArgumentException(
                f"motor {self.motor!r}: signal {name!r} unknown (a servo_sim motor has one: "
                f"{info.E_STOP_SIGNAL!r})")

    # ------------------------------------------------------------------ command wires

    def _on_command(self, name: str, command: Any, endpoint: int) -> None:
        """A value on a command wire (a Robot Raconteur thread): the rule, then the
        model's command through the runtime."""
        wire = self._wires[name]
        if endpoint != wire.endpoint:
            wire.endpoint, wire.seqno = endpoint, 0
        motor = self._runtime.motor(self.motor)
        who = f"motor {self.motor!r}: {name}"
        if command is None:
            wire.drop(f"{who}: no command")
            return
        values = np.asarray(command.command, dtype=float).reshape(-1)
        why = ""
        if command.seqno < wire.seqno:
            why = (f"{who}: seqno = {command.seqno} rejected: below the last taken, "
                   f"{wire.seqno} (out of order)")
        elif not self._door.status_fresh(int(command.status_seqno)):
            why = (f"{who}: status_seqno = {command.status_seqno} rejected: not within "
                   f"{STATUS_WINDOW} samples of servo_state's seqno {self._door.sent[-1]} "
                   "(stale)")
        elif values.size != 1:
            why = (f"{who}: command = {values.tolist()!r} rejected: one value per axis "
                   f"(axis_count 1), not {values.size}")
        elif name == "position_command" and math.isinf(values[0]):
            # (the model's set_position takes +-inf as velocity control at full speed;
            # NaN, and a non-finite velocity or effort, the model refuses itself)
            why = (f"{who} = {float(values[0])!r} rejected: must be finite (a position: "
                   "velocity_command for velocity control)")
        elif motor.mode is not wire.mode:
            why = (f"{who} = {float(values[0])!r} refused: mode is {MODE_NAMES[motor.mode]}, "
                   f"not {name} (write mode first)")
        if why:
            wire.drop(why)
            return
        sent = {"position_command": Command.POSITION,
                "velocity_command": Command.VELOCITY}.get(name) or effort_command(motor)
        try:
            self._runtime.command(self.motor, sent, float(values[0]))
        except ValueError as exc:
            wire.drop(str(exc))
            return
        wire.seqno, wire.valid = int(command.seqno), True

    # ------------------------------------------------------------------ publishing

    def _peek(self) -> tuple[int, Any, tuple[float, ...], int, int]:
        """Now, for PeekInValue: (seqno, ts as TimeSpec3, row, mode, flags)."""
        seqno, microseconds, modes, flags, rows = self._door.peek()
        i = self.index
        return (seqno, self._door.ts3(microseconds), tuple(rows[i].tolist()), int(modes[i]),
                int(flags[i]))

    def _peek_state(self) -> Any:
        state = self._door.types.new("com.robotraconteur.servo.ServoState")
        return self._fill_state(state, *self._peek())

    def _clock(self, seqno: int) -> Any:
        return self._door.device_time(self.device_info, seqno)

    @property
    def listened(self) -> bool:
        """Whether any client is connected to a wire or the pipe (asked anew: the door
        asks every LISTENERS_PERIOD_S; a send costs ~0.1 ms, so only those are sent to)."""
        self._heard = (*(w.ActiveWireConnectionCount > 0 for w in (
            self.position, self.velocity, self.servo_state, self.device_clock_now)),
            self.servo_state_sensor_data.ActivePipeEndpointCount > 0)
        return any(self._heard)

    def flags(self, reported: int) -> int:
        """The reported flags, ``valid_command`` cleared after a dropped command."""
        for wire in self._wires.values():
            if not wire.valid and wire.mode == self._runtime.motor(self.motor).mode:
                return reported & ~int(StateFlags.VALID_COMMAND)
        return reported

    def publish(self, seqno: int, ts: Any, row: tuple[float, ...], mode: int, flags: int,
                ts2: Callable[[], Any], clock_now: Callable[[], Any]) -> None:
        """This cycle's values on the wires and the pipe that have a client (``row``:
        position, velocity, acceleration, effort and the three commands; ``ts``: now as
        TimeSpec3, ``ts2()`` as TimeSpec2, ``clock_now()`` the DeviceTime), downsampled
        per client."""
        on_position, on_velocity, on_state, on_clock, on_pipe = self._heard
        with RR.BroadcastDownsamplerStep(self._downsampler) if self._downsampled \
                else nullcontext():
            if on_position:
                self.position.OutValue = np.array([row[0]])
            if on_velocity:
                self.velocity.OutValue = np.array([row[1]])
            if on_state or on_pipe:
                state = self._fill_state(self._state, seqno, ts, row, mode, flags)
            if on_state:
                self.servo_state.OutValue = state
            if on_clock:
                self.device_clock_now.OutValue = clock_now()
            if on_pipe:
                header = self._header
                header.seqno, header.ts = seqno, ts2()
                data = self._sensor_data
                data.data_header = header
                data.servo_state = state
                self.servo_state_sensor_data.AsyncSendPacket(data, lambda: None)

    def _fill_state(self, state: Any, seqno: int, ts: Any, row: tuple[float, ...],
                    mode: int, flags: int) -> Any:
        state.ts = ts
        state.seqno = seqno
        state.servo_state_flags = self.flags(flags)
        state.mode = mode
        p, v, a, e, pc, vc, ec = (np.array([x]) for x in row)
        state.position, state.velocity, state.acceleration, state.effort = p, v, a, e
        state.position_command, state.velocity_command, state.effort_command = pc, vc, ec
        return state
