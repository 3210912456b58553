"""Identification: fit what a servo's documents do not give to a recorded trajectory.

A recording is a CSV file with the columns ``time`` (s), ``command`` (the position goal,
rad) and ``position`` (the measured position, rad), one row per sample, as
``servo-sim record`` writes it from any hardware plugin. :func:`identify` simulates the
motor (its servo profile plus the given fields) under the recorded commands and fits the
chosen fields (by default the load's inertia, the viscous damping and the gear's Coulomb
friction) by least squares on the simulated position: the best point of a coarse grid,
a pattern search from it, then Levenberg-Marquardt (the Jacobian by finite differences);
every point of a stage is a motor of the same vectorised run.
The uncertainty of each fitted value is its standard error from the Jacobian at the
optimum (``sigma^2 (J^T J)^-1``, sigma^2 from the residuals).

Pure numpy; no ROS.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Simulation, parse_config
from ..plotting import pyplot
from .recordings import COLUMNS, Recording, RecordingError, read_recording, write_recording
from .replay import _deep_copy, motor_fields, set_field, simulate_valid

__all__ = ["COLUMNS", "DEFAULT_FIT", "FITTABLE", "Fit", "IdentifyError", "Model", "Recording",
           "RecordingError", "excitation", "fitted_config", "identify", "plot",
           "read_recording", "write_recording"]

#: What is fitted unless told otherwise.
DEFAULT_FIT = ("inertia", "damping_constant", "actuator.friction")
#: The fields that can be fitted: (lowest value, typical size for the finite differences).
FITTABLE: dict[str, tuple[float, float]] = {
    "inertia": (1e-7, 0.01),
    "damping_constant": (0.0, 0.01),
    "actuator.friction": (0.0, 0.01),
    "static_friction": (0.0, 0.01),
    "actuator.backlash": (0.0, 0.001),
    "actuator.gains.p": (1e-6, 10.0),
    "actuator.gains.i": (0.0, 10.0),
    "actuator.gains.d": (0.0, 10.0),
    "control_pid.p": (1e-6, 1.0),
}
_GAIN_INDEX = {"p": 0, "i": 1, "d": 2}
#: Levenberg-Marquardt: most iterations, and the relative cost change that ends it.
MAX_ITERATIONS = 60
TOLERANCE = 1e-6
#: Pattern search: the first step and the last, relative to each value (or its typical
#: size), and the most simulated runs.
PATTERN_START = 0.5
PATTERN_END = 1e-3
PATTERN_RUNS = 80
#: Finite differences: the step, relative to the value (or its typical size).
FD_STEP = 1e-2
#: Levenberg-Marquardt: the dampings tried each iteration, relative to the last one taken.
LM_DAMPINGS = np.array([0.1, 0.3, 1.0, 3.0, 10.0, 100.0, 1000.0])


class IdentifyError(ValueError):
    """A recording or a fit request that cannot be used; the message says why."""


def excitation(t: np.ndarray | float, amplitude: float = 0.5, center: float = 0.0
               ) -> np.ndarray:
    """The position command ``servo-sim record`` sends at time ``t`` (s): steps (the
    inertia and the torque-speed envelope show), a slow and a fast ramp (friction and
    damping separate by speed), back to the center: :data:`EXCITATION_S` s in all."""
    t = np.asarray(t, dtype=float)
    a = amplitude
    slow = -a / 2 + a / 2 * (t - 1.5)  # -A/2 to +A/2 at A/2 per s over 1.5..3.5 s
    fast = a / 2 - 3 * a * (t - 3.5)  # +A/2 to -A at 3A per s over 3.5..4.0 s
    command = np.select([t < 0.5, t < 1.0, t < 1.5, t < 3.5, t < 4.0],
                        [a, -a, a / 3, slow, fast], 0.0)
    return center + command


#: The length of :func:`excitation`, s.
EXCITATION_S = 4.5


def _get(config_motor: Mapping[str, Any], name: str) -> float:
    """A field's value in a motor's dict form (``actuator.gains.p``: gains[0])."""
    parts = name.split(".")
    value: Any = config_motor
    if parts[-1] in _GAIN_INDEX and len(parts) >= 2 and parts[-2] in ("gains", "control_pid"):
        for part in parts[:-1]:
            value = value[part]
        return float(value[_GAIN_INDEX[parts[-1]]])
    for part in parts:
        value = value[part]
    return float(value)


@dataclass
class Model:
    """The motor to fit: its fields (a servo profile and overrides), the simulation step
    and the commands the recording ran with besides the position goal."""

    fields: Mapping[str, Any]
    step_ms: int = 1
    velocity: float | None = None  # set_velocity during the recording (the speed limit)
    acceleration: float | None = None  # set_acceleration during the recording

    def config(self, values: Sequence[Mapping[str, float]], start: float) -> dict[str, Any]:
        """A config of one motor per set of field values, each starting at ``start``."""
        motors = []
        for k, override in enumerate(values):
            entry = motor_fields(self.fields, override)
            # coupled ("fit::m<k>"): one command moves every one of them
            entry.update(name=f"fit::m{k}", position=start)
            motors.append(entry)
        return {"basic_time_step_ms": self.step_ms, "motors": motors}

    def initial(self, names: Sequence[str]) -> np.ndarray:
        """The values the fields have before the fit (the profile's or the defaults)."""
        sim = Simulation(parse_config(self.config([{}], 0.0), "identify"))
        from ..model.config import motor_to_dict

        entry = motor_to_dict(sim.config.motors[0])
        out = []
        for name in names:
            try:
                out.append(_get(entry, name))
            except (KeyError, TypeError):
                raise IdentifyError(f"field {name!r}: the motor has no such field (an "
                                    "actuator field needs an actuator: give --servo)") from None
        return np.array(out)

    def simulate(self, recording: Recording, names: Sequence[str],
                 points: np.ndarray) -> np.ndarray:
        """The simulated position at the recorded times, one row per parameter point, on
        the recording's bench (replay.py's loop); NaN rows for points the config check
        refuses."""
        bench = recording.bench.fields()
        motors = [motor_fields(self.fields, bench, dict(zip(names, map(float, p), strict=True)))
                  for p in np.atleast_2d(points)]
        return simulate_valid(recording, motors, self.step_ms, self.velocity,
                              self.acceleration)


#: The coarse grid the fit starts from (the best point): per field, the candidates
#: (factors of the initial value for the inertia and gains, values otherwise).
GRID: dict[str, tuple[float, ...]] = {
    "inertia": (0.5, 1.0, 2.0, 4.0),
    "damping_constant": (0.0, 0.01, 0.03, 0.1, 0.3, 1.0),
    "actuator.friction": (0.0, 0.01, 0.03, 0.1, 0.3),
    "static_friction": (0.0, 0.01, 0.03, 0.1, 0.3),
}
_RELATIVE = ("inertia", "actuator.gains.p", "actuator.gains.i", "actuator.gains.d",
             "control_pid.p")


def _best_start(theta0: np.ndarray, names: Sequence[str], residuals
                ) -> tuple[np.ndarray, float]:
    """The best point of the coarse grid and ``theta0``, all simulated in one run, and
    its cost (a servo's response is not smooth in its friction: limit cycles on encoder
    ticks, stick and slip; least squares from a poor start ends in a local minimum)."""
    axes = []
    for name, value in zip(names, theta0, strict=False):
        grid = GRID.get(name, (1.0,) if name in _RELATIVE else (value,))
        axes.append(sorted({value, *(g * value if name in _RELATIVE else g for g in grid)}))
    points = np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(names), -1).T
    rows = residuals(points)
    costs = np.einsum("ij,ij->i", rows, rows)
    k = int(np.argmin(costs))
    return points[k], float(costs[k])


