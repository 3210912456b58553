"""A real servo's actuator (``servo_sim/model/actuator.py``): each part against a hand
calculation or closed-form physics, plus the envelope as a hypothesis property."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import reversal
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from servo_sim.model import CommandRefusedError, ConfigError, Simulation, parse_config

INF = float("inf")
TICK = 2 * math.pi / 4096


def motor(actuator: dict, step_ms: int = 1, **fields) -> Simulation:
    return Simulation(parse_config({"basic_time_step_ms": step_ms, "motors": [
        {"name": "m", "max_torque": 10.0, "max_velocity": 20.0, "actuator": actuator,
         **fields}]}))


ENVELOPE = {"stall_torque": 2.0, "no_load_speed": 5.0, "rated_voltage": 12.0}


def test_a_motor_without_an_actuator_has_no_actuator_code_on_its_step():
    sim = Simulation(parse_config({"motors": [{"name": "m"}]}))
    assert sim.bank.actuators is None


@pytest.mark.parametrize("supply", [12.0, 6.0, 14.8])
def test_the_free_speed_is_the_no_load_speed_scaled_by_the_supply_voltage(supply):
    sim = motor({**ENVELOPE, "supply_voltage": supply})
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(20.0)
    sim.step(2000)
    assert m.velocity == pytest.approx(5.0 * supply / 12.0, rel=1e-9)


@pytest.mark.parametrize("load", [0.0, 0.5, 1.0, 1.5])
def test_under_a_load_the_speed_falls_on_the_line_from_no_load_to_stall(load):
    # DC motor: w = w0 * (1 - T / T_stall) at full drive
    sim = motor(ENVELOPE, load={"external": -load})
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(20.0)
    sim.step(2000)
    assert m.velocity == pytest.approx(5.0 * (1 - load / 2.0), rel=1e-9)
    assert m.motor_force == pytest.approx(load, abs=1e-9)


def test_against_a_hard_stop_the_motor_gives_its_stall_torque():
    sim = motor(ENVELOPE, min_stop=-0.1, max_stop=0.1)
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(20.0)
    sim.step(500)
    assert m.position == 0.1
    assert m.motor_force == pytest.approx(2.0)


def test_the_max_torque_still_caps_the_envelope():
    sim = motor(ENVELOPE, max_torque=1.2, min_stop=-0.1, max_stop=0.1)
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(20.0)
    sim.step(500)
    assert m.motor_force == pytest.approx(1.2)


def test_braking_is_limited_by_the_stall_current_not_the_back_emf():
    # moving at 4 rad/s, told to stop: the drive could reach -2 - 4 * 2/5 = -3.6 N*m,
    # the stall current allows -2 (the regenerating side is current-limited)
    sim = motor(ENVELOPE, inertia=0.1)
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(4.0)
    sim.step(5000)
    assert m.velocity == pytest.approx(4.0, rel=1e-6)
    m.set_velocity(0.0)
    sim.step(1)
    assert m.motor_force == pytest.approx(-2.0)


@settings(max_examples=40, deadline=None)
@given(stall=st.floats(0.1, 20), speed=st.floats(0.5, 20), supply=st.floats(3, 24),
       load=st.floats(-30, 30), command=st.floats(-40, 40))
def test_the_force_always_lies_within_the_envelope_at_the_new_speed(stall, speed, supply,
                                                                   load, command):
    sim = motor({"stall_torque": stall, "no_load_speed": speed, "rated_voltage": 12.0,
                 "supply_voltage": supply}, max_torque=50.0, max_velocity=50.0,
                load={"external": load})
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(command)
    drive, slope = stall * supply / 12.0, stall / speed
    for _ in range(50):
        sim.step()
        w, f = m.velocity, m.motor_force
        tol = 1e-9 * (1 + abs(drive) + abs(slope * w))
        low, high = -drive - slope * w, drive - slope * w  # full drive back and ahead
        assert low - tol <= f <= high + tol
        # the stall current, unless even full drive ahead brakes harder (driven beyond
        # the free speed) or full drive back pushes harder
        assert abs(f) <= drive + tol or f == pytest.approx(high if f < 0 else low)


def test_the_controller_and_the_sensor_see_whole_encoder_ticks():
    sim = motor({"resolution": 4096}, position_sensor={"sampling_period_ms": 1})
    m = sim.motors[0]
    m.set_position(0.3)
    sim.step(37)  # mid-move
    reading = m.get_position()
    assert reading / TICK == pytest.approx(round(reading / TICK), abs=1e-9)
    assert abs(reading - m.position) <= TICK / 2


def test_a_position_error_within_the_deadband_drives_nothing():
    sim = motor({"deadband": 0.01})
    m = sim.motors[0]
    m.set_position(0.009)
    sim.step(200)
    assert m.position == 0.0
    m.set_position(0.02)
    sim.step(500)
    # P control stops where the error enters the deadband
    assert 0.02 - 0.01 - 1e-6 <= m.position <= 0.02


def test_coulomb_friction_holds_below_it_and_slows_above_it():
    sim = motor({"friction": 0.5}, inertia=0.1, max_torque=0.0)  # unpowered
    m = sim.motors[0]
    sim.bank.velocity[:] = 1.0  # coasting at 1 rad/s: decelerates at 0.5 / 0.1 = 5 rad/s^2
    sim.step(100)
    assert m.velocity == pytest.approx(1.0 - 5.0 * 0.1, abs=1e-9)
    sim.step(200)
    assert m.velocity == 0.0  # then stuck


@settings(max_examples=40, deadline=None)
@given(friction=st.floats(0.01, 0.5), external=st.floats(0.0, 0.9),
       stribeck=st.floats(0.0, 0.9), margin=st.sampled_from([0.99, 1.01]))
def test_load_dependent_friction_holds_what_its_budget_at_rest_holds(
        friction, external, stribeck, margin):
    """Unpowered, a constant load L against Rhoban/bam's friction at rest (no motor
    torque, s = 1): c = f + a L + b L. Held where L <= c, moving where it is above:
    L x 0.99 of the load at which the two are equal stays put, x 1.01 goes."""
    assume(external + stribeck < 0.95)  # else it holds any load: none lets go
    balance = friction / (1.0 - external - stribeck)  # L = f + (a + b) L
    sim = motor({"friction": friction, "load_friction_external": external,
                 "load_friction_external_stribeck": stribeck, "stribeck_velocity": 0.05,
                 "stribeck_alpha": 1.5}, inertia=0.01, max_torque=0.0,
                load={"external": -balance * margin})
    sim.step(200)
    m = sim.motors[0]
    if margin < 1.0:
        assert (m.position, m.velocity) == (0.0, 0.0)
    else:
        assert m.velocity < 0.0


def test_a_gear_holding_a_load_holds_more_than_coulomb_friction():
    """The STS3215 profile's factors at rest (0.196 + 0.418 of the load): its Coulomb
    friction alone (0.0524 N*m) lets 0.10 N*m go, the load-dependent budget,
    0.0524 + 0.614 x 0.10 = 0.114 N*m, holds it."""
    fields = {"friction": 0.052393, "stribeck_velocity": 0.0586581, "stribeck_alpha": 1.59284}
    load = {"external": -0.10}
    coulomb = motor(fields, inertia=0.01, max_torque=0.0, load=load)
    held = motor({**fields, "load_friction_external": 0.195734,
                  "load_friction_external_stribeck": 0.417901},
                 inertia=0.01, max_torque=0.0, load=load)
    coulomb.step(100)
    held.step(100)
    assert coulomb.motors[0].velocity < 0.0
    assert held.motors[0].velocity == 0.0


@settings(max_examples=40, deadline=None)
@given(friction=st.floats(0.01, 0.5), k_motor=st.floats(0.0, 0.45),
       k_motor_s=st.floats(0.0, 0.45), margin=st.sampled_from([0.99, 1.01]))
def test_the_motors_own_torque_loads_the_gear_too(friction, k_motor, k_motor_s, margin):
    """set_torque(T), no load: the gear's friction at rest is f + (k_mot + k_mot_s) T
    (bam's |0 - T k|), so T moves the joint only beyond f / (1 - k_mot - k_mot_s): 0.99x
    of it stays at (0, 0), 1.01x turns."""
    threshold = friction / (1.0 - k_motor - k_motor_s)
    sim = motor({"friction": friction, "load_friction_motor": k_motor,
                 "load_friction_motor_stribeck": k_motor_s, "stribeck_velocity": 0.05,
                 "stribeck_alpha": 1.5}, inertia=0.01)
    m = sim.motors[0]
    m.set_torque(threshold * margin)
    sim.step(200)
    if margin < 1.0:
        assert (m.position, m.velocity) == (0.0, 0.0)
    else:
        assert m.velocity > 0.0


@pytest.mark.parametrize("factors", [
    {"load_friction_external": 0.5, "load_friction_motor": 0.2},
    {"load_friction_external_stribeck": 0.5, "load_friction_motor_stribeck": 0.2,
     "stribeck_velocity": 0.05, "stribeck_alpha": 1.5}], ids=["load", "near-rest"])
@pytest.mark.parametrize(("torque", "moves"), [(-0.2, True), (0.3, False)],
                         ids=["with-the-load", "against-the-load"])
def test_the_gear_friction_is_directional(torque, moves, factors):
    """A load of -0.2 N*m and set_torque(T), k_ext 0.5, k_mot 0.2, f 0.05: the load
    factors, or the near-rest (Stribeck) ones at rest (s = 1), alike.
    With the load (T = -0.2): net -0.4 against f + |-0.2 x 0.5 + 0.2 x 0.2| = 0.11:
    moves. Against it (T = 0.3): net +0.1 against f + |-0.1 - 0.06| = 0.21: held (with
    the motor's term of the wrong sign it would be 0.09, and move)."""
    sim = motor({"friction": 0.05, **factors}, inertia=0.01, load={"external": -0.2})
    m = sim.motors[0]
    m.set_torque(torque)
    sim.step(100)
    assert (m.velocity != 0.0) is moves
    assert (m.velocity < 0.0) is moves


@pytest.mark.parametrize("w, w_s, alpha", [
    (1.0, 1.0, 2.0),  # exp(-1) whatever the exponent or the ratio's direction
    (0.3, 0.2, 2.0), (-0.3, 0.2, 2.0),  # (1.5)^2 = 2.25, not 1.5 (alpha) nor 0.06 (w w_s)
    (0.1, 0.4, 0.5), (-0.1, 0.4, 0.5),  # (0.25)^0.5 = 0.5: alpha < 1, both signs
])
def test_the_friction_near_rest_fades_with_the_speed(w, w_s, alpha):
    """Coasting at w, unpowered: one 1 ms step takes c dt / I off the speed, toward rest,
    with c = f + friction_stribeck exp(-(|w| / w_s) ^ alpha); for w = 0.3, w_s = 0.2,
    alpha 2: 0.5 + 0.3 exp(-2.25) = 0.53162 N*m, and 0.3 - 0.53162 x 0.001 / 0.1 =
    0.2946838 rad/s."""
    sim = motor({"friction": 0.5, "friction_stribeck": 0.3, "stribeck_velocity": w_s,
                 "stribeck_alpha": alpha}, inertia=0.1, max_torque=0.0)
    sim.bank.velocity[:] = w
    sim.step(1)
    c = 0.5 + 0.3 * math.exp(-((abs(w) / w_s) ** alpha))
    assert sim.motors[0].velocity == pytest.approx(w - math.copysign(c * 0.01, w), abs=1e-12)
    if (w, w_s, alpha) == (0.3, 0.2, 2.0):
        assert sim.motors[0].velocity == pytest.approx(0.2946838, abs=1e-7)  # by hand


@pytest.mark.parametrize("missing", ["stribeck_velocity", "stribeck_alpha"])
def test_friction_near_rest_needs_its_speed_and_shape(missing):
    fields = {"friction_stribeck": 0.1, "stribeck_velocity": 0.05, "stribeck_alpha": 1.5}
    del fields[missing]
    with pytest.raises(ConfigError, match=rf"motor 'm'.*actuator\.{missing}.*0"):
        motor(fields)


def test_backlash_is_a_dead_zone_of_its_width_on_a_reversal():
    # a light output with friction stops when the gear leaves it; the gear turns at the
    # commanded 0.5 rad/s across the gap of 0.02 rad: 40 ms standing, and afterwards the
    # output trails a servo without backlash by the gap (it led it by half the gap before,
    # pushed from behind, and trails by half after)
    (before, lash), (before_ref, ref) = (
        reversal(motor({"backlash": gap, "friction": 0.2}, inertia=1e-4))
        for gap in (0.02, 0.0))
    step = 0.5e-3 * 1.001  # a step of the gear: when it meets the wall is known to a step
    assert before_ref - before == pytest.approx(0.01, abs=step)
    assert lash[-1] - ref[-1] == pytest.approx(0.01, abs=step)  # the gap: 0.02 in all
    standing = np.flatnonzero(np.abs(np.diff(lash)) < 1e-12)
    # 40 ms, less the step the output still coasts, the one it meets the gear, and the
    # one the wall lands in
    assert 37 <= len(standing) <= 40
    assert np.diff(lash[-50:]) == pytest.approx(-0.5e-3)  # then it follows again


def test_a_dynamixel_profile_ramps_and_cruises_for_the_e_manual_times():
    # e-Manual (X series, velocity-based profile): accelerating time t1 = 64 * PV / PA ms,
    # arrival t3 = 64 * dPos / PV + t1 ms; PV = 100 (0.229 rpm), PA = 10 (214.577 rev/min^2),
    # dPos = 2048 ticks: t1 = 640 ms, t3 = 1310.72 + 640 = 1950.72 ms
    pv, pa, ticks = 100, 10, 2048
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "dynamixel",
                 "gains": [800, 0, 0]}, max_velocity=5.0)
    m = sim.motors[0]
    m.set_velocity(pv * 0.229 * 2 * math.pi / 60)
    m.set_acceleration(pa * 214.577 * 2 * math.pi / 3600)
    m.set_position(ticks * TICK)
    act = sim.bank.actuators
    cruise = m.get_velocity()
    t_cruise = t_arrive = None
    for k in range(1, 2500):
        sim.step()
        if t_cruise is None and act.state.setpoint_velocity[0] >= cruise * (1 - 1e-9):
            t_cruise = k
        if t_arrive is None and act.state.setpoint[0] >= ticks * TICK:
            t_arrive = k
    assert t_cruise == pytest.approx(64 * pv / pa, abs=1)
    assert t_arrive == pytest.approx(64 * ticks / pv + 64 * pv / pa, abs=1)
    assert abs(m.position - ticks * TICK) <= 2 * TICK  # and the servo follows it there


