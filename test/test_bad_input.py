"""Bad commands (SPEC §4): ValueError naming motor and value, nothing changed."""

import math

import pytest
from conftest import assert_unchanged, make_sim, snapshot

NAN, INF = math.nan, math.inf

# (method, args, the offending value, what the message must also say)
BAD = [
    ("set_position", (NAN,), NAN, "nan"),
    ("set_position", (1e308,), 1e308, "overflows"),
    ("set_position", ("1.0",), "1.0", "not a number"),
    ("set_position", (None,), None, "not a number"),
    ("set_position", (True,), True, "not a number"),
    ("set_velocity", (NAN,), NAN, "nan"),
    ("set_velocity", (INF,), INF, "finite"),
    ("set_velocity", (-INF,), -INF, "finite"),
    ("set_acceleration", (NAN,), NAN, "nan"),
    ("set_acceleration", (INF,), INF, "finite"),
    ("set_acceleration", (-2.0,), -2.0, "-1"),
    ("set_acceleration", (-0.5,), -0.5, "-1"),
    ("set_available_force", (-1.0,), -1.0, ">= 0"),
    ("set_available_force", (NAN,), NAN, "nan"),
    ("set_available_force", (INF,), INF, "finite"),
    ("set_available_torque", (-0.1,), -0.1, ">= 0"),
    ("set_control_pid", (0.0, 0.0, 0.0), 0.0, "p = 0.0 rejected: must be > 0"),
    ("set_control_pid", (-1.0, 0.0, 0.0), -1.0, "p = -1.0 rejected: must be > 0"),
    ("set_control_pid", (1.0, -1.0, 0.0), -1.0, "i = -1.0 rejected: must be >= 0"),
    ("set_control_pid", (1.0, 0.0, -1.0), -1.0, "d = -1.0 rejected: must be >= 0"),
    ("set_control_pid", (NAN, 0.0, 0.0), NAN, "nan"),
    ("set_control_pid", (1.0, INF, 0.0), INF, "finite"),
    ("set_force", (NAN,), NAN, "nan"),
    ("set_force", (INF,), INF, "finite"),
    ("set_torque", (-INF,), -INF, "finite"),
    ("enable_position", (-8,), -8, ">= 0"),
    ("enable_position", (8.5,), 8.5, "integer"),
    ("enable_position", (True,), True, "integer"),
    ("enable_force_feedback", (-1,), -1, ">= 0"),
    ("enable_torque_feedback", ("8",), "8", "integer"),
]


def running_sim():
    sim = make_sim({"name": "w::a", "multiplier": 2.0, "max_torque": 5.0,
                    "control_pid": [10.0, 2.0, 0.1]},
                   {"name": "w::b", "multiplier": -2.0, "max_torque": 5.0})
    sim.motor("w::a").set_position(0.7)
    sim.motor("w::a").enable_position(16)
    sim.step(7)
    return sim


@pytest.mark.parametrize("method, args, bad, mention", BAD,
                         ids=[f"{m}{a}" for m, a, _, _ in BAD])
def test_rejected_command_names_motor_and_value_and_changes_nothing(method, args, bad,
                                                                     mention):
    sim = running_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError) as err:
        getattr(sim.motor("w::a"), method)(*args)
    text = str(err.value)
    assert "'w::a'" in text
    assert mention.lower() in text.lower()
    assert repr(bad) in text
    assert_unchanged(before, snapshot(sim))


def test_unknown_motor_names_the_known_ones():
    sim = running_sim()
    with pytest.raises(KeyError) as err:
        sim.motor("w::c")
    assert "'w::c'" in str(err.value) and "'w::a'" in str(err.value)


def test_bad_step_count():
    sim = running_sim()
    for n in (-1, 1.5, True):
        with pytest.raises(ValueError, match="step count"):
            sim.step(n)
