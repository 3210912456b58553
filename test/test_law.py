"""The servo law's runners (``servo_sim/model/law.py``): numpy on the bank's arrays
(the default) and the compiled ones, the same source compiled by numba for one motor's
numbers and looped over the motors, either as numba's JIT runner (what the MuJoCo body
steps with) or as a library compiled ahead of time (``ahead.py``, which a bank loads
first); each compiled runner is compared with numpy's. The law's behaviour is what the rest
of the suite checks against independent values, on both bodies; here: the two runners
step every profile, a bank mixing them and the MuJoCo SO-101 to the same bits, through
every command that changes what the law computes."""

from __future__ import annotations

import ast
import inspect
import math
import sys

import numpy as np
import pytest
from conftest import REPO
from hypothesis import example, given, settings
from hypothesis import strategies as st

from servo_sim.model import Simulation, ahead, law, tables
from servo_sim.model import bank as bank_module
from servo_sim.model.config import load_config, to_dict
from servo_sim.model.profiles import profile_names

numba = pytest.importorskip("numba", reason="numba is not installed (the mujoco extra has "
                                            "it): pip install 'servo_sim[mujoco]'")

#: every piece of state the law reads or writes, as the bank and its actuators keep it
STATE = ("position", "velocity", "motor_force", "energy", "error_integral",
         "previous_error", "command_velocity")
ACTUATOR_STATE = ("setpoint", "setpoint_velocity", "gap", "starting")


def state(sim: Simulation) -> dict[str, np.ndarray]:
    bank = sim.bank
    out = {name: getattr(bank, name).copy() for name in STATE}
    if bank.actuators is not None:
        out |= {name: getattr(bank.state, name).copy() for name in ACTUATOR_STATE[:3]}
        out["starting"] = bank.masks.starting.copy()
    return out


def assert_same_bits(a: dict, b: dict, when: str) -> None:
    """The same bits: zero's sign too (a -0 divides to -inf), and equal NaNs."""
    for name in a:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        same = x.tobytes() == y.tobytes() or (
            np.array_equal(x, y, equal_nan=True)
            and np.array_equal(np.signbit(x), np.signbit(y)) and np.isnan(x).any())
        assert same, (when, name, a[name], b[name])


def commands(sim: Simulation) -> list:
    """Commands that reach every branch of the law, each followed by 300 steps: position
    steps both ways, velocity control both ways under an acceleration limit, the torque
    off and back, set_torque, a trapezoidal move, new gains, absurd gains, a halt."""
    names = sim.motor_names

    def each(fn):
        return lambda: [fn(k, sim.motor(n)) for k, n in enumerate(names)]

    return [
        each(lambda k, m: m.set_position(0.4 if k % 2 else -0.3)),
        each(lambda k, m: m.set_position(-0.2 if k % 2 else 0.5)),
        each(lambda k, m: (m.set_acceleration(8.0), m.set_position(math.inf),
                           m.set_velocity(-1.0 if k % 2 else 0.8))),
        each(lambda k, m: m.set_velocity(0.6 if k % 2 else -0.7)),
        each(lambda k, m: (m.set_acceleration(-1.0), m.set_position(0.1),
                           m.set_available_torque(0.0))),
        each(lambda k, m: m.set_available_torque(m.get_max_force())),
        each(lambda k, m: m.set_torque(0.05 if k % 2 else -0.04)),
        each(lambda k, m: m.trapezoidal_move(0.3 if k % 2 else -0.3, 0.0, 1.0, 4.0)),
        each(lambda k, m: (new_gains(sim, m), m.set_position(-0.1))),
        each(lambda k, m: (absurd_gains(m), m.set_position(0.2))),
        each(lambda k, m: m.halt()),
    ]


def new_gains(sim: Simulation, m) -> None:
    """Other gains: Webots' PID's, or a firmware's in its units."""
    actuator = m.config.actuator
    if actuator is not None and actuator.control != "webots":
        sim.set_parameter(m.name, "actuator.gains", [20, 1, 24])
    else:
        m.set_control_pid(20.0, 0.5, 0.1)


def absurd_gains(m) -> None:
    """Webots' PID at gains whose output is inf - inf (undefined): the law saturates it
    at the speed limit (fmin/fmax), the state stays finite."""
    actuator = m.config.actuator
    if actuator is None or actuator.control == "webots":
        m.set_control_pid(1e308, 0.0, 1e308)


