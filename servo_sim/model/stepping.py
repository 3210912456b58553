"""One step of a system, in one place: the order every step follows.

A step of the motors is, in this order:

1. **supervise** - the watchdog, halting ramps and trapezoidal set-points
   (``MotorBank._supervise``, the model's ``safety``);
2. **read** - the state one step on: the body's physics for a simulation
   (:meth:`Stepper.physics`), a device's ``read()`` for real hardware (which first
   notes the velocity its joint acceleration will differ from:
   ``MotorBank._measure_acceleration_over``);
3. **advance the clock** one basic time step (``MotorBank._advance_clock``);
4. **sample the sensors** due at the new time (``MotorBank._sample_sensors``);
5. **write** - the commands out to a device (nothing for a simulation).

:class:`Stepper` is that sequence, and the only public way to advance a bank: its verbs
are :meth:`~Stepper.step` (one step), :meth:`~Stepper.run` (``n`` steps) and
:meth:`~Stepper.physics` (a simulation's read); the bank's parts of a step are private
and called only from here. The bank steps with its own (``bank.stepper``; read: the
physics, no write); a hardware system (``servo_sim/hardware/system.py``) gives one its
plugin's read and write, the ``sim`` plugin's read being the same physics, so that a
simulation steps to the same bits through either. A failed read skips the sensors and the write; a
device that is not connected only lets the clock run. :meth:`Stepper.run` is ``n``
steps, where the body runs steps in a loop of its own (MuJoCo's, with the compiled law)
as few calls as the sensors allow: the same steps to the bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

#: a read or write of one step: ``(period s) -> whether it succeeded``
Transfer = Callable[[float], bool]
#: the most steps of one run of the body's loop (:meth:`Stepper.run`): the bank's lock is
#: held for a run, and commands from other threads wait for it (100: about 1.3 ms of one
#: SO-101)
RUN_STEPS = 100


class Stepped(Protocol):
    """What a step needs of the motors (``MotorBank``'s private parts of a step and its
    clock)."""

    lock: Any  # a threading.RLock
    dt: float
    step_ms: int
    time_ms: int
    supervisor: Any
    position_sensor: Any
    force_sensor: Any
    _body_loop: Callable[..., tuple] | None

    def _supervise(self) -> None: ...
    def _measure_acceleration_over(self, period: float) -> None: ...
    def _step_physics(self) -> None: ...
    def _run_body_loop(self, steps: int) -> None: ...
    def _advance_clock(self, steps: int = 1) -> None: ...
    def _sample_sensors(self) -> None: ...


class Stepper:
    """Advances a motor bank by steps: supervise -> read -> clock -> sensors -> write.

    ``read`` is a device's read (None, the default: the physics, :meth:`physics`);
    ``write`` sends the commands to a device (None: nothing to send); ``measure``: a
    real device's read, whose joint acceleration is measured over the step's period.
    """

    __slots__ = ("bank", "measure", "read", "write")

    def __init__(self, bank: Stepped, read: Transfer | None = None,
                 write: Transfer | None = None, *, measure: bool = False) -> None:
        self.bank = bank
        #: None: the physics (called directly: the per-joint step costs a few us)
        self.read = read
        self.write = write
        self.measure = measure

    def physics(self) -> None:
        """The state one basic time step on (position, velocity, motor force, energy), not
        the clock nor the sensors: a simulation's read (the ``sim`` plugin's ``read()``).
        The caller holds the bank's lock."""
        self.bank._step_physics()

    def step(self, period: float | None = None, connected: bool = True) -> bool:
        """One step (``period``: the real time it spans, default the basic time step);
        not ``connected`` (a device not active): only the clock. Whether the state was
        read. The caller holds the bank's lock."""
        bank = self.bank
        read = False
        if connected:
            bank._supervise()
            if self.read is None:  # the physics, one basic time step
                bank._step_physics()
                read = True
            else:
                if period is None:
                    period = bank.dt
                if self.measure:  # (the physics keeps the previous velocity itself)
                    bank._measure_acceleration_over(period)
                read = self.read(period)
        bank._advance_clock()
        if read:
            bank._sample_sensors()
            if self.write is not None:
                self.write(bank.dt if period is None else period)
        return read

    def run(self, n: int) -> None:
        """``n`` steps of a simulation, each under the bank's lock; where the body runs
        steps in a loop of its own (``bank._body_loop``) and the supervisor has nothing to do,
        the steps up to the next sensor refresh (at most :data:`RUN_STEPS`) in one run
        of it, under one hold of the lock: commands come between runs."""
        bank = self.bank
        lock = bank.lock
        if bank._body_loop is None:  # no run of the body's: step by step
            step = self.step
            for _ in range(n):
                with lock:
                    step()
            return
        while n > 0:
            with lock:
                if bank.supervisor.busy:
                    self.step()
                    n -= 1
                    continue
                due = min(bank.position_sensor.next_due_ms, bank.force_sensor.next_due_ms)
                steps = min(n, RUN_STEPS, max(1, -((bank.time_ms - due) // bank.step_ms)))
                bank._run_body_loop(steps)
                bank._advance_clock(steps)
                bank._sample_sensors()
                n -= steps
