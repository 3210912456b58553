"""Modes, flags, halt, enable/disable, e-stop, trapezoidal moves and the watchdog (SPEC §3,
issue 5), in the model.

Expected values are computed here independently: the closed-form trapezoid (time to
accelerate V/A, cruise (D - V^2/A)/V; or the triangle 2*sqrt(D/A)), the halting ramp
v_k = v0 - k*a*dt, and step counts from the basic time step.
"""

import math
import threading

import numpy as np
import pytest
from conftest import DT, DT_MS, assert_unchanged, make_sim, one, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.model import CommandRefusedError, ServoMode, StateFlags, plan_trapezoid

READY_ENABLED = StateFlags.READY | StateFlags.ENABLED
STRONG = {"max_torque": 1000.0, "max_velocity": 100.0}  # follows any profile exactly


def closed_form(t: float, distance: float, v: float, a: float) -> tuple[float, float]:
    """Position of a rest-to-rest move of ``distance`` >= 0 at time t, and its duration."""
    if distance >= v * v / a:  # reaches v: accelerate, cruise, brake
        t_acc, t_cruise = v / a, (distance - v * v / a) / v
    else:  # triangle
        t_acc, t_cruise = math.sqrt(distance / a), 0.0
        v = a * t_acc
    total = 2 * t_acc + t_cruise
    if t <= t_acc:
        return 0.5 * a * t * t, total
    if t <= t_acc + t_cruise:
        return 0.5 * a * t_acc ** 2 + v * (t - t_acc), total
    left = max(total - t, 0.0)
    return distance - 0.5 * a * left * left, total


# ------------------------------------------------------------------ modes and flags


def test_commands_switch_modes_and_flags():
    _, m = one(**STRONG)
    assert m.mode is ServoMode.HALT  # holding the initial position, no command yet
    assert m.flags == READY_ENABLED
    m.set_position(0.5)
    assert (m.mode, m.flags) == (ServoMode.POSITION, READY_ENABLED | StateFlags.VALID_COMMAND)
    m.set_velocity(2.0)  # in position control: the speed limit
    assert m.mode is ServoMode.POSITION
    m.set_position(math.inf)
    assert m.mode is ServoMode.VELOCITY
    m.set_torque(0.5)
    assert m.mode is ServoMode.EFFORT
    m.halt()
    assert (m.mode, m.flags) == (ServoMode.HALT, READY_ENABLED)
    m.set_velocity(1.0)  # holding: still the speed limit of the hold
    assert m.mode is ServoMode.HALT
    move = m.trapezoidal_move(1.0, 0.0, 1.0, 4.0)
    assert m.mode is ServoMode.TRAPEZOIDAL and m.move is move
    assert m.flags & StateFlags.VALID_COMMAND
    m.disable()
    assert (m.mode, m.flags) == (ServoMode.DISABLED, StateFlags.READY)
    assert move.state == "aborted" and "disabled" in move.reason
    m.enable()
    assert (m.mode, m.flags) == (ServoMode.HALT, READY_ENABLED)
    m.e_stop()
    assert (m.mode, m.flags) == (ServoMode.DISABLED, StateFlags.E_STOP)
    m.reset_e_stop()
    assert (m.mode, m.flags) == (ServoMode.DISABLED, StateFlags.READY)
    m.enable()
    assert m.mode is ServoMode.HALT


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_move_that_arrives_holds_or_goes_on_at_the_target_velocity(sign):
    """To +-0.5 at rest: it holds there; then to +-1.0 arriving at +-1.5 rad/s: it goes
    on in velocity control at that signed speed (both directions)."""
    sim, m = one(**STRONG)
    move = m.trapezoidal_move(sign * 0.5, 0.0, 2.0, 8.0)
    sim.step(200)
    assert move.state == "succeeded" and m.mode is ServoMode.POSITION
    assert m.get_target_position() == sign * 0.5
    assert m.position == pytest.approx(sign * 0.5, abs=1e-12)
    move = m.trapezoidal_move(sign * 1.0, sign * 1.5, 2.0, 8.0)
    sim.step(200)
    assert move.state == "succeeded" and m.mode is ServoMode.VELOCITY
    # Webots' velocity control: target +inf, the signed velocity
    assert m.get_target_position() == math.inf and m.get_velocity() == sign * 1.5
    assert m.velocity == pytest.approx(sign * 1.5, abs=1e-12)


