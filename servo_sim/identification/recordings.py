"""Recordings of a servo, from what people record: ``servo-sim record``'s CSV and the
bench logs of Rhoban/bam (JSON), read into one :class:`Recording` (docs/sim-to-real.md).

A recording carries, or is given, its **bench** (:class:`Bench`): the load (a mass at a
length on a pendulum whose position 0 hangs down), the Position P Gain it ran with and
the supply voltage; and per sample whether the torque was on. A bad or truncated file is
one :class:`RecordingError` naming the file, the entry (or line) and the field.

Pure Python and numpy; no ROS.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

#: The columns every CSV recording has, in the order ``write_recording`` writes them.
COLUMNS = ("time", "command", "position")
#: An optional CSV column: 1 while the torque is on, 0 while off (missing: always on).
TORQUE_COLUMN = "torque"
#: The fields of a bam bench log's entries that a replay reads.
BAM_ENTRY_FIELDS = ("timestamp", "goal_position", "position", "torque_enable")
#: The fields of a bam bench log's header that set the bench.
BAM_HEADER_FIELDS = ("mass", "length", "kp", "vin")
#: The fewest samples a recording may have.
MIN_SAMPLES = 10


class RecordingError(ValueError):
    """A recording that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True)
class Bench:
    """What a recording ran on, where known (None: not said; the motor's own fields).

    ``mass`` (kg) at ``length`` (m) on a pendulum whose position 0 hangs down; ``kp``
    the Position P Gain register; ``vin`` the supply voltage, V."""

    mass: float | None = None
    length: float | None = None
    kp: float | None = None
    vin: float | None = None

    def fields(self) -> dict[str, float]:
        """The motor fields this bench sets, by dotted name (``actuator.gains.p``): the
        pendulum's inertia and gravity load, the P gain, the supply voltage."""
        out: dict[str, float] = {}
        if self.mass is not None and self.length is not None:
            out["inertia"] = self.mass * self.length ** 2
            # the lever is horizontal at +pi/2: the mass hangs at 0 (schema.LoadConfig)
            out["load.gravity_mass"] = self.mass
            out["load.gravity_distance"] = self.length
            out["load.gravity_angle"] = math.pi / 2
        if self.kp is not None:
            out["actuator.gains.p"] = self.kp
        if self.vin is not None:
            out["actuator.supply_voltage"] = self.vin
        return out


@dataclass(frozen=True)
class Recording:
    """A recorded trajectory: times (s, from 0), position commands and measured
    positions (rad); ``torque`` (bool per sample, None: always on), its ``bench`` and
    the file it came from."""

    time: np.ndarray
    command: np.ndarray
    position: np.ndarray
    torque: np.ndarray | None = None
    bench: Bench = field(default_factory=Bench)
    source: str = ""

    @property
    def span(self) -> float:
        """The range of the measured position (what the RMS error is compared with)."""
        return float(np.ptp(self.position))

    @property
    def name(self) -> str:
        """The file's name (or ``recording``)."""
        return Path(self.source).name if self.source else "recording"

    def with_bench(self, **given: float | None) -> Recording:
        """This recording with the bench fields ``given`` (None: keep the recording's)."""
        kept = {k: v for k, v in given.items() if v is not None}
        return replace(self, bench=replace(self.bench, **kept))


