"""Simulation.set_parameter: run-time changes of config fields (the node's live parameters)."""

from __future__ import annotations

import math

import pytest
from conftest import DT, assert_unchanged, make_sim, one, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.model.config import parse_config, to_dict
from servo_sim.model.simulation import MIRRORED_FIELDS


def test_lower_max_velocity_clips_the_velocity_and_bounds_the_motion():
    sim, m = one(max_velocity=10.0, control_pid=(100.0, 0.0, 0.0))
    m.set_position(5.0)
    sim.set_parameter("m0", "max_velocity", 1.0)
    assert m.get_max_velocity() == 1.0 and m.get_velocity() == 1.0
    sim.step(50)
    assert m.velocity == pytest.approx(1.0)  # P*error saturates at the new limit
    assert m.position == pytest.approx(50 * DT * 1.0, abs=0.02)


def test_lower_max_torque_clips_the_available_torque():
    sim, m = one(max_torque=10.0)
    sim.set_parameter("m0", "max_torque", 2.5)
    assert (m.get_max_torque(), m.get_available_torque()) == (2.5, 2.5)


def test_tighter_soft_limits_reclip_the_target():
    sim, m = one(min_position=-2.0, max_position=2.0)
    m.set_position(1.5)
    sim.set_parameter("m0", "max_position", 1.0)
    assert m.target_position == 1.0 and m.get_target_position() == 1.5  # getter: the request


def test_external_load_change_moves_the_spring_equilibrium_to_f_over_k():
    sim, m = one(spring_constant=10.0, damping_constant=1.0, inertia=0.01)
    m.set_available_torque(0.0)  # motor off: spring, damper and load only
    sim.set_parameter("m0", "load.external", 2.0)
    sim.step(2000)
    assert m.position == pytest.approx(2.0 / 10.0, abs=1e-6)


def test_control_pid_goes_through_the_command():
    sim, m = one(control_pid=(10.0, 1.0, 0.0))
    m.set_position(1.0)
    sim.step(10)
    assert sim.bank.error_integral[0] != 0.0
    sim.set_parameter("m0", "control_pid", [5.0, 0.5, 0.1])
    assert m.get_control_pid() == (5.0, 0.5, 0.1)
    assert sim.bank.error_integral[0] == 0.0  # set_control_pid resets it (Webots)
    with pytest.raises(ValueError, match=r"^motor 'm0': p = 0.0 rejected: must be > 0$"):
        sim.set_parameter("m0", "control_pid", [0.0, 0.0, 0.0])


def test_sampling_period_goes_through_enable():
    sim, m = one()
    sim.set_parameter("m0", "position_sensor.sampling_period_ms", 16)
    sim.step(2)
    assert m.get_position_sampling_period() == 16 and m.get_position() == 0.0


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("max_velocity", -1.0, r"motor 'm0': field 'max_velocity' = -1.0: must be >= 0"),
    ("min_position", -3.0, r"soft limit below the hard stop min_stop \(-2.0\)"),
    ("inertia", 0.0, r"field 'inertia' = 0.0: must be > 0"),
    ("control_pid", [1.0], r"must be a list of three numbers"),
    ("multiplier", 2.0, r"field 'multiplier' = 2.0 rejected: read-only"),
    ("position", 0.5, r"read-only"),
    ("type", "linear", r"read-only"),
    ("max_force", 1.0, r"takes 'max_torque', not 'max_force'|unknown field"),
    ("load.mass", 1.0, r"unknown field 'load.mass'"),
    ("name", "x", r"unknown field 'name'"),
])
def test_bad_changes_are_rejected_and_change_nothing(field, value, reason):
    sim, m = one(min_position=-1.0, max_position=1.0, min_stop=-2.0, max_stop=2.0)
    m.set_position(0.5)
    sim.step(3)
    before, config = snapshot(sim), sim.config
    with pytest.raises(ValueError, match=reason):
        sim.set_parameter("m0", field, value)
    assert_unchanged(before, snapshot(sim))
    assert sim.config is config


def test_coupled_limits_stay_consistent():
    sim = make_sim(dict(name="w::a", max_velocity=2.0), dict(name="w::b", max_velocity=2.0))
    with pytest.raises(ValueError, match="inconsistent with coupled motor 'w::a'"):
        sim.set_parameter("w::b", "max_velocity", 1.0)


def test_reset_keeps_the_tuned_parameters_and_unknown_motor_is_a_key_error():
    sim, _ = one(max_velocity=10.0)
    sim.set_parameter("m0", "max_velocity", 3.0)
    sim.step(5)
    sim.reset()
    assert sim.time_ms == 0 and sim.motor("m0").get_max_velocity() == 3.0
    with pytest.raises(KeyError, match="no motor 'x'"):
        sim.set_parameter("x", "max_velocity", 1.0)


