"""The pacer: absolute due times (no drift), bounded catch-up, the slip rule, factor
changes and rebasing, on a fake clock; hypothesis for any sequence of tick times."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.pacing import MAX_CATCH_UP_STEPS, Pacer


class FakeClock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def pacer(step_s=0.001, rtf=1.0):
    clock = FakeClock()
    return Pacer(step_s, rtf, clock=clock), clock


def test_one_step_per_period_and_none_before_it_is_due():
    p, clock = pacer()
    assert p.due() == 0
    clock.t += 0.0009
    assert p.due() == 0
    clock.t += 0.0001
    assert p.due() == 1
    assert p.due() == 0
    assert p.next_due() == pytest.approx(100.002)


def test_late_ticks_do_not_drift_the_pace():
    """A million ticks each 0.7 period late in alternation with on-time ones: the
    steps taken are exactly the periods elapsed."""
    p, clock = pacer()
    taken = 0
    for k in range(1, 1_000_001):
        clock.t = 100.0 + k * 0.001 + (0.0007 if k % 2 else 0.0)
        taken += p.due()
    assert taken == 1_000_000
    assert p.overruns == 0


def test_a_late_tick_catches_up_the_steps_due():
    p, clock = pacer()
    clock.t += 0.0035
    assert p.due() == 3
    assert p.lateness() == pytest.approx(0.0005)
    clock.t += 0.0005
    assert p.due() == 1


def test_beyond_the_catch_up_bound_time_slips_once():
    p, clock = pacer()
    clock.t += 0.150
    assert p.due() == MAX_CATCH_UP_STEPS
    assert p.overruns == 1
    assert p.due() == 0  # the steps beyond the bound skipped
    clock.t += 0.001
    assert p.due() == 1
    assert p.overruns == 1


def test_a_slip_keeps_the_phase_of_the_due_times():
    """A host timer in phase with the due times (here 0.2 ms after each) stays so after
    the machine stalled: the next step is due on the same grid, not a period from the
    stalled tick's time."""
    p, clock = pacer()  # step 1 ms, due at 100.001, 100.002, ...
    clock.t += 0.0002
    assert p.due() == 0
    clock.t += 0.2503  # stalled: the tick 0.5 ms past a due time
    assert p.due() == MAX_CATCH_UP_STEPS and p.overruns == 1
    assert p.next_due() == pytest.approx(100.251)  # not 100.2505 + 0.001
    clock.t = 100.2512  # the host's timer, 0.2 ms after a due time as before
    assert p.due() == 1
    assert p.lateness() == pytest.approx(0.0002)
    for k in range(2, 50):  # and at every following event
        clock.t = 100.2502 + k * 0.001
        assert p.due() == 1
        assert p.lateness() == pytest.approx(0.0002)


def test_real_time_factor_scales_the_period_and_zero_free_runs():
    p, clock = pacer(step_s=0.008, rtf=2.0)
    assert p.period == pytest.approx(0.004)
    clock.t += 0.008
    assert p.due() == 2
    p.set_real_time_factor(0.0)
    assert (p.period, p.due(), p.next_due()) == (0.0, 0, clock.t)
    p.set_real_time_factor(1.0)  # from now: nothing due yet
    assert p.due() == 0
    clock.t += 0.008
    assert p.due() == 1


def test_rebase_after_a_pause_takes_no_burst():
    p, clock = pacer()
    clock.t += 5.0  # paused for 5 s
    p.rebase()
    assert p.due() == 0
    clock.t += 0.001
    assert p.due() == 1
    assert p.overruns == 0


@pytest.mark.parametrize("step, rtf", [(0.0, 1.0), (-1.0, 1.0), (float("nan"), 1.0),
                                       (0.001, -1.0), (0.001, float("inf")),
                                       (0.001, float("nan"))])
def test_bad_settings_are_refused(step, rtf):
    with pytest.raises(ValueError):
        Pacer(step, rtf, clock=FakeClock())


@given(st.lists(st.floats(0.0, 0.05), min_size=1, max_size=300),
       st.sampled_from([0.001, 0.008]), st.sampled_from([0.5, 1.0, 4.0]))
def test_steps_taken_never_exceed_the_time_elapsed(gaps, step, rtf):
    """Whatever the tick times: never negative, never ahead of the wall clock, and
    exactly on it when no overrun happened."""
    p, clock = pacer(step, rtf)
    start, taken = clock.t, 0
    for gap in gaps:
        clock.t += gap
        n = p.due()
        assert 0 <= n <= MAX_CATCH_UP_STEPS
        taken += n
    elapsed_steps = int((clock.t - start) / p.period + 1e-9)
    assert taken <= elapsed_steps
    if p.overruns == 0:
        assert taken == elapsed_steps
