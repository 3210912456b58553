"""Shared helpers: build small simulations from keyword arguments."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from servo_sim.model import Simulation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))  # the scalar reference lives there

DT_MS = 8
DT = DT_MS / 1000


def make_sim(*motors: dict, **top) -> Simulation:
    """A simulation of the given motors (dicts of config fields; name defaults to m0, m1...)."""
    entries = [{"name": f"m{i}", **m} for i, m in enumerate(motors or ({},))]
    return Simulation.from_config({"basic_time_step_ms": DT_MS, **top, "motors": entries})


def one(basic_time_step_ms: int = DT_MS, physics: str = "dynamic", **fields):
    """A simulation with one motor 'm0' (config fields as keywords) and that motor."""
    sim = make_sim(fields, basic_time_step_ms=basic_time_step_ms, physics=physics)
    return sim, sim.motor("m0")


def snapshot(sim: Simulation) -> dict[str, np.ndarray]:
    """Every array of the bank, copied, to prove a rejected command changed nothing."""
    bank = sim.bank
    out = {k: v.copy() for k, v in vars(bank).items() if isinstance(v, np.ndarray)}
    for sensor in ("position_sensor", "force_sensor"):
        for k, v in vars(getattr(bank, sensor)).items():
            if isinstance(v, np.ndarray):
                out[f"{sensor}.{k}"] = v.copy()
    return out


def assert_unchanged(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=key)


@pytest.fixture
def warnings_log(caplog):
    """Captured warnings of the servo_sim logger."""
    caplog.set_level("WARNING", logger="servo_sim")
    return caplog