def read_recording(path: str | Path) -> Recording:
    """Read a recording: bam's bench JSON (``.json``) or a CSV (:data:`COLUMNS`, any
    order, header first; an optional :data:`TORQUE_COLUMN`)."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"
                             ) from None
    if path.suffix.lower() == ".json":
        return _read_bam(path, text)
    return _read_csv(path, text)


def _read_csv(path: Path, text: str) -> Recording:
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise RecordingError(f"{path}: empty; expected the columns {', '.join(COLUMNS)}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise RecordingError(f"{path}: no column {missing[0]!r} in the header {header} "
                             f"(expected {', '.join(COLUMNS)})")
    names = [*COLUMNS, *([TORQUE_COLUMN] if TORQUE_COLUMN in header else [])]
    index = [header.index(c) for c in names]
    data = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) < len(header):
            raise RecordingError(f"{path}: line {line}: {row!r}: {len(row)} fields, the "
                                 f"header has {len(header)} (truncated?)")
        for name, i in zip(names, index, strict=True):
            try:
                value = float(row[i])
            except ValueError:
                raise RecordingError(f"{path}: line {line}: field {name!r} = {row[i]!r}: "
                                     f"expected a number ({row!r})") from None
            if not math.isfinite(value):
                raise RecordingError(f"{path}: line {line}: field {name!r} = {row[i]!r}: "
                                     "not finite")
            if name == TORQUE_COLUMN and value not in (0.0, 1.0):
                raise RecordingError(f"{path}: line {line}: field {name!r} = {row[i]!r}: "
                                     "expected 0 (off) or 1 (on)")
        data.append([float(row[i]) for i in index])
    table = np.array(data, dtype=float).reshape(-1, len(names))
    torque = table[:, 3] > 0.5 if len(names) == 4 else None
    return _checked(path, "line", 2, table[:, 0], table[:, 1], table[:, 2], torque, Bench())


def _entry_at(text: str, pos: int) -> str:
    """`` in entry K`` where ``pos`` lies within the K-th object of the log's
    ``entries`` (bam's entries are flat objects), else nothing."""
    start = text.find('"entries"')
    if start < 0 or start > pos:
        return ""
    begun = text.count("{", start, pos)
    return f" in entry {begun - 1}" if begun else ""


def _read_bam(path: Path, text: str) -> Recording:
    try:
        log = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{path}: not JSON (truncated?){_entry_at(text, exc.pos)}: "
                             f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        raise RecordingError(f"{path}: field 'entries': expected a list of samples (a bam "
                             "bench log: a header and its entries)")
    header = {}
    for name in BAM_HEADER_FIELDS:
        value = log.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            raise RecordingError(f"{path}: header field {name!r} = {value!r}: expected a "
                                 "number >= 0")
        header[name] = float(value)
    rows = []
    for k, entry in enumerate(log["entries"]):
        if not isinstance(entry, dict):
            raise RecordingError(f"{path}: entry {k}: {entry!r}: expected an object")
        row = []
        for name in BAM_ENTRY_FIELDS:
            if name not in entry:
                raise RecordingError(f"{path}: entry {k}: no field {name!r}")
            value = entry[name]
            if name == "torque_enable":
                if not isinstance(value, bool):
                    raise RecordingError(f"{path}: entry {k}: field {name!r} = {value!r}: "
                                         "expected true or false")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise RecordingError(f"{path}: entry {k}: field {name!r} = {value!r}: "
                                     "expected a finite number")
            row.append(float(value))
        rows.append(row)
    table = np.array(rows, dtype=float).reshape(-1, len(BAM_ENTRY_FIELDS))
    return _checked(path, "entry", 0, table[:, 0], table[:, 1], table[:, 2], table[:, 3] > 0.5,
                    Bench(**header))


def _checked(path: Path, unit: str, first: int, t: np.ndarray, command: np.ndarray,
             position: np.ndarray, torque: np.ndarray | None, bench: Bench) -> Recording:
    """The recording from its columns, once time increases and it is long enough."""
    steps = np.diff(t)
    if np.any(steps <= 0):
        k = int(np.flatnonzero(steps <= 0)[0]) + 1 + first
        name = "time" if unit == "line" else "timestamp"
        raise RecordingError(f"{path}: {unit} {k}: field {name!r} = {float(t[k - first])!r}"
                             ": time does not increase")
    if len(t) < MIN_SAMPLES:
        raise RecordingError(f"{path}: {len(t)} samples; a replay or fit needs at least "
                             f"{MIN_SAMPLES}")
    if torque is not None and torque.all():
        torque = None
    return Recording(t - t[0], command, position, torque, bench, str(path))


def write_recording(path: str | Path, recording: Recording) -> None:
    """Write ``recording`` as CSV (see :func:`read_recording`; its torque column where it
    has one)."""
    columns = [recording.time, recording.command, recording.position]
    names = list(COLUMNS)
    if recording.torque is not None:
        columns.append(recording.torque.astype(float))
        names.append(TORQUE_COLUMN)
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(names),
               comments="", fmt="%.9g")
