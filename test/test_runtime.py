"""The runtime (servo_sim.runtime): pacing, pause/step/reset, what each cycle reports, and
real hardware's refusals; plain pytest, no ROS. Wall time is a clock the test sets."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from servo_sim.hardware import CallbackReturn, HardwareComponent, HardwareSystem
from servo_sim.model import Command, parse_config
from servo_sim.pacing import MAX_CATCH_UP_STEPS
from servo_sim.runtime import FEEDBACK_PERIOD_MS, RealTimeError, Runtime


class WallClock:
    """Wall time the test moves; ``sleep`` moves it too (nothing waits for real)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s
        self.slept += s


def system(step_ms: int = 1, **motor) -> HardwareSystem:
    hw = HardwareSystem(parse_config({"basic_time_step_ms": step_ms,
                                      "motors": [{"name": "a", **motor}]}))
    assert hw.start()
    return hw


def runtime(step_ms: int = 1, rtf: float = 1.0, **kwargs) -> tuple[Runtime, WallClock]:
    wall = WallClock()
    return Runtime(system(step_ms), real_time_factor=rtf, clock=wall, sleep=wall.sleep,
                   **kwargs), wall


def test_the_first_tick_starts_the_pace_then_cycles_follow_the_wall_clock():
    rt, wall = runtime(step_ms=2)
    assert list(rt.tick()) == []  # paced from the first tick, not from construction
    wall.now += 0.0101  # 10.1 ms of wall time: five 2-ms steps due
    cycles = list(rt.tick())
    assert [c.time_ms for c in cycles] == [2, 4, 6, 8, 10]
    wall.now += 0.0009  # not yet the sixth
    assert list(rt.tick()) == []
    wall.now += 0.0011
    assert [c.time_ms for c in rt.tick()] == [12]


@settings(max_examples=50, deadline=None)
@given(rtf=st.floats(0.1, 10.0), wall_s=st.floats(0.0, 0.05))
def test_cycles_due_are_the_wall_time_times_the_factor_over_the_step(rtf, wall_s):
    rt, wall = runtime(step_ms=1, rtf=rtf)
    list(rt.tick())
    wall.now += wall_s
    n = len(list(rt.tick()))
    expected = math.floor(wall_s * rtf / 0.001 + 1e-9)
    assert n == min(expected, MAX_CATCH_UP_STEPS)
    assert rt.time_ms == n


def test_a_machine_that_falls_behind_lets_simulated_time_slip():
    rt, wall = runtime(step_ms=1)
    list(rt.tick())
    wall.now += 1.0  # a second stalled: 1000 steps due
    assert len(list(rt.tick())) == MAX_CATCH_UP_STEPS and rt.overruns == 1
    wall.now += 0.003  # then paced from where it slipped: three more
    assert len(list(rt.tick())) == 3 and rt.overruns == 1


def test_free_running_cycles_for_a_slice_of_wall_time():
    reads = iter(range(1000))

    def clock() -> float:  # each read of the clock is 1 ms of wall time
        return 100.0 + next(reads) * 0.001

    rt = Runtime(system(step_ms=1), real_time_factor=0.0, clock=clock)
    cycles = list(rt.tick())  # the slice ends 5 ms after its first read: the reads at
    # 1, 2, 3 and 4 ms each let a batch of ten cycles run
    assert [c.time_ms for c in cycles] == list(range(1, 41)) and rt.period == 0.0


def test_cycle_waits_for_each_due_time_at_the_factor():
    rt, wall = runtime(step_ms=4, rtf=2.0)
    for k in range(1, 6):
        assert rt.cycle().time_ms == 4 * k
    assert wall.slept == pytest.approx(5 * 0.004 / 2.0)  # 2 ms of wall time a step
    wall.now += 1.0  # a late host: the next cycle runs at once, no burst of catch-up
    before = wall.slept
    assert rt.cycle().time_ms == 24 and wall.slept == before


def test_pause_step_resume_and_the_checks_of_step():
    rt, wall = runtime(step_ms=8, paused=True)
    wall.now += 1.0
    assert list(rt.tick()) == []  # paused: nothing runs
    with pytest.raises(ValueError, match="must be >= 0"):
        rt.step(-1)
    assert [c.time_ms for c in rt.step(3)] == [8, 16, 24]
    rt.resume()
    with pytest.raises(ValueError, match=r"only while paused \(call ~/pause first\)"):
        rt.step(1)
    list(rt.tick())  # paced from the resume: nothing due yet
    wall.now += 0.016
    assert [c.time_ms for c in rt.tick()] == [32, 40]
    rt.pause()
    wall.now += 1.0
    assert list(rt.tick()) == [] and rt.time_ms == 40


