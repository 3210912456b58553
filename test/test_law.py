"""The servo law's two runners (``servo_sim/model/law.py``): numpy on the bank's arrays
(the default) and numba's, the same source compiled for one motor's numbers and looped
over the motors (what the MuJoCo body steps with). The law's behaviour is what the rest
of the suite checks against independent values, on both bodies; here: the two runners
step every profile, a bank mixing them and the MuJoCo SO-101 to the same bits, through
every command that changes what the law computes."""

from __future__ import annotations

import ast
import inspect
import math

import numpy as np
import pytest
from conftest import REPO

from servo_sim.model import Simulation, law
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
        out |= {name: getattr(bank.actuators, name).copy() for name in ACTUATOR_STATE}
    return out


def assert_same_bits(a: dict, b: dict, when: str) -> None:
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), (when, name, a[name],
                                                                  b[name])


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


def run_both(raw: dict) -> None:
    """``raw``'s simulation on each runner, commanded alike: the same bits throughout."""
    numpy_sim = Simulation.from_config(raw)
    compiled_sim = Simulation.from_config(raw)
    assert compiled_sim.bank.use_compiled_law()
    assert numpy_sim.bank._law is law.servo_step and compiled_sim.bank._law is law.compiled()
    for k, (a, b) in enumerate(zip(commands(numpy_sim), commands(compiled_sim),
                                   strict=True)):
        a(), b()
        for _ in range(6):
            numpy_sim.step(50), compiled_sim.step(50)
            assert_same_bits(state(numpy_sim), state(compiled_sim), f"command {k}")


def motor(name: str, servo: str | None) -> dict:
    entry = {"name": name, "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
             "load": {"gravity_mass": 0.1, "gravity_distance": 0.05}}
    return entry if servo is None else {**entry, "servo": servo}


@pytest.mark.parametrize("servo", [None, *profile_names()])
def test_the_two_runners_agree_to_the_bit_on_each_profile(servo):
    """Two motors of one profile (or Webots' ideal motor): every command, both runners."""
    run_both({"basic_time_step_ms": 1, "motors": [motor("a", servo), motor("b", servo)]})


def test_the_two_runners_agree_on_a_bank_that_mixes_them():
    """Firmware laws beside Webots' PID and an ideal motor in one bank: the branches
    where only some motors follow a firmware's profile."""
    servos = [None, "STS3215-7.4V", "XL430-W250", None, "XM430-W350"]
    known = set(profile_names())
    servos = [s if s is None or s in known else None for s in servos]
    assert len({s for s in servos if s}) >= 1
    run_both({"basic_time_step_ms": 2,
              "motors": [motor(f"m{k}", s) for k, s in enumerate(servos)]})


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
    assert numpy_sim.bank._law is law.servo_step and compiled_sim.bank._law is law.compiled()
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
    bank's step, state, sensors and clock, through every command (a trapezoidal move and
    a halt keep the supervisor busy: one by one there too), with the sensors refreshed
    together, apart, one disabled, every step, neither (runs of RUN_STEPS at most)."""
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    raw = to_dict(load_config(REPO / "config" / "so101.yaml"))
    raw = {"basic_time_step_ms": 1, "motors": raw["motors"], "physics": "mujoco",
           "multibody": {"model": "so101.urdf"}}
    runs, ones = Simulation.from_config(raw), Simulation.from_config(raw)
    assert runs.bank._run is not None and runs.bank._run == runs.bank.body.run
    for sim in (runs, ones):
        for k, m in enumerate(sim.motors):
            m.enable_position(periods[0] + k % 2 if periods[0] else 0)
            m.enable_force_feedback(periods[1])
    calls = []
    runs.bank._run = lambda bank, steps: calls.append(steps) or bank.body.run(bank, steps)
    for k, (a, b) in enumerate(zip(commands(runs), commands(ones), strict=True)):
        a(), b()
        runs.step(300)
        with np.errstate(all="ignore"):
            for _ in range(300):
                ones.bank.step()
        assert_same_bits(state(runs) | sensors(runs), state(ones) | sensors(ones),
                         f"command {k}")
    # runs of several steps were taken where no sensor refreshes every step; never
    # more than RUN_STEPS (the lock is held for a run)
    assert (max(calls) > 1) == (periods[0] != 1)
    assert max(calls) <= bank_module.RUN_STEPS
    if periods == (0, 0):
        assert max(calls) == bank_module.RUN_STEPS


def test_the_run_loops_compiled_cache_is_named_for_both_sources():
    """between calls the law's compiled code from law.py, and numba checks a cache against
    the function's own file: its cache name carries a hash of both files."""
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    import hashlib
    from pathlib import Path

    from servo_sim.multibody import body
    compiled = body._compile()[1]
    sources = hashlib.sha256(Path(law.__file__).read_bytes() + Path(body.__file__).read_bytes())
    assert compiled.py_func.__qualname__ == f"between_{sources.hexdigest()[:16]}"