def numpy_simulation(raw: dict) -> Simulation:
    """``raw``'s simulation stepping numpy's runner (SERVO_SIM_JIT=0, as without numba)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SERVO_SIM_JIT", "0")
        sim = Simulation.from_config(raw)
    assert sim.bank._law is law.step_motors
    return sim


#: the compiled runners: the library compiled ahead of time (ahead.py, the default) and
#: numba's JIT runner (SERVO_SIM_AHEAD=0)
COMPILED = ("ahead", "jit")


def compiled_runner(runner: str):
    """The compiled runner ``runner`` names (one of :data:`COMPILED`)."""
    if runner == "jit":
        return law.compiled()
    library = ahead.runner()
    assert library is not None, "the law's library could not be built (a C compiler?)"
    return library.step


def compiled_simulation(raw: dict, runner: str = "ahead") -> Simulation:
    """``raw``'s simulation once its bank has loaded the compiled ``runner`` (in a thread
    of its own: bank.compile_law): by default the library compiled ahead of time,
    ``jit`` numba's runner (SERVO_SIM_AHEAD=0)."""
    with pytest.MonkeyPatch.context() as patch:
        if runner == "jit":
            patch.setenv("SERVO_SIM_AHEAD", "0")
        sim = Simulation.from_config(raw)
        assert sim.bank.wait_for_compiled_law(timeout=600)
    assert sim.bank._law is compiled_runner(runner)
    return sim


