"""Shared helpers: DDS kept on this machine, ROS imports that skip only where no ROS
can be had, small simulations built from keyword arguments."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from servo_sim.model import Simulation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))  # the scalar reference, the stack client

# DDS stays on loopback, on a domain of this test run's own (before any rclpy.init; the
# node processes the tests start inherit it). SERVO_SIM_TEST_DOMAIN_ID picks the domain.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# 60-99: away from CI's 57 and the benchmark's 58, whose nodes have the same names
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SERVO_SIM_TEST_DOMAIN_ID",
                                             str(60 + os.getpid() % 40))

#: Which ROS tests must run here: CI sets SERVO_SIM_REQUIRE to ``ros`` (ROS 2 from PyPI),
#: ``ros,launch`` (a ROS 2 installation) or ``ros,launch,ros2_control`` (one with
#: ros2_control), so that one that would skip fails instead.
REQUIRED = {w for w in os.environ.get("SERVO_SIM_REQUIRE", "").split(",") if w}
#: What each kind of ROS test needs first, and where to get it.
_GATES = {
    "ros": ("rclpy", "set up ROS 2 with scripts/setup-ros-venv, or source a ROS 2 "
                     "installation and colcon build servo_sim"),
    "launch": ("launch_testing", "launch is not on PyPI: source a ROS 2 installation "
                                 "(/opt/ros/<distro>/setup.bash) and colcon build servo_sim"),
    "ros2_control": ("controller_manager",
                     "ros2_control is not on PyPI: source a ROS 2 installation with "
                     "ros2_control, ros2_controllers and topic_based_ros2_control "
                     "(/opt/ros/<distro>/setup.bash) and colcon build servo_sim"),
}


def require_ros(*modules: str, need: str = "ros") -> list[ModuleType]:
    """Import ``modules`` for a ROS test module, or skip it with the reason.

    The skip is allowed only where no ROS can be had (``need``'s gate module, rclpy or
    launch_testing, is missing, and SERVO_SIM_REQUIRE does not ask for it): with the gate
    present, anything else missing (servo_sim's interfaces not built, not in the ament
    index) fails the module, naming what to do.
    """
    gate, hint = _GATES[need]
    have_gate = importlib.util.find_spec(gate) is not None
    frame = sys._getframe(1)
    caller = Path(frame.f_globals.get("__file__", "?")).name
    at_module_level = frame.f_code.co_name == "<module>"
    if at_module_level:
        _MODULE_NEEDS.setdefault(caller, set()).add(need)
    loaded = []
    for name in modules:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError as exc:
            why = f"{caller}: {name} not importable ({exc}): {hint}"
            if have_gate or need in REQUIRED:
                pytest.fail(why, pytrace=False)
            if at_module_level:  # a test's own skip is counted with its outcome
                _COUNTS[need]["skipped modules"] += 1
            pytest.skip(why, allow_module_level=True)
    return loaded


def _executors() -> tuple[str, ...]:
    """The executors the node can run on with this rclpy (ros/entry.py): the
    EventsExecutor exists from rclpy 7.1.4 (Jazzy) on."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return ("single_threaded",)
    return ("single_threaded", "events")


@pytest.fixture(params=_executors())
def executor_kind(request) -> str:
    """Every node test runs on each executor this rclpy has."""
    return request.param


#: test module file name -> the kinds of ROS test it is (its module-level require_ros)
_MODULE_NEEDS: dict[str, set[str]] = {}


def pytest_collection_modifyitems(items):
    """Every item of a ROS test module carries its kind's marker, those that plugins make
    too (launch_testing's items do not inherit the module's pytestmark), so that
    ``-m "ros or launch"`` selects them and the counts see them."""
    for item in items:
        for need in _MODULE_NEEDS.get(item.path.name, ()):
            item.add_marker(need)


#: Outcomes of the ROS tests (markers ros and launch), for the closing summary line.
_COUNTS = {need: dict.fromkeys(("passed", "failed", "skipped", "skipped modules"), 0)
           for need in _GATES}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A required kind of ROS test (SERVO_SIM_REQUIRE) that skips fails instead."""
    report = (yield).get_result()
    required = [m.name for m in item.iter_markers() if m.name in REQUIRED]
    if report.skipped and required:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"skipped ({reason}), but SERVO_SIM_REQUIRE="
                           f"{','.join(sorted(REQUIRED))}: {required[0]} tests must run here")


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for need in _GATES:
            if need in report.keywords:
                _COUNTS[need][report.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    """One line per kind of ROS test: how many ran, failed, skipped."""
    for need, counts in _COUNTS.items():
        terminalreporter.write_line(
            f"servo_sim {need} tests: " + ", ".join(f"{n} {k}" for k, n in counts.items()))

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
