"""Position (PID), velocity and force control, acceleration limit, multiplier, getters.

Expected values are hand calculations from SPEC §2.1/§2.2: with ample force and no
passive load the motor reaches the commanded velocity exactly, so the position
follows ``x += v_cmd * dt``.
"""

import math

import pytest
from conftest import DT, one

# With inertia 0.01 and dt 0.008, changing velocity by dv costs dv * 1.25 N*m in a step,
# so max_torque 100 is "ample" for every test here.
AMPLE = {"max_torque": 100.0}


def test_p_control_error_decays_geometrically():
    # e_{k+1} = e_k - P e_k dt  =>  e_k = e0 (1 - P dt)^k  (no saturation: P e0 < vmax)
    sim, m = one(**AMPLE, control_pid=[10.0, 0.0, 0.0])
    m.set_position(0.5)
    for k in range(1, 40):
        sim.step()
        assert m.position == pytest.approx(0.5 - 0.5 * (1 - 10 * DT) ** k, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_velocity_saturates_at_max_velocity(sign):
    # P * |error| = 10 * 5 = 50 > max_velocity 4: the motor runs at 4 rad/s, either way
    sim, m = one(**AMPLE, max_velocity=4.0)
    m.set_position(sign * 5.0)
    sim.step(50)
    assert m.position == pytest.approx(sign * 50 * 4.0 * DT, abs=1e-12)
    assert m.velocity == pytest.approx(sign * 4.0)


@pytest.mark.parametrize("target", [5.0, -5.0])
@pytest.mark.parametrize("speed", [1.5, -1.5])
def test_set_velocity_is_the_speed_limit_in_position_control(target, speed):
    sim, m = one(**AMPLE)
    m.set_velocity(speed)  # its magnitude limits the speed; the sign does not matter
    m.set_position(target)
    sim.step(10)
    assert m.position == pytest.approx(math.copysign(10 * 1.5 * DT, target), abs=1e-12)
    assert m.velocity == pytest.approx(math.copysign(1.5, target))


def test_pid_derivative_uses_error_minus_previous_error():
    # SPEC: derivative = (error - previous_error) / dt, previous_error starts at 0
    sim, m = one(**AMPLE, control_pid=[10.0, 0.0, 0.1])
    m.set_position(0.1)
    sim.step()
    u1 = 10 * 0.1 + 0.1 * (0.1 - 0.0) / DT  # = 2.25
    assert m.position == pytest.approx(u1 * DT, abs=1e-12)
    e1 = 0.1 - u1 * DT
    u2 = 10 * e1 + 0.1 * (e1 - 0.1) / DT  # the D term now brakes
    sim.step()
    assert m.position == pytest.approx(u1 * DT + u2 * DT, abs=1e-12)
    assert u2 < 10 * e1


def test_pid_integral_accumulates_error_times_dt():
    sim, m = one(**AMPLE, control_pid=[10.0, 5.0, 0.0])
    m.set_position(0.1)
    sim.step()
    i1 = 0.1 * DT
    u1 = 10 * 0.1 + 5 * i1
    assert m.position == pytest.approx(u1 * DT, abs=1e-12)
    e1 = 0.1 - u1 * DT
    u2 = 10 * e1 + 5 * (i1 + e1 * DT)
    sim.step()
    assert m.position == pytest.approx((u1 + u2) * DT, abs=1e-12)


def test_pid_settles_on_target_and_holds_a_constant_load():
    # PI poles ~ roots of s^2 + 10 s + 5: slowest time constant 1.9 s; 32 s is ample
    sim, m = one(max_torque=5.0, control_pid=[10.0, 5.0, 0.0], load={"external": -2.0},
                 damping_constant=0.5)
    m.set_position(0.3)
    sim.step(4000)
    assert m.position == pytest.approx(0.3, abs=1e-6)
    assert m.motor_force == pytest.approx(2.0, abs=1e-6)  # it holds the load


def test_set_control_pid_resets_integral_and_previous_error():
    sim, m = one(**AMPLE, control_pid=[10.0, 5.0, 0.1])
    m.set_position(0.3)
    sim.step(20)
    m.set_control_pid(4.0, 2.0, 0.05)
    assert m.get_control_pid() == (4.0, 2.0, 0.05)
    x0 = m.position
    sim.step()
    e = 0.3 - x0  # fresh controller: integral e*dt, derivative (e - 0)/dt
    u = 4.0 * e + 2.0 * e * DT + 0.05 * e / DT
    v_limit = 10.0
    assert m.position == pytest.approx(x0 + min(u, v_limit) * DT, abs=1e-12)


def test_velocity_control_with_inf_target():
    sim, m = one(**AMPLE)
    m.set_position(math.inf)
    m.set_velocity(2.0)
    sim.step(25)
    assert m.position == pytest.approx(25 * 2.0 * DT, abs=1e-12)
    assert m.velocity == pytest.approx(2.0)
    m.set_velocity(-3.0)
    sim.step(10)
    assert m.position == pytest.approx(25 * 2.0 * DT - 10 * 3.0 * DT, abs=1e-12)


def test_minus_inf_also_selects_velocity_control_with_signed_velocity():
    sim, m = one(**AMPLE)
    m.set_position(-math.inf)
    m.set_velocity(2.0)
    sim.step(5)
    assert m.position == pytest.approx(5 * 2.0 * DT, abs=1e-12)
    assert m.get_target_position() == -math.inf


def test_acceleration_limit_ramps_velocity():
    # a = 50 rad/s^2: v_k = min(0.4 k, 2);  x_k = dt * sum(v_1..v_k)
    sim, m = one(**AMPLE, acceleration=50.0)
    m.set_position(math.inf)
    m.set_velocity(2.0)
    x = 0.0
    for k in range(1, 12):
        sim.step()
        v = min(50.0 * DT * k, 2.0)
        x += v * DT
        assert m.velocity == pytest.approx(v, abs=1e-12)
        assert m.position == pytest.approx(x, abs=1e-12)


def test_acceleration_minus_one_is_unlimited_and_is_not_multiplied():
    sim, m = one(**AMPLE, multiplier=3.0, acceleration=20.0)
    m.set_acceleration(-1)
    assert m.get_acceleration() == -1
    m.set_position(math.inf)
    m.set_velocity(1.0)
    sim.step()
    assert m.velocity == pytest.approx(3.0)
    m.set_acceleration(12.5)
    assert m.get_acceleration() == 12.5  # not multiplied
    m.set_velocity(-1.0)
    sim.step()
    assert m.velocity == pytest.approx(3.0 - 12.5 * DT)


def test_acceleration_zero_freezes_the_commanded_velocity():
    sim, m = one(**AMPLE, acceleration=0.0)
    m.set_position(1.0)
    sim.step(5)
    assert m.position == 0.0


def test_available_force_limits_the_motor_force():
    # v_cmd = 10 needs 10 * J/dt = 12.5 N*m; only 2 are available -> dv = 2 / 1.25 = 1.6
    sim, m = one(max_torque=10.0)
    m.set_available_torque(2.0)
    m.set_position(5.0)
    sim.step()
    assert m.motor_force == pytest.approx(2.0)
    assert m.velocity == pytest.approx(1.6)
    assert m.position == pytest.approx(1.6 * DT)


def test_available_force_zero_switches_the_motor_off():
    sim, m = one(load={"external": 1.0})  # pushes at 1 N*m, J = 0.01
    m.set_available_force(0.0)
    m.set_position(0.0)
    sim.step(3)
    assert m.motor_force == 0.0
    assert m.velocity == pytest.approx(3 * 1.0 / 0.01 * DT)


def test_force_control_accelerates_the_free_joint():
    # J dv/dt = F: v_k = F/J dt k; semi-implicit x_k = (F/J) dt^2 k(k+1)/2
    sim, m = one(inertia=0.02)
    m.set_torque(0.5)
    for k in range(1, 10):
        sim.step()
        assert m.velocity == pytest.approx(0.5 / 0.02 * DT * k, abs=1e-12)
        assert m.position == pytest.approx(0.5 / 0.02 * DT**2 * k * (k + 1) / 2, abs=1e-12)
        assert m.motor_force == 0.0  # the set_force force is not motor force feedback
        assert m.energy == 0.0


def test_force_is_multiplied_and_clipped_to_available_force(warnings_log):
    sim, m = one(multiplier=2.0, max_torque=10.0, inertia=1.0)
    m.set_force(3.0)  # applies 6
    sim.step()
    assert m.velocity == pytest.approx(6.0 * DT)
    m.set_available_force(4.0)
    m.set_force(3.0)  # 6 > 4: clipped to 4, with a warning
    assert "exceeds" in warnings_log.text
    sim.step()
    assert m.velocity == pytest.approx(6.0 * DT + 4.0 * DT)


def test_set_position_leaves_force_control():
    sim, m = one(**AMPLE)
    m.set_force(1.0)
    sim.step(5)
    m.set_position(m.position)
    m.set_velocity(0.5)
    sim.step()
    # back in position control: the motor brakes the joint to the PID command at once
    assert abs(m.velocity) <= 0.5 + 1e-12
    assert m.motor_force != 0.0


def test_multiplier_scales_position_velocity_and_getters(warnings_log):
    sim, m = one(**AMPLE, multiplier=2.0, max_velocity=10.0)
    m.set_position(0.25)
    assert m.get_target_position() == 0.25  # the caller's value
    assert m.target_position == 0.5  # what the controller tracks
    m.set_velocity(3.0)
    assert m.get_velocity() == 3.0  # internal 6, reported before the multiplier
    m.set_velocity(8.0)  # internal 16 > 10: clipped to 10, reported as 10 / 2
    assert m.get_velocity() == 5.0
    assert "max_velocity" in warnings_log.text
    sim.step(500)
    assert m.position == pytest.approx(0.5, abs=1e-9)


def test_negative_multiplier_reverses_the_motion():
    sim, m = one(**AMPLE, multiplier=-1.0)
    m.set_position(math.inf)
    m.set_velocity(2.0)
    sim.step(4)
    assert m.position == pytest.approx(-4 * 2.0 * DT)


def test_soft_limits_clip_the_target(warnings_log):
    sim, m = one(**AMPLE, min_position=-0.5, max_position=1.0)
    m.set_position(3.0)
    assert m.get_target_position() == 3.0  # the argument, as the seed says
    assert m.target_position == 1.0
    assert "soft limits" in warnings_log.text
    sim.step(400)
    assert m.position == pytest.approx(1.0, abs=1e-9)
    m.set_position(-3.0)
    assert m.target_position == -0.5


def test_soft_limits_do_not_stop_velocity_control_in_dynamic_mode():
    sim, m = one(**AMPLE, min_position=-0.1, max_position=0.1)
    m.set_position(math.inf)
    m.set_velocity(5.0)
    sim.step(10)
    assert m.position == pytest.approx(10 * 5.0 * DT)


def test_getters_before_any_call_return_the_configured_defaults():
    _, m = one(type="linear", max_velocity=3.0, max_force=7.0, acceleration=2.0,
               position=0.25, min_position=-1.0, max_position=1.0, multiplier=0.5,
               control_pid=[4.0, 1.0, 0.5])
    assert m.get_target_position() == 0.25
    assert m.get_velocity() == 3.0
    assert m.get_max_velocity() == 3.0
    assert m.get_acceleration() == 2.0
    assert m.get_available_force() == m.get_max_force() == 7.0
    assert m.get_available_torque() == m.get_max_torque() == 7.0
    assert m.get_min_position() == -1.0
    assert m.get_max_position() == 1.0
    assert m.get_multiplier() == 0.5
    assert m.get_type() == "linear"
    assert m.get_control_pid() == (4.0, 1.0, 0.5)
    assert m.position == 0.25


def test_available_force_clipped_to_max(warnings_log):
    _, m = one(max_torque=10.0)
    m.set_available_torque(15.0)
    assert m.get_available_torque() == 10.0
    assert "max_torque" in warnings_log.text


def test_motor_holds_its_initial_position_before_any_command():
    sim, m = one(position=0.3)
    sim.step(100)
    assert m.position == 0.3
    assert m.velocity == 0.0


def test_reset_returns_to_the_initial_state():
    sim, m = one(**AMPLE, position=0.2, position_sensor={"sampling_period_ms": 8})
    m.set_position(1.0)
    m.set_velocity(3.0)
    sim.step(50)
    sim.reset()
    m = sim.motor("m0")
    assert (sim.time, m.position, m.velocity, m.energy) == (0.0, 0.2, 0.0, 0.0)
    assert m.get_target_position() == 0.2 and m.get_velocity() == 10.0
    assert math.isnan(m.get_position())


@pytest.mark.parametrize("infinity", [math.inf, -math.inf])
@pytest.mark.parametrize("multiplier", [2.0, -2.0])
def test_an_infinite_position_stays_that_infinity_in_the_target_the_controller_uses(
        infinity, multiplier):
    # +-inf is not multiplied (SPEC §2.1): the target the controller uses is the very
    # infinity given, whatever the multiplier's sign, and the signed velocity drives
    sim, m = one(**AMPLE, multiplier=multiplier)
    m.set_position(infinity)
    m.set_velocity(-1.0)
    sim.step(5)
    assert m.target_position == infinity
    assert m.get_target_position() == infinity
    assert m.position == pytest.approx(5 * -1.0 * multiplier * DT, abs=1e-12)


@pytest.mark.parametrize("physics", ["dynamic", "kinematic"])
def test_an_acceleration_of_0_is_accepted_and_nothing_accelerates(physics):
    # SPEC §2.1: -1 (unlimited) or >= 0; 0 is a limit of 0 rad/s^2: from rest the motor
    # stays at rest under a velocity command of either sign and under a position command
    sim, m = one(**AMPLE, physics=physics)
    m.set_acceleration(0.0)
    assert m.get_acceleration() == 0.0
    for command in ((math.inf, 2.0), (math.inf, -2.0), (1.0, 2.0), (-1.0, 2.0)):
        m.set_position(command[0])
        m.set_velocity(command[1])
        sim.step(10)
        assert (m.position, m.velocity) == (0.0, 0.0)


@pytest.mark.parametrize("velocity", [0.5, -0.5])
@pytest.mark.parametrize("side", [1.0, -1.0])
def test_back_in_position_control_after_velocity_control_the_pid_heads_for_the_target(
        velocity, side):
    # P 10: velocity control at +-0.5 rad/s for 10 steps (reached in the first: 0.625
    # N*m) leaves x0 = +-0.04; then a target 0.3 to either side: u = 10 x +-0.3 = +-3,
    # saturated at the speed limit |set_velocity| = 0.5, so one step on the velocity is
    # side x 0.5 and x = x0 + side x 0.004 (a PID fed while it was not in charge, with
    # an error of x / 0, would run one way only)
    sim, m = one(**AMPLE, control_pid=[10.0, 0.0, 0.0], max_velocity=1.0, inertia=0.01)
    m.set_position(math.inf)
    m.set_velocity(velocity)
    sim.step(10)
    x0 = 10 * velocity * DT
    assert m.position == pytest.approx(x0, abs=1e-12)
    m.set_position(x0 + side * 0.3)
    sim.step(1)
    assert m.velocity == pytest.approx(side * 0.5, abs=1e-12)
    assert m.position == pytest.approx(x0 + side * 0.5 * DT, abs=1e-12)


@pytest.mark.parametrize("target", [0.2, -0.2])
def test_a_motor_switched_off_and_on_again_holds_its_target(target):
    # P 10 settles on the target (0.92^400 of the error left); off for 5 steps (no load:
    # it stays), on again: the error is still 0, so it holds, velocity 0 both ways
    sim, m = one(**AMPLE, control_pid=[10.0, 0.0, 0.0], max_velocity=1.0, inertia=0.01)
    m.set_position(target)
    sim.step(400)
    assert m.position == pytest.approx(target, abs=1e-12)
    m.set_available_force(0.0)
    sim.step(5)
    m.set_available_force(100.0)
    sim.step(1)
    assert m.velocity == pytest.approx(0.0, abs=1e-12)
    assert m.position == pytest.approx(target, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_joint_acceleration_is_the_velocity_change_over_the_step(sign):
    # dynamic physics, ample torque: the commanded velocity ramps at the 2 rad/s^2 limit
    # and the joint follows it exactly, so the bank's acceleration (the velocity's
    # difference over the step) is +-2 rad/s^2
    sim, m = one(**AMPLE, acceleration=2.0)
    m.set_position(sign * math.inf)
    m.set_velocity(sign * 1.0)
    sim.step(3)
    assert m.velocity == pytest.approx(sign * 3 * 2.0 * DT, abs=1e-12)
    assert sim.bank.joint_acceleration()[0] == pytest.approx(sign * 2.0, rel=1e-9)
