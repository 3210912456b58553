"""Recording a servo's response to :func:`servo_sim.identification.fit.excitation` through any
hardware plugin (``servo-sim record``): a real bus, an emulated one or the model.

Each cycle: the command for now is written and the position read in the same
cycle, so a row ``(time, command, position)`` is the position measured at ``time`` and
the command that takes effect from ``time``. On a real bus the cycles run at the
config's basic time step in wall-clock time, each row stamped with the host's monotonic
clock as its cycle ends: the write of the command is the cycle's last act, the position
was read just before it (on the emulated STS3215 bus, stamps at the cycle's start put
the command a millisecond early, 5 % of the fitted friction and inertia); with the
``sim`` plugin, in simulated time as fast as possible. The runtime (``servo_sim.runtime``) runs
the cycles and paces them.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import numpy as np

from ..model import Command, SimulationConfig
from ..runtime import Runtime, StartError
from .fit import EXCITATION_S, Recording, excitation


class RecordError(ValueError):
    """The device could not be recorded; the message says why."""


def record(config: SimulationConfig, motor: str, amplitude: float = 0.5,
           duration: float = EXCITATION_S, *,
           clock: Callable[[], float] = time.monotonic,
           sleep: Callable[[float], None] = time.sleep) -> Recording:
    """Drive ``motor`` through the excitation around where it stands; its recording.

    ``clock`` and ``sleep`` pace and stamp the cycles on a real bus (the host's monotonic
    clock): a device whose time the caller drives (a stepped emulator) gets its own."""
    runtime = Runtime.open(config, clock=clock, sleep=sleep)
    try:
        try:
            runtime.start()  # as servo-sim run starts it
        except StartError as exc:
            raise RecordError(str(exc)) from None
        handle = runtime.motor(motor)
        simulated = runtime.simulated
        if not simulated:
            runtime.cycle()  # the first read: where it stands
        center = handle.position
        dt = runtime.step_ms / 1000.0
        start = None  # the first cycle's time: the recording's 0
        rows = []
        steps = round(duration / dt)
        for k in itertools.count():
            runtime.wait()
            if simulated:
                t = k * dt
            else:
                now = clock()
                start = now if start is None else start
                t = now - start
            if (k >= steps) if simulated else (t > duration - dt / 2):
                break  # a late cycle on a real bus shortens the recording, not shifts it
            before = handle.position
            command = float(excitation(t, amplitude, center))
            runtime.command(motor, Command.POSITION, command)
            if not runtime.cycle(wait=False).read:
                raise RecordError(f"hardware {runtime.plugin_name!r}: "
                                  f"{runtime.reason or 'the read failed'}")
            if simulated:
                rows.append((t, command, before))
            else:  # stamped as the cycle ends, when its command was written
                rows.append((clock() - start, command, handle.position))
    finally:
        runtime.close()
    t, command, position = np.array(rows).T
    return Recording(t - t[0], command, position)
