"""Step-response figures against closed-form responses."""

import math

import numpy as np
import pytest

from servo_sim.analysis import step_metrics


def test_first_order_response():
    # y = 1 - exp(-t/tau): rise 10-90 % = tau ln 9, settling (2 %) = tau ln 50, no overshoot
    tau = 0.1
    t = np.arange(0, 2.0, 1e-4)
    y = 1 - np.exp(-t / tau)
    m = step_metrics(t, y, 0.0, 1.0, force=np.exp(-t / tau) * 3.0)
    assert m.rise_time == pytest.approx(tau * math.log(9), abs=2e-4)
    assert m.settling_time == pytest.approx(tau * math.log(50), abs=2e-4)
    assert m.overshoot_percent == 0.0
    assert m.steady_state_error == pytest.approx(0.0, abs=1e-8)
    assert m.peak_force == 3.0


def test_underdamped_overshoot_matches_closed_form():
    # zeta = 0.3: overshoot = exp(-pi zeta / sqrt(1 - zeta^2)) = 37.2 %
    zeta, wn = 0.3, 10.0
    wd = wn * math.sqrt(1 - zeta**2)
    t = np.arange(0, 5.0, 1e-4)
    y = 1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2)
                                      * np.sin(wd * t))
    # a downward step from 2 to 1 mirrors it
    m = step_metrics(t, 2.0 - y, 2.0, 1.0)
    expected = 100 * math.exp(-math.pi * zeta / math.sqrt(1 - zeta**2))
    assert m.overshoot_percent == pytest.approx(expected, abs=0.01)
    assert math.isnan(m.peak_force)


def test_never_settling_and_never_rising():
    t = np.linspace(0, 1, 101)
    m = step_metrics(t, 0.05 * t, 0.0, 1.0)
    assert math.isnan(m.rise_time)
    assert math.isnan(m.settling_time)
    assert m.steady_state_error == pytest.approx(0.95)
    with pytest.raises(ValueError, match="step size is 0"):
        step_metrics(t, t, 1.0, 1.0)
