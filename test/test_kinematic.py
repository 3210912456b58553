"""Kinematic mode (Webots without physics): ramped velocity, exact arrival (SPEC §2.3)."""

import math

import pytest
from conftest import DT, make_sim, one


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


def reference(x: float, steps: int, acc: float, speed: float = 0.0,
              target: float | None = None, velocity: float | None = None,
              low: float | None = None, high: float | None = None,
              current: float = 0.0) -> list[tuple[float, float]]:
    """SPEC §2.3 written out for one motor: (position, current velocity) after each step.

    Position control (``target``): the current speed ramps to ``speed`` and the position
    walks towards the target, stopping on it (reached closer than 1e-6). Velocity control
    (``velocity``, signed): the current velocity ramps to it, the position moves with it,
    and stops at an active soft limit ``low``/``high`` it is at or beyond."""
    out = []
    for _ in range(steps):
        if velocity is not None:
            goal = velocity
            idle = low is not None and ((x >= high and velocity >= 0.0)
                                        or (x <= low and velocity <= 0.0))
        else:
            goal, idle = speed, abs(target - x) < 1e-6
        if idle:
            current = 0.0
        elif abs(goal - current) > 1e-6:
            current += max(-acc * DT, min(acc * DT, goal - current))
        if velocity is not None:
            x += current * DT
        elif target > x:
            x = min(x + current * DT, target)
        elif target < x:
            x = max(x - current * DT, target)
        out.append((x, current))
    return out


@pytest.mark.parametrize(("start", "target"), [(0.3, -0.2), (-0.3, 0.2), (0.25, -0.25),
                                               (-0.25, 0.25)])
def test_position_control_walks_to_a_target_on_either_side_of_zero(start, target):
    """Towards a target on the other side of 0 (also its mirror image, -start), from a
    start that is not 0, either way: step by step as SPEC §2.3, then exactly on it."""
    sim, m = kinematic(position=start, max_velocity=1.0, acceleration=2.0)
    m.set_position(target)
    want = reference(start, 150, acc=2.0, speed=1.0, target=target)
    for k in range(150):
        sim.step()
        assert m.position == pytest.approx(want[k][0], abs=1e-12)
    assert m.position == target
    assert m.velocity == 0.0