def run_both(raw: dict, runner: str, steps: int = 300) -> set[str]:
    """``raw``'s simulation on numpy's runner and on the compiled ``runner``, commanded
    alike: the same bits throughout (each command followed by ``steps`` steps); the
    names of the state that changed (so that a test can say the state it compares was
    live)."""
    numpy_sim = numpy_simulation(raw)
    compiled_sim = compiled_simulation(raw, runner)
    start, changed = state(numpy_sim), set()
    for k, (a, b) in enumerate(zip(commands(numpy_sim), commands(compiled_sim),
                                   strict=True)):
        a(), b()
        for _ in range(6):
            numpy_sim.step(steps // 6), compiled_sim.step(steps // 6)
            now = state(numpy_sim)
            assert_same_bits(now, state(compiled_sim), f"command {k}")
            changed |= {name for name in now
                        if not np.array_equal(now[name], start[name], equal_nan=True)}
    return changed


def motor(name: str, servo: str | None) -> dict:
    entry = {"name": name, "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
             "load": {"gravity_mass": 0.1, "gravity_distance": 0.05}}
    return entry if servo is None else {**entry, "servo": servo}


@pytest.mark.parametrize("runner", COMPILED)
@pytest.mark.parametrize("servo", [None, *profile_names()])
def test_the_two_runners_agree_to_the_bit_on_each_profile(servo, runner):
    """Two motors of one profile (or Webots' ideal motor): every command, both runners."""
    run_both({"basic_time_step_ms": 1, "motors": [motor("a", servo), motor("b", servo)]},
             runner)


@pytest.mark.parametrize("runner", COMPILED)
def test_the_two_runners_agree_on_a_bank_that_mixes_them(runner):
    """Firmware laws beside Webots' PID and an ideal motor in one bank: the branches
    where only some motors follow a firmware's profile."""
    servos = [None, "STS3215-7.4V", "XL430-W250-T", None, "XM430-W350-T"]
    assert {s for s in servos if s} <= set(profile_names())  # (was filtered: 2 misnamed)
    run_both({"basic_time_step_ms": 2,
              "motors": [motor(f"m{k}", s) for k, s in enumerate(servos)]}, runner)


#: Webots' law (``control: webots``) on motors with an actuator: each part the law reads
#: alone, then together (no firmware: the branches where ``any_firmware`` is False)
WEBOTS_ACTUATORS = {
    "backlash": {"backlash": 0.01},
    "encoder": {"resolution": 4096},
    "encoder_backlash_deadband": {"resolution": 1024, "backlash": 0.006, "deadband": 0.003},
    "envelope_friction": {"stall_torque": 1.5, "no_load_speed": 6.0, "rated_voltage": 12.0,
                          "friction": 0.02, "viscous_friction": 0.01, "armature": 0.001},
    "load_dependent_friction": {
        "friction": 0.01, "friction_stribeck": 0.02, "load_friction_external": 0.1,
        "load_friction_motor": 0.05, "load_friction_external_stribeck": 0.05,
        "load_friction_motor_stribeck": 0.02, "stribeck_velocity": 0.2,
        "stribeck_alpha": 1.5},
    "all": {"stall_torque": 1.5, "no_load_speed": 6.0, "rated_voltage": 12.0,
            "supply_voltage": 11.0, "resolution": 4096, "backlash": 0.008,
            "deadband": 0.002, "friction": 0.01, "friction_stribeck": 0.02,
            "load_friction_external": 0.1, "load_friction_motor": 0.05,
            "stribeck_velocity": 0.2, "stribeck_alpha": 1.0},
}


@pytest.mark.parametrize("runner", COMPILED)
@pytest.mark.parametrize("kind", list(WEBOTS_ACTUATORS))
def test_the_two_runners_agree_on_webots_law_motors_with_an_actuator(kind, runner):
    """Two motors under Webots' law with an actuator part (no firmware law): every
    command, both runners; with backlash the gap, the actuators' own state, moved and
    is compared (the compiled runner keeps it without a firmware law too)."""
    actuator = WEBOTS_ACTUATORS[kind]
    changed = run_both({"basic_time_step_ms": 1, "motors": [
        {**motor(name, None), "max_torque": 2.0, "actuator": actuator}
        for name in ("a", "b")]}, runner)
    assert {"position", "velocity", "motor_force"} <= changed
    assert ("gap" in changed) == ("backlash" in actuator)


@pytest.mark.parametrize("runner", COMPILED)
def test_the_two_runners_agree_on_backlash_beside_a_firmware_law(runner):
    """A Webots-law motor with backlash beside firmware laws (with and without backlash)
    and an ideal motor: the branches where only some motors follow a profile, the gap of
    each kept."""
    firmware = ["STS3215-7.4V", "XL430-W250-T"]
    motors = [{**motor("webots", None), "max_torque": 2.0,
               "actuator": WEBOTS_ACTUATORS["backlash"]},
              *(motor(f"f{k}", s) for k, s in enumerate(firmware)), motor("ideal", None)]
    changed = run_both({"basic_time_step_ms": 2, "motors": motors}, runner)
    assert {"gap", "setpoint", "setpoint_velocity"} <= changed


#: actuator parts for the property: any subset, any law
_ACTUATOR_PARTS = st.fixed_dictionaries({}, optional={
    "resolution": st.sampled_from([256, 1024, 4096]),
    "backlash": st.floats(0.001, 0.02),
    "deadband": st.floats(0.0005, 0.005),
    "friction": st.floats(0.001, 0.05),
    "friction_stribeck": st.floats(0.001, 0.05),
    "load_friction_motor_stribeck": st.floats(0.001, 0.05),
    "load_friction_external": st.floats(0.0, 0.2),
    "load_friction_motor": st.floats(0.0, 0.2),
})


@pytest.mark.parametrize("runner", COMPILED)
@settings(max_examples=30, deadline=None)
@given(parts=_ACTUATOR_PARTS, envelope=st.booleans(),
       control=st.sampled_from(["webots", "dynamixel", "feetech"]),
       inertia=st.floats(1e-4, 0.01), gravity_mass=st.floats(0.0, 1.0),
       gains=st.tuples(st.integers(1, 900), st.integers(0, 50), st.integers(0, 900)),
       step_ms=st.sampled_from([1, 2, 4]), stribeck_alpha=st.sampled_from([0.7, 1.0, 1.5]))
@example(parts={"backlash": 0.01}, envelope=False, control="webots", inertia=0.002,
         gravity_mass=0.1, gains=(32, 0, 32), step_ms=1, stribeck_alpha=1.0)
@example(parts={"backlash": 0.008, "friction": 0.01, "friction_stribeck": 0.02,
                "load_friction_external": 0.1, "load_friction_motor": 0.05},
         envelope=False, control="webots", inertia=0.002, gravity_mass=0.1,
         gains=(32, 0, 32), step_ms=1, stribeck_alpha=1.0)  # numpy's exp was 1 ulp off
def test_property_the_two_runners_agree_on_any_actuator(runner, parts, envelope, control,
                                                        inertia, gravity_mass, gains,
                                                        step_ms, stribeck_alpha):
    """Any actuator (any subset of its parts, with or without the envelope, Webots' law or
    a firmware's at any gains) beside an ideal motor, any inertia and weight, any step:
    both runners step to the same bits through every command (torque, velocity and
    position control, both signs)."""
    servo = actuated_servo(parts, envelope, control, inertia, gravity_mass, gains,
                           stribeck_alpha)
    run_both({"basic_time_step_ms": step_ms, "motors": [servo, motor("ideal", None)]},
             runner, steps=36)


def actuated_servo(parts: dict, envelope: bool, control: str, inertia: float,
                   gravity_mass: float, gains: tuple, stribeck_alpha: float) -> dict:
    """A motor's config with an actuator of ``parts`` (the property's draw)."""
    actuator = dict(parts)
    if any(name.endswith("stribeck") for name in actuator):
        actuator |= {"stribeck_velocity": 0.1, "stribeck_alpha": stribeck_alpha}
    if envelope or control != "webots":  # a firmware drives the envelope's voltage
        actuator |= {"stall_torque": 1.5, "no_load_speed": 6.0, "rated_voltage": 12.0}
    if control != "webots":
        actuator |= {"control": control, "gains": list(gains),
                     "resolution": actuator.get("resolution", 4096)}
    return {"name": "s", "min_position": -2.0, "max_position": 2.0, "inertia": inertia,
            "max_torque": 2.0, "acceleration": 20.0, "actuator": actuator,
            "load": {"gravity_mass": gravity_mass, "gravity_distance": 0.05}}


def servo_step_as_written(x, v, p, mass, inertia_dt, parameters, commands, state, masks,
                          flags):
    """numpy's runner on the law as written: servo_step itself, ``i`` every motor."""
    out = np.empty((law.RESULT_ROWS, x.shape[0]))
    law.servo_step(x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags, out,
                   (slice(None),))
    flags[law.ANY_STARTING] = False
    return out


@settings(max_examples=25, deadline=None)
@given(parts=_ACTUATOR_PARTS, envelope=st.booleans(),
       control=st.sampled_from(["webots", "dynamixel", "feetech"]),
       inertia=st.floats(1e-4, 0.01), gravity_mass=st.floats(0.0, 1.0),
       gains=st.tuples(st.integers(1, 900), st.integers(0, 50), st.integers(0, 900)),
       stribeck_alpha=st.sampled_from([0.7, 1.0, 1.5]))
def test_property_numpys_runner_on_whole_rows_is_the_law_as_written(
        parts, envelope, control, inertia, gravity_mass, gains, stribeck_alpha):
    """numpy's runner steps a copy of the law that reads whole rows (``table[ROW]`` for
    ``table[ROW, i]``): the same bits as servo_step itself, through every command."""
    assert law.step_motors.__code__.co_names.count("_servo_step_every_motor") == 1
    assert law._servo_step_every_motor.__name__ == "_servo_step_on_rows"  # not a fallback
    servo = actuated_servo(parts, envelope, control, inertia, gravity_mass, gains,
                           stribeck_alpha)
    raw = {"basic_time_step_ms": 1, "motors": [servo, motor("ideal", None)]}
    rows, written = numpy_simulation(raw), numpy_simulation(raw)
    written.bank._law = servo_step_as_written
    for k, (a, b) in enumerate(zip(commands(rows), commands(written), strict=True)):
        a(), b()
        rows.step(30), written.step(30)
        assert_same_bits(state(rows), state(written), f"command {k}")


# ------------------------------------------------------------------ half ticks

TICK = 2 * math.pi / 4096
#: positions exactly at half an encoder tick, x / TICK exactly +-2.5 and +-3.5: half to
#: even rounds 2.5 down and 3.5 up (and their negatives alike), half up (floor(x + 0.5))
#: and half away from zero each differ from it on one of them
HALF_TICKS = (2.5, 3.5, -2.5, -3.5)


def compiled_whole_ticks():
    """The compiled runner's own whole_ticks (its namespace: rint_ compiled for one
    number)."""
    return law.compiled().py_func.__globals__["whole_ticks"]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(-10**6, 10**6), sign=st.sampled_from([1, -1]),
       tick=st.sampled_from([TICK, 2 * math.pi / 1024, 0.25, 1e-3]),
       offset=st.sampled_from([0.5, 0.25, 0.75, 0.0]))
