"""Kinematic mode (Webots without physics): ramped velocity, exact arrival (SPEC §2.3)."""

import math

import pytest
from conftest import DT, one


def kinematic(**fields):
    return one(physics="kinematic", **fields)


def expected_move(target: float, speed: float, acc: float, steps: int) -> list[float]:
    """Webots' kinematic rule written out for one motor starting at rest at 0."""
    x, v, out = 0.0, 0.0, []
    for _ in range(steps):
        if abs(target - x) >= 1e-6:
            v = min(v + acc * DT, speed)
            x = min(x + v * DT, target)
        else:
            v = 0.0
        out.append(x)
    return out


def test_position_control_ramps_and_stops_exactly_on_target():
    sim, m = kinematic(max_velocity=1.0, acceleration=2.0)
    m.set_position(0.5)
    want = expected_move(0.5, 1.0, 2.0, 150)
    for k in range(150):
        sim.step()
        assert m.position == pytest.approx(want[k], abs=1e-12)
    assert m.position == 0.5
    assert m.velocity == 0.0


def test_unlimited_acceleration_uses_the_available_force():
    # acceleration -1 (or larger than the available force) ramps at the available force
    sim, m = kinematic(max_velocity=5.0, acceleration=-1, max_torque=3.0)
    m.set_position(1.0)
    sim.step(2)
    assert m.position == pytest.approx((3.0 * DT + 2 * 3.0 * DT) * DT)
    sim2, m2 = kinematic(max_velocity=5.0, acceleration=50.0, max_torque=3.0)
    m2.set_position(1.0)
    sim2.step(2)
    assert m2.position == m.position


def test_velocity_control_moves_at_the_signed_velocity():
    sim, m = kinematic(acceleration=-1, max_torque=1000.0)
    m.set_position(math.inf)
    m.set_velocity(-2.0)
    sim.step(10)
    assert m.position == pytest.approx(-10 * 2.0 * DT)
    assert m.velocity == pytest.approx(-2.0)


def test_velocity_control_stops_at_active_soft_limits():
    sim, m = kinematic(acceleration=-1, max_torque=1000.0, min_position=-0.1,
                       max_position=0.1)
    m.set_position(math.inf)
    m.set_velocity(1.0)
    sim.step(50)
    # it stops at the first step that starts at or beyond the limit
    assert 0.1 <= m.position < 0.1 + 1.0 * DT
    held = m.position
    sim.step(10)
    assert m.position == held
    m.set_velocity(-1.0)  # moving away is allowed
    sim.step(1)
    assert m.position < held


def test_force_feedback_and_energy_are_zero_and_set_force_does_not_move():
    sim, m = kinematic()
    m.enable_force_feedback(8)
    m.set_position(1.0)
    sim.step(10)
    assert m.get_force_feedback() == 0.0
    assert m.energy == 0.0
    x = m.position
    m.set_force(5.0)
    sim.step(10)
    assert m.position == x


def test_kinematic_hard_stops_clamp():
    sim, m = kinematic(acceleration=-1, max_torque=1000.0, min_stop=-0.05, max_stop=0.05)
    m.set_position(math.inf)
    m.set_velocity(1.0)
    sim.step(20)
    assert m.position == 0.05