def _pattern_search(theta: np.ndarray, best: float, low: np.ndarray, typical: np.ndarray,
                    residuals) -> np.ndarray:
    """From ``theta`` (of cost ``best``), the best of the points around it (every
    combination of -h, 0, +h per field but theta itself; +-h one at a time past three
    fields), all simulated in one run; moved to while one is better, h halved when none
    is. Needs no gradient: the cost is flat between the jumps of an encoder tick, where
    finite differences see nothing or a cliff."""
    n = len(theta)
    if n <= 3:
        offsets = np.array([o for o in itertools.product((-1.0, 0.0, 1.0), repeat=n)
                            if any(o)])
    else:
        offsets = np.vstack([np.eye(n), -np.eye(n)])
    h = PATTERN_START
    for _ in range(PATTERN_RUNS):
        if h < PATTERN_END:
            break
        points = np.maximum(theta + offsets * (h * np.maximum(np.abs(theta), typical)), low)
        rows = residuals(points)
        costs = np.einsum("ij,ij->i", rows, rows)
        k = int(np.argmin(costs))
        if costs[k] < best:
            theta, best = points[k], float(costs[k])
        else:
            h /= 2
    return theta


@dataclass
class Fit:
    """The result of :func:`identify`."""

    names: tuple[str, ...]
    initial: np.ndarray
    value: np.ndarray
    std: np.ndarray  # standard error of each fitted value
    rms_before: float  # RMS position error with the initial values, rad
    rms_after: float
    span: float  # range of the recorded position
    iterations: int
    simulated_before: np.ndarray = field(repr=False)
    simulated_after: np.ndarray = field(repr=False)

    def values(self) -> dict[str, float]:
        return dict(zip(self.names, map(float, self.value), strict=False))