@example(k=2, sign=1, tick=TICK, offset=0.5)
@example(k=3, sign=-1, tick=TICK, offset=0.5)
def test_property_both_runners_round_to_whole_ticks_as_python_round(k, sign, tick, offset):
    """Any position, half ticks of both signs among them: numpy's whole_ticks (an array),
    the compiled runner's (a number) and Python's round (half to even) on the same
    quotient give the same bits."""
    x = sign * (k + offset) * tick
    expected = round(x / tick) * tick
    numpy_ticks = law.whole_ticks(np.array([x, x]), np.array([tick, tick]),
                                  np.array([True, True]), True)
    assert numpy_ticks.tolist() == [expected, expected]
    assert compiled_whole_ticks()(x, tick, True, True) == expected
    # a motor without an encoder keeps its position, in both
    assert law.whole_ticks(np.array([x]), np.array([tick]), np.array([False]),
                           False).tolist() == [x]
    assert compiled_whole_ticks()(x, tick, False, False) == x


def compiled_fade():
    """The compiled runner's own Stribeck fade (its namespace's fade_)."""
    return law.compiled().py_func.__globals__["fade_"]


@settings(max_examples=40, deadline=None)
@given(v=st.lists(st.floats(-20.0, 20.0), min_size=1, max_size=40),
       velocity=st.floats(0.01, 2.0), alpha=st.floats(0.3, 3.0))
@example(v=[-0.005214304633250764], velocity=0.2, alpha=1.0)  # numpy's exp: 1 ulp off
@example(v=[0.3, -1.1, 2.7], velocity=0.2, alpha=1.5)
def test_property_both_runners_fade_the_stribeck_friction_alike(v, velocity, alpha):
    """exp(-(|v| / velocity) ** alpha) of the load-dependent friction: numpy's runner
    (an array) and the compiled one (each number) give the same bits as Python's math
    (the C library's pow and exp) for any speed, both signs; numpy's own SIMD pow and
    exp differ from it in the last bit for about one number in twenty (AVX-512)."""
    speeds = np.array(v)
    expected = [math.exp(-(abs(s) / velocity) ** alpha) for s in v]
    assert law.fade_(speeds, np.full(len(v), velocity), np.full(len(v), alpha)).tolist() \
        == expected
    assert [compiled_fade()(s, velocity, alpha) for s in v] == expected


