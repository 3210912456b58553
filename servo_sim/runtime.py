"""The runtime: the one handle on a running system, without ROS.

:meth:`Runtime.open` makes one from a config: its :class:`~servo_sim.hardware.HardwareSystem`
(the model, or a hardware plugin) and its pacing. The runtime owns the system's start
(:meth:`Runtime.start`, with the retries a bus needs) and its shutdown
(:meth:`Runtime.close`); every command, parameter change and e-stop goes through it and
the hardware system's check; hosts read the motors through it (:meth:`Runtime.motor`, a
read-only :class:`~servo_sim.model.view.MotorView`; :attr:`Runtime.readings`). It is
the only thing a host holds, and nothing public on it reaches the model's Motors, the
simulation or the hardware system: a command has one way in, :meth:`Runtime.command`,
named by its row of the command table (``Command.POSITION``).

It advances by control cycles and says what each one did (:class:`Cycle`: the sensors that
refreshed, whether joint states are due, the moves that ended or owe feedback, whether
the device was read); it pauses, resumes, steps, resets and changes the real-time factor.
A simulation may do all of that; real hardware runs in real time, one cycle at a time
with its measured period, and refuses pause, step, reset and any other factor than 1.

Every host is a thin shell over it: the ROS node (:meth:`Runtime.tick` from a timer,
publishing what each cycle reports), the Robot Raconteur door, ``servo-sim
run``/``step-response``/``record``, the Webots controller session (:meth:`Runtime.cycle`,
which waits for the cycle's due time).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from .hardware import START_ATTEMPTS, HardwareSystem
from .hardware.servo_state import ServoStates, servo_states
from .hardware.system import CommandRefusedError
from .model import SimulationConfig
from .model.commands import MotorCommand
from .model.safety import Move
from .model.view import MotorView
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


class StartError(RuntimeError):
    """The hardware did not start (:meth:`Runtime.start`); the message says which and why.
    The system is shut down when it is raised."""


class Readings:
    """What a host reads of every motor, in motor order (:attr:`Runtime.readings`): the
    model's state now, as read-only views of its rows (commands go through the
    :class:`Runtime`). The model writes its rows in place each step and at a reset: a
    view kept follows the state; to keep a value across a step, keep a copy."""

    __slots__ = ("_bank",)

    def __init__(self, bank: Any) -> None:
        self._bank = bank

    @staticmethod
    def _read_only(values: np.ndarray) -> np.ndarray:
        view = values.view()
        view.flags.writeable = False
        return view

    @property
    def names(self) -> list[str]:
        return self._bank.names

    @property
    def time_ms(self) -> int:
        return self._bank.time_ms

    @property
    def position(self) -> np.ndarray:
        return self._read_only(self._bank.position)

    @property
    def velocity(self) -> np.ndarray:
        return self._read_only(self._bank.velocity)

    @property
    def effort(self) -> np.ndarray:
        """The motors' force or torque (N or N*m)."""
        return self._read_only(self._bank.motor_force)

    @property
    def energy(self) -> np.ndarray:
        """Energy each motor consumed since the start, J."""
        return self._read_only(self._bank.energy)

    @property
    def command_timeout_ms(self) -> np.ndarray:
        return self._read_only(self._bank.command_timeout_ms)

    def sensor_period_ms(self, sensor: str) -> np.ndarray:
        """Sampling periods of ``sensor`` (a name in :data:`SENSORS`), ms (0: disabled)."""
        return self._read_only(getattr(self._bank, sensor).period_ms)

    def refreshed(self, sensor: str) -> tuple[np.ndarray, np.ndarray]:
        """(indices of the motors whose ``sensor`` refreshed in the last cycle, every
        motor's value of it)."""
        sampled = getattr(self._bank, sensor)
        return self._read_only(sampled.refreshed), self._read_only(sampled.value)


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


#: a Cycle made without the named tuple's Python-level ``__new__`` (one per cycle:
#: tuple.__new__ skips its argument handling, about half the cost)
_new_cycle = tuple.__new__