def test_a_firmware_law_refuses_webots_gains_and_takes_its_own():
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 32]})
    m = sim.motors[0]
    with pytest.raises(CommandRefusedError, match=r"'m'.*feetech.*actuator.gains"):
        m.set_control_pid(20, 0, 0)
    sim.set_parameter("m", "actuator.gains", [16, 0, 32])
    assert sim.config.motors[0].actuator.gains == (16, 0, 32)


def test_the_feetech_law_is_p_per_tick_in_tenths_of_a_percent():
    # P 32 on an error of 10 ticks: duty 320 / 1000 -> 0.32 x 2 N*m at rest
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0]},
                inertia=1e6)  # too heavy to move in one step
    m = sim.motors[0]
    m.set_position(10 * TICK)
    sim.step()
    assert m.motor_force == pytest.approx(0.32 * 2.0, rel=1e-6)


@pytest.mark.parametrize(("actuator", "field", "reason"), [
    ({"stall_torque": 1.0}, "actuator.no_load_speed", "envelope needs"),
    ({"supply_voltage": 12.0}, "actuator.supply_voltage", "rated_voltage"),
    ({**ENVELOPE, "control": "dynamixel", "gains": [800, 0, 0]}, "actuator.resolution",
     "ticks"),
    ({"resolution": 4096, "control": "feetech", "gains": [32, 0, 0]}, "actuator.control",
     "voltage"),
    ({**ENVELOPE, "resolution": 4096, "control": "dynamixel"}, "actuator.gains", "P gain"),
    ({"control": "robotis"}, "actuator.control", "one of"),
    ({"gains": [1, -1, 0]}, "actuator.gains", ">= 0"),
])
def test_a_bad_actuator_is_one_error_naming_motor_field_and_value(actuator, field, reason):
    with pytest.raises(ConfigError) as err:
        parse_config({"motors": [{"name": "wrist", "actuator": actuator}]}, "arm.yaml")
    message = str(err.value)
    assert message.startswith("arm.yaml: motor 'wrist': field")
    assert f"'{field}'" in message and reason in message