@pytest.mark.parametrize("runner", ["numpy", *COMPILED])
def test_a_motor_at_half_a_tick_sees_the_even_tick_both_ways(runner):
    """Four motors at rest exactly at 2.5, 3.5, -2.5 and -3.5 encoder ticks, Webots' law
    (P 10) told to stay where they are: the encoder rounds half to even (2, 4, -2, -4
    ticks), so the error is +-half a tick and the first step's velocity is P times it,
    the signs +, -, -, + (the motor's inertia is reached within the force limit). A
    fifth motor there without an encoder sees its exact position: no error, no motion
    (and the others are then rounded motor by motor)."""
    assert all((h * TICK) / TICK == h for h in HALF_TICKS)  # exactly half ticks
    raw = {"basic_time_step_ms": 1, "motors": [
        {"name": f"m{k}", "min_position": -1.0, "max_position": 1.0, "inertia": 0.01,
         "position": h * TICK, "actuator": {"resolution": 4096 if k < 4 else 0}}
        for k, h in enumerate([*HALF_TICKS, 2.5])]}
    sim = numpy_simulation(raw) if runner == "numpy" else compiled_simulation(raw, runner)
    for m in sim.motors:
        m.set_position(m.position)
    sim.step(1)
    seen = [2, 4, -2, -4]  # half to even, by hand
    expected = [10.0 * (h - s) * TICK for h, s in zip(HALF_TICKS, seen, strict=True)]
    assert np.sign(expected).tolist() == [1, -1, -1, 1]
    assert sim.bank.velocity.tolist() == pytest.approx([*expected, 0.0], rel=1e-9,
                                                       abs=1e-300)


@pytest.mark.parametrize("runner", COMPILED)
def test_a_firmware_goal_at_half_a_tick_is_the_even_tick_on_both_runners(runner):
    """A firmware's goal register holds whole ticks: goals exactly at 2.5, 3.5, -2.5 and
    -3.5 ticks become 2, 4, -2 and -4 ticks (half to even), the profile's set-point ends
    there on both runners, to the same bits throughout (beside a Webots-law motor, whose
    target is not rounded: motor by motor)."""
    raw = {"basic_time_step_ms": 1, "motors": [
        {"name": f"m{k}", "min_position": -1.0, "max_position": 1.0, "inertia": 0.002,
         "servo": "STS3215-7.4V"} for k in range(len(HALF_TICKS))] + [
        {"name": "webots", "min_position": -1.0, "max_position": 1.0, "inertia": 0.002,
         "actuator": {"resolution": 4096}}]}
    sims = [numpy_simulation(raw), compiled_simulation(raw, runner)]
    for sim in sims:
        for m, h in zip(sim.motors, [*HALF_TICKS, 2.5], strict=True):
            m.set_position(h * TICK)
    for _ in range(4):
        for sim in sims:
            sim.step(50)
        assert_same_bits(state(sims[0]), state(sims[1]), "half-tick goals")
    expected = [t * TICK for t in (2, 4, -2, -4)]
    for sim in sims:
        assert sim.bank.state.setpoint[:4].tolist() == expected


def test_the_two_runners_agree_on_the_so101_in_mujoco(monkeypatch):
    """The SO-101 in MuJoCo (config/so101.yaml's STS3215s): SERVO_SIM_JIT=0 steps it with
    numpy's runner, by default the compiled one; the same bits."""
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    raw = to_dict(load_config(REPO / "config" / "so101.yaml"))
    raw = {"basic_time_step_ms": 1, "motors": raw["motors"], "physics": "mujoco",
           "multibody": {"model": "so101.urdf"}}
    monkeypatch.setenv("SERVO_SIM_JIT", "0")
    numpy_sim = Simulation.from_config(raw)
    monkeypatch.delenv("SERVO_SIM_JIT")
    compiled_sim = Simulation.from_config(raw)
    assert numpy_sim.bank._law is law.step_motors
    assert compiled_sim.bank._law is ahead.compiled()
    for k, (a, b) in enumerate(zip(commands(numpy_sim), commands(compiled_sim),
                                   strict=True)):
        a(), b()
        numpy_sim.step(300), compiled_sim.step(300)
        assert_same_bits(state(numpy_sim), state(compiled_sim), f"command {k}")


def sensors(sim: Simulation) -> dict[str, np.ndarray]:
    bank = sim.bank
    return {f"{name}.{part}": np.asarray(getattr(getattr(bank, name), part)).copy()
            for name in ("position_sensor", "force_sensor")
            for part in ("value", "last_ms", "refreshed", "refreshed_ms")} | {
        "time_ms": np.array(bank.time_ms), "previous_velocity": bank.previous_velocity.copy()}


