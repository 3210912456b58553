"""Shared helpers: DDS kept on this machine, ROS imports that skip only where no ROS
can be had, small simulations built from keyword arguments."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

from servo_sim.hardware import HardwareSystem, LifecycleState
from servo_sim.model import Simulation, SimulationConfig, parse_config

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))  # the scalar reference, the stack client

# DDS stays on loopback, on a domain of this test run's own (before any rclpy.init; the
# node processes the tests start inherit it). SERVO_SIM_TEST_DOMAIN_ID picks the domain.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# 60-99: away from CI's 57 and the benchmark's 58, whose nodes have the same names
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SERVO_SIM_TEST_DOMAIN_ID",
                                             str(60 + os.getpid() % 40))

# The emulated buses answer through a pseudo-terminal from a child process, and the
# kernel hands a pty's bytes on through a worker at normal priority: on a loaded machine
# a reply can come later than the SDKs' reply timeout (twice the USB adapter's latency
# timer, 16 ms, plus 2 ms), a delay of this machine, not of the servo. In this process the
# SDKs wait as they would behind an adapter whose latency timer is 100 ms (about 0.2 s);
# lost and corrupt replies are still tested, by silencing and corrupting them.
for _sdk in ("scservo_sdk.port_handler", "dynamixel_sdk.port_handler"):
    importlib.import_module(_sdk).LATENCY_TIMER = 100

# Property tests draw the same examples on every run (derandomize): a failure is one that
# every run finds, not one run in six; the cases that must never be missed are
# @example's. HYPOTHESIS_PROFILE=explore draws new random examples, and more of them.
settings.register_profile("servo_sim", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "servo_sim"))

#: Which ROS tests must run here: CI sets SERVO_SIM_REQUIRE to ``ros`` (ROS 2 from PyPI),
#: ``ros,ros_launch`` (a ROS 2 installation), ``ros,ros_launch,ros2_control`` (one with
#: ros2_control), plus ``rqt`` where rqt is installed, so that one that would skip fails
#: instead. (Not ``launch``: launch_pytest's
#: plugin owns a marker of that name.)
REQUIRED = {w for w in os.environ.get("SERVO_SIM_REQUIRE", "").split(",") if w}
#: What each kind of ROS test needs first, and where to get it.
_GATES = {
    "ros": ("rclpy", "set up ROS 2 with scripts/setup-ros-venv, or source a ROS 2 "
                     "installation and colcon build servo_sim"),
    "ros_launch": ("launch_testing", "launch is not on PyPI: source a ROS 2 installation "
                                     "(/opt/ros/<distro>/setup.bash) and colcon build "
                                     "servo_sim, or build the ROS 2 Python tools onto the "
                                     "venv"),
    "ros2_control": ("controller_manager",
                     "ros2_control is not on PyPI: source a ROS 2 installation with "
                     "ros2_control, ros2_controllers and joint_state_topic_hardware_interface "
                     "(/opt/ros/<distro>/setup.bash) and colcon build servo_sim"),
    "rqt": ("rqt_gui", "rqt is not on PyPI: source a ROS 2 installation with rqt and its "
                       "plugins (/opt/ros/<distro>/setup.bash) and colcon build servo_sim, "
                       "or build rqt onto the venv (docs/testing.md)"),
}


def require_ros(*modules: str, need: str = "ros") -> list[ModuleType]:
    """Import ``modules`` for a ROS test module, or skip it with the reason.

    The skip is allowed only where no ROS can be had (``need``'s gate module, rclpy or
    launch_testing, is missing, and SERVO_SIM_REQUIRE does not ask for it): with the gate
    present, anything else missing (servo_sim's interfaces not built, not in the ament
    index) fails the module, naming what to do.
    """
    gate, hint = _GATES[need]
    have_gate = importlib.util.find_spec(gate) is not None
    frame = sys._getframe(1)
    caller = Path(frame.f_globals.get("__file__", "?")).name
    at_module_level = frame.f_code.co_name == "<module>"
    if at_module_level:
        _MODULE_NEEDS.setdefault(caller, set()).add(need)
    loaded = []
    for name in modules:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError as exc:
            why = f"{caller}: {name} not importable ({exc}): {hint}"
            if have_gate or need in REQUIRED:
                pytest.fail(why, pytrace=False)
            if at_module_level:  # a test's own skip is counted with its outcome
                _SKIPPED_MODULES[need].add(caller)  # a set: plugins may import it twice
            pytest.skip(why, allow_module_level=True)
    return loaded


def _executors() -> tuple[str, ...]:
    """The executors the node can run on with this rclpy (ros/entry.py): the
    EventsExecutor exists from rclpy 7.1.4 (Jazzy) on."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return ("single_threaded",)
    return ("single_threaded", "events")


