"""Wall-clock pacing of simulation steps, without ROS.

Step ``k`` after the origin is due at ``origin + k * step / real_time_factor``: absolute
times, so late ticks never make the pace drift. When more than ``max_catch_up`` steps
are due at once, the machine cannot keep up: that many run, and simulated time slips
(the origin moves on by the whole periods not run) instead of spiralling. The slip keeps
the phase of the due times, so a host's timer started in phase with them stays so.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

#: The most steps one call may ask for before the pacer lets simulated time slip.
MAX_CATCH_UP_STEPS = 100


class Pacer:
    """When steps of ``step_s`` simulated seconds are due at ``real_time_factor``."""

    def __init__(self, step_s: float, real_time_factor: float,
                 clock: Callable[[], float] = time.monotonic,
                 max_catch_up: int = MAX_CATCH_UP_STEPS) -> None:
        if not (step_s > 0 and math.isfinite(step_s)):
            raise ValueError(f"step_s = {step_s!r}: must be finite and > 0")
        self.step_s, self.clock, self.max_catch_up = step_s, clock, max_catch_up
        self.overruns = 0  #: times simulated time slipped
        self.set_real_time_factor(real_time_factor)

    @property
    def real_time_factor(self) -> float:
        return self._rtf

    @property
    def period(self) -> float:
        """Wall seconds per step (0 when free-running)."""
        return self.step_s / self._rtf if self._rtf > 0 else 0.0

    def set_real_time_factor(self, real_time_factor: float) -> None:
        """Pace at a new factor (0 = as fast as possible) from now on."""
        if not (real_time_factor >= 0 and math.isfinite(real_time_factor)):
            raise ValueError(f"real_time_factor = {real_time_factor!r}: must be finite, >= 0")
        self._rtf = real_time_factor
        self.rebase()

    def rebase(self) -> None:
        """Count from now: the next step is due one period from now (after a pause)."""
        self._origin = self.clock()
        self._done = 0  # steps taken since the origin

    def due(self) -> int:
        """How many steps to take now; they are counted as taken.

        Free-running (factor 0) has no due times: 0. Beyond ``max_catch_up`` steps
        behind, ``max_catch_up`` are returned, an overrun is counted and the steps
        beyond them are skipped: the next one is due at the next due time on the same
        grid (in phase with a host timer; moving the origin to now would put the due
        times anywhere between two timer events, so that each tick found its step up
        to a period late).
        """
        if self._rtf <= 0:
            return 0
        now = self.clock()
        # floor with a hair of slack: k * period / period may land just below k
        n = math.floor((now - self._origin) / self.period + 1e-9) - self._done
        if n > self.max_catch_up:
            self.overruns += 1
            self._origin += (n - self.max_catch_up) * self.period
            n = self.max_catch_up
        n = max(n, 0)
        self._done += n
        return n

    def next_due(self) -> float:
        """The clock time at which the next step is due (now, when free-running)."""
        if self._rtf <= 0:
            return self.clock()
        return self._origin + (self._done + 1) * self.period

    def lateness(self) -> float:
        """How far behind its due time the last step taken is, seconds (>= 0 is late)."""
        return self.clock() - (self._origin + self._done * self.period)
