"""The per-motor table's order and slicing, and how the node process leaves (issue 18),
without ROS: the node creates its table from these, and test_node_process.py checks the
node itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.ros.interface import (
    MOTOR_ACTIONS,
    MOTOR_FAMILIES,
    MOTOR_SERVICES,
    MOTOR_TRIGGERS,
    family,
)
from servo_sim.ros.leave import PROFILE_NAME, profile_variable, short_lease_profile
from servo_sim.ros.table import FEEDBACK_TOPICS, TableBuilder, table_rows


def names(rows) -> list[str]:
    return [r if isinstance(r, str) else r.name for r in rows]


def test_set_position_first_then_the_topics_getters_commands_safety_sensors_actions():
    rows = table_rows(MOTOR_FAMILIES)
    assert names(rows[:2]) == ["set_position", FEEDBACK_TOPICS]
    groups = [family(r) for r in rows[2:]]
    # each family in one block, in this order
    order = list(dict.fromkeys(groups))
    assert order == ["getters", "commands", "safety", "sensors", "actions"]
    assert groups == sorted(groups, key=order.index)
    # every row of the table once
    assert sorted(names(rows)) == sorted(
        [r.name for r in (*MOTOR_SERVICES, *MOTOR_TRIGGERS, *MOTOR_ACTIONS)] + [FEEDBACK_TOPICS])
    # within a family, the table's own order (the Webots reference order)
    assert names(r for r in rows if not isinstance(r, str) and family(r) == "getters") == \
        [r.name for r in MOTOR_SERVICES if r.is_getter and "/" not in r.name]


@given(st.sets(st.sampled_from(MOTOR_FAMILIES)))
def test_only_the_families_asked_for_and_always_the_feedback_topics(families):
    rows = table_rows(families)
    assert FEEDBACK_TOPICS in rows  # sensors the config enables publish whatever the families
    assert {family(r) for r in rows if r != FEEDBACK_TOPICS} <= families
    every = [r for r in (*MOTOR_SERVICES, *MOTOR_TRIGGERS, *MOTOR_ACTIONS)
             if family(r) in families]
    assert len(rows) == len(every) + 1


class Clock:
    """A clock the jobs advance: each job takes the time it is given."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_run_takes_jobs_until_its_slice_has_passed_then_yields():
    clock, ran = Clock(), []

    def job(k: int, takes: float):
        def run():
            ran.append(k)
            clock.now += takes
        return run

    builder = TableBuilder((("services" if k % 2 else "topics", job(k, 0.002))
                            for k in range(10)), clock=clock)
    assert not builder.run(0.005)  # 0.002, 0.004, 0.006 >= 0.005: three jobs
    assert ran == [0, 1, 2] and builder.created == 3 and not builder.done
    assert not builder.run(0.001)  # at least one job, even past the slice
    assert ran == [0, 1, 2, 3]
    assert builder.run(1.0) and builder.done and ran == list(range(10))
    assert builder.created == 10 and abs(builder.longest_job_s - 0.002) < 1e-12
    assert builder.counts == {"services": 5, "topics": 5}
    assert builder.run(1.0)  # nothing left: still done


@given(st.lists(st.floats(0.0, 0.05), max_size=60), st.floats(0.001, 0.02))
def test_every_job_runs_once_in_order_and_no_run_overstays_by_more_than_one_job(takes, slice_s):
    clock, ran = Clock(), []

    def job(k: int):
        def run():
            ran.append(k)
            clock.now += takes[k]
        return run

    builder = TableBuilder((("services", job(k)) for k in range(len(takes))), clock=clock)
    runs = 0
    while True:
        start, before = clock.now, len(ran)
        done = builder.run(slice_s)
        runs += 1
        last = takes[len(ran) - 1] if len(ran) > before else 0.0
        assert clock.now - start < slice_s + last + 1e-12  # at most the slice plus one job
        if done:
            break
        assert len(ran) > before  # progress on every run
    assert ran == list(range(len(takes))) and builder.created == len(takes)
    assert builder.longest_job_s == pytest.approx(max(takes, default=0.0), abs=1e-12)


# ------------------------------------------------------------------ the leaving process

@pytest.mark.parametrize(("library", "variable"), [
    ("libfastrtps.so", "FASTRTPS_DEFAULT_PROFILES_FILE"),  # Fast DDS 2.x (Jazzy)
    ("libfastdds.so", "FASTDDS_DEFAULT_PROFILES_FILE")])  # Fast DDS 3.x (Kilted)
def test_the_short_lease_profile_is_set_for_fast_dds_when_the_user_has_none(
        tmp_path, library, variable):
    (tmp_path / "ros" / "lib").mkdir(parents=True)
    (tmp_path / "ros" / "lib" / library).touch()
    env = {"AMENT_PREFIX_PATH": str(tmp_path / "ros")}
    assert short_lease_profile(env, cwd=tmp_path) is None
    path = Path(env[variable])
    assert set(env) == {"AMENT_PREFIX_PATH", variable} and path.name == PROFILE_NAME
    xml = path.read_text()
    assert "<leaseDuration><sec>2</sec></leaseDuration>" in xml
    assert 'is_default_profile="true"' in xml
    env["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"
    del env[variable]
    assert short_lease_profile(env, cwd=tmp_path) is None and variable in env


def test_the_profile_variable_is_the_one_of_the_fast_dds_in_use():
    """This ROS 2's own Fast DDS (the venv's or the sourced installation's)."""
    variable = profile_variable(dict(os.environ))
    prefixes = [*os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep), sys.prefix]
    libraries = {p.name for prefix in prefixes if prefix
                 for p in Path(prefix, "lib").glob("libfast*.so")}
    if "libfastdds.so" in libraries or not libraries:
        assert variable == "FASTDDS_DEFAULT_PROFILES_FILE"
    else:
        assert variable == "FASTRTPS_DEFAULT_PROFILES_FILE"


def test_the_users_own_dds_configuration_is_left_alone(tmp_path):
    for name in ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE",
                 "SKIP_DEFAULT_XML"):
        env = {name: "/home/me/dds.xml"}
        assert short_lease_profile(env, cwd=tmp_path) == f"{name} is set"
        assert env == {name: "/home/me/dds.xml"}
    env = {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}
    assert short_lease_profile(env, cwd=tmp_path) == "RMW rmw_cyclonedds_cpp"
    assert env == {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}
    for name in ("DEFAULT_FASTRTPS_PROFILES.xml", "DEFAULT_FASTDDS_PROFILES.xml"):
        directory = tmp_path / name.split(".")[0]
        directory.mkdir()
        (directory / name).write_text("<profiles/>")
        env = {}
        assert short_lease_profile(env, cwd=directory) == f"{directory / name} exists"
        assert env == {}


def test_os_environ_is_the_default(tmp_path, monkeypatch):
    for name in ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE",
                 "SKIP_DEFAULT_XML", "RMW_IMPLEMENTATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    assert short_lease_profile() is None
    assert os.environ[profile_variable(dict(os.environ))].endswith(PROFILE_NAME)