_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 100))


@pytest.mark.parametrize("field", sorted(MIRRORED_FIELDS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_mirrored_field_and_its_command_accept_the_same_values(field, data):
    """One validation: a value the command takes is one the config takes (the change is
    recorded as such), and a refused one changes nothing, as a refused service call."""
    value = data.draw(st.lists(_VALUES, min_size=3, max_size=3) if field == "control_pid"
                      else _VALUES)
    sim, m = one()
    before, config = snapshot(sim), sim.config
    try:
        sim.set_parameter("m0", field, value)
    except ValueError:
        assert_unchanged(before, snapshot(sim))
        assert sim.config is config
        return
    assert MIRRORED_FIELDS[field].read(m) == (list(value) if field == "control_pid" else value)
    assert parse_config(to_dict(sim.config)) == sim.config  # the config holds the change


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_lower_max_velocity_clips_a_multiplied_velocity_either_way(sign):
    """Multiplier 2, velocity control at +-4 (8 rad/s inside): max_velocity 6 clips the
    velocity inside to +-6 and the getter's (before the multiplier) to +-3."""
    sim, m = one(max_velocity=10.0, multiplier=2.0, max_torque=100.0)
    m.set_position(math.inf)
    m.set_velocity(sign * 4.0)
    sim.set_parameter("m0", "max_velocity", 6.0)
    assert m.get_velocity() == sign * 3.0
    assert sim.bank.target_velocity[0] == sign * 6.0
    sim.step(100)
    assert m.velocity == pytest.approx(sign * 6.0)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_a_narrower_soft_limit_reclips_a_target_at_either_end(side):
    """A target at +-0.9 of soft limits +-1: the limit on its side moved to +-0.5
    brings it to +-0.5; the config in force says so too."""
    sim, m = one(min_position=-1.0, max_position=1.0, max_torque=100.0)
    m.set_position(side * 0.9)
    field = "max_position" if side > 0 else "min_position"
    sim.set_parameter("m0", field, side * 0.5)
    assert m.target_position == side * 0.5
    assert getattr(sim.config.motors[0], field) == side * 0.5


def test_a_field_changed_by_its_command_is_in_the_config_in_force():
    """acceleration and control_pid go through their commands; the config in force
    (what a saved config or a parameter read shows) has the new values at once."""
    sim, m = one(acceleration=-1.0, control_pid=(10.0, 0.0, 0.0))
    sim.set_parameter("m0", "acceleration", 3.0)
    assert sim.config.motors[0].acceleration == 3.0
    sim.set_parameter("m0", "control_pid", [20.0, 1.0, 0.5])
    assert tuple(sim.config.motors[0].control_pid) == (20.0, 1.0, 0.5)
    assert m.get_acceleration() == 3.0 and m.get_control_pid() == (20.0, 1.0, 0.5)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_hard_stop_set_at_run_time_holds_the_joint(sign):
    """A joint with no stop at start gets one at run time (the body takes the new
    parameters): it stops there exactly, both ways, and a target inside still moves."""
    sim, m = one(control_pid=(50.0, 0.0, 0.0), max_velocity=5.0)
    field = "max_stop" if sign > 0 else "min_stop"
    sim.set_parameter("m0", field, 0.1 * sign)
    m.set_position(1.0 * sign)
    sim.step(400)
    assert m.position == 0.1 * sign and m.velocity == 0.0
    m.set_position(0.05 * sign)
    sim.step(400)
    assert m.position == pytest.approx(0.05 * sign, abs=1e-6)


@pytest.mark.parametrize("angle", [0.0, math.pi])
def test_a_gravity_load_set_at_run_time_pulls_from_the_next_step(angle):
    """A joint with no load at start gets a gravity load at run time: from rest with its
    motor off, one step reaches v = -m g d cos(0 - angle) dt / J (semi-implicit Euler, by
    hand), down at angle 0 and up at angle pi."""
    inertia, mass, distance = 0.02, 0.5, 0.1
    sim, m = one(inertia=inertia)
    m.set_available_torque(0.0)
    sim.step(3)
    assert m.velocity == 0.0
    for field, value in (("load.gravity_mass", mass), ("load.gravity_distance", distance),
                         ("load.gravity_angle", angle)):
        sim.set_parameter("m0", field, value)
    sim.step(1)
    expected = -mass * 9.81 * distance * math.cos(-angle) * DT / inertia
    assert m.velocity == pytest.approx(expected, rel=1e-9)
    assert math.copysign(1.0, m.velocity) == (-1.0 if angle == 0.0 else 1.0)