# ------------------------------------------------------------------ halt


def test_halt_holds_the_position_it_had_at_once():
    sim, m = one(**STRONG, control_pid=[50.0, 0.0, 0.0])
    m.set_velocity(6.0)
    m.set_position(2.0)
    sim.step(10)  # moving at the speed limit
    here = m.position
    assert m.velocity == pytest.approx(6.0)
    m.halt()
    assert m.target_position == here and m.get_target_position() == here
    sim.step(1)  # the error is 0 at the first step: v_cmd 0, and the force is ample
    assert m.velocity == pytest.approx(0.0, abs=1e-9)
    sim.step(100)
    assert m.position == pytest.approx(here, abs=1e-12)


def test_halt_of_a_velocity_motor_ramps_down_within_the_acceleration_limit():
    v0, a = 2.0, 10.0  # 0.08 rad/s per 8 ms step: 25 steps to stop
    sim, m = one(**STRONG, acceleration=a)
    m.set_position(math.inf)
    m.set_velocity(v0)
    sim.step(100)
    assert m.velocity == pytest.approx(v0)
    start = m.position
    m.halt()
    assert m.mode is ServoMode.HALT
    expected, travelled = [], 0.0
    for k in range(1, 26):
        v = max(v0 - k * a * DT, 0.0)
        travelled += v * DT
        expected.append(v)
    seen = []
    for _ in range(25):
        sim.step()
        seen.append(m.velocity)
    np.testing.assert_allclose(seen, expected, atol=1e-9)
    assert m.position - start == pytest.approx(travelled, abs=1e-9)
    sim.step(1)  # stopped: it now holds where it stopped
    assert math.isfinite(m.target_position)
    assert m.target_position == pytest.approx(start + travelled, abs=1e-9)
    sim.step(50)
    assert m.position == pytest.approx(start + travelled, abs=1e-9)


def test_halt_without_an_acceleration_limit_stops_in_one_step():
    sim, m = one(**STRONG)
    m.set_position(-math.inf)
    m.set_velocity(3.0)
    sim.step(20)
    m.halt()
    here = m.position
    sim.step(1)
    assert m.velocity == pytest.approx(0.0, abs=1e-9) and m.position == pytest.approx(here)


# ------------------------------------------------------------------ enable / disable


def test_disabled_is_the_passive_joint():
    load = {"gravity_mass": 0.2, "gravity_distance": 0.1}
    sim, m = one(load=load, static_friction=0.05)
    ref, r = one(load=load, static_friction=0.05, max_torque=0.0)  # SPEC §2.2 passive
    m.set_position(0.3)
    m.disable()
    sim.step(300)
    ref.step(300)
    assert m.position == r.position and m.velocity == r.velocity
    assert m.motor_force == 0.0 and m.position < -0.5  # it fell


def test_disabled_refuses_motion_but_takes_settings_and_enable_holds_where_it_is():
    sim, m = one(load={"external": 0.5})
    m.disable()
    sim.step(20)
    before = snapshot(sim)
    for call, args in ((m.set_position, (1.0,)), (m.set_velocity, (1.0,)),
                       (m.set_torque, (0.1,)), (m.halt, ()),
                       (m.trapezoidal_move, (1.0, 0.0, 1.0, 1.0))):
        with pytest.raises(CommandRefusedError,
                           match=f"motor 'm0': {call.__name__} refused: disabled"):
            call(*args)
    assert_unchanged(before, snapshot(sim))
    m.set_control_pid(20.0, 0.0, 0.0)  # settings are fine
    m.enable_position(8)
    here = m.position
    m.enable()
    assert m.mode is ServoMode.HALT and m.target_position == here


# ------------------------------------------------------------------ e-stop