@pytest.mark.parametrize("periods", [(8, 8), (5, 3), (0, 7), (1, 0), (0, 0)])
def test_a_run_of_mujoco_steps_is_the_steps_one_by_one(periods):
    """Simulation.step(n) on MuJoCo with the compiled law runs the steps up to each sensor
    refresh in one loop of the body's (MujocoBody.run): the same bits as n calls of the
    Stepper's step, state, sensors and clock, through every command (a trapezoidal move and
    a halt keep the supervisor busy: one by one there too), with the sensors refreshed
    together, apart, one disabled, every step, neither (runs of RUN_STEPS at most)."""
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    raw = to_dict(load_config(REPO / "config" / "so101.yaml"))
    raw = {"basic_time_step_ms": 1, "motors": raw["motors"], "physics": "mujoco",
           "multibody": {"model": "so101.urdf"}}
    runs, ones = Simulation.from_config(raw), Simulation.from_config(raw)
    assert runs.bank._body_loop is not None and runs.bank._body_loop == runs.bank.body.run
    for sim in (runs, ones):
        for k, m in enumerate(sim.motors):
            m.enable_position(periods[0] + k % 2 if periods[0] else 0)
            m.enable_force_feedback(periods[1])
    calls = []
    body_run = runs.bank.body.run
    runs.bank._body_loop = lambda steps: calls.append(steps) or body_run(steps)
    for k, (a, b) in enumerate(zip(commands(runs), commands(ones), strict=True)):
        a(), b()
        runs.step(300)
        with np.errstate(all="ignore"):
            for _ in range(300):
                with ones.bank.lock:
                    ones.bank.stepper.step()
        assert_same_bits(state(runs) | sensors(runs), state(ones) | sensors(ones),
                         f"command {k}")
    # runs of several steps were taken where no sensor refreshes every step; never
    # more than RUN_STEPS (the lock is held for a run)
    assert (max(calls) > 1) == (periods[0] != 1)
    assert max(calls) <= bank_module.RUN_STEPS
    if periods == (0, 0):
        assert max(calls) == bank_module.RUN_STEPS


def test_the_run_loops_compiled_cache_is_named_for_its_sources():
    """drive_joints calls the law's compiled code from law.py (on tables.py's rows), and
    numba checks a cache against the function's own file: its cache name carries a hash
    of the three files."""
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    import hashlib
    from pathlib import Path

    from servo_sim.multibody import body
    compiled = body._compile()[1]
    sources = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (law, tables, body)))
    assert compiled.py_func.__qualname__ == f"drive_joints_{sources.hexdigest()[:16]}"


@pytest.mark.parametrize("physics", ["dynamic", "kinematic"])
def test_every_dynamic_body_steps_the_compiled_law_by_default(physics):
    """Where numba is installed, the per-joint body steps the compiled law as MuJoCo's
    does (the kinematic mode has no law) once a thread of its own has loaded it, at
    start and after a reset; stepping meanwhile with numpy's runner, to the same bits
    as a bank that had the compiled law from its first step."""
    servo = "STS3215-7.4V" if physics == "dynamic" else None  # (kinematic: ideal only)
    config = {"basic_time_step_ms": 1, "physics": physics,
              "motors": [motor("a", None), motor("b", servo)]}
    sim = Simulation.from_config(config)
    sim.motor("a").set_position(0.5)
    sim.motor("b").set_position(-0.4)
    sim.step(30)  # some steps, maybe all on numpy's runner, while the law loads
    dynamic = physics == "dynamic"
    assert sim.bank.wait_for_compiled_law(timeout=600) is dynamic
    compiled = ahead.compiled() if dynamic else law.step_motors
    assert sim.bank._law is compiled
    sim.step(30)
    alone = Simulation.from_config(config)
    if dynamic:
        assert alone.bank.use_compiled_law()
    alone.motor("a").set_position(0.5)
    alone.motor("b").set_position(-0.4)
    alone.step(60)
    assert [m.position for m in sim.motors] == [m.position for m in alone.motors]
    assert [m.velocity for m in sim.motors] == [m.velocity for m in alone.motors]
    sim.reset()
    assert sim.bank._law is compiled


def test_without_numba_the_law_is_numpys(monkeypatch):
    """SERVO_SIM_JIT=0 stands for a machine without numba: no compiled runner, the bank
    keeps numpy's."""
    monkeypatch.setenv("SERVO_SIM_JIT", "0")
    assert law.compiled() is None and law.numba_jit() is None
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": [motor("a", None)]})
    assert not sim.bank.wait_for_compiled_law(timeout=600)
    assert not sim.bank.use_compiled_law() and sim.bank._law is law.step_motors


def law_functions() -> dict[str, object]:
    """Every function of the law's modules (law.py, and the MuJoCo body's compiled step
    where MuJoCo is installed)."""
    functions = {f"law.{name}": f for name, f in vars(law).items()
                 if inspect.isfunction(f) and f.__module__ == law.__name__}
    try:
        from servo_sim.multibody import body
    except ImportError:
        return functions
    return functions | {f"body.{name}": f for name, f in vars(body).items()
                        if inspect.isfunction(f) and f.__module__ == body.__name__}


