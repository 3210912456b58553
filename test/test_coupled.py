"""Coupled motors: 'base::specifier' names relay commands, each with its own multiplier."""

import math

import pytest
from conftest import DT, make_sim

from servo_sim.model import ConfigError

# Seed 002's example: multipliers 2, 0.5, 4 and -4 with consistent limits
WHEELS = [
    {"name": "w::a", "multiplier": 2.0, "min_position": -1.0, "max_position": 2.0,
     "max_velocity": 10.0, "max_torque": 100.0},
    {"name": "w::b", "multiplier": 0.5, "min_position": -0.25, "max_position": 0.5,
     "max_velocity": 2.5, "max_torque": 100.0},
    {"name": "w::c", "multiplier": 4.0, "min_position": -2.0, "max_position": 4.0,
     "max_velocity": 20.0, "max_torque": 100.0},
    {"name": "w::d", "multiplier": -4.0, "min_position": -4.0, "max_position": 2.0,
     "max_velocity": 20.0, "max_torque": 100.0},
    {"name": "solo", "max_torque": 100.0},
]


def wheels():
    sim = make_sim(*WHEELS)
    return sim, [sim.motor(n) for n in ("w::a", "w::b", "w::c", "w::d", "solo")]


def test_set_position_is_relayed_with_each_multiplier():
    _, (a, b, c, d, solo) = wheels()
    b.set_position(0.2)
    assert [m.target_position for m in (a, b, c, d)] == [0.4, 0.1, 0.8, -0.8]
    assert all(m.get_target_position() == 0.2 for m in (a, b, c, d))
    assert solo.target_position == 0.0
    assert a.coupled == ["w::a", "w::b", "w::c", "w::d"]


def test_relayed_position_is_clipped_by_each_motors_soft_limits():
    _, (a, b, c, d, _) = wheels()
    a.set_position(3.0)  # a: 6 -> 2; b: 1.5 -> 0.5; c: 12 -> 4; d: -12 -> -4
    assert [m.target_position for m in (a, b, c, d)] == [2.0, 0.5, 4.0, -4.0]


def test_set_velocity_and_force_are_relayed_but_not_acceleration_or_pid():
    sim, (a, b, c, d, solo) = wheels()
    a.set_position(math.inf)
    a.set_velocity(1.0)
    assert [m.get_velocity() for m in (a, b, c, d)] == [1.0, 1.0, 1.0, 1.0]
    sim.step()
    assert [m.velocity for m in (a, b, c, d)] == pytest.approx([2.0, 0.5, 4.0, -4.0])
    a.set_acceleration(3.0)
    a.set_control_pid(1.0, 0.0, 0.0)
    a.set_available_force(50.0)
    assert b.get_acceleration() == -1
    assert b.get_control_pid() == (10.0, 0.0, 0.0)
    assert b.get_available_force() == 100.0
    c.set_torque(0.01)
    sim.step()
    assert a.motor_force == b.motor_force == 0.0  # all in force control now
    assert solo.velocity == 0.0
    assert d.velocity == pytest.approx(-4.0 + -0.04 / 0.01 * DT)


def test_coupled_motors_are_logically_not_mechanically_coupled():
    sim = make_sim({"name": "x::1", "max_torque": 100.0, "max_stop": 0.01},
                   {"name": "x::2", "max_torque": 100.0})
    one_, two = sim.motor("x::1"), sim.motor("x::2")
    one_.set_position(0.5)
    sim.step(200)
    assert one_.position == 0.01  # blocked by its stop
    assert two.position == pytest.approx(0.5, abs=1e-6)


@pytest.mark.parametrize("field, value, expected", [
    ("max_velocity", 3.0, "expected 2.5"),
    ("min_position", -0.3, "expected -0.25"),
    ("max_position", 0.6, "expected 0.5"),
])
def test_inconsistent_coupled_limits_fail_at_load(field, value, expected):
    motors = [dict(m) for m in WHEELS]
    motors[1][field] = value
    with pytest.raises(ConfigError) as err:
        make_sim(*motors)
    text = str(err.value)
    assert "'w::b'" in text and field in text and repr(value) in text and expected in text


def test_unlimited_and_limited_siblings_fail_at_load():
    with pytest.raises(ConfigError, match="unlimited"):
        make_sim({"name": "g::1"}, {"name": "g::2", "min_position": -1.0, "max_position": 1.0})


def test_clipping_warnings_name_the_motor_that_clipped(caplog):
    caplog.set_level("WARNING", logger="servo_sim")
    _, (a, _, _, d, _) = wheels()
    d.set_available_torque(500.0)  # d is the 4th of its group
    assert "motor 'w::d': available_torque 500 exceeds max_torque" in caplog.text
    assert "'w::a'" not in caplog.text
    caplog.clear()
    a.set_position(0.75)  # a: 1.5 within [-1, 2]; b: 0.375 within; c: 3 within; d: -3 within
    assert caplog.text == ""
    a.set_position(1.2)  # b: 0.6 > 0.5 and c: 4.8 > 4 and d: -4.8 < -4 clip; a: 2.4 > 2
    for name in ("w::a", "w::b", "w::c", "w::d"):
        assert f"motor '{name}': position" in caplog.text


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_relayed_force_is_clipped_silently_a_single_motors_with_a_warning(caplog, sign):
    """Webots silences the force clipping warning of coupled motors: +-30 to w::a gives
    +-60, +-15, +-120 -> +-100 and -+120 -> -+100 (max_torque 100), without a word; +-150
    to the single motor is clipped to +-100 and said."""
    caplog.set_level("WARNING", logger="servo_sim")
    sim, (a, _, _, _, solo) = wheels()
    a.set_torque(sign * 30.0)
    assert list(sim.bank.applied_force[:4]) == [sign * 60.0, sign * 15.0, sign * 100.0,
                                                 -sign * 100.0]
    assert caplog.text == ""
    solo.set_torque(sign * 150.0)
    assert sim.bank.applied_force[4] == sign * 100.0
    assert f"motor 'solo': torque {sign * 150:g} exceeds the available force" in caplog.text
