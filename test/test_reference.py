"""The vectorised bank against the plain per-motor loop (benchmarks/scalar_reference.py).

Random motors and commands; after every step both must agree to rounding. This also
proves the benchmark compares the bank with a loop doing the same arithmetic.
"""

import numpy as np
from conftest import make_sim
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scalar_reference import ScalarMotor, step_all

motor = st.fixed_dictionaries({
    "type": st.sampled_from(["rotational", "linear"]),
    "max_velocity": st.floats(0.1, 20.0),
    "control_pid": st.tuples(st.floats(0.5, 50.0), st.floats(0.0, 10.0),
                             st.floats(0.0, 0.5)).map(list),
    "acceleration": st.sampled_from([-1.0, 0.0, 5.0, 100.0]),
    "spring_constant": st.floats(0.0, 500.0),
    "damping_constant": st.floats(0.0, 5.0),
    "static_friction": st.floats(0.0, 2.0),
    "inertia": st.floats(0.001, 1.0),
    "multiplier": st.sampled_from([1.0, -1.0, 2.0]),
    "load": st.fixed_dictionaries({"gravity_mass": st.floats(0.0, 2.0),
                                   "gravity_distance": st.floats(0.0, 0.5),
                                   "external": st.floats(-3.0, 3.0),
                                   "gravity": st.sampled_from([9.81, 1.62, 0.0]),
                                   "gravity_angle": st.floats(-3.2, 3.2)}),
    "stops": st.booleans(),
})
command = st.tuples(st.integers(0, 5),
                    st.sampled_from(["set_position", "set_velocity", "set_force",
                                     "set_available_force", "set_inf"]),
                    st.floats(-3.0, 3.0), st.integers(1, 20))


def config(fields: dict, i: int) -> dict:
    out = {k: v for k, v in fields.items() if k != "stops"}
    out["name"] = f"m{i}"
    if fields["stops"]:
        out.update(min_stop=-1.0, max_stop=1.0)
    return out


#: a plain motor that the examples below vary (every strategy's field, in range)
PLAIN = {"type": "rotational", "max_velocity": 0.5, "control_pid": [50.0, 0.0, 0.0],
         "acceleration": -1.0, "spring_constant": 0.0, "damping_constant": 0.0,
         "static_friction": 0.0, "inertia": 0.01, "multiplier": 1.0,
         "load": {"gravity_mass": 0.0, "gravity_distance": 0.0, "external": 0.0,
                  "gravity": 0.0, "gravity_angle": 0.0}, "stops": False}


@settings(max_examples=60, deadline=None)
@given(st.lists(motor, min_size=6, max_size=6), st.lists(command, max_size=12))
# the cases never to miss: the PID saturating at the speed limit in both directions (a
# bank without its negative clamp went unnoticed by random examples 3 runs in 6), with
# a reversed multiplier and in force control too
@example([PLAIN] * 6, [(0, "set_position", 3.0, 20), (0, "set_position", -3.0, 20)])
@example([{**PLAIN, "multiplier": -1.0, "acceleration": 5.0}] * 6,
         [(1, "set_position", -3.0, 20), (1, "set_position", 3.0, 20),
          (2, "set_force", -1.5, 5), (2, "set_velocity", -2.0, 5)])
def test_bank_equals_scalar_loop(motors, commands):
    sim = make_sim(*(config(m, i) for i, m in enumerate(motors)))
    bank = sim.bank
    scalar = [ScalarMotor(bank, i) for i in range(bank.n)]
    for k, name, value, steps in commands:
        m = sim.motors[k]
        if name == "set_inf":
            m.set_position(np.inf)
        elif name == "set_available_force":
            m.set_available_force(abs(value))
        else:
            getattr(m, name)(value)
        scalar[k].sync_commands(bank, k)
        if name == "set_force":
            scalar[k].command_velocity = 0.0
        for _ in range(steps):
            sim.step()
            step_all(scalar)
            for field in ("position", "velocity", "motor_force", "energy"):
                got = getattr(bank, field)
                want = np.array([getattr(s, field) for s in scalar])
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=field)