class Runtime:
    """One running system (see the module docstring)."""

    def __init__(self, system: HardwareSystem, *, real_time_factor: float = 1.0,
                 paused: bool = False, joint_states_rate: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._system = system  # not public: its sim's Motors would skip the check
        self._sim = system.sim
        # one view per motor, made once: a Motor handle lives as long as its simulation
        self._views = {m.name: MotorView(m) for m in system.sim.motors}
        #: the motors' state, read-only (see :class:`Readings`)
        self.readings = Readings(system.sim.bank)
        if not system.simulated and (real_time_factor != 1.0 or paused):
            raise RealTimeError(
                f"{self.real_time()}: " + ("it cannot start paused" if paused else
                                           f"real_time_factor {real_time_factor:g}: only 1"))
        self._clock, self._sleep = clock, sleep
        self._pacer = Pacer(self._sim.basic_time_step_ms / 1000.0, real_time_factor, clock)
        self._paused = paused
        self._started = False  # paced from the first cycle, not from construction
        self._last_wall: float | None = None  # real hardware: when the last cycle ran
        self._joint_states_rate = 0.0
        self._next_joint_states_ms = 0.0
        self.set_joint_states_rate(joint_states_rate)
        self._moves: dict[Move, int] = {}  # watched move -> its next feedback time, ms

    @classmethod
    def open(cls, config: SimulationConfig, *, real_time_factor: float | None = None,
             paused: bool = False, joint_states_rate: float = 0.0,
             clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep) -> Runtime:
        """The running system of ``config``: its hardware system, made but not started
        (:meth:`start`), paced at ``real_time_factor`` (default: as fast as possible
        for a simulation, 1 for real hardware). A refused setting
        (:class:`RealTimeError`) shuts the system down before it is raised."""
        system = HardwareSystem(config)
        if real_time_factor is None:
            real_time_factor = 0.0 if system.simulated else 1.0
        try:
            return cls(system, real_time_factor=real_time_factor, paused=paused,
                       joint_states_rate=joint_states_rate, clock=clock, sleep=sleep)
        except BaseException:
            system.shutdown()
            raise

    def start(self, *, attempts: int | None = None, required: bool = True) -> bool:
        """Start the hardware: ``attempts`` tries (default: 1 for a simulation,
        START_ATTEMPTS for a real device, whose bus may miss a reply as it opens).
        ``required``: a start that fails shuts the system down and raises
        :class:`StartError` naming the hardware and why; else False is returned and the
        cycles try again (see HardwareSystem.cycle)."""
        if attempts is None:
            attempts = 1 if self.simulated else START_ATTEMPTS
        if self._system.start(attempts=attempts):
            return True
        if required:
            why = self._system.component.reason or "it did not start"
            self.close()
            raise StartError(f"hardware {self.plugin_name!r}: {why}")
        return False

    def close(self) -> None:
        """Shut the hardware down (a real device's torque off); again: nothing."""
        self._system.shutdown()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what it runs

    @property
    def config(self) -> SimulationConfig:
        """The config in force (run-time parameter changes included)."""
        return self._sim.config

    @property
    def plugin_name(self) -> str:
        return self._system.plugin_name

    @property
    def hardware_state(self) -> str:
        """The hardware's lifecycle state: unconfigured, inactive, active or finalized."""
        return self._system.state.value

    @property
    def active(self) -> bool:
        return self._system.active

    @property
    def reason(self) -> str:
        """Why the hardware is not active or failed last ("" when it is fine)."""
        return self._system.component.reason or ""

    @property
    def settings(self) -> Any:
        """The hardware plugin's own settings (its SETTINGS: name -> description)."""
        return self._system.component.SETTINGS

    @property
    def step_ms(self) -> int:
        """The basic time step, ms."""
        return self._sim.basic_time_step_ms

    @property
    def time_ms(self) -> int:
        return self._sim.time_ms

    @property
    def time(self) -> float:
        """The cycle time, s (simulated time; cycles x step on real hardware)."""
        return self._sim.time

    @property
    def motor_names(self) -> list[str]:
        return self._sim.motor_names

    def __len__(self) -> int:
        return len(self._sim)

    def motor(self, name: str) -> MotorView:
        """Motor ``name``, read-only (its getters and state); its commands go through
        :meth:`command`. KeyError for an unknown name."""
        view = self._views.get(name)
        if view is None:
            self._sim.motor(name)  # raises the KeyError naming the known motors
        return view  # type: ignore[return-value]

    @property
    def motors(self) -> list[MotorView]:
        """Every motor, read-only, in motor order."""
        return list(self._views.values())

    def capabilities(self, motor: str) -> int:
        """What the device of ``motor`` can take (hardware Capabilities flags)."""
        return int(self._system.component.capabilities(self._sim.motor_names.index(motor)))

    def report(self) -> tuple[np.ndarray, np.ndarray]:
        """(mode, flags) of every motor: the model's state with the device's flags."""
        return self._system.report()

    def status(self, reported: tuple[np.ndarray, np.ndarray] | None = None
               ) -> list[tuple[int, str]]:
        """Per motor, (diagnostic level 0/1/2, why)."""
        return self._system.status(reported)

    def telemetry(self, index: int) -> dict[str, str]:
        """The device's own readings of motor ``index`` (e.g. voltage, temperature)."""
        return self._system.component.telemetry(index)

    def servo_states(self) -> ServoStates:
        """Every motor's servo state, one consistent sample (arrays of their own)."""
        return servo_states(self._system)

    # ------------------------------------------------------------------ commands

    def command(self, motor: str, command: MotorCommand, *args: Any) -> Any:
        """``command`` (a row of the command table, e.g. ``Command.POSITION``) to
        ``motor`` with ``args``, through the hardware system's check:
        CommandRefusedError (a ValueError) naming motor, command and why where the
        hardware cannot take it now; the model's ValueError for a bad value. Either way
        nothing changes. What the command returns (a trapezoidal move's Move)."""
        return self._system.command(motor, command, *args)

    def check(self, motor: str, command: MotorCommand, args: tuple[Any, ...] = ()) -> None:
        """Raise CommandRefusedError unless ``command`` can go to ``motor`` now;
        nothing is commanded."""
        self._system.check(self._sim.motor(motor), command.name, args)

    def set_parameter(self, motor: str, field: str, value: Any) -> None:
        """Change one config field of ``motor`` at run time, through the same check as
        the command it mirrors (``control_pid``)."""
        self._system.set_parameter(motor, field, value)

    def e_stop(self) -> None:
        """Every motor off and latched until :meth:`reset_e_stop`."""
        self._sim.e_stop()

    def reset_e_stop(self) -> None:
        self._sim.reset_e_stop()

    # ------------------------------------------------------------------ settings

    @property
    def simulated(self) -> bool:
        """True for a simulation: it may pause, step, reset and run at any factor."""
        return self._system.simulated

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
        return f"hardware {self._system.plugin_name!r} runs in real time"

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
        self._next_joint_states_ms = self._sim.time_ms

    # ------------------------------------------------------------------ control

    @property
    def paused(self) -> bool:
        """Whether cycles wait for :meth:`step` (:meth:`pause`, :meth:`resume`)."""
        return self._paused

    def pause(self) -> None:
        """Stop the cycles (a simulation only: real hardware refuses)."""
        self._refuse_real()
        self._paused = True

    def resume(self) -> None:
        """Run again, paced from now."""
        self._paused = False
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
        if not self._paused:
            raise ValueError("only while paused (call ~/pause first)")
        if n < 0:
            raise ValueError("must be >= 0")
        return self.advance(n)

    def reset(self) -> tuple[Move, ...]:
        """Back to the initial state, t = 0 (a simulation); the watched moves it ended."""
        self._refuse_real()
        self._system.reset()
        self._next_joint_states_ms = 0.0
        self._pacer.rebase()
        return self.poll_moves()[0]

    # ------------------------------------------------------------------ moves

    def watch(self, move: Move) -> None:
        """Report ``move`` in the cycles: feedback every FEEDBACK_PERIOD_MS (the first
        now, see :meth:`poll_moves`), then its end."""
        self._moves[move] = self._sim.time_ms

    def poll_moves(self) -> tuple[tuple[Move, ...], tuple[Move, ...]]:
        """(the watched moves that ended, those owing feedback now); ended moves are no
        longer watched. Cycles call it; hosts too where no cycle runs (paused, a goal
        just started or canceled)."""
        if not self._moves:
            return _NONE, _NONE
        now = self._sim.time_ms
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
        read = self._system.cycle(period)
        bank = self._sim.bank
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
        if self._paused:
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