def identify(recording: Recording, model: Model,
             names: Sequence[str] = DEFAULT_FIT) -> Fit:
    """Fit the fields ``names`` of ``model`` to ``recording`` (see the module docstring)."""
    names = tuple(names)
    for name in names:
        if name not in FITTABLE:
            raise IdentifyError(f"cannot fit {name!r}; fittable: {', '.join(FITTABLE)}")
    low = np.array([FITTABLE[n][0] for n in names])
    typical = np.array([FITTABLE[n][1] for n in names])
    theta0 = np.maximum(model.initial(names), low)
    measured = recording.position

    def residuals(points: np.ndarray) -> np.ndarray:
        return model.simulate(recording, names, points) - measured

    def cost(r: np.ndarray) -> float:
        return float(r @ r)

    before = residuals(theta0)[0]
    theta = _pattern_search(*_best_start(theta0, names, residuals), low, typical, residuals)
    r = before
    damping = 1e-3
    iterations = 0
    jacobian = np.zeros((len(measured), len(names)))
    for _ in range(MAX_ITERATIONS):
        iterations += 1
        h = FD_STEP * np.maximum(np.abs(theta), typical)
        points = np.vstack([theta, theta + np.diag(h)])
        rows = residuals(points)
        r = rows[0]
        jacobian = ((rows[1:] - r) / h[:, None]).T
        a = jacobian.T @ jacobian
        g = jacobian.T @ r
        # the trial steps of several dampings, simulated together: the best is taken
        trials = damping * LM_DAMPINGS
        steps = [np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-30), -g) for lam in trials]
        points = np.maximum(theta + np.array(steps), low)
        rows = residuals(points)
        costs = np.einsum("ij,ij->i", rows, rows)
        best = int(np.argmin(costs))
        if costs[best] >= cost(r):
            damping = trials[-1] * 10.0
            if damping > 1e12:
                break
            continue
        change = (cost(r) - costs[best]) / max(cost(r), 1e-300)
        theta, r, damping = points[best], rows[best], max(trials[best], 1e-12)
        if change < TOLERANCE:
            break
    dof = max(len(measured) - len(names), 1)
    sigma2 = cost(r) / dof
    try:
        covariance = sigma2 * np.linalg.inv(jacobian.T @ jacobian)
        std = np.sqrt(np.abs(np.diag(covariance)))
    except np.linalg.LinAlgError:
        std = np.full(len(names), np.inf)
    rms = lambda e: float(np.sqrt(np.mean(e * e)))  # noqa: E731
    return Fit(names, theta0, theta, std, rms(before), rms(r), recording.span, iterations,
               before + measured, r + measured)


def fitted_config(model: Model, fit: Fit, motor: str = "servo") -> dict[str, Any]:
    """A config (model form) of the fitted motor: its fields with the fitted values."""
    entry = _deep_copy(model.fields)
    entry["name"] = motor
    for name, value in fit.values().items():
        set_field(entry, name, round(value, 6))
    return {"basic_time_step_ms": model.step_ms, "motors": [entry]}


def plot(path: str | Path, recording: Recording, fit: Fit, title: str) -> None:
    """Recorded against simulated (before and after the fit), and the error (PNG)."""
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6),
                                      gridspec_kw={"height_ratios": [3, 1]})
    t = recording.time
    top.step(t, recording.command, where="post", color="grey", linestyle="--",
             label="command")
    top.plot(t, recording.position, label="recorded", linewidth=2)
    top.plot(t, fit.simulated_before, label=f"profile (RMS {fit.rms_before:.3g} rad)")
    top.plot(t, fit.simulated_after, label=f"fitted (RMS {fit.rms_after:.3g} rad)")
    top.set_ylabel("position [rad]")
    top.legend(loc="best")
    top.set_title(title)
    bottom.plot(t, fit.simulated_after - recording.position)
    bottom.set_ylabel("fitted - recorded [rad]")
    bottom.set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
