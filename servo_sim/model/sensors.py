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
        self.period_ms = np.zeros(n, dtype=np.int64)
        self.last_ms = np.zeros(n, dtype=np.int64)
        self.value = np.full(n, np.nan)
        #: every motor's sensor, for a refresh of all at once
        self.everyone = np.arange(n, dtype=np.intp)
        self.restart(periods_ms)

    def restart(self, periods_ms: np.ndarray) -> None:
        """Time 0 again, sampling every ``periods_ms`` (per motor), nothing read yet: in
        place (a reset)."""
        self.period_ms[...] = periods_ms
        self.last_ms[...] = 0
        self.value[...] = np.nan
        #: the motors refreshed at time ``refreshed_ms`` (the last time any refreshed)
        self.refreshed = np.zeros(0, dtype=np.intp)
        self.refreshed_ms = -1
        self._next_due_ms = 0
        self._update_next_due()

    def enable(self, index: int, period_ms: int, now_ms: int) -> None:
        """(Re)start sampling motor ``index`` every ``period_ms`` (0 disables it)."""
        self.period_ms[index] = period_ms
        self.last_ms[index] = now_ms
        self.value[index] = np.nan
        self._update_next_due()

    @property
    def next_due_ms(self) -> int:
        """The time the next refresh is due (int64's largest where none is enabled), ms."""
        return self._next_due_ms

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


def position_masks(noise: np.ndarray, resolution: np.ndarray) -> tuple:
    """What :func:`measure_position` asks of the sensors' parameters, made once where
    they stay: ``(noisy, any noisy, quantised, all quantised)``."""
    noisy = noise > 0
    quantised = resolution > 0
    return noisy, bool(noisy.any()), quantised, bool(quantised.all())


def measure_position(true_position: np.ndarray, noise: np.ndarray, resolution: np.ndarray,
                     rng: np.random.Generator, masks: tuple | None = None,
                     out: np.ndarray | None = None) -> np.ndarray:
    """A position reading: Gaussian noise (std ``noise``), then quantisation to ``resolution``.

    ``resolution`` -1 means infinite resolution; noise 0 draws nothing from ``rng``.
    ``masks``: :func:`position_masks` of ``noise`` and ``resolution`` (else made here);
    ``out``: the array the readings go into (else a new one).
    """
    noisy, any_noisy, quantised, all_quantised = (
        position_masks(noise, resolution) if masks is None else masks)
    value = true_position
    if any_noisy:
        value = value.copy()
        value[noisy] += rng.standard_normal(int(noisy.sum())) * noise[noisy]
    if all_quantised:  # every one (an encoder each): rint is round's own
        value = np.divide(value, resolution, out=out)
        np.rint(value, value)
        value *= resolution
        return value
    if out is not None:
        out[:] = value
        value = out
    elif value is true_position:  # (not a copy of its own yet)
        value = value.copy()
    if quantised.any():
        r = resolution[quantised]
        value[quantised] = np.round(value[quantised] / r) * r
    return value