@pytest.fixture(params=_executors())
def executor_kind(request) -> str:
    """Every node test runs on each executor this rclpy has."""
    return request.param


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makemodule(module_path, parent):
    """A module's own skip stays the module's where launch_testing's pytest plugin is
    installed: its pytest_pycollect_makemodule imports every test module to look for a
    launch test, and a module-level skip raised there would end the collection of the
    whole directory ("no tests collected", where launch is there and ros2_control is
    not). Then pytest collects the module itself, which imports it again and reports
    the skip with its reason."""
    outcome = yield
    if outcome.excinfo is not None and issubclass(outcome.excinfo[0], pytest.skip.Exception):
        outcome.force_result(pytest.Module.from_parent(parent, path=module_path))


#: test module file name -> the kinds of ROS test it is (its module-level require_ros)
_MODULE_NEEDS: dict[str, set[str]] = {}


def pytest_sessionstart(session):
    """Compile the MuJoCo body's servo law now (numba; a minute on a busy machine the
    first time, then loaded from its cache in under a second), so that no node or
    emulator a test starts waits for it under that test's timeout; and, with it, the
    Stribeck fade that numpy's runner takes compiled once numba is imported (law.fade_)."""
    from servo_sim.model import law
    try:
        from servo_sim.multibody.body import compile_ahead
    except ImportError:
        return
    seconds = compile_ahead()
    law.fade_(np.zeros(1), np.ones(1), np.ones(1))
    if seconds is not None:
        print(f"servo_sim: MuJoCo body's servo law compiled by numba in {seconds:.1f} s")


def pytest_collection_modifyitems(items):
    """Every item of a ROS test module carries its kind's marker, those that plugins make
    too (launch_testing's items do not inherit the module's pytestmark), so that
    ``-m "ros or ros_launch"`` selects them and the counts see them."""
    for item in items:
        for need in _MODULE_NEEDS.get(item.path.name, ()):
            item.add_marker(need)


