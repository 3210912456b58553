"""A serial bus of servos emulated on a pseudo-terminal, run in a child process.

What the device emulators (``dxl_emulator``, ``sts_emulator``) share: the raw pty, the
loop that feeds received bytes to a bus and writes its replies back, and the parent's
handle on the child (:class:`EmulatorProcess`). A bus object provides::

    feed(buffer: bytearray) -> bytes   consume whole packets, return the replies
    control(request: tuple) -> Any     a request from the parent (JSON over a pipe)
    counts: Counter[str]               what it received ('bytes_in', 'bytes_out', ...)
    tick() -> None                     optional: called before each feed and at least
                                       every TICK_S seconds

The vendor SDKs busy-wait for replies while holding the GIL, so a peer thread in the
same process starves: the bus runs in a child process.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import subprocess
import sys
import time
import tty
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..model.commands import MotorCommand
from ..model.config import STANDARD_GRAVITY, flatten
from ..model.profiles import profile_fields

#: SCHED_FIFO priority of a ``realtime`` emulator: above ros2_control's controller manager
#: thread (50), as a device's own processor would be.
REALTIME_PRIORITY = 60


class EmulatedBus:
    """The part of a bus every emulator shares: the servos' ids and what the parent
    asks of any bus (silence some, corrupt replies, freeze the motors, counts)."""

    def __init__(self, ids: Iterable[int]) -> None:
        self.ids = list(ids)
        self.silent: set[int] = set()  # ids that do not answer
        self.corrupt = 0  # the next N status packets get a wrong checksum ...
        self.corrupt_after = 0  # ... once this many more have gone out intact
        self.counts: Counter[str] = Counter()
        self.frozen = False  # the motors inside stand still (present values held)

    #: the motors inside, where they are servo_sim's model (a subclass sets it)
    model: ModelMotors | None = None
    #: the servos by id, each with get(address, size) and put(address, size, value)
    servos: dict[int, Any]
    #: whether the bus can run on its parent's clock (``--stepped``): it moves its
    #: motors to the parent's time as an instruction that reads comes, so that every
    #: command sent before it is in force first
    STEPPABLE = False

    def catch_up(self) -> None:
        """Move the motors inside up to now (the device's own)."""

    def device_time(self) -> float:
        """The motors' own clock, s, after a catch-up: how long they have moved for (it
        stands still while frozen and skips what a starved emulator could not catch up)."""
        raise NotImplementedError

    def catch_up_unless_stepped(self) -> None:
        """Move the motors inside up to now, unless they run on the parent's clock
        (``--stepped``: an instruction that reads moves them)."""
        if self.model is None or self.model.parent_time is None:
            self.catch_up()

    def garbled(self, out: bytes) -> bytes:
        """A status packet as it goes out: its last (checksum) byte wrong while the
        parent's ``corrupt`` lasts."""
        if self.corrupt:
            if self.corrupt_after:
                self.corrupt_after -= 1
                return out
            self.corrupt -= 1
            return out[:-1] + bytes((out[-1] ^ 0xFF,))
        return out

    def device_control(self, kind: str, args: list) -> Any:
        """A request of the device's own (the subclass's)."""
        raise ValueError(f"unknown request {kind!r}")

    def register_set(self, servo_id: int, address: int, value: int) -> None:
        """What follows the parent's ``set`` of a register (the subclass's: the motor
        moved to a Present Position set, an id routed anew)."""

    def control(self, request: tuple) -> Any:
        """A request from the parent process (see :class:`EmulatorProcess`)."""
        kind, *args = request
        if kind == "silence":
            self.silent = set(args[0]) if args[0] is not None else set(self.ids)
        elif kind == "corrupt":
            self.corrupt, self.corrupt_after = args
        elif kind == "freeze":
            self.catch_up()
            self.frozen = bool(args[0])
        elif kind == "counts":
            return dict(self.counts)
        elif kind == "time":
            self.catch_up()
            return self.device_time()
        elif kind == "run_to":
            self.model.parent_time = float(args[0])
        elif kind == "get":
            self.catch_up_unless_stepped()
            servo_id, address, size = args
            return self.servos[servo_id].get(address, size)
        elif kind == "set":
            servo_id, address, size, value = args
            self.servos[servo_id].put(address, size, value)
            self.register_set(servo_id, address, value)
        else:
            return self.device_control(kind, args)
        return None


def main(argv: list[str] | None, description: str, bus: Callable[..., Any],
         options: Callable[[argparse.ArgumentParser], None] = lambda parser: None) -> int:
    """An emulator's command line: ``--ids`` (and the device's ``options``), print the
    port, serve until Ctrl-C; ``bus(args)`` makes the bus from the parsed arguments."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--ids", type=int, nargs="+", default=[1],
                        help="servo ids on the bus (default: 1)")
    parser.add_argument("--servo", metavar="NAME",
                        help="the servos move as this servo profile (servo-sim profiles): "
                             "servo_sim's model with the profile's envelope and firmware law")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        dest="settings", help="with --servo: a motor field of the servos "
                        "over the profile's, e.g. inertia=0.05 or actuator.friction=0.2 "
                        "(what identification should find)")
    options(parser)
    parser.add_argument("--control", action="store_true",
                        help="take JSON control requests on stdin (EmulatorProcess)")
    parser.add_argument("--stepped", action="store_true",
                        help="with --control: the servos move only when the parent runs "
                             "their clock on (EmulatorProcess.run_to), not in wall-clock "
                             "time, for tests that drive time")
    args = parser.parse_args(argv)
    if args.settings and not args.servo:
        parser.error("--set needs --servo")
    try:
        args.fields = profile_fields(args.servo, args.settings)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        device = bus(args, parser)
    except ValueError as exc:  # a bad --servo or --set (the model's message)
        parser.error(str(exc))
    if args.stepped:
        if not args.control:
            parser.error("--stepped needs --control (the parent runs the clock)")
        if not device.STEPPABLE:
            parser.error("--stepped: this emulator cannot run on its parent's clock")
        device.model.hand_clock_to_parent()
    try:
        serve(device, args.control)
    except KeyboardInterrupt:
        pass
    return 0


class ModelMotors:
    """The servos of an emulated bus as motors of servo_sim's model, one per id
    (``s<id>``, each with ``fields``), stepped in wall-clock time (or on a parent's clock:
    :meth:`hand_clock_to_parent`) in steps of ``step_ms`` (with ``--servo``:
    :data:`PROFILE_STEP_MS`)."""

    def __init__(self, ids: Iterable[int], fields: dict[str, Any],
                 step_ms: int = 1, per_id: dict[int, dict[str, Any]] | None = None,
                 arm: Arm | None = None) -> None:
        from ..model import Simulation, parse_config

        ids = list(ids)
        per_id = per_id or {}
        self.step_ms = step_ms
        body = {} if arm is None or arm.model is None else {  # a multibody engine's arm
            "physics": arm.physics, "multibody": {
                "model": arm.model, "joints": {f"s{i}": j for i, j in arm.joints.items()}}}
        self.sim = Simulation(parse_config({
            "basic_time_step_ms": step_ms, **body,
            "motors": [{"name": f"s{i}", **fields, **per_id.get(i, {})} for i in ids]},
            "--servo/--set"))
        # the compiled law loaded before the bus is served: loading it while serving
        # (numba's import holds the GIL) delayed replies past the SDK's timeout
        self.sim.bank.wait_for_compiled_law()
        self.motors = {i: self.sim.motor(f"s{i}") for i in ids}
        self.config = self.sim.config.motors[0]
        self.arm = arm
        self._row = {i: k for k, i in enumerate(ids)}
        self._start = time.monotonic()
        self._applied: dict[int, dict[MotorCommand | str, tuple]] = {}
        #: with a parent's clock (``--stepped``): the time it last ran the motors to, s
        #: of their own clock; wall-clock time then moves nothing
        self.parent_time: float | None = None

    def follow_pose(self) -> None:
        """The arm's joint loads at the servos' present positions (with an ``arm``)."""
        if self.arm is None or self.arm.model is not None:
            return
        bank = self.sim.bank
        loads = self.arm.tree.loads({joint: float(bank.position[self._row[i]])
                                     for i, joint in self.arm.joints.items()},
                                    self.arm.gravity)
        columns = [bank.inertia.copy(), bank.gravity_mass.copy(),
                   bank.gravity_distance.copy(), bank.gravity_angle.copy()]
        for i, joint in self.arm.joints.items():
            f, k = loads[joint], self._row[i]
            load = f["load"]
            for column, value in zip(columns, (f["inertia"], load["gravity_mass"],
                                               load.get("gravity_distance", 0.0),
                                               load.get("gravity_angle", 0.0)), strict=True):
                column[k] = value
        bank.set_loads(*columns)

    def step(self, steps: int) -> None:
        """``steps`` model steps; with an ``arm``, its loads follow the pose every
        :data:`ARM_LOAD_PERIOD_MS`."""
        if self.arm is None or self.arm.model is not None:  # (an engine's body: its own)
            self.sim.step(steps)
            return
        chunk = max(1, ARM_LOAD_PERIOD_MS // self.step_ms)
        while steps > 0:
            self.follow_pose()
            self.sim.step(min(steps, chunk))
            steps -= chunk

    def settle(self, seconds: float) -> None:
        """Let the servos move for ``seconds`` of model time at once (an arm comes to
        rest under its weight before the bus serves), then go on from now."""
        self.step(round(seconds * 1000.0 / self.step_ms))
        self._start = time.monotonic() - self.sim.time

    def hand_clock_to_parent(self) -> None:
        """From now on the motors move only as far as :attr:`parent_time` says, in full
        (no catch-up limit), counted on their own clock from where it stands (a freeze
        skips the time run meanwhile, as in wall-clock time)."""
        self._start = 0.0
        self.parent_time = self.sim.time

    def advance(self, now: float, frozen: bool = False) -> bool:
        """Step the model up to ``now`` (at most MAX_CATCH_UP_S behind); whether it moved.
        With a parent's clock, up to :attr:`parent_time` instead (to the nearest step)."""
        step = self.step_ms / 1000.0
        stepped = self.parent_time is not None
        if stepped:
            now = self.parent_time
            due = round((now - self._start) / step)
        else:
            due = int((now - self._start) / step)
        done = round(self.sim.time / step)
        if frozen or due <= done:
            if frozen:
                self._start = now - self.sim.time
            return False
        cap = due - done if stepped else int(MAX_CATCH_UP_S / step)
        self.step(min(due - done, cap))
        if due - done > cap:  # a starved emulator loses the rest (and only then: the
            self._start = now - self.sim.time  # part of a step not yet due stays due)
        return True

    def drive_motor(self, servo_id: int,
                    commands: dict[MotorCommand | str, tuple]) -> None:
        """Drive one servo's motor from its registers: commands (rows of the command
        table, ``Command.POSITION``) and parameters (``"actuator.gains"``), each only when
        its value changed (a command costs the model a refresh). The emulator is the
        device: its motor takes whatever the registers say, no capability check."""
        applied = self._applied.setdefault(servo_id, {})
        for key, args in commands.items():
            if applied.get(key) == args:
                continue
            if isinstance(key, MotorCommand):
                key.call(self.motors[servo_id], *args)
            else:  # a parameter: one value, or a list (the gains)
                self.sim.set_parameter(f"s{servo_id}", key,
                                       args[0] if len(args) == 1 else list(args))
            applied[key] = args


@dataclass(frozen=True)
class Arm:
    """The servos of an emulated bus as the joints of one arm: their loads (inertia,
    gravity) follow its pose (:mod:`servo_sim.model.chain`), or a multibody engine
    moves the whole arm."""

    tree: Any  # servo_sim.model.chain.KinematicTree
    joints: dict[int, str]  # servo id -> joint name
    gravity: float = STANDARD_GRAVITY
    #: ``physics`` of a multibody engine and the arm's model file for it (a URDF or
    #: MJCF): the engine carries the whole arm (``servo_sim.model.body``); None: each
    #: joint loaded by the tree at the arm's pose
    physics: str = "dynamic"
    model: str | None = None


#: How often an arm's joint loads follow its pose, ms of model time (0.4 ms of
#: computation each: 4 % of a core at 10 ms; a joint at full speed turns 0.05 rad).
ARM_LOAD_PERIOD_MS = 10
#: The model's step with ``--servo``, ms (the firmware's period is our choice, as 1 ms).
PROFILE_STEP_MS = 1
#: The most wall-clock time one catch-up simulates, s (a starved emulator loses the rest).
MAX_CATCH_UP_S = 0.25


def model_number(fields: dict[str, Any] | None) -> int | None:
    """The Model Number the servos of ``--servo NAME`` answer (their profile's, from the
    vendor's table); None without a profile."""
    from ..model.profiles import servo_profile

    return servo_profile(fields["servo"]).model_number if fields and "servo" in fields \
        else None


def profile_args(servo: str | None, fields: dict[str, Any] | None) -> list[str]:
    """The command-line arguments of :func:`profile_fields` (for :class:`EmulatorProcess`)."""
    if servo is None:
        return []
    out = ["--servo", servo]
    for name, value in flatten(fields or {}).items():
        out += ["--set", f"{name}={json.dumps(value)}"]
    return out


def open_pty() -> tuple[int, int, str]:
    """A raw pseudo-terminal pair: (master fd, slave fd, slave path)."""
    master, slave = os.openpty()
    tty.setraw(slave)
    tty.setraw(master)
    return master, slave, os.ttyname(slave)


def serve(bus: Any, control: bool = False) -> None:
    """Run ``bus`` on a new pty; print its path. With ``control``, answer JSON requests
    from stdin on stdout (one per line) until "stop" or end of input."""
    master, slave, path = open_pty()
    print(path, flush=True)
    buffer = bytearray()
    stdin = sys.stdin.fileno()
    watch = [master] + ([stdin] if control else [])
    tick = getattr(bus, "tick", None)
    timeout = getattr(bus, "TICK_S", 1.0)
    pending = b""
    try:
        while True:
            readable, _, _ = select.select(watch, [], [], timeout)
            if tick is not None:
                tick()
            if master in readable:
                chunk = os.read(master, 4096)
                bus.counts["bytes_in"] += len(chunk)
                buffer += chunk
                out = bus.feed(buffer)
                if out:
                    bus.counts["bytes_out"] += len(out)
                    os.write(master, out)
            if control and stdin in readable:
                chunk = os.read(stdin, 4096)
                if not chunk:
                    return
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    request = tuple(json.loads(line))
                    if request == ("stop",):
                        return
                    print(json.dumps(bus.control(request)), flush=True)
    finally:
        os.close(master)
        os.close(slave)


def _raise_priority(pid: int) -> None:
    """SCHED_FIFO for ``pid`` if allowed, else nice -5 if allowed, else nothing."""
    try:
        os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
        return
    except (PermissionError, OSError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, pid, -5)
    except PermissionError:
        pass  # an ordinary user: the emulator runs at the usual priority


class EmulatorProcess:
    """An emulated bus in a child process (``python -m MODULE --control ARGS``);
    ``port`` is the path to open.

    ``realtime`` runs the child under SCHED_FIFO where that is allowed (root, or
    CAP_SYS_NICE), else at nice -5 where that is, else as usual: servos have processors of
    their own and always answer in time, while an emulator starved by a busy machine
    misses the SDK's packet timeout (about 34 ms). Measured on 2 cores while a
    ros2_control stack started beside it: at nice -5 a sync read went unanswered in 1 run
    of 6, again and again for seconds. The child blocks in ``select`` between packets, so
    the priority costs the rest of the machine only the packets' work.

    ``stepped`` hands the servos' clock to the parent: they stand until :meth:`run_to`
    moves them on, so a recording stamped by the same clock does not depend on how the
    machine schedules the two processes.
    """

    #: the emulator's module and what it emulates (for messages); set by subclasses
    MODULE = ""
    WHAT = "emulator"

    def __init__(self, args: list[str], realtime: bool = False, stepped: bool = False) -> None:
        self.stepped = stepped
        self._process = subprocess.Popen(
            [sys.executable, "-m", self.MODULE, "--control", *args]
            + (["--stepped"] if stepped else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if realtime:
            _raise_priority(self._process.pid)
        self.port: str = self._line("start")

    def _line(self, what: str) -> str:
        ready, _, _ = select.select([self._process.stdout], [], [], 30.0)
        line = self._process.stdout.readline() if ready else ""
        if not line:
            self.close()
            raise RuntimeError(f"the {self.WHAT} did not answer {what} within 30 s")
        return line.strip()

    def _ask(self, *request: Any) -> Any:
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        return json.loads(self._line(repr(request)))

    def silence(self, ids: list[int] | None = None) -> None:
        """Those servos (all if None) stop answering; ``silence([])`` ends it."""
        self._ask("silence", ids)

    def corrupt(self, n: int = 1, after: int = 0) -> None:
        """The next ``n`` status packets carry a wrong checksum (once ``after`` more have
        gone out intact: a fault that reaches one instruction of a cycle)."""
        self._ask("corrupt", n, after)

    def freeze(self, frozen: bool = True) -> None:
        """Stop (or restart) the motors inside: present values stay as set."""
        self._ask("freeze", frozen)

    def get(self, servo_id: int, address: int, size: int) -> int:
        """A register of a servo, read behind the bus's back."""
        return self._ask("get", servo_id, address, size)

    def set(self, servo_id: int, address: int, size: int, value: int) -> None:
        self._ask("set", servo_id, address, size, value)

    def time(self) -> float:
        """The servos' own clock, s (see :meth:`EmulatedBus.device_time`): what a test
        waits on when it means "after the servo has moved for so long", since the
        emulated servos move in wall-clock time, not in the plugin's cycles."""
        return self._ask("time")

    def run_to(self, t: float) -> None:
        """With ``stepped``: the servos move on to the parent's time ``t`` s (to the
        nearest model step, 1 ms with a servo profile) as the next instruction that reads
        comes, after every packet sent before it, and stand there until the next call
        (time run while frozen is skipped, as in wall-clock time). Time a test drives, as
        a simulator's step; :meth:`time` moves them at once and says their clock (after a
        long run, so that the next read's answer is not late for the SDK's timeout)."""
        if not self.stepped:
            raise RuntimeError(f"run_to({t!r}): the {self.WHAT} was not started stepped; "
                               "its servos move in wall-clock time")
        if not math.isfinite(t):
            raise ValueError(f"run_to({t!r}): the time must be a finite number of seconds")
        self._ask("run_to", t)

    def counts(self) -> dict[str, int]:
        """Packets received by instruction ('0x82' sync read...), checksum errors, and
        the bytes received from and sent to the plugin ('bytes_in', 'bytes_out')."""
        return self._ask("counts")

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._process.stdin.write(json.dumps(["stop"]) + "\n")
                self._process.stdin.close()
                self._process.wait(10.0)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._process.stdout.close()

    def __enter__(self) -> EmulatorProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
