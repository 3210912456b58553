"""Invariants under arbitrary command sequences (hypothesis)."""

import math

import numpy as np
from conftest import assert_unchanged, make_sim, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
big = st.floats(min_value=-1e6, max_value=1e6)
COMMANDS = ["set_position", "set_velocity", "set_acceleration", "set_available_force",
            "set_force", "set_control_pid", "step"]
command = st.tuples(st.sampled_from(COMMANDS), st.integers(0, 2),
                    st.lists(floats | big, min_size=3, max_size=3), st.integers(1, 30))

motor_fields = st.fixed_dictionaries({
    "max_torque": st.floats(0.0, 100.0),
    "max_velocity": st.floats(0.0, 50.0),
    "inertia": st.floats(1e-4, 10.0),
    "spring_constant": st.floats(0.0, 1e5),
    "damping_constant": st.floats(0.0, 100.0),
    "static_friction": st.floats(0.0, 10.0),
    "acceleration": st.sampled_from([-1.0, 0.0, 1.0, 1000.0]),
    "load": st.fixed_dictionaries({"gravity_mass": st.floats(0.0, 10.0),
                                   "gravity_distance": st.floats(0.0, 1.0),
                                   "external": st.floats(-50.0, 50.0)}),
})


def build(fields_list, physics="dynamic"):
    """Motors c::0 and c::1 coupled (multipliers 1 and -2.5, consistent limits), and m2."""
    vmax0 = fields_list[0]["max_velocity"]
    motors = []
    for i, f in enumerate(fields_list):
        motors.append({**f, "name": ["c::0", "c::1", "m2"][i],
                       "multiplier": [1.0, -2.5, 1.0][i],
                       "max_velocity": [vmax0, 2.5 * vmax0, f["max_velocity"]][i],
                       "min_stop": -1.0, "max_stop": 1.0})
    return make_sim(*motors, physics=physics)


def run(sim, commands):
    """Apply the commands; yield (command name, motor index, accepted) after each."""
    for name, k, args, steps in commands:
        if name == "step":
            sim.step(steps)
            yield name, k, True
            continue
        motor = sim.motors[k]
        before = snapshot(sim)
        try:
            if name == "set_control_pid":
                motor.set_control_pid(*args)
            else:
                getattr(motor, name)(args[0])
        except ValueError:
            assert_unchanged(before, snapshot(sim))  # a rejected command changes nothing
            yield name, k, False
        else:
            yield name, k, True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(motor_fields, min_size=3, max_size=3), st.lists(command, max_size=25),
       st.sampled_from(["dynamic", "kinematic"]))
def test_state_finite_stops_respected_rejections_harmless(fields_list, commands, physics):
    sim = build(fields_list, physics)
    bank = sim.bank
    for name, _, _ in run(sim, commands):
        for arr in (bank.position, bank.velocity, bank.motor_force, bank.energy):
            assert np.isfinite(arr).all()
        assert (bank.position >= -1.0).all() and (bank.position <= 1.0).all()
        if name == "step":  # the force of the last step was within the force then available
            assert (np.abs(bank.motor_force) <= bank.available_force + 1e-9).all()
        assert (bank.energy >= 0).all()
    sim.step(20)
    assert np.isfinite(bank.position).all() and np.isfinite(bank.velocity).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(motor_fields, min_size=3, max_size=3), st.lists(command, max_size=25))
def test_coupled_motors_stay_consistent(fields_list, commands):
    sim = build(fields_list)
    a, b = sim.motor("c::0"), sim.motor("c::1")
    velocity_set = False
    for name, k, accepted in run(sim, commands):
        velocity_set |= accepted and name == "set_velocity" and k < 2
        assert a.get_target_position() == b.get_target_position()
        ta, tb = a.target_position, b.target_position
        if math.isinf(ta):
            assert tb == ta
        else:
            assert tb == -2.5 * ta or abs(tb + 2.5 * ta) <= 1e-9 * max(1.0, abs(ta))
        if velocity_set:  # before any set_velocity each reports its own max_velocity
            assert math.isclose(b.get_velocity(), a.get_velocity(), rel_tol=1e-12)
        assert bool(sim.bank.force_control[0]) == bool(sim.bank.force_control[1])
