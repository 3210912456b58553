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

from ..model import ConfigError, Simulation, parse_config
from ..plotting import pyplot
from .motor_constants import CONSTANTS, constants, resolved
from .recordings import COLUMNS, Recording, RecordingError, read_recording, write_recording
from .replay import Replay, _deep_copy, motor_fields, refusal, set_field, simulate_valid

__all__ = ["COLUMNS", "DEFAULT_FIT", "FITTABLE", "Fit", "IdentifyError", "Model", "Recording",
           "RecordingError", "excitation", "fitted_config", "identify", "plot",
           "read_recording", "write_recording"]

#: What is fitted unless told otherwise: a recording without a bench (the load unknown)...
DEFAULT_FIT = ("inertia", "damping_constant", "actuator.friction")
#: ... and recordings on a known bench (the load given: the gear's and motor's parts).
BENCH_FIT = ("actuator.armature", "actuator.friction", "actuator.viscous_friction",
             "actuator.friction_stribeck", "actuator.load_friction_external",
             "actuator.load_friction_motor", "max_torque")
#: The fields that can be fitted: (lowest value, highest value, typical size for the
#: steps); every trial stays within these bounds, and one the config check still
#: refuses (a friction at the no-load speed above the stall torque) counts as no fit.
FITTABLE: dict[str, tuple[float, float, float]] = {
    "inertia": (1e-7, 100.0, 0.01),
    "damping_constant": (0.0, 100.0, 0.01),
    "static_friction": (0.0, 100.0, 0.01),
    "max_torque": (1e-4, 1e4, 0.1),
    "control_pid.p": (1e-6, 1e6, 1.0),
    "actuator.friction": (0.0, 100.0, 0.01),
    "actuator.viscous_friction": (0.0, 100.0, 0.01),
    "actuator.armature": (0.0, 10.0, 0.001),
    "actuator.friction_stribeck": (0.0, 100.0, 0.01),
    "actuator.stribeck_velocity": (1e-3, 100.0, 0.1),
    "actuator.stribeck_alpha": (0.1, 10.0, 1.0),
    "actuator.load_friction_external": (0.0, 0.95, 0.05),
    "actuator.load_friction_motor": (0.0, 0.95, 0.05),
    "actuator.load_friction_external_stribeck": (0.0, 0.95, 0.05),
    "actuator.load_friction_motor_stribeck": (0.0, 0.95, 0.05),
    "actuator.stall_torque": (1e-4, 1e4, 0.1),
    "actuator.no_load_speed": (1e-3, 1e4, 1.0),
    # the motor's own constants instead of the two above (motor_constants.py)
    "actuator.torque_constant": (1e-4, 1e3, 0.1),
    "actuator.resistance": (1e-3, 1e4, 1.0),
    "actuator.backlash": (0.0, 0.5, 0.001),
    "actuator.gain_scale": (1e-3, 1e3, 0.1),
    "actuator.gains.p": (1e-6, 1e6, 10.0),
    "actuator.gains.i": (0.0, 1e6, 10.0),
    "actuator.gains.d": (0.0, 1e6, 10.0),
}
#: Where a Stribeck term is fitted and the motor has no speed for it: these (our choice)
STRIBECK_START = {"actuator.stribeck_velocity": 0.2, "actuator.stribeck_alpha": 1.0}
#: A fitted value whose standard error is above this share of it (or of its typical size)
#: is not determined by the recordings.
UNDETERMINED = 0.5
#: The coarse grid's most points (past that, the fit starts from the initial values).
GRID_POINTS = 1000
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

    def with_stribeck(self, names: Sequence[str]) -> Model:
        """This model with a speed for the Stribeck terms (:data:`STRIBECK_START`) where
        ``names`` fits one and the motor has none (without it no trial is valid)."""
        if not any("stribeck" in n and "velocity" not in n and "alpha" not in n
                   for n in names):
            return self
        given = self.initial_or_zero(tuple(STRIBECK_START))
        start = {n: v for (n, v), g in zip(STRIBECK_START.items(), given, strict=True)
                 if g <= 0 and n not in names}
        return Model(motor_fields(self.fields, start), self.step_ms, self.velocity,
                     self.acceleration) if start else self

    def initial_or_zero(self, names: Sequence[str]) -> list[float]:
        """:meth:`initial`, 0 for a field the motor does not have."""
        try:
            return list(self.initial(names))
        except ValueError:  # no such field, or fields the config check refuses
            return [0.0] * len(names)

    def initial(self, names: Sequence[str]) -> np.ndarray:
        """The values the fields have before the fit (the profile's or the defaults)."""
        sim = Simulation(parse_config(self.config([{}], 0.0), "identify"))
        from ..model.config import motor_to_dict

        motor = sim.config.motors[0]
        entry = motor_to_dict(motor)
        out = []
        for name in names:
            if name in CONSTANTS:
                try:
                    out.append(constants(motor.actuator)[CONSTANTS.index(name)])
                except ValueError as exc:
                    raise IdentifyError(f"field {name!r}: {exc}") from None
                continue
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