def test_no_function_of_the_law_takes_more_than_twelve_parameters():
    """The law reads a few tables by name, not dozens of arrays by position."""
    counts = {name: len(inspect.signature(f).parameters)
              for name, f in law_functions().items()}
    assert counts["law.servo_step"] == 12 and counts["law._each_motor"] == 10
    assert max(counts.values()) <= 12, {n: c for n, c in counts.items() if c > 12}


def test_nothing_finds_an_argument_by_its_position_in_a_signature():
    """No module of the package reads a function's argument names (co_varnames)."""
    found = [str(path.relative_to(REPO)) for path in (REPO / "servo_sim").rglob("*.py")
             if "co_varnames" in path.read_text()]
    assert found == []


def test_each_tables_rows_are_numbered_once():
    """Each group's row constants are 0 ... its count - 1 once each, the count last: the
    one place the order is written."""
    groups = {"PARAMETER_ROWS": 18, "COMMAND_ROWS": 21, "STATE_ROWS": 6, "JOINT_ROWS": 5,
              "JOINT_PARAMETER_ROWS": 32, "JOINT_MASK_ROWS": 4, "TARGET_ROWS": 8,
              "TARGET_MASK_ROWS": 7, "MASK_ROWS": 6, "FLAG_COUNT": 18, "RESULT_ROWS": 4}
    source = inspect.getsource(tables)
    tree = ast.parse(source)
    seen = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            names = [t.id for t in node.targets[0].elts]
            assert ast.unparse(node.value) == f"range({len(names)})", names
            seen[names[-1]] = len(names) - 1
            assert [getattr(tables, n) for n in names] == list(range(len(names)))
    assert seen == groups
    # the named rows of each class are its table's rows, each once
    for cls, count in ((tables.Parameters, 18), (tables.Commands, 21), (tables.State, 6),
                       (tables.Joints, 5), (tables.JointParameters, 32),
                       (tables.JointMasks, 4), (tables.Targets, 8), (tables.TargetMasks, 7),
                       (tables.Masks, 6)):
        rows = [v.index for v in vars(cls).values() if isinstance(v, tables.Row)]
        assert sorted(rows) == list(range(count)), cls


def test_the_banks_rows_are_the_law_tables_rows():
    """Each named row of the bank and its actuators is the row of the table the law
    steps with (a write to either is a write to both), at start, after a reset and after
    a parameter change; a reset writes the state in place (nobody rebinds)."""
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": [
        motor("a", "STS3215-7.4V"), motor("b", None)]})
    data = sim.bank.data
    arguments = data.arguments
    sim.motors[0].set_position(0.5)
    sim.step(50)
    for when in ("start", "reset", "set_parameter"):
        if when == "reset":
            sim.reset()
            assert not data.state.table[tables.INTEGRAL].any()
            assert not data.state.table[tables.COMMAND_VELOCITY].any()
        elif when == "set_parameter":
            sim.set_parameter("a", "actuator.gains", [20, 1, 24])
        bank, act = sim.bank, sim.bank.actuators
        assert bank.data is data and data.arguments is arguments, when
        for group in ("parameters", "commands", "state", "masks", "flags"):
            assert getattr(bank, group) is getattr(act, group) is getattr(data, group)
        for name, row in vars(type(bank)).items():
            if isinstance(row, tables.Row):
                table = getattr(data, row.table).table
                assert np.shares_memory(getattr(bank, name), table[row.index]), (when, name)
        for group in (data.parameters, data.joint_parameters, data.joint_masks, data.commands,
                      data.targets, data.target_masks, data.state, data.joints, data.masks):
            for name, row in vars(type(group)).items():
                if isinstance(row, tables.Row):
                    assert getattr(group, name).base is group.table, (when, name)
                    assert np.shares_memory(getattr(group, name), group.table[row.index])
        flags = data.flags.table
        assert act.flags.any_firmware and flags[tables.ANY_FIRMWARE], when
        assert act.flags.has_actuators and flags[tables.HAS_ACTUATORS], when


