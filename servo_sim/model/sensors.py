"""Sampled sensors for a bank of motors (Webots sampling-period semantics).

A sensor enabled with period ``p`` ms at simulated time ``t0`` refreshes on the first
step whose time ``t`` satisfies ``t - t0 >= p``, then ``p`` ms after each refresh (so
a period that is not a multiple of the basic time step is rounded up to one). Before
its first refresh, or while disabled (period 0), a reading is NaN.
"""

from __future__ import annotations

import numpy as np


class SampledSensors:
    """One sensor per motor: sampling periods, last refresh times and held values."""

    def __init__(self, periods_ms: np.ndarray) -> None:
        n = len(periods_ms)
        self.period_ms = np.asarray(periods_ms, dtype=np.int64).copy()
        self.last_ms = np.zeros(n, dtype=np.int64)
        self.value = np.full(n, np.nan)
        #: the motors refreshed at time ``refreshed_ms`` (the last time any refreshed)
        self.refreshed = np.zeros(0, dtype=np.intp)
        self.refreshed_ms = -1
        self._next_due_ms = 0
        #: every motor's sensor, for a refresh of all at once
        self.everyone = np.arange(n, dtype=np.intp)
        self._update_next_due()

    def enable(self, index: int, period_ms: int, now_ms: int) -> None:
        """(Re)start sampling motor ``index`` every ``period_ms`` (0 disables it)."""
        self.period_ms[index] = period_ms
        self.last_ms[index] = now_ms
        self.value[index] = np.nan
        self._update_next_due()

    def due(self, now_ms: int) -> np.ndarray | None:
        """Indices of the sensors that refresh at ``now_ms`` (None when there are none)."""
        if now_ms < self._next_due_ms:
            return None
        if self._together:  # one period, refreshed together: all again, one period on
            self.last_ms.fill(now_ms)
            self.refreshed, self.refreshed_ms = self.everyone, now_ms
            self._next_due_ms = now_ms + self._period
            return self.everyone
        enabled = self.period_ms > 0
        idx = np.flatnonzero(enabled & (now_ms - self.last_ms >= self.period_ms))
        self.last_ms[idx] = now_ms
        self.refreshed, self.refreshed_ms = idx, now_ms
        self._update_next_due()
        return idx

    def _update_next_due(self) -> None:
        enabled = self.period_ms > 0
        #: every sensor enabled with one period and last refreshed at one time
        self._together = bool(enabled.all()) and len(enabled) > 0 and bool(
            (self.period_ms == self.period_ms[0]).all() and (self.last_ms == self.last_ms[0]).all())
        self._period = int(self.period_ms[0]) if self._together else 0
        if enabled.any():
            self._next_due_ms = int((self.last_ms[enabled] + self.period_ms[enabled]).min())
        else:
            self._next_due_ms = np.iinfo(np.int64).max


def measure_position(true_position: np.ndarray, noise: np.ndarray, resolution: np.ndarray,
                     rng: np.random.Generator) -> np.ndarray:
    """A position reading: Gaussian noise (std ``noise``), then quantisation to ``resolution``.

    ``resolution`` -1 means infinite resolution; noise 0 draws nothing from ``rng``.
    """
    value = true_position.copy()
    noisy = noise > 0
    if noisy.any():
        value[noisy] += rng.standard_normal(int(noisy.sum())) * noise[noisy]
    quantised = resolution > 0
    if quantised.all():  # every one (an encoder each): rint is round's own
        value /= resolution
        np.rint(value, value)
        value *= resolution
    elif quantised.any():
        r = resolution[quantised]
        value[quantised] = np.round(value[quantised] / r) * r
    return value
