"""Passive forces, loads, friction, hard stops, force feedback and energy (SPEC §2.2).

Expected values come from closed-form mechanics (equilibria, terminal velocities,
the damped oscillator) or one-step hand calculations.
"""

import math

import numpy as np
import pytest
from conftest import DT, one

G = 9.81
OFF = {"max_torque": 0.0}  # a passive joint


def test_spring_equilibrium_is_exact():
    # K x = F  =>  x = F / K; backward Euler converges to the exact equilibrium
    sim, m = one(**OFF, spring_constant=100.0, damping_constant=2.0, load={"external": 2.0})
    sim.step(2000)
    assert m.position == pytest.approx(0.02, abs=1e-12)
    assert m.velocity == pytest.approx(0.0, abs=1e-12)


def test_damper_terminal_velocity_is_force_over_damping():
    # J dv/dt = F - B v  =>  v -> F / B
    sim, m = one(damping_constant=0.5, inertia=0.01)
    m.set_force(2.0)
    sim.step(500)
    assert m.velocity == pytest.approx(4.0, abs=1e-9)


def test_damper_decay_matches_exponential():
    # from terminal velocity, drop the force: v(t) = v0 exp(-B t / J). Backward Euler
    # gives (1 + B dt / J)^-k: first-order error ~ (B dt / J) / 2 per time constant = 0.5 %
    sim, m = one(damping_constant=0.5, inertia=0.05, basic_time_step_ms=1)
    m.set_force(1.0)
    sim.step(2000)
    v0 = m.velocity
    assert v0 == pytest.approx(2.0)
    m.set_force(0.0)
    sim.step(100)  # 0.1 s = one time constant
    assert m.velocity == pytest.approx(v0 * math.exp(-1.0), rel=0.01)


def test_spring_mass_oscillates_at_the_natural_frequency():
    # x(t) = x0 cos(w t), w = sqrt(K/J) = 10 rad/s; at 0.1 ms steps backward Euler's
    # numerical damping over half a period is exp(-w^2 dt t / 2) ~ 1.6 %
    sim, m = one(**OFF, spring_constant=1.0, inertia=0.01, position=0.1,
                 basic_time_step_ms=1)
    half_period_steps = round(math.pi / 10 / 0.001)  # 314 ms
    xs = []
    for _ in range(half_period_steps):
        sim.step()
        xs.append(m.position)
    t = np.arange(1, half_period_steps + 1) * 0.001
    np.testing.assert_allclose(xs, 0.1 * np.cos(10 * t), atol=0.1 * 0.03)
    assert min(xs) == pytest.approx(-0.1, rel=0.02)


def test_stiff_spring_is_stable_at_a_coarse_step():
    # w dt = sqrt(1e6 / 0.01) * 0.032 = 320: explicit Euler would explode
    sim, m = one(**OFF, spring_constant=1e6, inertia=0.01, position=0.5,
                 basic_time_step_ms=32)
    amplitudes = []
    for _ in range(50):
        sim.step()
        amplitudes.append(abs(m.position))
    assert all(np.isfinite(amplitudes))
    assert max(amplitudes) <= 0.5
    assert amplitudes[-1] < 1e-6


def test_rotational_gravity_first_step_and_hold_force():
    # off motor: J dv = -m g d cos(0) dt
    sim, m = one(**OFF, inertia=0.02, load={"gravity_mass": 0.5, "gravity_distance": 0.2})
    sim.step()
    v1 = -0.5 * G * 0.2 / 0.02 * DT
    assert m.velocity == pytest.approx(v1)
    assert m.position == pytest.approx(v1 * DT)


def test_motor_holds_the_arm_with_the_gravity_torque():
    # at rest at angle q, holding needs exactly m g d cos(q)
    sim, m = one(position=0.6, load={"gravity_mass": 0.5, "gravity_distance": 0.2})
    sim.step(10)
    assert m.position == pytest.approx(0.6, abs=1e-12)
    assert m.motor_force == pytest.approx(0.5 * G * 0.2 * math.cos(0.6))


def test_linear_gravity_is_the_weight():
    sim, m = one(type="linear", max_force=0.0, inertia=2.0, load={"gravity_mass": 2.0})
    sim.step(3)
    assert m.velocity == pytest.approx(-G * 3 * DT)


def test_a_pendulum_hanging_at_0_swings_back_to_0():
    # gravity_angle pi/2: the lever is horizontal at x = pi/2, the mass hangs at x = 0.
    # At rest it feels nothing; at 0.3 rad it is pulled back by m g d sin(0.3)
    sim, m = one(**OFF, inertia=0.02, load={"gravity_mass": 0.5, "gravity_distance": 0.2,
                                            "gravity_angle": math.pi / 2})
    sim.step(10)
    assert (m.position, m.velocity) == (pytest.approx(0.0, abs=1e-15), pytest.approx(0.0))
    sim, m = one(**OFF, inertia=0.02, position=0.3,
                 load={"gravity_mass": 0.5, "gravity_distance": 0.2,
                       "gravity_angle": math.pi / 2})
    sim.step()
    assert m.velocity == pytest.approx(-0.5 * G * 0.2 * math.sin(0.3) / 0.02 * DT)