#: Outcomes of the ROS tests (markers ros, ros_launch, ros2_control, rqt) and the modules
#: skipped whole, for the closing summary lines.
_COUNTS = {need: dict.fromkeys(("passed", "failed", "skipped"), 0) for need in _GATES}
_SKIPPED_MODULES: dict[str, set[str]] = {need: set() for need in _GATES}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A required kind of ROS test (SERVO_SIM_REQUIRE) that skips fails instead."""
    report = (yield).get_result()
    required = [m.name for m in item.iter_markers() if m.name in REQUIRED]
    if report.skipped and required:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"skipped ({reason}), but SERVO_SIM_REQUIRE="
                           f"{','.join(sorted(REQUIRED))}: {required[0]} tests must run here")


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for need in _GATES:
            if need in report.keywords:
                _COUNTS[need][report.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    """One line per kind of ROS test: how many ran, failed, skipped."""
    for need, counts in _COUNTS.items():
        terminalreporter.write_line(
            f"servo_sim {need} tests: " + ", ".join(f"{n} {k}" for k, n in counts.items())
            + f", {len(_SKIPPED_MODULES[need])} skipped modules")

# ----------------------------------------------------------------- the node as a process

def start_on_a_bus(hw, timeout_s: float = 10.0, retry_s: float = 0.1) -> None:
    """Start the HardwareSystem ``hw`` of an emulated bus (``hw.start``), again while it
    fails, ``retry_s`` apart until ``timeout_s`` of wall time has passed: an emulator
    starved by a busy machine may miss the first ping, which ``servo-sim run`` and a
    controller try again as well. A try against a dead bus takes the SDK's own timeout,
    so the deadline, not a count of tries, bounds the wait. Fails with the plugin's
    reason, at once if it is finalized."""
    deadline = time.monotonic() + timeout_s
    while not hw.start():
        assert hw.state is not LifecycleState.FINALIZED and time.monotonic() < deadline, \
            hw.component.reason
        time.sleep(retry_s)


@contextmanager
def started(config: SimulationConfig) -> Iterator[HardwareSystem]:
    """A HardwareSystem of ``config`` (on an emulated bus), started (start_on_a_bus),
    shut down after."""
    system = HardwareSystem(config)
    try:
        start_on_a_bus(system)
        yield system
    finally:
        system.shutdown()


def started_fixture(config_of: Callable[[str], SimulationConfig]):
    """A fixture ``hw``: the system of ``config_of(port)`` on the ``bus`` fixture's port,
    started, shut down after."""
    @pytest.fixture
    def hw(bus):
        with started(config_of(bus.port)) as system:
            yield system
    return hw


def bus_fixture(emulator: ModuleType):
    """A fixture ``bus``: the ``emulator`` module's bus of servos 1, 2 and 3 in a child
    process, stopped after (realtime: a servo's processor answers in time; a starved
    emulator may not)."""
    @pytest.fixture
    def bus():
        with emulator.EmulatorProcess([1, 2, 3], realtime=True) as process:
            yield process
    return bus


#: the serial-bus plugins: their baud rate in tests (each vendor's fastest common one)
BAUD_RATES = {"dynamixel": 4000000, "feetech": 1000000}


def bus_config(plugin: str, port: str, motors: Sequence[str] = ("a", "b", "c"),
               servo: dict | None = None, motor: dict | None = None,
               **extra: Any) -> SimulationConfig:
    """A config of ``motors`` on servo ids 1, 2 ... of the ``plugin``'s bus at ``port``:
    ``servo``, each servo's hardware settings beside its id; ``motor``, each motor's
    fields; ``extra``, hardware settings over these (a motor's group, a bus setting)."""
    hardware = {"plugin": plugin, "port": port, "baud_rate": BAUD_RATES[plugin],
                **{m: {"id": i + 1, **(servo or {})} for i, m in enumerate(motors)},
                **extra}
    return parse_config({"basic_time_step_ms": 8, "hardware": hardware,
                         "motors": [{"name": m, **(motor or {})} for m in motors]})


def launch_file_test(launch_file: Path, **arguments: str) -> Any:
    """A launch_testing module's description: ``launch_file`` with ``arguments``, then
    ReadyToTest (launch imported here: only modules that have it call this)."""
    import launch_testing.actions
    from launch import LaunchDescription
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(launch_file)),
                                 launch_arguments=arguments.items()),
        launch_testing.actions.ReadyToTest(),
    ])