def test_an_actuator_needs_dynamic_physics():
    with pytest.raises(ConfigError, match=r"motor 'm'.*'actuator'.*dynamic"):
        parse_config({"physics": "kinematic", "motors": [{"name": "m",
                                                          "actuator": {"friction": 1.0}}]})


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize(("beyond", "max_torque", "force"), [
    (10, 10.0, 0.32 * 2.0),  # duty 32 x 10 / 1000 of the 2 N*m drive at speed 0
    (1000, 10.0, 2.0),  # duty 32 > 1: the full drive, the stall torque
    (1000, 1.2, 1.2),  # the full drive, capped by max_torque
])
def test_a_firmware_motor_held_by_a_hard_stop_pushes_with_its_duty_at_speed_0(
        sign, beyond, max_torque, force):
    """The feetech law (P 32 per tick, 0.1 % units) told to go ``beyond`` ticks past a hard
    stop 100 ticks out, on either side: at rest on the stop it pushes with duty x drive
    (the envelope at speed 0), within +-min(drive, max_torque), towards the target."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0]},
                max_torque=max_torque, min_stop=-100 * TICK, max_stop=100 * TICK)
    m = sim.motors[0]
    m.set_position(sign * (100 + beyond) * TICK)
    sim.step(1000)
    assert m.position == sign * 100 * TICK
    assert m.velocity == 0.0
    assert m.motor_force == pytest.approx(sign * force, rel=1e-9)


@pytest.mark.parametrize("sign", [1, -1])
def test_the_feetech_law_adds_i_per_tick_and_firmware_period(sign):
    """P 32, I 1 on a constant error of +-10 ticks (too heavy to move): the sum grows by
    10 ticks each 1 ms firmware period, so the duty after k steps of 1 ms is
    (32 x 10 + 1 x 10 k) / 1000 = 0.32 + 0.01 k, x 2 N*m at rest."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 1, 0]},
                inertia=1e6)
    m = sim.motors[0]
    m.set_position(sign * 10 * TICK)
    for k in range(1, 6):
        sim.step()
        assert m.motor_force == pytest.approx(sign * (0.32 + 0.01 * k) * 2.0, rel=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_saturated_firmware_duty_turns_the_gear_across_the_gap_at_its_free_speed(sign):
    """P 32 towards +-1000 ticks: the set-point runs at the 20 rad/s speed limit (13.04
    ticks a 1 ms step), so the duty is 0.417, 0.834, then 1.25... saturated at +-1; the
    massless gear turns at duty x the free speed 5 rad/s across the backlash (half gap
    0.025 rad): 2.09, 6.26, 11.26, 16.26, 21.26 mrad after 5 steps, no torque reaching
    the (too heavy to move) output; past 25 mrad at the 6th, the stall torque, +-2 N*m.
    An unsaturated duty (1.25, 1.67) would close the gap a step earlier."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0],
                 "backlash": 0.05}, inertia=1e6)
    m = sim.motors[0]
    m.set_position(sign * 1000 * TICK)
    forces = []
    for _ in range(8):
        sim.step()
        forces.append(m.motor_force)
    assert forces[:5] == [0.0] * 5
    assert forces[5:] == pytest.approx([sign * 2.0] * 3, rel=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_in_a_bank_with_one_encoder_only_that_motor_sees_whole_ticks(sign):
    """a has an encoder (4096 ticks a turn), b none: P control to +-0.3 rad (195.57 ticks)
    settles b on the target exactly; a's controller sees 195 or 196 whole ticks, never
    the target, so a dithers about the boundary between them, 195.5 ticks; b's position
    is not rounded to ticks nor to whole radians."""
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
        {"name": "a", "max_torque": 10.0, "actuator": {"resolution": 4096}},
        {"name": "b", "max_torque": 10.0}]}))
    a, b = sim.motors
    a.set_position(sign * 0.3)
    b.set_position(sign * 0.3)
    sim.step(3000)
    assert b.position == pytest.approx(sign * 0.3, abs=1e-9)
    assert a.position == pytest.approx(sign * 195.5 * TICK, abs=0.05 * TICK)


@pytest.mark.parametrize("w", [0.3, -0.3])
def test_the_load_factor_sees_the_load_not_the_momentum_of_a_coasting_joint(w):
    """Unpowered, no load, coasting at w: the external load is 0, so the load factor
    (0.5) adds nothing and one 1 ms step takes f dt / I = 0.05 x 0.001 / 0.1 = 5e-4 rad/s
    off the speed. (The joint's momentum I w / dt = 30 N*m taken for a load would stop
    it at once.)"""
    sim = motor({"friction": 0.05, "load_friction_external": 0.5}, inertia=0.1,
                max_torque=0.0)
    sim.bank.velocity[:] = w
    sim.step(1)
    assert sim.motors[0].velocity == pytest.approx(w - math.copysign(5e-4, w), abs=1e-12)


@pytest.mark.parametrize(("load", "torque", "moves"), [
    (-0.2, 0.08, 0), (0.2, -0.08, 0), (-0.2, 0.45, 1), (0.2, -0.45, -1)])
def test_under_set_torque_the_load_factor_sees_the_load_alone(load, torque, moves):
    """f 0.05, k_ext 0.5, no motor factor: the friction is 0.05 + 0.5 |L| = 0.15 N*m
    whatever set_torque's T. A net |L + T| of 0.12 is held; 0.25 turns the joint its way
    at 0.1 / I = 10 rad/s^2: 1 rad/s after 0.1 s. (T taken for the load, 0.05 + 0.5 |T|,
    or the load with T twice, 0.05 + 0.5 |L + 2T|, let 0.12 go: 0.09, 0.07; and hold 0.25:
    0.275, 0.4.)"""
    sim = motor({"friction": 0.05, "load_friction_external": 0.5}, inertia=0.01,
                load={"external": load})
    m = sim.motors[0]
    m.set_torque(torque)
    sim.step(100)
    if moves:
        assert m.velocity == pytest.approx(moves * 1.0, rel=1e-9)
    else:
        assert (m.position, m.velocity) == (0.0, 0.0)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_neighbour_under_set_torque_leaves_a_powered_motors_gear_friction_alone(sign):
    """b, powered, P control to +-0.5 rad against a load of -+1 N*m, with a motor load
    factor (0.3: its friction grows with the torque it gives); a, b's neighbour in the
    bank, under set_torque. b moves exactly as it does alone."""
    gear = {"friction": 0.05, "load_friction_motor": 0.3}
    a = {"name": "a", "max_torque": 10.0, "actuator": gear}
    b = {"name": "b", "max_torque": 10.0, "actuator": gear, "inertia": 0.01,
         "load": {"external": -sign * 1.0}}
    pair, alone = (Simulation(parse_config({"basic_time_step_ms": 1, "motors": motors}))
                   for motors in ([a, b], [b]))
    pair.motor("a").set_torque(sign * 0.1)
    paths = []
    for sim in (pair, alone):
        sim.motor("b").set_position(sign * 0.5)
        path = []
        for _ in range(300):
            sim.step()
            path.append((sim.motor("b").position, sim.motor("b").motor_force))
        paths.append(path)
    assert paths[0] == pytest.approx(paths[1], rel=1e-12, abs=1e-15)
    assert sign * paths[1][-1][0] > 0.45  # on its way: the gear's friction holds it short


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("step_ms", [1, 2])
def test_the_feetech_law_adds_d_per_tick_change_and_firmware_period(sign, step_ms):
    """P 1, D 32 on an error that jumps from 0 to +-10 ticks (too heavy to move): the
    change is 10 ticks in the first step, 10 / step_ms per 1 ms firmware period, so the
    duty is (1 x 10 + 32 x 10 / step_ms) / 1000 = 0.33 (1 ms steps) or 0.17 (2 ms), x 2
    N*m; then the error stays: no change, P's 0.01 alone."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [1, 0, 32]},
                step_ms=step_ms, inertia=1e6)
    m = sim.motors[0]
    m.set_position(sign * 10 * TICK)
    sim.step()
    assert m.motor_force == pytest.approx(sign * (0.01 + 0.32 / step_ms) * 2.0, rel=1e-6)
    sim.step()
    assert m.motor_force == pytest.approx(sign * 0.01 * 2.0, rel=1e-6)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_firmware_motor_and_a_webots_motor_in_one_bank_each_move_as_alone(sign):
    """A Feetech-law motor (its profile, whole-tick goal and duty) beside a motor on
    Webots' law with a backlash (its gear turns at the commanded velocity, not at a
    duty's); the firmware's profile ramps at 50 rad/s^2 from its own set-point velocity.
    Each follows its own law exactly as in a bank of its own, to targets of either sign,
    from velocity control (where the firmware's profile rests on the state) and back."""
    firmware = {"name": "f", "max_torque": 10.0, "acceleration": 50.0, "actuator": {
        **ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0]}}
    webots = {"name": "w", "max_torque": 10.0, "max_velocity": 2.0,
              "actuator": {"backlash": 0.01}}
    pair = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [firmware, webots]}))
    alone = [Simulation(parse_config({"basic_time_step_ms": 1, "motors": [m]}))
             for m in (firmware, webots)]
    paths: dict = {}
    for sim in (pair, *alone):
        for m in sim.motors:
            m.set_position(INF)
            m.set_velocity(-sign * 1.0)
        sim.step(50)
        for m in sim.motors:
            m.set_position(sign * 0.3)
        for _ in range(400):
            sim.step()
            for m in sim.motors:
                paths.setdefault((sim is pair, m.name), []).append(m.position)
    for name in ("f", "w"):
        assert paths[True, name] == pytest.approx(paths[False, name], rel=1e-12, abs=1e-15)
        assert sign * paths[True, name][-1] > 0.25  # turned back and on its way