def test_e_stop_latches_refuses_every_command_until_reset_then_needs_enable(warnings_log):
    sim, m = one(**STRONG)
    m.set_position(1.0)
    sim.step(5)
    m.e_stop()
    assert [r.getMessage() for r in warnings_log.records] == [
        "motor 'm0': e-stop: torque off, commands refused until reset_e_stop"]
    before = snapshot(sim)
    for call, args in ((m.set_position, (0.0,)), (m.set_velocity, (1.0,)),
                       (m.set_acceleration, (1.0,)), (m.set_available_torque, (1.0,)),
                       (m.set_control_pid, (1.0, 0.0, 0.0)), (m.set_force, (1.0,)),
                       (m.halt, ()), (m.enable, ()),
                       (m.trapezoidal_move, (0.0, 0.0, 1.0, 1.0))):
        with pytest.raises(CommandRefusedError, match=f"{call.__name__} refused: e-stop latched"):
            call(*args)
    assert_unchanged(before, snapshot(sim))
    m.e_stop()  # again: no second warning
    assert len(warnings_log.records) == 1
    m.enable_position(8)  # sensors and getters still answer
    assert m.get_target_position() == 1.0
    sim.step(10)
    assert m.motor_force == 0.0 and m.flags == StateFlags.E_STOP
    m.reset_e_stop()
    with pytest.raises(CommandRefusedError, match="disabled"):
        m.set_position(0.0)
    m.enable()
    m.set_position(0.0)
    assert m.mode is ServoMode.POSITION


def test_node_wide_e_stop_and_coupled_motors():
    sim = make_sim({"name": "a"}, {"name": "g::l"}, {"name": "g::r", "multiplier": -1.0})
    sim.motor("g::l").e_stop()  # coupled: the whole group stops
    assert [m.flags for m in sim] == [READY_ENABLED, StateFlags.E_STOP, StateFlags.E_STOP]
    sim.e_stop()
    assert all(m.flags == StateFlags.E_STOP for m in sim)
    modes, _ = sim.report()
    assert modes.tolist() == [ServoMode.DISABLED] * 3
    sim.reset_e_stop()
    assert all(m.flags == StateFlags.READY for m in sim)


def test_e_stop_latches_under_concurrent_commands():
    """Four threads command as fast as they can while the main thread e-stops: no
    command that starts after e_stop() returned gets through, and the motor stays off."""
    sim, m = one(**STRONG)
    stopped = threading.Event()
    late_successes, refusals = [], []

    def hammer(k: int) -> None:
        calls = (lambda: m.set_position(0.1 * k), lambda: m.set_velocity(1.0 + k),
                 m.enable, m.halt, lambda: m.trapezoidal_move(0.5, 0.0, 1.0, 1.0))
        for n in range(4000):
            after = stopped.is_set()
            try:
                calls[(n + k) % len(calls)]()
            except CommandRefusedError:
                refusals.append(k)
                continue
            if after:
                late_successes.append((k, n))

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    stepper = threading.Thread(target=sim.step, args=(3000,))
    for t in [*threads, stepper]:
        t.start()
    while len(refusals) == 0 and sim.time_ms < 200 * DT_MS:  # let them get going
        sim.step(1)
    m.e_stop()
    stopped.set()
    for t in [*threads, stepper]:
        t.join(timeout=60)
    assert not late_successes
    assert refusals  # the threads did run into the latch
    sim.step(10)
    assert m.flags == StateFlags.E_STOP and m.mode is ServoMode.DISABLED
    assert not sim.bank.enabled[0] and m.motor_force == 0.0 and m.move is None


# ------------------------------------------------------------------ trapezoidal moves