def _costs(rows: np.ndarray) -> np.ndarray:
    """Each row's sum of squares; a refused trial's (NaN) is infinite."""
    costs = np.einsum("ij,ij->i", rows, rows)
    return np.where(np.isfinite(costs), costs, np.inf)


def _best_start(theta0: np.ndarray, names: Sequence[str], low: np.ndarray, high: np.ndarray,
                residuals) -> tuple[np.ndarray, float]:
    """The best point of the coarse grid and ``theta0``, all simulated in one run, and
    its cost (a servo's response is not smooth in its friction: limit cycles on encoder
    ticks, stick and slip; least squares from a poor start ends in a local minimum).
    Past :data:`GRID_POINTS` points, ``theta0`` alone."""
    axes = []
    for name, value in zip(names, theta0, strict=True):
        grid = GRID.get(name, (1.0,) if name in _RELATIVE else (value,))
        axes.append(sorted({value, *(g * value if name in _RELATIVE else g for g in grid)}))
    if np.prod([len(a) for a in axes]) > GRID_POINTS:
        axes = [[v] for v in theta0]
    points = np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(names), -1).T
    points = np.clip(points, low, high)
    costs = _costs(residuals(points))
    k = int(np.argmin(costs))
    return points[k], float(costs[k])


def _pattern_search(theta: np.ndarray, best: float, low: np.ndarray, high: np.ndarray,
                    typical: np.ndarray, residuals, runs: int = PATTERN_RUNS) -> np.ndarray:
    """From ``theta`` (of cost ``best``), the best of the points around it (every
    combination of -h, 0, +h per field but theta itself; +-h one at a time past three
    fields), within the bounds, all simulated in one run; moved to while one is better,
    h halved when none is. Needs no gradient: the cost is flat between the jumps of an
    encoder tick, where finite differences see nothing or a cliff."""
    n = len(theta)
    if n <= 3:
        offsets = np.array([o for o in itertools.product((-1.0, 0.0, 1.0), repeat=n)
                            if any(o)])
    else:
        offsets = np.vstack([np.eye(n), -np.eye(n)])
    h = PATTERN_START
    for _ in range(runs):
        if h < PATTERN_END:
            break
        points = np.clip(theta + offsets * (h * np.maximum(np.abs(theta), typical)), low, high)
        costs = _costs(residuals(points))
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
    rms_before: float  # RMS position error with the initial values, rad (all recordings)
    rms_after: float
    span: float  # range of the recorded position (the widest recording's)
    iterations: int
    #: the simulated position of each recording with the initial and the fitted values
    simulated_before: list[np.ndarray] = field(repr=False)
    simulated_after: list[np.ndarray] = field(repr=False)
    recordings: list[Recording] = field(repr=False, default_factory=list)
    #: the fields the recordings do not determine (standard error above UNDETERMINED of
    #: the value, or none at all)
    undetermined: tuple[str, ...] = ()

    def values(self) -> dict[str, float]:
        """The fitted values by field."""
        return dict(zip(self.names, map(float, self.value), strict=True))

    def replays(self, after: bool = True) -> list[Replay]:
        """Each recording replayed with the fitted (or the initial) values."""
        rows = self.simulated_after if after else self.simulated_before
        return [Replay(r, y) for r, y in zip(self.recordings, rows, strict=True)]


