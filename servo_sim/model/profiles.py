"""Named servo profiles: real servos' figures from their datasheets (``profiles.yaml``).

A motor whose config says ``servo: XM430-W350-T`` starts from that profile's motor
fields; its own fields override them (nested groups such as ``actuator`` key by key).
Every figure in the file names its source (datasheet or e-Manual page and edition).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: The profiles shipped with servo_sim.
PROFILES_PATH = Path(__file__).with_name("profiles.yaml")


@dataclass(frozen=True)
class ServoProfile:
    """One servo: its motor fields (SI units) and the source of each."""

    name: str
    vendor: str
    motor: Mapping[str, Any]
    #: where each figure comes from, by field path ("actuator.stall_torque")
    sources: Mapping[str, str]
    #: what the servo answers in its Model Number register (the vendor's table)
    model_number: int | None = None

    @property
    def actuator(self) -> Mapping[str, Any]:
        """The profile's actuator group."""
        return self.motor.get("actuator", {})

    @property
    def control(self) -> str:
        """The position control law of the servo's firmware."""
        return self.actuator.get("control", "webots")


@functools.cache
def load_profiles(path: Path = PROFILES_PATH) -> dict[str, ServoProfile]:
    """Every profile in ``path``, by name."""
    raw = yaml.safe_load(path.read_text())
    out = {}
    for name, entry in raw.items():
        out[name] = ServoProfile(name=name, vendor=entry["vendor"], motor=entry["motor"],
                                 sources=entry["sources"],
                                 model_number=entry.get("model_number"))
    return out


def profile_names() -> list[str]:
    """The names of the shipped profiles."""
    return sorted(load_profiles())


def servo_profile(name: str) -> ServoProfile:
    """The shipped profile ``name``; KeyError if there is none."""
    return load_profiles()[name]


def profile_fields(servo: str | None, settings: Iterable[str]) -> dict[str, Any]:
    """The motor fields of ``--servo NAME --set FIELD=VALUE ...`` (``{}`` without a
    servo); each value is read as YAML (numbers, lists); ValueError says what is wrong.
    The emulators and ``servo-sim identify`` check them by building their model
    from them."""
    if servo is None:
        return {}
    fields: dict[str, Any] = {"servo": servo}
    for setting in settings:
        name, eq, text = setting.partition("=")
        if not eq or not name:
            raise ValueError(f"--set {setting!r}: expected FIELD=VALUE")
        *groups, leaf = name.split(".")
        group = fields
        for part in groups:
            group = group.setdefault(part, {})
        group[leaf] = yaml.safe_load(text)
    return fields
