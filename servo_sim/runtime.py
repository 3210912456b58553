"""The runtime: the one way into a running system, without ROS.

A :class:`Runtime` owns a :class:`~servo_sim.hardware.HardwareSystem` and its pacing. It
advances by control cycles and says what each one did (:class:`Cycle`: the sensors that
refreshed, whether joint states are due, the moves that ended or owe feedback, whether
the device was read); it pauses, resumes, steps, resets and changes the real-time factor.
A simulation may do all of that; real hardware runs in real time, one cycle at a time
with its measured period, and refuses pause, step, reset and any other factor than 1.

Every host is a thin shell over it: the ROS node (:meth:`Runtime.tick` from a timer,
publishing what each cycle reports), ``servo-sim run``, the Webots controller session and
the recorder (:meth:`Runtime.cycle`, which waits for the cycle's due time).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from .hardware import HardwareSystem
from .hardware.system import CommandRefusedError
from .model.safety import Move
from .pacing import Pacer

#: Wall time one :meth:`Runtime.tick` may spend stepping when running as fast as possible.
FREE_RUN_SLICE_S = 0.005
#: Cycles run between clock reads when running as fast as possible.
FREE_RUN_BATCH = 10
#: How often (cycle time) a watched move owes feedback.
FEEDBACK_PERIOD_MS = 50
#: The sensors of every motor, as the bank's SampledSensors attributes.
SENSORS = ("position_sensor", "force_sensor")

_NONE: tuple[Move, ...] = ()
#: (position sensor refreshed, force sensor refreshed) -> the names in Cycle.refreshed
_REFRESHED = {(False, False): (), (True, False): (SENSORS[0],), (False, True): (SENSORS[1],),
              (True, True): SENSORS}


class RealTimeError(CommandRefusedError):
    """Pause, step, reset or a real-time factor asked of hardware that runs in real time."""


class Cycle(NamedTuple):
    """What one control cycle did (a named tuple: one is made per cycle, thousands a
    second)."""

    #: the time the cycle ended at, ms (simulated time, or cycles x step on real hardware)
    time_ms: int
    #: the sensors (names in :data:`SENSORS`) that refreshed this cycle
    refreshed: tuple[str, ...]
    #: joint states are due (at the joint-states rate, in cycle time)
    joint_states: bool
    #: watched moves that ended, and those owing feedback (see :meth:`Runtime.watch`)
    ended: tuple[Move, ...] = _NONE
    feedback: tuple[Move, ...] = _NONE
    #: the device was read this cycle (False: it failed or is recovering)
    read: bool = True


#: a Cycle made without the named tuple's Python-level ``__new__`` (0.24 -> 0.11 us)
_new_cycle = tuple.__new__


class Runtime:
    """One running system (see the module docstring)."""

    def __init__(self, system: HardwareSystem, *, real_time_factor: float = 1.0,
                 paused: bool = False, joint_states_rate: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.system = system
        self.sim = system.sim
        if not system.simulated and (real_time_factor != 1.0 or paused):
            raise RealTimeError(
                f"{self.real_time()}: " + ("it cannot start paused" if paused else
                                           f"real_time_factor {real_time_factor:g}: only 1"))
        self._clock, self._sleep = clock, sleep
        self._pacer = Pacer(self.sim.basic_time_step_ms / 1000.0, real_time_factor, clock)
        self.paused = paused
        self._started = False  # paced from the first cycle, not from construction
        self._last_wall: float | None = None  # real hardware: when the last cycle ran
        self._joint_states_rate = 0.0
        self._next_joint_states_ms = 0.0
        self.set_joint_states_rate(joint_states_rate)
        self._moves: dict[Move, int] = {}  # watched move -> its next feedback time, ms

    # ------------------------------------------------------------------ settings

    @property
    def simulated(self) -> bool:
        """True for a simulation: it may pause, step, reset and run at any factor."""
        return self.system.simulated

    @property
    def real_time_factor(self) -> float:
        return self._pacer.real_time_factor

    @property
    def period(self) -> float:
        """Wall seconds per cycle (0: as fast as possible)."""
        return self._pacer.period

    @property
    def overruns(self) -> int:
        """Times the pace could not be kept and simulated time slipped."""
        return self._pacer.overruns

    def lateness(self) -> float:
        """How far behind its due time the last paced cycle ran, s (>= 0: late)."""
        return self._pacer.lateness()

    def real_time(self) -> str:
        """Why a simulation-only request is refused."""
        return f"hardware {self.system.plugin_name!r} runs in real time"

    def _refuse_real(self) -> None:
        if not self.simulated:
            raise RealTimeError(self.real_time())

    def set_real_time_factor(self, factor: float) -> None:
        """Pace at ``factor`` from now on (0: as fast as possible); real hardware: only 1."""
        if factor != 1.0:
            self._refuse_real()
        self._pacer.set_real_time_factor(factor)

    def set_joint_states_rate(self, rate: float) -> None:
        """Joint states due every 1/``rate`` s of cycle time, from now (0: never)."""
        if not (rate >= 0 and math.isfinite(rate)):
            raise ValueError(f"joint_states_rate = {rate!r}: must be finite and >= 0")
        self._joint_states_rate = rate
        self._next_joint_states_ms = self.sim.time_ms

    # ------------------------------------------------------------------ control

    def pause(self) -> None:
        self._refuse_real()
        self.paused = True

    def resume(self) -> None:
        """Run again, paced from now."""
        self.paused = False
        self._pacer.rebase()

    @property
    def pacing(self) -> bool:
        """Whether the pace has started (the first tick or wait starts it)."""
        return self._started

    def start_pacing(self) -> None:
        """Pace from now: the next cycle due one period from now (a host whose timer
        fires every period resets it with this, to keep both in phase)."""
        self._started = True
        self._pacer.rebase()

    def step(self, n: int) -> Iterator[Cycle]:
        """``n`` cycles, only while paused (a simulation): checked now, each cycle run
        as the returned iterator is consumed."""
        self._refuse_real()
        if not self.paused:
            raise ValueError("only while paused (call ~/pause first)")
        if n < 0:
            raise ValueError("must be >= 0")
        return self.advance(n)

    def reset(self) -> tuple[Move, ...]:
        """Back to the initial state, t = 0 (a simulation); the watched moves it ended."""
        self._refuse_real()
        self.system.reset()
        self._next_joint_states_ms = 0.0
        self._pacer.rebase()
        return self.poll_moves()[0]

    # ------------------------------------------------------------------ moves

    def watch(self, move: Move) -> None:
        """Report ``move`` in the cycles: feedback every FEEDBACK_PERIOD_MS (the first
        now, see :meth:`poll_moves`), then its end."""
        self._moves[move] = self.sim.time_ms

    def poll_moves(self) -> tuple[tuple[Move, ...], tuple[Move, ...]]:
        """(the watched moves that ended, those owing feedback now); ended moves are no
        longer watched. Cycles call it; hosts too where no cycle runs (paused, a goal
        just started or canceled)."""
        if not self._moves:
            return _NONE, _NONE
        now = self.sim.time_ms
        ended = tuple(m for m in self._moves if m.done)
        for m in ended:
            del self._moves[m]
        feedback = tuple(m for m, due in self._moves.items() if now >= due)
        for m in feedback:
            self._moves[m] = max(self._moves[m] + FEEDBACK_PERIOD_MS, now)
        return ended, feedback

    # ------------------------------------------------------------------ advancing

    def advance(self, n: int, period: float | None = None) -> Iterator[Cycle]:
        """``n`` cycles now (``period``: the real time since the last, default one step)."""
        for _ in range(n):
            yield self._cycle(period)

    def _cycle(self, period: float | None) -> Cycle:
        read = self.system.cycle(period)
        bank = self.sim.bank
        now = bank.time_ms
        refreshed = _REFRESHED[bank.position_sensor.refreshed_ms == now,
                               bank.force_sensor.refreshed_ms == now]
        due = self._joint_states_rate > 0 and now >= self._next_joint_states_ms
        if due:
            self._next_joint_states_ms = max(
                self._next_joint_states_ms + 1000.0 / self._joint_states_rate, now + 1e-9)
        if self._moves:
            ended, feedback = self.poll_moves()
            return _new_cycle(Cycle, (now, refreshed, due, ended, feedback, read))
        return _new_cycle(Cycle, (now, refreshed, due, _NONE, _NONE, read))

    def _real_period(self) -> float | None:
        """Real hardware: the wall time since the last cycle (None for the first)."""
        now = self._clock()
        last, self._last_wall = self._last_wall, now
        return None if last is None else now - last

    def tick(self) -> Iterator[Cycle]:
        """The cycles due now, without waiting (a host's timer calls it every
        :attr:`period`): none while paused; on real hardware one, with its measured
        period; as fast as possible, as many as FREE_RUN_SLICE_S allows; else those due
        by now at the real-time factor (past MAX_CATCH_UP_STEPS simulated time slips:
        see :attr:`overruns`)."""
        if self.paused:
            return
        if not self.simulated:
            yield self._cycle(self._real_period())
            return
        if not self._started:
            self.start_pacing()
        cycle = self._cycle
        if self.real_time_factor > 0:
            for _ in range(self._pacer.due()):
                yield cycle(None)
            return
        end = self._clock() + FREE_RUN_SLICE_S
        while self._clock() < end:
            for _ in range(FREE_RUN_BATCH):  # (one generator a tick: thousands of cycles
                yield cycle(None)  # a second as fast as possible)

    def wait(self) -> None:
        """Sleep until the next cycle is due (paced; as fast as possible: at once); a
        late host lets simulated time slip, no burst of catch-up cycles follows."""
        if self.real_time_factor > 0:
            if not self._started:
                self.start_pacing()
            wait = self._pacer.next_due() - self._clock()
            if wait > 0:
                self._sleep(wait)
            self._pacer.due()

    def cycle(self, wait: bool = True) -> Cycle:
        """One cycle, once it is due (see :meth:`wait`; ``wait=False``: now, the host
        waited already): for hosts that run the loop themselves."""
        if wait:
            self.wait()
        return self._cycle(None if self.simulated else self._real_period())