def test_a_new_factor_paces_from_now():
    rt, wall = runtime(step_ms=1)
    list(rt.tick())
    wall.now += 0.002
    assert len(list(rt.tick())) == 2
    rt.set_real_time_factor(3.0)
    wall.now += 0.002
    assert len(list(rt.tick())) == 6
    with pytest.raises(ValueError):
        rt.set_real_time_factor(-1.0)


def test_joint_states_are_due_at_their_rate_in_cycle_time():
    rt, _ = runtime(step_ms=1, paused=True, joint_states_rate=50.0)
    due = [c.time_ms for c in rt.step(1000) if c.joint_states]
    assert due == [1, *range(20, 1001, 20)]  # at once, then every 20 ms
    rt.set_joint_states_rate(0.0)
    assert not any(c.joint_states for c in rt.step(100))
    with pytest.raises(ValueError, match="joint_states_rate"):
        rt.set_joint_states_rate(math.nan)


def test_a_cycle_names_the_sensors_that_refreshed():
    rt, _ = runtime(step_ms=2, paused=True)
    rt.command("a", Command.ENABLE_POSITION, 10)
    rt.command("a", Command.ENABLE_FORCE_FEEDBACK, 4)
    refreshed = {c.time_ms: c.refreshed for c in rt.step(10)}
    assert [t for t, r in refreshed.items() if "position_sensor" in r] == [10, 20]
    assert [t for t, r in refreshed.items() if "force_sensor" in r] == [4, 8, 12, 16, 20]


def test_a_watched_move_owes_feedback_each_period_then_ends_on_the_profiles_time():
    rt, _ = runtime(step_ms=2, paused=True)
    move = rt.command("a", Command.TRAPEZOIDAL_MOVE, 1.0, 0.0, 1.0, 4.0)
    rt.watch(move)
    ended, feedback = rt.poll_moves()
    assert ended == () and feedback == (move,)  # feedback at the start
    feedback_ms, end_ms = [], None
    for cycle in rt.step(1000):
        if move in cycle.feedback:
            feedback_ms.append(cycle.time_ms)
        if move in cycle.ended:
            end_ms = cycle.time_ms
            break
    # 1 rad at 1 rad/s, 4 rad/s^2 from rest: 0.25 s up, 0.75 s cruising, 0.25 s down
    assert move.state == "succeeded" and abs(end_ms - 1250) <= 2
    assert feedback_ms == list(range(FEEDBACK_PERIOD_MS, end_ms, FEEDBACK_PERIOD_MS))
    assert rt.poll_moves() == ((), ())  # an ended move is no longer watched


def test_reset_goes_back_to_zero_and_ends_the_moves_in_progress():
    rt, _ = runtime(step_ms=2, paused=True)
    move = rt.command("a", Command.TRAPEZOIDAL_MOVE, 1.0, 0.0, 1.0, 4.0)
    rt.watch(move)
    list(rt.step(50))
    assert rt.reset() == (move,) and move.state == "aborted"
    assert rt.time_ms == 0 and rt.motor("a").position == 0.0
    assert rt.step(1).__next__().joint_states is False  # rate 0 by default