def start_refused(hw, timeout_s: float = 10.0, retry_s: float = 0.1) -> str:
    """Start the HardwareSystem ``hw`` of an emulated bus that must refuse to start: the
    plugin's reason once a try failed for a cause other than a lost reply. A reply the
    SDK missed even on the plugin's second try (its reason says ``[TxRxResult]``: an
    emulator starved by a busy machine) is not the refusal expected: tried again,
    ``retry_s`` apart, until ``timeout_s`` of wall time has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert not hw.start(), "started, where a refusal was expected"
        reason = hw.component.reason
        if "[TxRxResult]" not in reason:
            return reason
        assert time.monotonic() < deadline, f"only lost replies for {timeout_s} s: {reason}"
        time.sleep(retry_s)


def recover(hw, cycles: int, timeout_s: float = 30.0) -> None:
    """Cycle the HardwareSystem ``hw`` until it is active again: at least ``cycles``
    times if need be (a real plugin's recovery tries configure + activate once per
    RECOVERY_PERIOD_MS of cycles), then on while ``timeout_s`` of wall time has not
    passed (a try whose replies a busy machine lost is followed by another)."""
    deadline = time.monotonic() + timeout_s
    for k in itertools.count():
        hw.cycle()
        if hw.active:
            return
        assert k < cycles or time.monotonic() < deadline, \
            f"not recovered: {hw.component.reason}"


def cycle_until(hw, done, what: str, timeout_s: float = 30.0) -> None:
    """Cycle the HardwareSystem ``hw`` until ``done()``; ``timeout_s`` of wall time bounds
    the wait. An emulated servo moves in wall-clock time, not in cycles: a count of cycles
    stands for a different time on every machine."""
    deadline = time.monotonic() + timeout_s
    while True:
        hw.cycle()
        if done():
            return
        assert time.monotonic() < deadline, f"{what}: not after {timeout_s} s"


def cycle_until_settled(hw, bus, read, hold_s: float = 0.1, timeout_s: float = 30.0):
    """Cycle ``hw`` until ``read()`` (a register of the emulated ``bus``) has kept one
    value for ``hold_s`` of the emulated servos' own time; return it."""
    value, since = read(), bus.time()

    def held() -> bool:
        nonlocal value, since
        now, latest = bus.time(), read()
        if latest != value:
            value, since = latest, now
        return now - since >= hold_s

    cycle_until(hw, held, f"{read} holding one value ({value})", timeout_s)
    return value