@pytest.mark.parametrize("physics", ["dynamic", "kinematic"])
def test_every_per_motor_array_of_the_bank_is_a_row_of_its_tables(physics):
    """The bank keeps no per-motor array of its own: every array it exposes (a named
    row, its bound views, the mode) is a row of one of its tables (model, commands,
    state), the same memory after steps, a reset, a parameter change and set_loads, and
    a view taken at the start reads the state after them (nobody rebinds)."""
    sim = Simulation.from_config({"basic_time_step_ms": 2, "physics": physics, "motors": [
        motor("a", "STS3215-7.4V" if physics == "dynamic" else None), motor("b", None)]})
    bank = sim.bank
    data = bank.data
    tables_ = [getattr(data, name) for name in (
        "parameters", "joint_parameters", "joint_masks", "commands", "targets",
        "target_masks", "state", "joints", "masks")]
    position, inertia, target = bank.position, bank.inertia, bank.target_position

    def arrays():
        out = {name: value for name, value in vars(bank).items()
               if isinstance(value, np.ndarray)}
        out.update({name: getattr(bank, name) for name, row in vars(type(bank)).items()
                    if isinstance(row, tables.Row)})
        out["mode"] = bank.mode
        return out

    for when in ("start", "steps", "reset", "set_parameter", "set_loads"):
        if when == "steps":
            sim.motors[0].set_position(0.4)
            sim.motors[1].set_position(-0.3)
            sim.step(40)
        elif when == "reset":
            sim.reset()
        elif when == "set_parameter":
            sim.set_parameter("b", "max_velocity", 2.5)
        elif when == "set_loads":
            bank.set_loads(np.array([1e-3, 2e-3]), np.zeros(2), np.zeros(2), np.zeros(2))
        for name, value in arrays().items():
            owners = [t for t in tables_ if np.shares_memory(value, t.table)]
            owners += [data.mode] if np.shares_memory(value, data.mode) else []
            assert len(owners) == 1, (when, name)
        assert position is bank.joints.views[tables.POSITION]
        assert np.shares_memory(inertia, data.joint_parameters.table)
        assert np.shares_memory(target, data.targets.table)
    assert position.tolist() == bank.position.tolist() == [0.0, 0.0]  # (reset, then rest)
    assert bank.inertia.tolist() == [1e-3, 2e-3] and inertia.tolist() == [1e-3, 2e-3]
    assert bank.max_velocity[1] == 2.5


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-50.0, 50.0), st.floats(1e-3, 10.0),
                          st.floats(0.1, 4.0)), min_size=1, max_size=64))
def test_the_stribeck_fade_is_the_same_bits_with_math_and_compiled(rows):
    """law.fade_ takes Python's math where numba is not imported and numba's code where
    it is: both the C library's pow and exp, the same bits as the compiled runner's."""
    numba = pytest.importorskip("numba", reason="numba is not installed: one form only")
    v, velocity, alpha = (np.array(column) for column in zip(*rows, strict=True))
    compiled = numba.njit(cache=True, error_model="numpy")(law._fade_each)
    one = numba.njit(error_model="numpy")(law._fade_one)
    by_math = law._fade_math(v, velocity, alpha)
    assert by_math.tobytes() == compiled(v, velocity, alpha).tobytes()
    assert by_math.tolist() == [one(*row) for row in zip(v, velocity, alpha, strict=True)]
    assert law.fade_(v, velocity, alpha).tobytes() == by_math.tobytes()


def test_loading_the_compiled_law_hands_the_gil_on_quickly_then_as_before():
    """While a bank's thread loads the compiled law the switch interval is at most
    LOADING_SWITCH_INTERVAL_S (two threads loading at once: until both are done); the
    interval from before after it, once the bank steps the compiled law."""
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        with law.quick_gil_handover():
            assert sys.getswitchinterval() == law.LOADING_SWITCH_INTERVAL_S
            with law.quick_gil_handover():
                assert sys.getswitchinterval() == law.LOADING_SWITCH_INTERVAL_S
            assert sys.getswitchinterval() == law.LOADING_SWITCH_INTERVAL_S
        assert sys.getswitchinterval() == 0.004
        sim = Simulation.from_config({"basic_time_step_ms": 1,
                                      "motors": [motor("a", "STS3215-7.4V")]})
        assert sim.bank.wait_for_compiled_law(timeout=600)
        assert sys.getswitchinterval() == 0.004
    finally:
        sys.setswitchinterval(before)


#: the numbers where bounds differ: both zeros, both infinities, NaN of both signs
_SPECIAL = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 1.0, -1.0])


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.one_of(_SPECIAL, st.floats()),
                                st.one_of(_SPECIAL, st.floats())), min_size=1, max_size=40))
def test_property_numpys_bounds_are_the_compiled_runners_bit_for_bit(pairs):
    """at_most, at_least, fmin_, fmax_ on arrays (numpy's runner) give, element by element,
    the bits of the compiled runner's scalar bounds, zero's sign and NaN's included, on
    lengths that reach numpy's SIMD loops and their tails alike."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    for array_bound, scalar_bound in ((law.at_most, law._at_most_one),
                                      (law.at_least, law._at_least_one),
                                      (law.fmin_, law._fmin_one), (law.fmax_, law._fmax_one)):
        expected = np.array([scalar_bound(x, y) for x, y in pairs])
        assert array_bound(a.copy(), b).tobytes() == expected.tobytes(), array_bound.__name__
        for y in (b[0], 0.0, -0.0):  # a number for b, as the law passes constants
            expected = np.array([scalar_bound(x, y) for x in a.tolist()])
            assert array_bound(a.copy(), y).tobytes() == expected.tobytes()