@pytest.mark.parametrize("step_ms", [1, 8])
def test_reset_restarts_the_joint_states_schedule(step_ms):
    """joint_states at 10 Hz: after 0.752 s the next is due at 0.8 s; a reset (t = 0)
    restarts the schedule there: due at the first cycle after it, then at the first
    cycle at or after each 100 ms of the new time, as from the start (at 8 ms steps:
    8, 104, 200, 304)."""
    def schedule(until_ms: int) -> list[int]:  # the first cycle at or after each 100 ms
        due = [max(step_ms, math.ceil(k * 100 / step_ms) * step_ms) for k in range(10)]
        return [t for t in due if t <= until_ms]

    rt, _ = runtime(step_ms=step_ms, paused=True, joint_states_rate=10.0)
    first = [c.time_ms for c in rt.step(752 // step_ms) if c.joint_states]
    assert first == schedule(752) and len(first) == 8 and rt.time_ms == 752
    rt.reset()
    assert rt.time_ms == 0
    again = [c.time_ms for c in rt.step(352 // step_ms) if c.joint_states]
    assert again == schedule(352) and again[0] == step_ms and len(again) == 4


class TimedDevice(HardwareComponent):
    """A real device (not simulated) whose joint turns at a constant acceleration in the
    wall time the test sets (``clock``): each read gives the velocity ACCELERATION *
    t; the periods each read and write are given are recorded."""

    STATE_INTERFACES = ("position", "velocity", "effort")
    ACCELERATION = 3.0
    clock: ClassVar = None

    def __init__(self) -> None:
        super().__init__()
        self.periods: list[tuple[str, float]] = []

    def read(self, time, period):
        self.periods.append(("read", period))
        self.state.velocity[:] = self.ACCELERATION * type(self).clock()
        return CallbackReturn.SUCCESS

    def write(self, time, period):
        self.periods.append(("write", period))
        return CallbackReturn.SUCCESS


@settings(max_examples=30, deadline=None)
@given(gaps=st.lists(st.floats(0.0005, 0.2), min_size=2, max_size=60),
       by_cycle=st.booleans())
@example(gaps=[0.008] * 5 + [0.05, 0.001, 0.008, 0.2, 0.008], by_cycle=False)
def test_a_real_devices_period_is_measured_cycle_by_cycle(gaps, by_cycle):
    """A real device cycled by tick() (or cycle(wait=False), the host's own loop) at
    wall-time gaps the test sets, early and late: the first cycle has the basic step
    (nothing measured yet), each later one the wall time since the one before, to the
    bit, in read and write; the joint's acceleration is then the device's own (its
    velocity's change over that period), whatever the gaps."""
    wall = WallClock()
    device = type("Device", (TimedDevice,), {"clock": wall})
    hw = HardwareSystem(parse_config({"basic_time_step_ms": 8,
                                      "motors": [{"name": "a"}]}), device)
    assert hw.start() and not hw.simulated
    rt = Runtime(hw, clock=wall, sleep=wall.sleep)
    times, accelerations = [], []
    for gap in [0.0, *gaps]:
        wall.now += gap
        times.append(wall.now)
        cycles = [rt.cycle(wait=False)] if by_cycle else list(rt.tick())
        assert len(cycles) == 1 and cycles[0].read
        # the acceleration the measured period gave (no getter: the bank's, read only)
        accelerations.append(float(rt._sim.bank.joint_acceleration()[0]))
    measured = [0.008] + [times[k] - times[k - 1] for k in range(1, len(times))]
    component = hw.component
    assert [p for what, p in component.periods if what == "read"] == measured
    assert [p for what, p in component.periods if what == "write"] == measured
    assert np.allclose(accelerations[1:], TimedDevice.ACCELERATION, rtol=1e-6)
    assert rt.time_ms == 8 * len(times)  # cycle time: one step each


def test_real_hardware_runs_in_real_time_and_refuses_the_rest():
    """The emulated Feetech bus: a real plugin (wall-clock time, one cycle per call)."""
    from servo_sim.emulators import sts_emulator as emu

    with emu.EmulatorProcess([1], realtime=True) as bus:
        hw = HardwareSystem(parse_config({
            "basic_time_step_ms": 8, "motors": [{"name": "a", "max_torque": 1.5,
                                                  "min_position": -2.5, "max_position": 2.5}],
            "hardware": {"plugin": "feetech", "port": bus.port, "a": {"id": 1}}}))
        try:
            with pytest.raises(RealTimeError, match="hardware 'feetech' runs in real time"):
                Runtime(hw, real_time_factor=0.0)
            with pytest.raises(RealTimeError, match="runs in real time"):
                Runtime(hw, paused=True)
            assert hw.start(), hw.component.reason
            wall = WallClock()
            rt = Runtime(hw, clock=wall, sleep=wall.sleep)
            for refused in (rt.pause, lambda: rt.step(1), rt.reset,
                            lambda: rt.set_real_time_factor(2.0)):
                with pytest.raises(RealTimeError, match="hardware 'feetech' runs in real time"):
                    refused()
            assert rt.time_ms == 0
            wall.now += 1.0  # however late: one cycle a tick, the device read
            cycles = list(rt.tick())
            assert len(cycles) == 1 and cycles[0].read and cycles[0].time_ms == 8
        finally:
            hw.shutdown()


# ---------------------------------------------------------------- the one handle (issue 53)

def _config(**hardware):
    return parse_config({"basic_time_step_ms": 2,
                         "motors": [{"name": "a", "max_velocity": 2.0},
                                    {"name": "b", "max_velocity": 2.0}],
                         **({"hardware": hardware} if hardware else {})})


def test_open_makes_the_system_of_a_config_and_close_shuts_it_down():
    """Opened, not started: commands are refused and change nothing; started, they go
    through the check to the motor; closed, the hardware is finalized (again: nothing)."""
    with Runtime.open(_config()) as rt:
        assert rt.hardware_state == "unconfigured" and rt.real_time_factor == 0.0
        with pytest.raises(ValueError, match="motor 'a': set_position refused: hardware "
                                             "'sim' is unconfigured"):
            rt.command("a", Command.POSITION, 1.0)
        assert rt.motor("a").get_target_position() == 0.0
        assert rt.start() and rt.active
        rt.command("b", Command.POSITION, -0.5)
        for _ in range(400):  # 0.8 s at 2 ms: 0.5 rad at 2 rad/s takes 0.25 s
            rt.cycle()
        assert rt.time == pytest.approx(0.8)
        assert rt.readings.position.tolist() == pytest.approx([0.0, -0.5], abs=1e-3)
        assert rt.readings.names == ["a", "b"] == rt.motor_names
    assert rt.hardware_state == "finalized"
    rt.close()  # idempotent


def test_readings_are_read_only_and_follow_a_reset():
    rt = Runtime.open(_config())
    try:
        rt.start()
        with pytest.raises(ValueError, match="read-only"):
            rt.readings.position[0] = 1.0
        rt.command("a", Command.POSITION, 0.3)
        for _ in range(300):
            rt.cycle()
        assert rt.readings.position[0] == pytest.approx(0.3, abs=1e-3)
        rt.reset()  # new arrays: the readings read them, not the old ones
        assert rt.readings.position.tolist() == [0.0, 0.0] and rt.time_ms == 0
    finally:
        rt.close()


def test_a_parameter_change_and_the_e_stop_go_through_the_runtime():
    rt = Runtime.open(_config())
    try:
        rt.start()
        rt.set_parameter("a", "max_velocity", 1.0)
        assert rt.motor("a").get_max_velocity() == 1.0 == rt.config.motors[0].max_velocity
        with pytest.raises(ValueError, match=r"motor 'b': field 'max_velocity' = -1\.0: "
                                             r"must be >= 0"):
            rt.set_parameter("b", "max_velocity", -1.0)
        assert rt.motor("b").get_max_velocity() == 2.0
        rt.e_stop()
        with pytest.raises(ValueError, match="e-stop"):
            rt.command("a", Command.POSITION, 0.1)
        rt.reset_e_stop()
        rt.command("a", Command.ENABLE)
        rt.command("a", Command.POSITION, 0.1)
        assert rt.motor("a").get_target_position() == 0.1
    finally:
        rt.close()


def test_a_start_that_fails_raises_naming_the_hardware_and_shuts_it_down():
    """A bus that is not there: the SDK's error after the tries; the system finalized.
    Not required (the node: the cycles try again), False and the system kept."""
    from servo_sim.runtime import StartError

    missing = "/dev/servo-sim-no-such-port"
    rt = Runtime.open(_config(plugin="feetech", port=missing, a={"id": 1}, b={"id": 2}))
    assert rt.real_time_factor == 1.0  # real hardware: real time
    assert rt.start(attempts=1, required=False) is False
    assert rt.hardware_state != "finalized" and missing in rt.reason
    with pytest.raises(StartError, match=f"hardware 'feetech': .*{missing}"):
        rt.start(attempts=1)
    assert rt.hardware_state == "finalized"


def test_open_refuses_a_factor_real_hardware_cannot_run_and_leaves_nothing_open():
    with pytest.raises(RealTimeError, match="hardware 'feetech' runs in real time"):
        Runtime.open(_config(plugin="feetech", port="/dev/null", a={"id": 1}, b={"id": 2}),
                     real_time_factor=0.0)


#: The hosts: each holds a Runtime and nothing under it. identification/fit.py
#: is not a host: it simulates candidate models of its own (no running system).
HOSTS = ("ros", "rr", "webots", "cli.py", "identification", "panel")
#: the model-level fit and its replay loop (moved out of fit.py): they step the model
#: itself, one vectorised Simulation of many motors, as the fit did before
NOT_HOSTS = {"identification/fit.py", "identification/replay.py"}


def test_no_host_reaches_past_the_runtime():
    """Read from the source: no host imports the hardware system, the simulation, the
    bank or the model's Motor, nor reads a ``.sim``, ``.system``, ``.bank`` or
    ``.component`` attribute, nor the runtime's own ``._sim`` and ``._system``."""
    import ast
    from pathlib import Path

    import servo_sim

    root = Path(servo_sim.__file__).parent
    past = []
    for host in HOSTS:
        path = root / host
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            name = file.relative_to(root).as_posix()
            if name in NOT_HOSTS:
                continue
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Attribute) and node.attr in (
                        "sim", "system", "bank", "component", "_sim", "_system"):
                    past.append(f"{name}:{node.lineno}: .{node.attr}")
                elif isinstance(node, ast.ImportFrom):
                    past += [f"{name}:{node.lineno}: import {a.name}" for a in node.names
                             if a.name in ("HardwareSystem", "Simulation", "MotorBank", "Motor")]
    assert not past, past