def interrupt_inside_a_transaction(hw, timeout_s: float = 60.0) -> None:
    """Cycle ``hw`` until a signal's KeyboardInterrupt (SIGALRM here, SIGINT in the node)
    lands inside one of the vendor SDK's transactions, where it leaves the port 'in use'
    (the SDK clears that flag only when the transaction ends)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.002)
                while True:
                    hw.cycle()
            except KeyboardInterrupt:
                pass
            if hw.component.port.is_using:
                return
        raise AssertionError(f"no interrupt inside a bus transaction in {timeout_s} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


TIMEOUT = 60.0
BIN = Path(sys.executable).parent
#: The installed entry point; a colcon install without pip runs the ros2 run script.
NODE = ([str(BIN / "servo_sim_node")] if (BIN / "servo_sim_node").exists()
        else [sys.executable, str(REPO / "scripts" / "servo_sim_node")])
STARTED = "2 motor(s) arm, gripper on hardware 'sim'"


class NodeProcess:
    """``servo_sim_node`` in a namespace of its own, its output in a file."""

    def __init__(self, tmp_path: Path, namespace: str, *ros_args: str,
                 env: dict[str, str] | None = None) -> None:
        """``env``: variables set for this process only, over this one's."""
        self.namespace = namespace
        self.log = tmp_path / f"{namespace}.log"
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [*NODE, "--ros-args", "-r", f"__ns:=/{namespace}", *ros_args],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})})

    @property
    def output(self) -> str:
        return self.log.read_text()

    def wait_for_output(self, text: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while text not in self.output:
            assert self.proc.poll() is None, f"the node exited {self.proc.returncode}:\n" \
                                             f"{self.output}"
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.output}"
            time.sleep(0.02)

    def wait(self) -> int:
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"the node did not exit within {TIMEOUT} s:\n{self.output}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def client_process(*args: str) -> subprocess.Popen:
    """``servo-sim-client ARGS`` started, its output piped (text)."""
    script = BIN / "servo-sim-client"
    if not script.exists():
        pytest.skip("servo-sim-client is not pip-installed beside this Python (a colcon "
                    "install without pip): no client to check")
    return subprocess.Popen([str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def client_command(*args: str) -> subprocess.CompletedProcess:
    """``servo-sim-client ARGS`` run to its end."""
    proc = client_process(*args)
    try:
        out, err = proc.communicate(timeout=TIMEOUT + 10)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def start(tmp_path):
    started: list[NodeProcess] = []

    def _start(namespace: str, *ros_args: str) -> NodeProcess:
        started.append(NodeProcess(tmp_path, namespace, *ros_args))
        return started[-1]

    yield _start
    for node in started:
        node.kill()


def destroy_node(node) -> None:
    """``node.destroy_node()`` after its waitables (a test's ActionClient): rclpy's
    destroy_node leaves them, and one left holds the node, so that its participant stays
    in the domain, seen in the next test's graph."""
    for waitable in list(node.waitables):
        waitable.destroy()
    node.destroy_node()


@pytest.fixture
def client():
    """An rclpy node of the test's own, with spin_until(condition, what)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("node_process_test_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin_until(condition, what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            executor.spin_once(timeout_sec=0.05)

    node.spin_until = spin_until
    yield node
    executor.shutdown()
    destroy_node(node)
    rclpy.shutdown(context=context)



def tf_lookup_at_now_minus(node, spin_until, parent: str, child: str,
                           age_s: float = 0.1) -> None:
    """A tf2 Buffer and TransformListener on ``node`` (spun by ``spin_until(condition,
    what)``) find ``parent`` -> ``child`` at the node's now() minus ``age_s``: the /tf
    that robot_state_publisher builds from the joint states agrees with the node's clock
    (issue 24). AssertionError (from spin_until) if not."""
    from rclpy.duration import Duration
    from rclpy.time import Time
    from tf2_ros import Buffer, TransformListener

    buffer = Buffer()
    listener = TransformListener(buffer, node, spin_thread=False)
    try:
        def found() -> bool:
            at = node.get_clock().now() - Duration(seconds=age_s)
            return buffer.can_transform(parent, child, Time(nanoseconds=at.nanoseconds,
                                                            clock_type=at.clock_type))

        spin_until(found, f"the transform {parent} -> {child} at now() - {age_s:g} s")
    finally:
        listener.unregister()


DT_MS = 8
DT = DT_MS / 1000


def make_sim(*motors: dict, **top) -> Simulation:
    """A simulation of the given motors (dicts of config fields; name defaults to m0, m1...)."""
    entries = [{"name": f"m{i}", **m} for i, m in enumerate(motors or ({},))]
    return Simulation.from_config({"basic_time_step_ms": DT_MS, **top, "motors": entries})


def one(basic_time_step_ms: int = DT_MS, physics: str = "dynamic", **fields):
    """A simulation with one motor 'm0' (config fields as keywords) and that motor."""
    sim = make_sim(fields, basic_time_step_ms=basic_time_step_ms, physics=physics)
    return sim, sim.motor("m0")


def reversal(sim: Simulation, speed: float = 0.5, steps: int = 200
             ) -> tuple[float, np.ndarray]:
    """Turn the first motor at ``speed`` (velocity control) for ``steps`` steps, then at
    ``-speed`` for as many: its position at the reversal and at each step after it."""
    m = sim.motors[0]
    m.set_position(float("inf"))
    m.set_velocity(speed)
    sim.step(steps)
    before = m.position
    m.set_velocity(-speed)
    after = []
    for _ in range(steps):
        sim.step()
        after.append(m.position)
    return before, np.array(after)


def snapshot(sim: Simulation) -> dict[str, np.ndarray]:
    """Every array of the bank, copied, to prove a rejected command changed nothing."""
    bank = sim.bank
    out = {k: v.copy() for k, v in vars(bank).items() if isinstance(v, np.ndarray)}
    for sensor in ("position_sensor", "force_sensor"):
        for k, v in vars(getattr(bank, sensor)).items():
            if isinstance(v, np.ndarray):
                out[f"{sensor}.{k}"] = v.copy()
    return out


def assert_unchanged(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=key)


@pytest.fixture
def warnings_log(caplog):
    """Captured warnings of the servo_sim logger."""
    caplog.set_level("WARNING", logger="servo_sim")
    return caplog
