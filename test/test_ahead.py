"""The servo law compiled ahead of time (``servo_sim/model/ahead.py``): built once, then
loaded by other processes without importing numba, keyed by the law's sources (a
changed law is built anew, never served the old library), numba's JIT where it cannot
be built, numpy's runner for arrays the library cannot take. test_law.py compares its
steps with numpy's runner to the bit, through every command and profile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.model import Simulation, ahead, law, tables

pytest.importorskip("numba", reason="numba is not installed (the mujoco extra has it)")

#: a process that loads (or builds) the law's library and steps a bank with it beside
#: numpy's runner; prints what it saw as JSON
STEPPER = textwrap.dedent("""
    import json, logging, os, sys, time
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    for name in ("numba", "llvmlite"):
        logging.getLogger(name).setLevel(logging.WARNING)
    started = time.perf_counter()
    from servo_sim.model import Simulation, ahead, law
    runner = ahead.runner(build=os.environ.get("BUILD") == "1")
    loaded = time.perf_counter() - started
    raw = {"basic_time_step_ms": 1, "motors": [
        {"name": "webots", "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
         "max_torque": 2.0, "actuator": {"backlash": 0.01, "resolution": 4096,
                                         "friction": 0.01}},
        {"name": "firmware", "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
         "servo": "STS3215-7.4V"}]}
    os.environ["SERVO_SIM_JIT"] = "0"
    numpy_sim = Simulation.from_config(raw)
    del os.environ["SERVO_SIM_JIT"]
    sim = Simulation.from_config(raw)
    compiled = sim.bank.wait_for_compiled_law(timeout=600)
    for s in (numpy_sim, sim):
        s.motor("webots").set_position(0.5)
        s.motor("firmware").set_position(-0.4)
        s.step(200)
        s.motor("webots").set_velocity(-0.8)
        s.step(200)
    bits = {name: [getattr(s.bank, name).tobytes().hex() for s in (numpy_sim, sim)]
            for name in ("position", "velocity", "motor_force", "energy")}
    print(json.dumps({
        "numba": "numba" in sys.modules, "loaded_s": loaded,
        "path": runner and str(runner.path), "compiled": compiled,
        "ahead": runner is not None and sim.bank._law is runner.step,
        "jit": law._COMPILED is not None and sim.bank._law is law._COMPILED,
        "same": all(a == b for a, b in bits.values()),
        "position": sim.bank.position.tolist()}))
""")


def step_in_process(cache: Path, build: bool, pythonpath: Path | None = None,
                    **environment: str) -> dict:
    """:data:`STEPPER` in a process of its own, the library cache at ``cache`` (``build``:
    built there where missing); its report and its log (``log``)."""
    env = dict(os.environ, SERVO_SIM_LAW_CACHE=str(cache), BUILD="1" if build else "0",
               **environment)
    env.pop("SERVO_SIM_JIT", None)
    env.pop("SERVO_SIM_AHEAD", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run([sys.executable, "-c", STEPPER], env=env, capture_output=True,
                          text=True, timeout=900, cwd=cache.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]) | {"log": done.stderr}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A cache with the law's library, built by a process of its own; its report."""
    cache = tmp_path_factory.mktemp("law_cache") / "cache"
    return cache, step_in_process(cache, build=True)


def test_a_process_builds_the_library_once_and_steps_with_it(built):
    """The first process builds the library (numba compiles it: logged with its cost),
    into the cache under the key of this package's sources, and its bank steps with it
    to the same bits as numpy's runner."""
    cache, report = built
    assert report["path"] == str(cache / f"servo_law-{ahead.key(ahead.sources())}.so")
    assert [p.name for p in cache.glob("servo_law-*.so")] == [Path(report["path"]).name]
    assert "the servo law compiled ahead of time in" in report["log"]
    assert report["compiled"] and report["ahead"] and report["same"]


def test_a_second_process_loads_the_library_without_importing_numba(built):
    """A later process loads the built library (build not allowed: it must be there)
    and steps its bank with it, to the same bits as numpy's runner, without importing
    numba."""
    cache, first = built
    report = step_in_process(cache, build=False)
    assert report["path"] == first["path"]
    assert report["compiled"] and report["ahead"] and report["same"]
    assert report["numba"] is False
    assert report["position"] == first["position"]
    assert "compiled ahead of time" not in report["log"]


