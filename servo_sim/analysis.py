"""Step-response figures of a recorded trajectory (pure numpy, no ROS)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepMetrics:
    """Classic step-response figures; times in s, NaN where undefined (never reached)."""

    rise_time: float  # from 10 % to 90 % of the step
    overshoot_percent: float  # peak beyond the target, % of the step
    settling_time: float  # from the step until it stays within the band
    steady_state_error: float  # target - final value
    peak_force: float  # max |motor force|
    band: float  # settling band, fraction of the step


def step_metrics(t: np.ndarray, y: np.ndarray, start: float, target: float,
                 force: np.ndarray | None = None, band: float = 0.02) -> StepMetrics:
    """Figures of a response ``y(t)`` to a step from ``start`` to ``target`` at ``t[0]``."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    size = target - start
    if size == 0:
        raise ValueError("step size is 0: target equals the start position")
    progress = (y - start) / size  # 0 at start, 1 at target, whatever the direction
    t0 = t[0]

    def first_time(level: float) -> float:
        hit = np.flatnonzero(progress >= level)
        return float(t[hit[0]]) if len(hit) else float("nan")

    rise = first_time(0.9) - first_time(0.1)
    overshoot = max(0.0, float(progress.max()) - 1.0) * 100.0
    outside = np.flatnonzero(np.abs(progress - 1.0) > band)
    if len(outside) == 0:
        settling = 0.0
    elif outside[-1] == len(t) - 1:
        settling = float("nan")  # still outside the band at the end
    else:
        settling = float(t[outside[-1] + 1] - t0)
    peak = float(np.abs(force).max()) if force is not None and len(force) else float("nan")
    return StepMetrics(rise_time=rise, overshoot_percent=overshoot, settling_time=settling,
                       steady_state_error=float(target - y[-1]), peak_force=peak, band=band)