@pytest.mark.parametrize("distance", [1.0, 0.2, -0.6])  # trapezoid, triangle, backwards
def test_trapezoidal_move_follows_the_closed_form_profile(distance):
    v, a = 2.0, 8.0  # V^2/A = 0.5: 1.0 cruises for 0.25 s, 0.2 is a triangle
    sim, m = one(**STRONG, position=0.1)
    move = m.trapezoidal_move(0.1 + distance, 0.0, v, a)
    _, total = closed_form(0.0, abs(distance), v, a)
    assert move.plan.duration == pytest.approx(total, abs=1e-12)
    steps = math.ceil(total / DT - 1e-9)
    errors = []
    for k in range(1, steps + 1):
        sim.step()
        p, _ = closed_form(min(k * DT, total), abs(distance), v, a)
        errors.append(m.position - (0.1 + math.copysign(p, distance)))
    assert max(map(abs, errors)) < 1e-9
    assert move.state == "active"
    sim.step()  # the step that starts at or after the end completes it
    assert move.state == "succeeded" and move.finished_ms == steps * DT_MS
    assert m.position == pytest.approx(0.1 + distance, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_move_of_one_motor_leaves_the_pid_of_the_other_its_own_in_dynamic_physics(sign):
    # a on a trapezoidal move (its profile's velocity fed forward); b beside it in P
    # control (10) towards -+0.5 with ample torque: b's error decays as a lone motor's,
    # e_k = e0 (1 - P dt)^k (test_control), whatever a's feedforward
    sim = make_sim(STRONG, {**STRONG, "control_pid": [10.0, 0.0, 0.0]})
    a, b = sim.motors
    a.trapezoidal_move(sign * 1.0, 0.0, 1.0, 2.0)
    b.set_position(-sign * 0.5)
    for k in range(1, 40):
        sim.step()
        assert b.position == pytest.approx(-sign * (0.5 - 0.5 * (1 - 10 * DT) ** k),
                                           abs=1e-12)
    assert a.move.state == "active"


def test_trapezoid_acceleration_and_velocity_stay_within_the_limits():
    sim, m = one(**STRONG)
    m.trapezoidal_move(3.0, 0.0, 1.5, 4.0)
    accelerations, velocities = [], []
    for _ in range(300):
        sim.step()
        accelerations.append(float(sim.bank.joint_acceleration()[0]))
        velocities.append(m.velocity)
    assert max(velocities) == pytest.approx(1.5, abs=1e-9)
    assert max(map(abs, accelerations)) <= 4.0 + 1e-6
    # the motor moves at each step's average profile velocity (position-exact): the
    # first step's average is a*dt/2, then every step gains a*dt
    assert accelerations[:3] == [pytest.approx(2.0), pytest.approx(4.0), pytest.approx(4.0)]


def test_kinematic_mode_is_exactly_on_the_profile():
    sim, m = one(physics="kinematic")
    m.trapezoidal_move(1.0, 0.0, 2.0, 8.0)
    for k in range(1, 94):
        sim.step()
        assert m.position == pytest.approx(closed_form(k * DT, 1.0, 2.0, 8.0)[0], abs=1e-12)


def test_coupled_motors_move_together_in_their_own_units():
    sim = make_sim({"name": "g::a", **STRONG},
                   {"name": "g::b", "multiplier": 2.0, "max_torque": 1000.0, "max_velocity": 200.0})
    a, b = sim.motor("g::a"), sim.motor("g::b")
    move = a.trapezoidal_move(0.5, 0.0, 1.0, 2.0)
    assert b.move is move and b.mode is ServoMode.TRAPEZOIDAL
    assert move.plans[1].duration == pytest.approx(move.plans[0].duration)
    sim.step(300)
    assert (a.position, b.position) == (pytest.approx(0.5), pytest.approx(1.0))


def test_a_move_respects_soft_limits_and_hard_stops(warnings_log):
    sim, m = one(**STRONG, min_position=-1.0, max_position=0.8)
    move = m.trapezoidal_move(2.0, 0.0, 2.0, 8.0)
    assert "target_position 2 exceeds the soft limits and hard stops [-1, 0.8]; clipped " \
           "to 0.8" in warnings_log.text
    assert move.plan.target == 0.8
    positions = []
    for _ in range(200):
        sim.step()
        positions.append(m.position)
    assert max(positions) <= 0.8 + 1e-12 and positions[-1] == pytest.approx(0.8)
    sim, m = one(**STRONG, min_stop=-0.5, max_stop=0.5)
    m.trapezoidal_move(-3.0, 0.0, 2.0, 8.0)
    sim.step(200)
    assert m.position == pytest.approx(-0.5) and m.get_target_position() == -0.5
    with pytest.raises(ValueError, match=r"target_velocity = 1\.0 rejected: must be 0 with soft"):
        m.trapezoidal_move(0.0, 1.0, 2.0, 8.0)


def test_a_move_clips_to_the_motor_limits(warnings_log):
    _, m = one(max_velocity=1.0, acceleration=3.0)
    move = m.trapezoidal_move(1.0, 0.0, 5.0, 10.0)
    assert (move.plan.peak, move.plan.a1) == (1.0, 3.0)
    assert "max_velocity 5 exceeds max_velocity [0, 1]; clipped to 1" in warnings_log.text
    assert "max_acceleration 10 exceeds the acceleration limit [0, 3]; clipped to 3" \
        in warnings_log.text


@pytest.mark.parametrize("args, match", [
    ((math.nan, 0.0, 1.0, 1.0), "target_position = nan rejected: NaN"),
    ((1.0, 0.0, 0.0, 1.0), "max_velocity = 0.0 rejected: must be > 0"),
    ((1.0, 0.0, 1.0, -2.0), "max_acceleration = -2.0 rejected: must be > 0"),
    ((1.0, math.inf, 1.0, 1.0), "target_velocity = inf rejected: must be finite"),
])
def test_bad_moves_are_rejected_and_change_nothing(args, match):
    sim, m = one()
    m.set_position(0.2)
    before = snapshot(sim)
    with pytest.raises(ValueError, match=f"motor 'm0': {match}"):
        m.trapezoidal_move(*args)
    assert_unchanged(before, snapshot(sim))
    assert m.mode is ServoMode.POSITION and m.move is None


def test_preemption_new_commands_cancel_and_e_stop_end_a_move_cleanly():
    sim, m = one(**STRONG)
    first = m.trapezoidal_move(2.0, 0.0, 1.0, 2.0)
    sim.step(50)
    second = m.trapezoidal_move(-1.0, 0.0, 1.0, 2.0)  # starts from where the motor is
    assert (first.state, first.reason) == ("aborted", "preempted by a new trapezoidal_move")
    assert second.plan.start == m.position and second.plan.start_velocity == m.velocity
    sim.step(10)
    m.set_position(0.0)
    assert second.state == "aborted" and "superseded by a command to 'm0'" in second.reason
    assert m.mode is ServoMode.POSITION and m.target_position == 0.0
    third = m.trapezoidal_move(1.0, 0.0, 1.0, 2.0)
    sim.step(20)
    third.cancel()
    assert third.state == "canceled" and m.mode is ServoMode.HALT
    assert m.target_position == m.position
    fourth = m.trapezoidal_move(0.0, 0.0, 1.0, 2.0)
    m.e_stop()
    assert (fourth.state, fourth.reason) == ("aborted", "e-stop")
    sim.step(20)
    assert m.move is None and not sim.bank.supervisor.trapezoidal.any()


@settings(max_examples=200, deadline=None)
@given(start=st.floats(-5, 5), v0=st.floats(-3, 3), target=st.floats(-5, 5),
       vf=st.floats(-1, 1), vmax=st.floats(1, 3), amax=st.floats(0.5, 20))
def test_plans_reach_the_target_within_the_limits(start, v0, target, vf, vmax, amax):
    plan = plan_trapezoid(start, v0, target, vf, vmax, amax)
    assert min(plan.t1, plan.tc, plan.t3) >= 0
    end_position, end_velocity = plan.sample(plan.duration)
    assert end_position == pytest.approx(target, abs=1e-9 * (1 + abs(target - start)))
    assert end_velocity == pytest.approx(vf, abs=1e-9)
    t = np.linspace(0.0, plan.duration, 200)
    _, v = plan.sample(t)
    assert np.all(np.abs(v) <= vmax + 1e-9)
    # time-optimal for rest-to-rest: exactly the closed form
    if v0 == 0 and vf == 0:
        assert plan.duration == pytest.approx(
            closed_form(0.0, abs(target - start), vmax, amax)[1], abs=1e-9)


# ------------------------------------------------------------------ watchdog


def test_watchdog_halts_a_silent_motor_once_and_a_command_clears_it(warnings_log):
    sim, m = one(**STRONG, command_timeout=0.1)  # 100 ms; steps start at 0, 8, ... 104
    assert m.get_command_timeout() == 0.1
    sim.step(50)
    assert m.mode is ServoMode.HALT and not warnings_log.records  # not commanded: not watched
    sim.reset()
    m.set_position(1.0)
    sim.step(13)  # the step starting at 96 ms: 96 < 100
    assert m.mode is ServoMode.POSITION
    sim.step(1)  # the step starting at 104 ms halts
    assert m.mode is ServoMode.HALT and m.flags & StateFlags.WARNING
    assert [r.getMessage() for r in warnings_log.records] == [
        "motor 'm0': no command for 0.1 s (command_timeout) in position mode: halted"]
    sim.step(100)
    assert len(warnings_log.records) == 1  # logged once
    m.set_position(0.0)  # a command clears the warning and restarts the count
    assert not m.flags & StateFlags.WARNING and m.mode is ServoMode.POSITION
    for _ in range(12):
        sim.step()
        m.set_position(0.0)  # fed every step: never trips
    assert m.mode is ServoMode.POSITION


def test_watchdog_waits_for_the_end_of_a_move_and_can_be_set_live():
    sim, m = one(**STRONG)
    sim.set_parameter("m0", "command_timeout", 0.05)
    move = m.trapezoidal_move(1.0, 0.0, 2.0, 8.0)  # 0.75 s, far beyond the timeout
    sim.step(95)  # completes at the step starting at 752 ms
    assert move.state == "succeeded" and m.mode is ServoMode.POSITION
    sim.step(6)  # 760 ... 800: 48 ms since the arrival
    assert m.mode is ServoMode.POSITION
    sim.step(1)  # 808: 56 ms
    assert m.mode is ServoMode.HALT
    sim.set_parameter("m0", "command_timeout", 0.0)
    m.set_torque(0.0)
    sim.step(500)
    assert m.mode is ServoMode.EFFORT


def test_reset_ends_moves_and_clears_the_latch():
    sim, m = one(**STRONG)
    move = m.trapezoidal_move(1.0, 0.0, 2.0, 8.0)
    sim.step(10)
    sim.reset()
    assert (move.state, move.reason) == ("aborted", "reset")
    m.e_stop()
    sim.reset()
    assert m.mode is ServoMode.HALT and m.flags == READY_ENABLED


def test_reset_e_stop_says_so_once_and_releases_the_latch(caplog):
    """An e-stop reset logs one info line naming the motor and what it still needs; a
    reset without a latch says nothing; after it the motor is disabled, not e-stopped."""
    caplog.set_level("INFO", logger="servo_sim")
    sim, m = one(**STRONG)
    m.reset_e_stop()  # not latched: nothing to say
    assert caplog.records == []
    m.e_stop()
    caplog.clear()
    m.reset_e_stop()
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "motor 'm0': e-stop reset (still disabled: call enable)")]
    assert not sim.bank.e_stop[0] and m.flags & StateFlags.E_STOP == 0
    assert m.mode is ServoMode.DISABLED


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_speed_limit_during_a_move_ends_it_in_position_control(sign):
    """set_velocity during a move (position control: its magnitude is the speed limit)
    aborts the move; the motor is then in position control (mode POSITION), not a move
    without a profile."""
    sim, m = one(**STRONG)
    move = m.trapezoidal_move(sign * 1.0, 0.0, 2.0, 8.0)
    sim.step(10)
    assert m.mode is ServoMode.TRAPEZOIDAL
    m.set_velocity(sign * 0.5)
    assert move.state == "aborted"
    assert m.mode is ServoMode.POSITION and m.move is None
    assert m.get_velocity() == sign * 0.5