def test_a_changed_law_is_built_anew_not_served_the_old_library(built, tmp_path):
    """The package with a law that drives at half the force (a copy, its law.py
    changed): the key of its sources differs, so a process of it builds a library of
    its own beside the first rather than loading the first; its steps are the changed
    law's (numpy's runner of the copy, to the bit), not the first library's."""
    cache, first = built
    copy = tmp_path / "package"
    shutil.copytree(REPO / "servo_sim", copy / "servo_sim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    law_py = copy / "servo_sim" / "model" / "law.py"
    source = law_py.read_text()
    assert source.count("wanted = v_cmd * mass\n") == 1
    law_py.write_text(source.replace("wanted = v_cmd * mass\n", "wanted = v_cmd * mass * 0.5\n"))
    report = step_in_process(cache, build=True, pythonpath=copy)
    assert report["path"] != first["path"] and Path(report["path"]).exists()
    assert len(list(cache.glob("servo_law-*.so"))) == 2
    assert "the servo law compiled ahead of time in" in report["log"]
    assert report["ahead"] and report["same"]
    assert report["position"] != first["position"]


def test_a_package_keeps_only_its_current_library_beside_it(tmp_path):
    """Without ``SERVO_SIM_LAW_CACHE`` the library goes into the package's own
    ``__pycache__`` (a copy of the package here), where a library of its former sources
    is removed once the new one is built; elsewhere nothing is removed (the test
    above)."""
    copy = tmp_path / "package"
    shutil.copytree(REPO / "servo_sim", copy / "servo_sim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    beside = copy / "servo_sim" / "model" / "__pycache__"
    beside.mkdir()
    former = beside / "servo_law-former.so"
    former.write_bytes(b"a library of former sources")
    env = dict(os.environ, PYTHONPATH=str(copy))
    env.pop(ahead.CACHE_ENV, None)
    env.pop("SERVO_SIM_AHEAD", None)
    done = subprocess.run([sys.executable, "-c", "from servo_sim.model import ahead; "
                           "print(ahead.runner().path)"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    built = Path(done.stdout.split()[-1])
    assert built.parent == beside and built.exists()
    assert [p.name for p in beside.glob("servo_law-*.so")] == [built.name]


def test_the_key_follows_the_sources():
    """A change anywhere in the law's sources gives another key (so another library)."""
    sources = ahead.sources()
    assert ahead.key(sources) == ahead.key(bytes(sources))
    assert ahead.key(sources + b"\n# changed\n") != ahead.key(sources)
    assert ahead.key(sources.replace(b"0.5", b"0.25", 1)) != ahead.key(sources)


def test_without_a_c_compiler_numbas_runner_steps(tmp_path):
    """No C compiler (``CC`` names none): no library, one debug line saying why, and
    the bank steps with numba's JIT runner (the same bits as numpy's)."""
    report = step_in_process(tmp_path / "cache", build=True, CC=str(tmp_path / "no-cc"))
    assert report["path"] is None and not report["ahead"]
    assert report["compiled"] and report["jit"] and report["same"]
    said = [line for line in report["log"].splitlines() if "ahead-of-time" in line]
    assert len(said) == 1 and "no C compiler" in said[0], said
    assert not list((tmp_path / "cache").glob("servo_law-*.so"))


def law_arguments(n: int, seed: int) -> list[np.ndarray]:
    """A bank's law arguments for ``n`` motors at random (positions, velocities, momenta
    of either sign, masses, inertia; the tables of a config with firmware and Webots-law
    actuators, told to move both ways)."""
    rng = np.random.default_rng(seed)
    config = {"basic_time_step_ms": 1, "motors": [
        {"name": f"m{k}", "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
         "max_torque": 2.0, **({"servo": "STS3215-7.4V"} if k % 2 else
                               {"actuator": {"backlash": 0.01, "friction": 0.01}})}
        for k in range(n)]}
    sim = Simulation.from_config(config)
    for k, m in enumerate(sim.motors):
        m.set_position(rng.uniform(0.1, 1.0) * (-1) ** k)
    body = [rng.uniform(-1.0, 1.0, n) for _ in range(3)]
    return [*body, rng.uniform(0.001, 0.01, n), rng.uniform(0.0, 0.01, n),
            *(table.copy() for table in sim.bank.data.arguments)]


def copies(arguments: list[np.ndarray]) -> list[np.ndarray]:
    return [a.copy() for a in arguments]


class Subclass(np.ndarray):
    """An array of a class of its own: numpy computes with it, the library takes only
    ndarray itself."""


def odd(value: np.ndarray, change: str) -> np.ndarray:
    """``value`` as an array the library does not take: float32, a strided view, a row
    of a Fortran-ordered table, an ndarray subclass."""
    if change == "subclass":
        return value.view(Subclass)
    if change == "float32":
        return value.astype(np.float32)
    if change == "strided":
        wide = np.zeros(2 * value.shape[0])
        wide[::2] = value
        return wide[::2]
    return np.asfortranarray(np.stack([value, value]))[0]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 7), seed=st.integers(0, 2**32 - 1),
       change=st.sampled_from(["float32", "strided", "fortran", "subclass"]),
       which=st.integers(0, 4))
def test_arrays_the_library_cannot_take_go_to_numpys_runner(n, seed, change, which):
    """The library takes float64 C-ordered ndarrays of the bank's shapes; any other of the
    body's arrays (float32, a strided view, a row of a Fortran-ordered table, a
    subclass) goes to
    numpy's runner instead: the same results and state as numpy's on the same arrays,
    nothing written twice. On plain arrays the library's results are numpy's too."""
    runner = ahead.runner()
    assert runner is not None
    arguments = law_arguments(n, seed)
    plain, expected = copies(arguments), copies(arguments)
    assert runner.step(*plain).tobytes() == law.step_motors(*expected).tobytes()
    for got, want in zip(plain[5:], expected[5:], strict=True):
        assert got.tobytes() == want.tobytes()
    given_ = copies(arguments)
    given_[which] = odd(given_[which], change)
    expected = copies(given_)
    assert runner.step(*given_).tobytes() == law.step_motors(*expected).tobytes()
    for got, want in zip(given_[5:], expected[5:], strict=True):
        assert got.tobytes() == want.tobytes()


def test_a_wrong_number_of_arguments_is_refused_as_numpys_runner_refuses_it():
    """Nine arguments, or a list for an array: the library reads none of them, numpy's
    runner says what is wrong (as it does alone), and the tables are as they were."""
    runner = ahead.runner()
    arguments = law_arguments(2, 0)
    before = copies(arguments)
    with pytest.raises(TypeError):
        runner.step(*arguments[:9])
    with pytest.raises(TypeError):
        runner.keep_motor_force(*arguments[:3])
    for got, want in zip(arguments, before, strict=True):
        assert got.tobytes() == want.tobytes()
    listed = [a.tolist() if k == 0 else a for k, a in enumerate(arguments)]
    with pytest.raises(AttributeError):  # numpy's runner reads x.shape
        law.step_motors(*listed)
    with pytest.raises(AttributeError):
        runner.step(*listed)
    for got, want in zip(arguments[1:], before[1:], strict=True):
        assert got.tobytes() == want.tobytes()


def test_motor_force_kept_as_numpys_keeps_it():
    """The library's keep_motor_force: an off motor's force zeroed, the energy each
    consumed added (|force| x energy per force), both signs: the same bits as numpy's,
    and by hand."""
    runner = ahead.runner()
    force = np.array([2.0, -3.0, 0.5, -0.25])
    gain = np.array([1.0, 1.0, 0.0, 1.0])
    energy = np.array([1.0, 0.0, 5.0, 0.0])
    per_force = np.array([0.5, 2.0, 1.0, 4.0])
    numpy_force, numpy_energy = force.copy(), energy.copy()
    law.keep_motor_force(numpy_force, gain, numpy_energy, per_force)
    runner.keep_motor_force(force, gain, energy, per_force)
    assert force.tolist() == [2.0, -3.0, 0.0, -0.25]
    assert energy.tolist() == [2.0, 6.0, 5.0, 1.0]
    assert force.tobytes() == numpy_force.tobytes()
    assert energy.tobytes() == numpy_energy.tobytes()


def test_the_library_is_the_banks_compiled_law():
    """``ahead.compiled`` (what a bank steps with) gives the library's step first, its
    keep_motor_force with it; ``SERVO_SIM_AHEAD=0`` numba's JIT runner (``law.compiled``)."""
    runner = ahead.runner()
    assert ahead.compiled() is runner.step
    assert ahead.compiled_keep_motor_force() is runner.keep_motor_force
    sim = Simulation.from_config({"motors": [{"name": "a"}]})
    assert sim.bank.use_compiled_law() and sim.bank._law is runner.step
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SERVO_SIM_AHEAD", "0")
        assert ahead.compiled() is law.compiled()
        assert ahead.compiled_keep_motor_force() is law.compiled_keep_motor_force()
        jit = Simulation.from_config({"motors": [{"name": "a"}]})
        assert jit.bank.use_compiled_law() and jit.bank._law is law.compiled()
    assert tables.RESULT_ROWS == 4  # the shim's out table: V_NEW, FORCE, WANTED, DUTY
