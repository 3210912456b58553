"""Replaying a recording: its goals (and torque on/off) sent to the motor model on the
recording's bench, the simulated position compared with the measured one at the
recorded samples (``servo-sim replay``; ``fit.py`` fits through the same loop).

The loop, as docs/sim-to-real.md writes it out: one motor per set of fields (coupled, so
that one command moves them all), starting at the first measured position; at each step
of ``step_ms`` the goal and the torque state of the last sample at or before the step's
start; the simulated position interpolated linearly at the samples' times.

Pure numpy and the model; no ROS.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Simulation, parse_config
from ..model.config import ConfigError
from .motor_constants import resolved
from .recordings import Recording

#: mrad per rad, for the figures the commands print
MRAD = 1000.0


def set_field(fields: dict[str, Any], name: str, value: Any) -> None:
    """Set one field, by dotted name, in a motor's nested fields; ``actuator.gains.p``
    (``.i``, ``.d``; ``control_pid.p`` ...) is one element of the gains' list."""
    *groups, leaf = name.split(".")
    if groups and groups[-1] in ("gains", "control_pid") and leaf in _GAIN_INDEX:
        *groups, list_name = groups
        group = _group(fields, groups)
        gains = list(group.get(list_name, [0.0, 0.0, 0.0]))
        gains[_GAIN_INDEX[leaf]] = value
        group[list_name] = gains
        return
    _group(fields, groups)[leaf] = value


_GAIN_INDEX = {"p": 0, "i": 1, "d": 2}


def _group(fields: dict[str, Any], path: Sequence[str]) -> dict[str, Any]:
    group = fields
    for part in path:
        group = group.setdefault(part, {})
    return group


def motor_fields(base: Mapping[str, Any], *layers: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` (nested motor fields) with each layer's dotted fields set over it, in
    order (a copy); a torque constant or resistance given is turned into the envelope's
    figures (motor_constants.resolved)."""
    out = _deep_copy(base)
    for layer in layers:
        for name, value in layer.items():
            set_field(out, name, _deep_copy(value))
    return resolved(out)


def simulate(recording: Recording, motors: Sequence[Mapping[str, Any]], step_ms: int = 1,
             velocity: float | None = None, acceleration: float | None = None,
             source: str = "replay") -> np.ndarray:
    """The simulated position at the recorded times (rad), one row per motor's fields
    (``motors``: nested fields, each a complete motor but its name and position), under
    the recording's goals and torque states; ``velocity`` and ``acceleration``: the
    speed limit and acceleration the recording ran with. ConfigError where a motor's
    fields are refused."""
    start = float(recording.position[0])
    entries = []
    for k, fields in enumerate(motors):
        entry = _deep_copy(fields)
        entry.update(name=f"{source}::m{k}", position=start)
        entries.append(entry)
    sim = Simulation(parse_config({"basic_time_step_ms": step_ms, "motors": entries},
                                  source))
    handles = list(sim)
    lead = handles[0]  # coupled: a command to it moves every one of them
    for m in handles:
        if acceleration is not None:
            m.set_acceleration(acceleration)
    if velocity is not None:
        lead.set_velocity(velocity)
    dt = step_ms / 1000.0
    steps = math.ceil(recording.time[-1] / dt - 1e-9)
    # the sample in force during each step: the last one at or before its start
    which = np.searchsorted(recording.time, np.arange(steps) * dt + 1e-9, side="right") - 1
    np.maximum(which, 0, out=which)
    torque = recording.torque
    out = np.empty((len(handles), steps + 1))
    out[:, 0] = sim.bank.position
    last_goal = None
    on = True
    for k in range(steps):
        i = int(which[k])
        if torque is not None and bool(torque[i]) != on:
            on = bool(torque[i])
            if on:
                lead.enable()
                last_goal = None  # torque on: the goal register drives again
            else:
                lead.disable()
        goal = float(recording.command[i])
        if on and goal != last_goal:
            lead.set_position(goal)
            last_goal = goal
        sim.step()
        out[:, k + 1] = sim.bank.position
    grid = np.arange(steps + 1) * dt
    return np.array([np.interp(recording.time, grid, row) for row in out])


def simulate_valid(recording: Recording, motors: Sequence[Mapping[str, Any]],
                   step_ms: int = 1, velocity: float | None = None,
                   acceleration: float | None = None) -> np.ndarray:
    """:func:`simulate`, with a row of NaN for each motor whose fields the config check
    refuses (a search's trial outside the valid region) instead of an error."""
    try:
        return simulate(recording, motors, step_ms, velocity, acceleration)
    except ConfigError:
        pass
    out = np.full((len(motors), len(recording.time)), np.nan)
    valid = [k for k, fields in enumerate(motors) if refusal(fields, step_ms) is None]
    if valid:
        out[valid] = simulate(recording, [motors[k] for k in valid], step_ms, velocity,
                              acceleration)
    return out


def refusal(fields: Mapping[str, Any], step_ms: int = 1, source: str = "replay"
            ) -> ConfigError | None:
    """The config check's error for one motor's fields, or None where they are valid."""
    entry = _deep_copy(fields)
    entry.setdefault("name", "servo")
    try:
        Simulation(parse_config({"basic_time_step_ms": step_ms, "motors": [entry]}, source))
    except ConfigError as exc:
        return exc
    return None


@dataclass(frozen=True)
class Replay:
    """One recording replayed: the simulated position at its samples and the errors."""

    recording: Recording
    simulated: np.ndarray

    @property
    def error(self) -> np.ndarray:
        """Simulated minus measured, rad."""
        return self.simulated - self.recording.position

    @property
    def mae(self) -> float:
        """Mean absolute position error, rad."""
        return float(np.mean(np.abs(self.error)))

    @property
    def rms(self) -> float:
        """Root-mean-square position error, rad."""
        return float(np.sqrt(np.mean(self.error ** 2)))


def replay(recording: Recording, fields: Mapping[str, Any],
           settings: Mapping[str, Any] | None = None, step_ms: int = 1) -> Replay:
    """Replay ``recording`` on the motor ``fields`` (nested), its bench's fields set over
    them and then ``settings`` (dotted names: what ``--set`` gives)."""
    motor = motor_fields(fields, recording.bench.fields(), settings or {})
    return Replay(recording, simulate(recording, [motor], step_ms)[0])


def _deep_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_deep_copy(v) for v in value]
    return value
