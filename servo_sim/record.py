"""What a run records and how long it runs, shared by the CLI and the Webots controller
session (ROS-free; no import of :mod:`servo_sim.cli`, which imports the Webots package)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def run_steps(duration_s: float, step_ms: int) -> int:
    """Basic time steps in ``duration_s`` simulated seconds (the nearest whole number):
    what ``servo-sim run`` and ``step-response`` run."""
    return round(duration_s * 1000 / step_ms)


#: Slack for a duration that is a whole number of steps but for float error (2.023 s
#: of 7-ms steps is 289.00000000000006 steps).
STEP_TOLERANCE = 1e-9


def steps_to_reach(duration_s: float, step_ms: int) -> int:
    """The fewest basic time steps that reach ``duration_s`` simulated seconds (rounded
    up, give or take STEP_TOLERANCE): ``servo-sim controller --duration``, after which
    ``step`` returns -1."""
    return max(0, math.ceil(duration_s * 1000 / step_ms - STEP_TOLERANCE))


def csv_columns(names: Sequence[str]) -> list[str]:
    """The ``--csv`` header: time, then position, velocity, motor force, energy per motor."""
    return ["time"] + [f"{name}.{q}" for name in names for q in
                       ("position", "velocity", "motor_force", "energy")]


def csv_row(time_s: float, readings: Any) -> list[float]:
    """One ``--csv`` row: the true state at ``time_s`` (see :func:`csv_columns`) from a
    runtime's readings (position, velocity, effort and energy arrays)."""
    state = np.column_stack([readings.position, readings.velocity, readings.effort,
                             readings.energy]).ravel()
    return [time_s, *state.tolist()]