def identify(recordings: Recording | Sequence[Recording], model: Model,
             names: Sequence[str] = DEFAULT_FIT, pattern_runs: int = PATTERN_RUNS,
             iterations: int = MAX_ITERATIONS) -> Fit:
    """Fit the fields ``names`` of ``model`` to ``recordings``, one parameter set for all
    (each on its own bench; see the module docstring), in at most ``pattern_runs`` runs
    of the pattern search and ``iterations`` of Levenberg-Marquardt. Never leaves the
    bounds of :data:`FITTABLE`; a trial the config check refuses counts as no fit."""
    recordings = [recordings] if isinstance(recordings, Recording) else list(recordings)
    if not recordings:
        raise IdentifyError("no recording to fit")
    names = tuple(names)
    for name in names:
        if name not in FITTABLE:
            raise IdentifyError(f"cannot fit {name!r}; fittable: {', '.join(FITTABLE)}")
    if len(set(names)) != len(names):
        raise IdentifyError(f"a field given twice in {', '.join(names)}")
    model = model.with_stribeck(names)
    low = np.array([FITTABLE[n][0] for n in names])
    high = np.array([FITTABLE[n][1] for n in names])
    typical = np.array([FITTABLE[n][2] for n in names])
    try:
        theta0 = np.clip(model.initial(names), low, high)
    except ConfigError as exc:
        raise IdentifyError(f"the initial values are refused: {exc}") from None
    measured = np.concatenate([r.position for r in recordings])
    cuts = np.cumsum([len(r.position) for r in recordings])[:-1]

    def residuals(points: np.ndarray) -> np.ndarray:
        return np.hstack([model.simulate(r, names, points) for r in recordings]) - measured

    def cost(r: np.ndarray) -> float:
        return float(_costs(r[None])[0])

    before = residuals(theta0)[0]
    if not np.isfinite(cost(before)):
        reason = model_refusal(model, recordings, names, theta0)
        raise IdentifyError(f"the initial values are refused: {reason}")
    theta = _pattern_search(*_best_start(theta0, names, low, high, residuals), low, high,
                            typical, residuals, pattern_runs)
    theta, r, jacobian, iterations = _levenberg_marquardt(theta, low, high, typical,
                                                          residuals, iterations)
    dof = max(len(measured) - len(names), 1)
    sigma2 = cost(r) / dof
    # a field the recordings do not show at all (a zero column) has no error bar, and
    # is left out of the others' (its zero would make J^T J singular)
    shown = np.any(jacobian, axis=0)
    std = np.full(len(names), np.inf)
    j = jacobian[:, shown]
    try:
        std[shown] = np.sqrt(np.abs(np.diag(sigma2 * np.linalg.inv(j.T @ j))))
    except np.linalg.LinAlgError:
        pass
    scale = np.maximum(np.abs(theta), typical)
    loose = ~np.isfinite(std) | (std > UNDETERMINED * scale)
    undetermined = tuple(n for n, u in zip(names, loose, strict=True) if u)
    rms = lambda e: float(np.sqrt(np.mean(e * e)))  # noqa: E731
    return Fit(names, theta0, theta, std, rms(before), rms(r),
               max(rec.span for rec in recordings), iterations,
               np.split(before + measured, cuts), np.split(r + measured, cuts),
               recordings, undetermined)