@pytest.mark.parametrize("sign", [1, -1])
def test_an_off_motor_with_backlash_holds_the_output_by_its_static_friction(sign):
    """Unpowered (available force 0), static friction 0.5 N*m, a load of +-0.2 N*m (below
    breakaway), a backlash of 0.02 rad: only a powered gear crosses its gap; an off motor
    holds the output where it is by its static friction, as without backlash
    (test_physics), instead of letting it fall across the gap."""
    sim = motor({"backlash": 0.02}, inertia=0.01, static_friction=0.5,
                load={"external": sign * 0.2})
    m = sim.motors[0]
    m.set_available_force(0.0)
    sim.step(100)
    assert (m.position, m.velocity) == (0.0, 0.0)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_firmware_goal_after_velocity_control_starts_its_profile_from_the_present_state(
        sign):
    """Feetech law, acceleration 100 rad/s^2 (0.1 rad/s a 1 ms step), speed limit 2 rad/s:
    after 10 steps of velocity control at +-2 rad/s the motor is at x0, v0 (+-1 rad/s,
    ramping); a goal 1 rad ahead: the profile starts from x0, v0 and gains one step's
    0.1 rad/s, so one step on its set-point is x0 + (v0 +- 0.1) dt at v0 +- 0.1."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0]},
                acceleration=100.0, inertia=0.001)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(INF)
    m.set_velocity(sign * 2.0)
    sim.step(10)
    x0, v0 = m.position, m.velocity
    assert v0 == pytest.approx(sign * 1.0, abs=1e-9)
    m.set_position(sign * 1.0)
    sim.step()
    w1 = v0 + sign * 0.1
    assert act.state.setpoint_velocity[0] == pytest.approx(w1, abs=1e-12)
    assert act.state.setpoint[0] == pytest.approx(x0 + w1 * 0.001, abs=1e-12)


FEETECH = {**ENVELOPE, "resolution": 4096, "control": "feetech", "gains": [32, 0, 0]}


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("acceleration", [0.5, 100.0])
def test_the_firmware_profile_ramps_from_rest_at_its_acceleration_both_ways(
        sign, acceleration):
    """A goal 1 rad away, speed limit 20 rad/s: the profile's velocity grows by a dt a
    step, w_k = +-k a dt, and its set-point is +-a dt^2 k (k + 1) / 2 (1 ms steps; for
    100 rad/s^2 after 5 steps: 0.5 rad/s, 1.5 mrad), towards either side."""
    sim = motor(FEETECH, acceleration=acceleration, inertia=1e6)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(sign * 1.0)
    dt = 0.001
    for k in range(1, 6):
        sim.step()
        assert act.state.setpoint_velocity[0] == pytest.approx(sign * k * acceleration * dt,
                                                         rel=1e-9)
        assert act.state.setpoint[0] == pytest.approx(
            sign * acceleration * dt * dt * k * (k + 1) / 2, rel=1e-9)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_firmware_motor_whose_acceleration_is_0_holds_and_does_not_start(sign):
    """Acceleration 0 (SPEC: a limit of 0, not unlimited): at its goal the motor holds
    (no undefined profile), and a new goal +-1 rad away does not start it."""
    sim = motor(FEETECH, acceleration=0.0)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(0.0)
    sim.step(5)
    assert (m.position, m.velocity, float(act.state.setpoint[0])) == (0.0, 0.0, 0.0)
    m.set_position(sign * 1.0)
    sim.step(5)  # (the profile's step is floored at 1e-300 rad/s: nothing to see)
    assert [m.position, m.velocity, act.state.setpoint_velocity[0]] == pytest.approx([0, 0, 0],
                                                                              abs=1e-12)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_firmware_goal_after_arriving_starts_its_profile_from_rest(sign):
    """Acceleration 100 rad/s^2: a goal 10 ticks away is reached and held (profile at
    rest); a second, 10 ticks further, starts from the first at rest: one step on, the
    set-point velocity is +-0.1 rad/s and the set-point 0.1 mrad past the first goal."""
    sim = motor(FEETECH, acceleration=100.0)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(sign * 10 * TICK)
    sim.step(200)
    assert (act.state.setpoint[0], act.state.setpoint_velocity[0]) == (sign * 10 * TICK, 0.0)
    m.set_position(sign * 20 * TICK)
    sim.step()
    assert act.state.setpoint_velocity[0] == pytest.approx(sign * 0.1, rel=1e-9)
    assert act.state.setpoint[0] == pytest.approx(sign * (10 * TICK + 1e-4), rel=1e-9)


@pytest.mark.parametrize("sign", [1, -1])
def test_an_error_of_exactly_the_deadband_drives_nothing_and_a_tick_more_drives(sign):
    """Deadband 10 ticks, encoder 4096: an error of exactly 10 ticks (within rounding)
    drives nothing; 11 ticks drives towards the target."""
    sim = motor({"resolution": 4096, "deadband": 10 * TICK})
    m = sim.motors[0]
    m.set_position(sign * 10 * TICK)
    sim.step(20)
    assert (m.position, m.motor_force) == (0.0, 0.0)
    m.set_position(sign * 11 * TICK)
    sim.step()
    assert sign * m.motor_force > 0.0


@pytest.mark.parametrize("sign", [1, -1])
def test_a_firmware_goal_is_whole_ticks_beside_a_webots_motor(sign):
    """The goal register holds whole ticks: +-0.3 rad (195.57 ticks) is +-196 ticks for a
    Feetech-law motor, where its profile comes to rest, also beside a Webots-law motor
    with the same encoder (whose target stays +-0.3 rad)."""
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
        {"name": "f", "max_torque": 10.0, "acceleration": 100.0, "actuator": FEETECH},
        {"name": "w", "max_torque": 10.0, "actuator": {"resolution": 4096}}]}))
    f, w = sim.motors
    f.set_position(sign * 0.3)
    w.set_position(sign * 0.3)
    sim.step(300)
    act = sim.bank.actuators
    assert (act.state.setpoint[0], act.state.setpoint_velocity[0]) == (sign * 196 * TICK, 0.0)
    assert sim.bank.pid_target[1] == sign * 0.3


@pytest.mark.parametrize("sign", [1, -1])
def test_the_dynamixel_law_is_p_over_128_per_tick_over_the_pwm_limit(sign):
    """Dynamixel law (ROBOTIS e-Manual, X series), Position P Gain 640 on an error of +-10
    ticks (too heavy to move): duty = 640 / 128 x 10 / 885 = 0.0565, x 2 N*m at rest."""
    sim = motor({**ENVELOPE, "resolution": 4096, "control": "dynamixel",
                 "gains": [640, 0, 0]}, inertia=1e6)
    m = sim.motors[0]
    m.set_position(sign * 10 * TICK)
    sim.step()
    assert m.motor_force == pytest.approx(sign * 640 / 128 * 10 / 885 * 2.0, rel=1e-6)


#: one encoder tick a step per step (1 ms steps): TICK / dt^2, 1534 rad/s^2
TICK_PER_STEP2 = TICK / 1e-6


@pytest.mark.parametrize("sign", [1, -1])
def test_the_firmware_profile_to_a_square_number_of_ticks_is_the_exact_discrete_triangle(
        sign):
    """Acceleration one tick a step per step, a goal +-64 ticks away (speed limit 20 rad/s,
    13 ticks a step): the stopping speed from 36 ticks, after 8 steps up (1 + ... + 8 = 36
    ticks walked), is exactly 8 ticks a step (n (n + 1) / 2 = 36 - 8: n = 8), so the
    set-point walks 1, 2, ... 8, 7, ... 1 ticks a step (sum 64) and lands on the goal at
    the 15th step, where it has arrived: velocity 0, there."""
    sim = motor(FEETECH, acceleration=TICK_PER_STEP2, inertia=1e6)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(sign * 64 * TICK)
    walked, velocities = [], []
    for _ in range(16):
        sim.step()
        walked.append(act.state.setpoint[0] / TICK)
        velocities.append(act.state.setpoint_velocity[0] * 1e-3 / TICK)
    per_step = [*range(1, 9), *range(7, 1, -1)]  # ticks a step; the 15th lands: at rest
    assert velocities == pytest.approx([sign * w for w in per_step] + [0.0, 0.0], rel=1e-9)
    assert walked[:14] == pytest.approx(sign * np.cumsum(per_step), rel=1e-9)
    assert act.state.setpoint[0] == sign * 64 * TICK  # on the goal's whole ticks, not past them


@pytest.mark.parametrize("sign", [1, -1])
def test_a_goal_on_the_moving_set_point_is_arrived_at_and_held(sign):
    """Acceleration one tick a step per step towards +-64 ticks: after 6 steps the
    set-point is at +-21 ticks (1 + ... + 6; there to the bit) at 6 ticks a step; a goal
    of +-21 ticks there is reached (nothing left to walk: arrival is being on or past the
    goal), so the profile holds it at rest and does not run on past it, either way."""
    sim = motor(FEETECH, acceleration=TICK_PER_STEP2, inertia=1e6)
    m, act = sim.motors[0], sim.bank.actuators
    m.set_position(sign * 64 * TICK)
    sim.step(6)
    assert act.state.setpoint_velocity[0] == pytest.approx(sign * 6 * TICK / 1e-3, rel=1e-9)
    assert act.state.setpoint[0] == sign * 21 * TICK
    m.set_position(sign * 21 * TICK)
    for _ in range(3):
        sim.step()
        assert (act.state.setpoint[0], act.state.setpoint_velocity[0]) == (sign * 21 * TICK, 0.0)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_webots_motors_target_is_not_whole_ticks_beside_a_firmware_motor(sign):
    """Only a firmware's goal register holds whole ticks: a Webots-law motor with an
    encoder (4096 a turn), beside a Feetech-law one, P control to +-195.3 ticks: its
    controller sees 195 ticks below 195.5 (error +-0.3 tick: on) and 196 above (-+0.7:
    back), so it dithers about 195.5 ticks; a target rounded to 195 ticks would stop it
    as soon as it sees 195, at 194.5."""
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
        {"name": "f", "max_torque": 10.0, "actuator": FEETECH},
        {"name": "w", "max_torque": 10.0, "actuator": {"resolution": 4096}}]}))
    f, w = sim.motors
    f.set_position(0.0)
    w.set_position(sign * 195.3 * TICK)
    sim.step(3000)
    assert w.position == pytest.approx(sign * 195.5 * TICK, abs=0.05 * TICK)


@pytest.mark.parametrize("sign", [1, -1])
def test_an_output_coasts_across_the_whole_gap_when_the_gear_stops(sign):
    """Backlash 0.02 rad, no friction, output inertia 0.01 kg*m^2, max torque 0.1 N*m:
    turned at +-1 rad/s (velocity control), the gear crosses half the gap, then pushes the
    output up to speed at 10 rad/s^2 (100 steps of 0.01 rad/s), leading it by half the gap
    all along (it cannot lead by more). Told to stop, the gear stands: the output coasts
    on at +-1 rad/s across the whole gap, 0.02 rad, 1 mrad a step: 19 steps untouched, the
    20th meets the gear's other side (to a step: 0.02 / 0.001 in floats), then the gear
    brakes it at the max torque, 0.01 rad/s a step."""
    sim = motor({"backlash": 0.02}, inertia=0.01, max_torque=0.1)
    m = sim.motors[0]
    m.set_position(INF)
    m.set_velocity(sign * 1.0)
    sim.step(300)
    assert m.velocity == pytest.approx(sign * 1.0, rel=1e-9)
    m.set_velocity(0.0)
    speeds = []
    for _ in range(40):
        sim.step()
        speeds.append(m.velocity)
    coasting = int(np.argmax(np.abs(np.array(speeds) - sign * 1.0) > 1e-9))
    assert coasting in (19, 20)
    assert speeds[coasting:coasting + 5] == pytest.approx(
        [sign * (1.0 - 0.01 * k) for k in range(1, 6)], rel=1e-6)
