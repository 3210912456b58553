"""How the node process leaves on a stop signal (servo_sim/ros/leave.py, spin.py): no ROS
needed, the signal handling and the deletion's budget as plain Python."""

import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.ros.leave import (
    LEAVE_AT_LEAST_S,
    LEAVE_BUDGET_S,
    LEAVE_WITHIN_S,
    deletion_budget,
)
from servo_sim.ros.spin import StopSignals


def test_the_budget_counts_from_the_signal():
    # by hand, with the constants' values: ends within 0.75 s of the signal, 0.7 s at most
    assert (LEAVE_BUDGET_S, LEAVE_WITHIN_S, LEAVE_AT_LEAST_S) == (0.7, 0.75, 0.1)
    assert deletion_budget(0.7, None, 100.0) == 0.7  # no signal: the whole budget
    assert deletion_budget(0.7, 100.0, 100.05) == 0.7  # left at once: the whole budget
    assert deletion_budget(0.7, 100.0, 100.35) == pytest.approx(0.4)  # a busy machine
    assert deletion_budget(0.7, 100.0, 101.5) == 0.1  # late: the least
    assert deletion_budget(0.3, 100.0, 100.35) == 0.3  # a smaller budget stands
    assert deletion_budget(0.05, 100.0, 101.5) == 0.05  # and below the least too


@given(budget=st.floats(0.0, 5.0), since=st.floats(0.0, 10.0))
def test_the_budget_is_cut_only_as_far_as_the_bound_asks(budget, since):
    """Three cases: the whole budget fits before the bound, and is given; else the
    deletion ends at the bound where that leaves it the least or more; else the least."""
    signalled, now = 1000.0, 1000.0 + since
    deadline = signalled + LEAVE_WITHIN_S
    b = deletion_budget(budget, signalled, now)
    if now + budget <= deadline:
        assert b == budget
    elif deadline - now >= LEAVE_AT_LEAST_S:
        assert now + b == pytest.approx(deadline) and b <= budget
    else:
        assert b == min(budget, LEAVE_AT_LEAST_S)


def test_the_first_signal_is_when_the_wait_starts():
    stop = StopSignals()
    try:
        stop.interrupting = False
        signal.raise_signal(signal.SIGINT)
        first = stop.received_at
        assert stop.received == signal.SIGINT and first is not None
        signal.raise_signal(signal.SIGTERM)  # launch forwards one more
        assert stop.received == signal.SIGTERM and stop.received_at == first
    finally:
        stop.restore()