def _levenberg_marquardt(theta: np.ndarray, low: np.ndarray, high: np.ndarray,
                         typical: np.ndarray, residuals, most: int = MAX_ITERATIONS) -> tuple:
    """Levenberg-Marquardt from ``theta`` within the bounds: the Jacobian by finite
    differences (backward where forward leaves the bounds or the valid region; a column
    of zeros where neither is possible), several dampings tried in one run.
    ``(theta, residuals, jacobian, iterations)``."""
    damping = 1e-3
    iterations = 0
    r = residuals(theta[None])[0]
    jacobian = np.zeros((len(r), len(theta)))
    for _ in range(most):
        iterations += 1
        h = FD_STEP * np.maximum(np.abs(theta), typical)
        forward = theta + h > high
        h = np.where(forward, -h, h)
        rows = residuals(np.vstack([theta, theta + np.diag(h)]))
        r = rows[0]
        jacobian = ((rows[1:] - r) / h[:, None]).T
        jacobian = np.where(np.isfinite(jacobian), jacobian, 0.0)
        a = jacobian.T @ jacobian
        g = jacobian.T @ r
        trials = damping * LM_DAMPINGS
        steps = [np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-30), -g) for lam in trials]
        points = np.clip(theta + np.array(steps), low, high)
        rows = residuals(points)
        costs = _costs(rows)
        best = int(np.argmin(costs))
        now = float(r @ r)
        if costs[best] >= now:
            damping = trials[-1] * 10.0
            if damping > 1e12:
                break
            continue
        change = (now - costs[best]) / max(now, 1e-300)
        theta, r, damping = points[best], rows[best], max(trials[best], 1e-12)
        if change < TOLERANCE:
            break
    return theta, r, jacobian, iterations


def model_refusal(model: Model, recordings: Sequence[Recording], names: Sequence[str],
                  theta: np.ndarray) -> str:
    """Why the config check refuses ``theta`` on the first recording refused."""
    for recording in recordings:
        fields = motor_fields(model.fields, recording.bench.fields(),
                              dict(zip(names, map(float, theta), strict=True)))
        error = refusal(fields, model.step_ms, "identify")
        if error is not None:
            return str(error)
    return "the simulation diverged"


def _written(value: float, name: str) -> float:
    """A fitted value as written: 6 significant digits, within the field's bounds."""
    low, high, _ = FITTABLE[name]
    return min(max(float(f"{value:.6g}"), low), high)


def fitted_config(model: Model, fit: Fit, motor: str = "servo") -> dict[str, Any]:
    """A config (model form) of the fitted motor: its fields with the fitted values,
    each to 6 significant digits (not decimals: an inertia of 1e-7 stays one) and
    within its bounds; IdentifyError where the loader would refuse it."""
    model = model.with_stribeck(fit.names)
    for written in (True, False):
        entry = _deep_copy(model.fields)
        entry["name"] = motor
        for name, value in fit.values().items():
            set_field(entry, name, _written(value, name) if written else value)
        resolved(entry)
        if written and any(n in CONSTANTS for n in fit.names):
            for name in ("stall_torque", "no_load_speed"):
                entry["actuator"][name] = float(f"{entry['actuator'][name]:.6g}")
        error = refusal(entry, model.step_ms, "identify")
        if error is None:
            return {"basic_time_step_ms": model.step_ms, "motors": [entry]}
    raise IdentifyError(f"the fitted values are refused by the config check: {error}")


def plot(path: str | Path, recording: Recording, fit: Fit, title: str) -> None:
    """Recorded against simulated (before and after the fit), and the error (PNG), of
    the fit's first recording."""
    before, after = fit.simulated_before[0], fit.simulated_after[0]
    rms = lambda e: float(np.sqrt(np.mean(e * e)))  # noqa: E731
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6),
                                      gridspec_kw={"height_ratios": [3, 1]})
    t = recording.time
    top.step(t, recording.command, where="post", color="grey", linestyle="--",
             label="command")
    top.plot(t, recording.position, label="recorded", linewidth=2)
    top.plot(t, before, label=f"profile (RMS {rms(before - recording.position):.3g} rad)")
    top.plot(t, after, label=f"fitted (RMS {rms(after - recording.position):.3g} rad)")
    top.set_ylabel("position [rad]")
    top.legend(loc="best")
    top.set_title(title)
    bottom.plot(t, after - recording.position)
    bottom.set_ylabel("fitted - recorded [rad]")
    bottom.set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