def test_without_numba_the_law_is_numpys(monkeypatch):
    """SERVO_SIM_JIT=0 stands for a machine without numba: no compiled runner, the bank
    keeps numpy's."""
    monkeypatch.setenv("SERVO_SIM_JIT", "0")
    assert law.compiled() is None and law.numba_jit() is None
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": [motor("a", None)]})
    assert not sim.bank.use_compiled_law() and sim.bank._law is law.servo_step


def test_the_compiled_runner_takes_servo_steps_arguments():
    """One argument list: the loop over the motors takes each of servo_step's arguments
    once, as its own or as the row of a table, each table's rows in the order the bank
    and its actuators keep them (law.BANK_FLOATS ...), and passes them all to servo_step
    in its order."""
    tree = ast.parse(inspect.getsource(law._each_motor))
    function = tree.body[0]
    tables = {"bank_floats": law.BANK_FLOATS, "bank_masks": law.BANK_MASKS,
              "actuator_floats": law.ACTUATOR_FLOATS, "actuator_masks": law.ACTUATOR_MASKS,
              "actuator_flags": law.ACTUATOR_FLAGS}
    own = [a.arg for a in function.args.args if a.arg not in tables]
    unpacked = {}
    for node in function.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                and node.value.id in tables:
            unpacked[node.value.id] = tuple(t.id for t in node.targets[0].elts)
    assert unpacked == tables
    expected = list(inspect.signature(law.servo_step).parameters)
    assert sorted(own + [n for rows in tables.values() for n in rows]) == sorted(expected)
    call = next(n for n in ast.walk(function) if isinstance(n, ast.Call)
                and getattr(n.func, "id", None) == "servo_step")
    passed = [a.value.id if isinstance(a, ast.Subscript) else a.id for a in call.args]
    assert passed == expected
    # the results' rows, as the bank unpacks them
    assert law.RESULTS == ("v_new", "force", "wanted", "duty", "v_cmd")


def test_the_tables_rows_are_the_banks_and_actuators_arrays():
    """Each row of the compiled runner's tables is the array the bank or its actuators
    step with (a write to either is a write to both), and its flags are theirs, at
    start, after a reset and after a parameter change."""
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": [
        motor("a", "STS3215-7.4V"), motor("b", None)]})
    for when in ("start", "reset", "set_parameter"):
        if when == "reset":
            sim.reset()
        elif when == "set_parameter":
            sim.set_parameter("a", "actuator.gains", [20, 1, 24])
        bank, act = sim.bank, sim.bank.actuators
        arguments = dict(zip(inspect.signature(law.servo_step).parameters,
                             bank._law_arguments(bank.position, bank.position,
                                                 bank.position), strict=True))
        for table, names in ((bank._law_floats, law.BANK_FLOATS),
                             (bank._law_masks, law.BANK_MASKS),
                             (act.floats, law.ACTUATOR_FLOATS),
                             (act.masks, law.ACTUATOR_MASKS)):
            for row, name in zip(table, names, strict=True):
                assert np.shares_memory(row, arguments[name]), (when, name)
                assert row.base is table.base or row.base is table, (when, name)
        flags = act.compiled_arguments[0]
        assert flags.tolist() == [arguments[name] for name in law.ACTUATOR_FLAGS], when
