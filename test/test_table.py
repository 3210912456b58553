"""The per-motor table's order and slicing (issue 18), without ROS: the node creates its
table from these, and test_node_process.py checks the node itself."""

from __future__ import annotations

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
from servo_sim.ros.node.table import FEEDBACK_TOPICS, TableBuilder, table_rows


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


def test_single_rows_by_name_beside_families():
    rows = table_rows(["set_control_pid", "get_velocity", "safety"])
    assert names(rows) == [FEEDBACK_TOPICS, "get_velocity", "set_control_pid", "halt",
                           "enable", "disable", "e_stop", "reset_e_stop"]


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


def test_the_run_that_runs_the_last_job_says_the_table_is_done():
    """Past its slice after the last job, the run still says done: the node logs the
    table complete as its last entry is made, not a table period later (a client that saw
    the last entry and stopped the node lost that line on a loaded machine)."""
    clock = Clock()

    def job():
        clock.now += 0.01  # each job alone outlasts the slice

    builder = TableBuilder((("services", job) for _ in range(2)), clock=clock)
    assert not builder.run(0.001) and builder.created == 1
    assert builder.run(0.001) and builder.done and builder.created == 2


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