@pytest.mark.parametrize("final", [1.0, -1.0])
@pytest.mark.parametrize("limits", [{"min_position": -0.5, "max_position": 0.5},
                                    {"min_stop": -0.5, "max_stop": 0.5}])
def test_a_move_arriving_at_a_velocity_of_either_sign_is_refused_within_limits(
        limits, final):
    """With soft limits or hard stops the motor would go on past the target at either
    sign of target velocity: both are refused, naming it, and nothing changes."""
    sim, m = one(**limits)
    m.set_position(0.2)
    before = snapshot(sim)
    with pytest.raises(ValueError, match=f"motor 'm0': target_velocity = {final!r} rejected: "
                       "must be 0 with soft limits or hard stops"):
        m.trapezoidal_move(0.0, final, 2.0, 8.0)
    assert_unchanged(before, snapshot(sim))
    assert m.mode is ServoMode.POSITION and m.move is None


def test_a_move_on_a_motor_whose_acceleration_limit_is_0_is_refused():
    """set_acceleration(0): the motor cannot accelerate, so no move can be planned: the
    move is refused naming max_acceleration (0 is a limit, not -1's unlimited)."""
    sim, m = one()
    m.set_acceleration(0.0)
    m.set_position(0.2)
    before = snapshot(sim)
    with pytest.raises(ValueError, match=r"motor 'm0': max_acceleration = 8\.0 rejected: the "
                       "motor's limit is 0"):
        m.trapezoidal_move(1.0, 0.0, 2.0, 8.0)
    assert_unchanged(before, snapshot(sim))
    assert m.mode is ServoMode.POSITION and m.move is None