def test_the_load_takes_the_worlds_gravity():
    # the Moon, 1.62 m/s^2: holding at 0.6 rad takes m g d cos(0.6) with that g
    sim, m = one(position=0.6, load={"gravity_mass": 0.5, "gravity_distance": 0.2,
                                     "gravity": 1.62})
    sim.step(10)
    assert m.motor_force == pytest.approx(0.5 * 1.62 * 0.2 * math.cos(0.6))


def test_a_tilted_slider_feels_the_weight_along_its_axis():
    # a slider 60 degrees from straight up: g cos(60 deg) = g / 2 along it
    sim, m = one(type="linear", max_force=0.0, inertia=2.0,
                 load={"gravity_mass": 2.0, "gravity_angle": math.pi / 3})
    sim.step(3)
    assert m.velocity == pytest.approx(-G / 2 * 3 * DT)


def test_motor_too_weak_sags_under_gravity():
    # the motor gives all it has (0.5 N*m) against 0.981 N*m of gravity
    sim, m = one(max_torque=0.5, inertia=0.02,
                 load={"gravity_mass": 0.5, "gravity_distance": 0.2})
    sim.step()
    assert m.motor_force == pytest.approx(0.5)
    assert m.velocity == pytest.approx((0.5 - 0.981) / 0.02 * DT)


def test_static_friction_holds_an_off_motor_below_breakaway():
    sim, m = one(**OFF, static_friction=1.0, load={"external": 0.9})
    sim.step(100)
    assert m.position == 0.0
    assert m.motor_force == 0.0  # friction is not motor force
    assert m.energy == 0.0


def test_static_friction_opposes_motion_above_breakaway():
    # net force 3 - 2 = 1 N on 0.5 kg
    sim, m = one(type="linear", max_force=0.0, inertia=0.5, static_friction=2.0,
                 load={"external": 3.0})
    sim.step(4)
    assert m.velocity == pytest.approx(1.0 / 0.5 * 4 * DT)


def test_static_friction_acts_in_force_control():
    sim, m = one(static_friction=0.5, inertia=0.01)
    m.set_torque(0.4)  # below friction: stuck
    sim.step(20)
    assert m.position == 0.0
    m.set_torque(0.7)  # net 0.2
    sim.step(2)
    assert m.velocity == pytest.approx(0.2 / 0.01 * 2 * DT)


def test_static_friction_brings_a_coasting_joint_to_rest():
    sim, m = one(static_friction=0.5, inertia=0.01)
    m.set_torque(1.0)
    sim.step(10)
    m.set_torque(0.0)
    sim.step(100)
    assert m.velocity == 0.0


def test_hard_stop_is_never_crossed_and_velocity_into_it_removed():
    sim, m = one(max_torque=100.0, min_stop=-0.2, max_stop=0.3)
    m.set_position(math.inf)
    m.set_velocity(5.0)
    for _ in range(30):
        sim.step()
        assert m.position <= 0.3
    assert m.position == 0.3
    assert m.velocity == 0.0
    m.set_velocity(-5.0)
    sim.step(40)
    assert m.position == -0.2


def test_hard_stop_holds_against_an_external_force():
    sim, m = one(type="linear", max_force=0.0, min_stop=0.0, max_stop=0.05, position=0.01,
                 load={"gravity_mass": 1.0})
    sim.step(100)
    assert m.position == 0.0
    assert m.velocity == 0.0


def test_energy_integrates_abs_force_times_consumption_factor():
    sim, m = one(consumption_factor=7.0, load={"gravity_mass": 0.5, "gravity_distance": 0.2})
    sim.step(125)  # 1 s of holding 0.981 N*m
    assert m.energy == pytest.approx(0.981 * 7.0 * 1.0)


def test_energy_counts_negative_motor_force_too():
    sim, m = one(consumption_factor=2.0, load={"external": 0.5})  # motor pushes back -0.5
    sim.step(10)
    assert m.motor_force == pytest.approx(-0.5)
    assert m.energy == pytest.approx(0.5 * 2.0 * 10 * DT)


def test_force_feedback_excludes_spring_and_damper_forces_it_does_not_fight():
    # passive joint with spring and damper: the motor is off, feedback 0
    sim, m = one(**OFF, spring_constant=5.0, damping_constant=1.0, position=0.2)
    m.enable_force_feedback(8)
    sim.step(5)
    assert m.get_force_feedback() == 0.0
    assert m.position != 0.2