@pytest.mark.parametrize("infinity", [math.inf, -math.inf])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_velocity_control_ramps_both_ways_with_either_infinity(infinity, sign):
    """+inf and -inf alike select velocity control, the velocity's sign the direction;
    speeding up, slowing down and reversing all ramp at the acceleration (2 rad/s^2:
    0.016 rad/s a step), so a reversal from 1 rad/s takes 125 steps."""
    sim, m = kinematic(acceleration=2.0, max_torque=1000.0)
    m.set_position(infinity)
    m.set_velocity(sign * 1.0)
    want = reference(0.0, 100, acc=2.0, velocity=sign * 1.0)
    for k in range(100):
        sim.step()
        assert m.position == pytest.approx(want[k][0], abs=1e-12)
    assert m.velocity == pytest.approx(sign * 1.0)
    m.set_velocity(-sign * 1.0)
    want = reference(want[-1][0], 150, acc=2.0, velocity=-sign * 1.0, current=sign * 1.0)
    for k in range(150):
        sim.step()
        assert m.position == pytest.approx(want[k][0], abs=1e-12)
    assert want[124][1] == pytest.approx(-sign * 1.0) and want[123][1] != want[124][1]
    assert m.velocity == pytest.approx(-sign * 1.0)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_velocity_control_at_a_soft_limit_holds_outwards_and_leaves_inwards(side):
    """Started on a soft limit (0.1 or -0.1): any velocity outwards, or 0, holds it there;
    0.5 rad/s inwards leaves at once, ramping at the acceleration."""
    limit = side * 0.1
    for outwards in (side * 0.5, side * 1e-3, 0.0):
        sim, m = kinematic(position=limit, min_position=-0.1, max_position=0.1,
                           acceleration=2.0, max_torque=1000.0)
        m.set_position(math.inf)
        m.set_velocity(outwards)
        sim.step(5)
        assert (m.position, m.velocity) == (limit, 0.0)
    sim, m = kinematic(position=limit, min_position=-0.1, max_position=0.1,
                       acceleration=2.0, max_torque=1000.0)
    m.set_position(math.inf)
    m.set_velocity(-side * 0.5)
    want = reference(limit, 5, acc=2.0, velocity=-side * 0.5, low=-0.1, high=0.1)
    sim.step(5)
    assert m.position == pytest.approx(want[-1][0], abs=1e-15)
    assert m.position == pytest.approx(limit - side * 0.016 * (1 + 2 + 3 + 4 + 5) * DT)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_velocity_control_stops_dead_on_reaching_a_soft_limit_even_asked_for_0(side):
    """Running into a soft limit at 1 rad/s: the step that starts beyond it stops the
    motor at once, and a velocity of 0 asked for there holds it (no ramp down past it)."""
    sim, m = kinematic(min_position=-0.1, max_position=0.1, acceleration=2.0,
                       max_torque=1000.0)
    m.set_position(math.inf)
    m.set_velocity(side * 1.0)
    while side * m.position < 0.1:
        sim.step()
    beyond = m.position
    assert side * m.velocity > 0.5  # still running as it got there (0.64 rad/s)
    m.set_velocity(0.0)
    sim.step(3)
    assert (m.position, m.velocity) == (beyond, 0.0)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_target_exactly_1e_6_away_is_reached_one_closer_is_there(sign):
    """A target is reached when closer than 1e-6 (Webots' threshold): one exactly 1e-6
    away is walked onto; one 0.9e-6 away counts as reached and the motor stays."""
    sim, m = kinematic(acceleration=-1, max_torque=1000.0)
    m.set_position(sign * 1e-6)
    sim.step()
    assert m.position == sign * 1e-6
    sim, m = kinematic(acceleration=-1, max_torque=1000.0)
    m.set_position(sign * 0.9e-6)
    sim.step()
    assert m.position == 0.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_trapezoidal_move_follows_its_profile_exactly(sign):
    """Kinematic: the position is the profile's at every step. 0 -> 1 rad (either way) at
    1 rad/s and 2 rad/s^2: accelerating 0.5 s (0.25 rad), cruising 0.5 s (0.5 rad),
    braking 0.5 s (x(t) = 1 - (1.5 - t)^2 there); then it holds the target."""
    sim, m = kinematic(max_velocity=5.0, acceleration=-1, max_torque=1000.0)
    move = m.trapezoidal_move(sign * 1.0, 0.0, 1.0, 2.0)
    for k in range(1, 200):
        sim.step()
        t = k * DT
        x = t * t if t <= 0.5 else 0.25 + (t - 0.5) if t <= 1.0 else \
            1.0 - max(1.5 - t, 0.0) ** 2
        assert m.position == pytest.approx(sign * x, abs=1e-12), t
    assert move.state == "succeeded"
    assert (m.position, m.velocity) == (sign * 1.0, 0.0)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_move_superseded_by_a_velocity_goes_on_from_the_profiles_speed(sign):
    """A move to 1 rad (either way) at 1 rad/s and 2 rad/s^2 cruises at 1 rad/s from
    0.5 s; a velocity command of 1 rad/s the same way at 0.6 s goes on at it at once
    (0.008 rad a step), the ramp starting from the profile's speed, not from rest."""
    sim, m = kinematic(max_velocity=5.0, acceleration=2.0, max_torque=1000.0)
    m.trapezoidal_move(sign * 1.0, 0.0, 1.0, 2.0)
    sim.step(75)
    assert m.position == pytest.approx(sign * (0.25 + 0.1), abs=1e-12)
    m.set_position(sign * math.inf)
    m.set_velocity(sign * 1.0)
    for _ in range(10):
        before = m.position
        sim.step()
        assert m.position - before == pytest.approx(sign * 1.0 * DT, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_joint_acceleration_is_the_ramps(sign):
    """The acceleration the bank reports (its velocity's difference over the step) is the
    kinematic ramp's, +-2 rad/s^2, while the velocity ramps."""
    sim, m = kinematic(acceleration=2.0, max_torque=1000.0)
    m.set_position(sign * math.inf)
    m.set_velocity(sign * 1.0)
    sim.step(3)
    assert sim.bank.joint_acceleration()[0] == pytest.approx(sign * 2.0)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_move_of_one_motor_leaves_the_other_on_its_own_law(sign):
    """Two motors, kinematic: the first on a trapezoidal move (profile exactly), the
    second in velocity control beside it (its own ramp, 2 rad/s^2), either way."""
    sim = make_sim({"max_velocity": 5.0, "acceleration": 2.0, "max_torque": 1000.0},
                   {"max_velocity": 5.0, "acceleration": 2.0, "max_torque": 1000.0},
                   physics="kinematic")
    a, b = sim.motors
    a.trapezoidal_move(sign * 1.0, 0.0, 1.0, 2.0)
    b.set_position(math.inf)
    b.set_velocity(-sign * 1.0)
    want = reference(0.0, 50, acc=2.0, velocity=-sign * 1.0)
    for k in range(50):
        sim.step()
        t = (k + 1) * DT
        assert a.position == pytest.approx(sign * t * t, abs=1e-12)
        assert b.position == pytest.approx(want[k][0], abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_move_that_arrives_at_a_velocity_goes_straight_on_at_it(sign):
    """0 -> 0.5 rad arriving at 0.5 rad/s, within 1 rad/s and 2 rad/s^2 (the motor's
    acceleration limit 2 too): the profile arrives at 0.5 rad/s (the peak would be
    sqrt(1.125) > 1: it cruises at 1 and brakes to 0.5); from there velocity control at
    0.5 rad/s goes on at it, 0.004 rad a step, as in dynamic mode, not slower."""
    sim, m = kinematic(max_velocity=5.0, acceleration=2.0, max_torque=1000.0)
    move = m.trapezoidal_move(sign * 0.5, sign * 0.5, 1.0, 2.0)
    for _ in range(200):
        sim.step()
        if move.state == "succeeded":
            break
    assert move.state == "succeeded"
    for _ in range(20):
        before = m.position
        sim.step()
        assert m.velocity == pytest.approx(sign * 0.5, abs=1e-9)
        assert m.position - before == pytest.approx(sign * 0.5 * DT, abs=1e-12)
