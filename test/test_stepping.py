"""One step, one place (``servo_sim/model/stepping.py``): the library's step and a
hardware system's cycle are the same sequence - supervise, read, clock, sensors, write.

Two ways to see it: the ``sim`` plugin's cycles and the library's ``Simulation.step``
give the same bits on a mixed bank with both sensors, through commands of both signs,
on each body (the per-joint one, kinematic, MuJoCo's runs of steps); and a real plugin
(a device that is where it was told to be, reading and writing its declared interfaces)
sees the order itself: the supervisor's set-point of the step at its read, the clock one
step on at its write, the sensors sampled from what it read, the joint acceleration
measured over the cycle's period."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.hardware import CallbackReturn, Capabilities, HardwareComponent, HardwareSystem
from servo_sim.model import Command, Simulation, law, parse_config
from servo_sim.model.config import load_config, to_dict
from servo_sim.runtime import Readings

#: the joints' state (rows of ``bank.joints``)
JOINTS = ("position", "velocity", "previous_velocity", "motor_force", "energy")
#: every piece of state a step changes, and the sensors' bookkeeping
STATE = ("position", "velocity", "previous_velocity", "motor_force", "energy",
         "error_integral", "previous_error", "command_velocity", "target_position")
SENSOR_PARTS = ("value", "last_ms", "refreshed", "refreshed_ms")


def snapshot(sim: Simulation) -> dict[str, np.ndarray]:
    bank = sim.bank
    out = {name: np.array(getattr(bank, name), copy=True) for name in STATE}
    out |= {f"{sensor}.{part}": np.array(getattr(getattr(bank, sensor), part), copy=True)
            for sensor in ("position_sensor", "force_sensor") for part in SENSOR_PARTS}
    out["time_ms"] = np.array(bank.time_ms)
    return out


def assert_same_bits(a: dict, b: dict, when: str) -> None:
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), (when, name, a[name], b[name])


def mixed(physics: str) -> dict:
    """A bank mixing Webots' PID, two servos' firmware laws and a spring, sensors at
    different periods (set by the commands), loads pulling both ways (kinematic: Webots'
    ideal motors, no servo's law)."""
    def motor(name, servo=None, **extra):
        entry = {"name": name, "min_position": -2.0, "max_position": 2.0, "inertia": 0.002,
                 "load": {"gravity_mass": 0.1, "gravity_distance": 0.05}, **extra}
        return entry if servo is None or physics == "kinematic" else {**entry, "servo": servo}

    return {"basic_time_step_ms": 2, "physics": physics, "motors": [
        motor("a"), motor("b", "STS3215-7.4V"), motor("c", "XL430-W250-T"),
        motor("d", spring_constant=0.5, damping_constant=0.01)]}


def so101_mujoco() -> dict:
    pytest.importorskip("mujoco", reason="MuJoCo is not installed")
    raw = to_dict(load_config(REPO / "config" / "so101.yaml"))
    return {"basic_time_step_ms": 1, "motors": raw["motors"], "physics": "mujoco",
            "multibody": {"model": "so101.urdf"}}


#: (command, arguments per motor index k): positions, velocities and torques of both
#: signs, a trapezoidal move each way (the supervisor busy), a halt
COMMANDS = [
    (Command.ENABLE_POSITION, lambda k: (2 * (k % 3 + 1),)),
    (Command.ENABLE_FORCE_FEEDBACK, lambda k: (2 * (3 - k % 3),)),
    (Command.POSITION, lambda k: (0.4 if k % 2 else -0.3,)),
    (Command.POSITION, lambda k: (math.inf,)),
    (Command.VELOCITY, lambda k: (-0.8 if k % 2 else 0.6,)),
    (Command.POSITION, lambda k: (-0.2 if k % 2 else 0.5,)),
    (Command.TORQUE, lambda k: (0.05 if k % 2 else -0.04,)),
    (Command.TRAPEZOIDAL_MOVE, lambda k: (0.3 if k % 2 else -0.3, 0.0, 1.0, 4.0)),
    (Command.HALT, lambda k: ()),
]


@pytest.mark.parametrize("physics", ["dynamic", "kinematic", "mujoco"])
def test_the_sim_plugin_cycle_is_the_library_step_to_the_bit(physics):
    """Cycle by cycle on the sim plugin, and ``Simulation.step(n)`` (MuJoCo: in runs of
    its compiled loop where numba is installed): the same state, sensors and clock to
    the bit after every command of both signs."""
    raw = so101_mujoco() if physics == "mujoco" else mixed(physics)
    hw, sim = HardwareSystem(parse_config(raw)), Simulation.from_config(raw)
    assert hw.start()
    if physics == "mujoco":  # runs of the body's compiled loop where numba is installed
        assert (sim.bank._body_loop is not None) == law.can_compile()
    names = sim.motor_names
    for step, (command, arguments) in enumerate(COMMANDS):
        for k, name in enumerate(names):
            hw.command(name, command, *arguments(k))
            command.call(sim.motor(name), *arguments(k))
        for _ in range(150):
            assert hw.cycle()
        sim.step(150)
        assert_same_bits(snapshot(hw.sim), snapshot(sim), f"after {command.name} ({step})")
    assert sim.time_ms == len(COMMANDS) * 150 * raw["basic_time_step_ms"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(-1.5, 1.5), st.floats(-0.1, 0.1), st.integers(1, 40)),
                min_size=1, max_size=4))
def test_any_schedule_steps_the_same_through_the_sim_plugin(schedule):
    """Any positions and torques of either sign, held any number of steps: the sim
    plugin's cycles and ``Simulation.step(n)`` stay the same to the bit."""
    raw = mixed("dynamic")
    hw, sim = HardwareSystem(parse_config(raw)), Simulation.from_config(raw)
    assert hw.start()
    for name in sim.motor_names:
        hw.command(name, Command.ENABLE_POSITION, 2)
        sim.motor(name).enable_position(2)
    for position, torque, steps in schedule:
        hw.command("a", Command.POSITION, position)
        sim.motor("a").set_position(position)
        hw.command("c", Command.TORQUE, torque)
        sim.motor("c").set_torque(torque)
        hw.step(steps)
        sim.step(steps)
        assert_same_bits(snapshot(hw.sim), snapshot(sim), f"{position}, {torque}, {steps}")


class Follower(HardwareComponent):
    """A device that is where it was last told to be: its read puts each motor at the
    target position it is given (velocity: the move over the period), its write notes
    the time; both note what they saw."""

    STATE_INTERFACES = ("position", "velocity")
    COMMAND_INTERFACES = ("target_position",)

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[float, np.ndarray]] = []
        self.writes: list[float] = []

    def read(self, time: float, period: float) -> CallbackReturn:
        target = self.commands.target_position.copy()
        self.reads.append((time, target))
        self.state.velocity[:] = (target - self.state.position) / period
        self.state.position[:] = target
        return CallbackReturn.SUCCESS

    def write(self, time: float, period: float) -> CallbackReturn:
        self.writes.append(time)
        return CallbackReturn.SUCCESS

    def capabilities(self, index: int) -> Capabilities:
        return Capabilities.all_webots() | Capabilities.TRAPEZOIDAL_COMMAND


def profile(t: float) -> float:
    """The trapezoidal profile of a move from 0 to 0.3 rad at 1 rad/s, 4 rad/s^2, by
    hand: 0.25 s up to 1 rad/s (0.125 rad), 0.05 s at 1 rad/s, 0.25 s down, 0.55 s in all."""
    if t <= 0.25:
        return 2.0 * t * t
    if t <= 0.3:
        return 0.125 + (t - 0.25)
    return 0.3 - 2.0 * (0.55 - t) ** 2 if t < 0.55 else 0.3


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_real_plugin_sees_the_steps_order(sign):
    """Supervise before the read (the trapezoidal set-point the read is given is the
    profile at the end of the step, by hand, and the library's of the same step), the
    clock between read and write (read at t, write at t + dt), the sensors after the read
    (the sampled position is what it read), the joint acceleration over the cycle's
    period (measured from the velocity before the read); both directions."""
    raw = {"basic_time_step_ms": 8, "motors": [{"name": "a"}, {"name": "b"}]}
    hw = HardwareSystem(parse_config(raw), Follower)
    sim = Simulation.from_config(raw)
    assert hw.start()
    device = hw.component
    hw.command("a", Command.TRAPEZOIDAL_MOVE, sign * 0.3, 0.0, 1.0, 4.0)
    sim.motor("a").trapezoidal_move(sign * 0.3, 0.0, 1.0, 4.0)
    hw.command("b", Command.POSITION, sign * 0.7)
    sim.motor("b").set_position(sign * 0.7)
    hw.command("a", Command.ENABLE_POSITION, 8)
    bank = hw.sim.bank
    for cycle in range(80):  # 0.64 s: past the move's end
        before = bank.velocity.copy()
        period = 0.01 if cycle % 2 else 0.008  # a real cycle's period, or the step's
        assert hw.cycle(period)
        sim.step(1)
        time, target = device.reads[-1]
        assert time == cycle * 8 / 1000 and device.writes[-1] == (cycle + 1) * 8 / 1000
        assert target[0] == pytest.approx(sign * profile((cycle + 1) * 0.008), abs=1e-12)
        assert target[1] == sign * 0.7
        assert np.array_equal(target, sim.bank.target_position), cycle
        assert np.array_equal(bank.position, target)
        assert bank.position_sensor.value[0] == target[0]  # sampled after the read
        np.testing.assert_array_equal(bank.joint_acceleration(),
                                      (bank.velocity - before) / period)
        if cycle == 0:  # b is at its goal at once on this device: 0.7 rad in 8 ms
            assert bank.joint_acceleration()[1] == pytest.approx(sign * 0.7 / 0.008 / 0.008)
    assert target[0] == sign * 0.3 and hw.sim.time_ms == 640


#: every verb that advanced a bank beside the Stepper, or could (issue 62's list)
STEPPING_VERBS = {"step", "steps", "step_physics", "run_physics", "advance", "advance_clock",
                  "sample_sensors", "supervise", "measure_over", "tick", "cycle", "run"}


def test_the_stepper_is_the_only_public_way_to_advance_a_bank():
    """The bank's parts of a step are private, called by the Stepper; its verbs are
    step, run and physics."""
    from servo_sim.model.bank import MotorBank
    from servo_sim.model.stepping import Stepped, Stepper

    public = {a for a in dir(MotorBank) if not a.startswith("_")}
    assert not public & STEPPING_VERBS
    assert {a for a in dir(Stepper) if not a.startswith("_")
            and callable(getattr(Stepper, a))} == {"step", "run", "physics"}
    parts = {a for a in vars(Stepped) if a.startswith("_") and not a.startswith("__")
             and callable(vars(Stepped)[a])}
    assert parts == {"_supervise", "_measure_acceleration_over", "_step_physics",
                     "_run_body_loop", "_advance_clock", "_sample_sensors"}
    assert all(callable(getattr(MotorBank, a)) for a in parts)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_physics_is_the_state_one_step_on_without_clock_or_sensors(sign):
    """Stepper.physics (the sim plugin's read) moves the state one step and leaves the
    clock and the sensors; step() is physics, then the clock and the sensors."""
    config = {"basic_time_step_ms": 4, "motors": [{"name": "m", "max_velocity": 10.0,
                                                   "inertia": 0.01, "max_torque": 5.0}]}
    read, stepped = Simulation.from_config(config), Simulation.from_config(config)
    for sim in (read, stepped):
        sim.motor("m").enable_position(4)
        sim.motor("m").set_position(math.inf)
        sim.motor("m").set_velocity(sign * 2.0)
    bank = read.bank
    sensed = bank.position_sensor.value.copy()
    with bank.lock:
        bank.stepper.physics()
    # from rest, one 4 ms step of an unlimited-acceleration velocity command with ample
    # torque reaches the velocity: x = v * dt (semi-implicit Euler)
    assert bank.velocity[0] == pytest.approx(sign * 2.0)
    assert bank.position[0] == pytest.approx(sign * 2.0 * 0.004)
    assert bank.time_ms == 0 and bank.position_sensor.value.tobytes() == sensed.tobytes()
    # the velocity a step before is the rest it started from: a = (v - 0) / dt
    assert bank.previous_velocity[0] == 0.0
    assert bank.joint_acceleration()[0] == pytest.approx(sign * 2.0 / 0.004)
    stepped.step(1)
    assert stepped.time_ms == 4
    assert stepped.bank.position.tobytes() == bank.position.tobytes()
    assert stepped.motor("m").get_position() == stepped.bank.position[0]  # sampled



@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("physics", ["dynamic", "kinematic", "mujoco"])
def test_the_joints_state_is_written_in_place_and_a_snapshot_keeps_its_value(physics, sign):
    """A step (one, or a run: MuJoCo's compiled loop where numba is installed) and a reset
    write the joints' state into the rows of ``bank.joints``: a view held across them is
    the row after them, never an array of the past; what a holder keeps across a step is
    a copy that keeps the value it read (``measured()``, a motor's getters, a copy of a
    reading), and the velocity a step before is the velocity the step started from."""
    raw = so101_mujoco() if physics == "mujoco" else mixed(physics)
    sim = Simulation.from_config(raw)
    bank = sim.bank
    rows = {name: getattr(bank, name) for name in JOINTS}
    table = bank.joints.table
    readings = Readings(bank)
    for k, motor in enumerate(sim.motors):
        motor.set_position(sign * (0.3 if k % 2 else -0.2))
    sim.step(3)
    for when in ("one step", "a run", "reset"):
        held = {name: row.copy() for name, row in rows.items()}
        measured = bank.measured()
        getters = [(m.position, m.velocity, m.motor_force, m.energy) for m in sim.motors]
        live, kept = readings.position, np.array(readings.position)
        if when == "reset":
            sim.reset()
        else:
            sim.step(1 if when == "one step" else 37)
        for name, row in rows.items():  # the same views of the same table
            assert getattr(bank, name) is row and np.shares_memory(row, table), (when, name)
            assert getattr(bank.joints, name) is row, (when, name)
        # the snapshots kept what they read: the state before
        assert measured[0].tobytes() == held["position"].tobytes() == kept.tobytes(), when
        assert measured[1].tobytes() == held["velocity"].tobytes(), when
        assert measured[3].tobytes() == held["motor_force"].tobytes(), when
        assert getters == [tuple(held[name][i] for name in ("position", "velocity",
                                                            "motor_force", "energy"))
                           for i in range(bank.n)], when
        # the view held is the state now, which the step (or reset) changed
        assert live.tobytes() == bank.position.tobytes(), when
        assert not np.array_equal(bank.position, held["position"]), when
        if when == "one step":
            assert bank.previous_velocity.tobytes() == held["velocity"].tobytes()
            assert (bank.energy >= held["energy"]).all()
        if when == "reset":  # the config's positions, at rest
            assert bank.position.tobytes() == bank.initial_position.tobytes()
            assert not any(getattr(bank, name).any() for name in JOINTS[1:])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_reset_restarts_the_sensors_and_their_noise_as_a_new_simulation(sign):
    """After a reset the sensors are those of a simulation made anew from the config,
    on the same objects: NaN until their first period, refreshed every period from time
    0 (not from the time before the reset), and the noise drawn again from the seed."""
    raw = {"basic_time_step_ms": 4, "seed": 7, "motors": [
        {"name": "a", "position_sensor": {"sampling_period_ms": 12, "noise": 0.01},
         "force_feedback_sampling_period_ms": 8},
        {"name": "b", "position_sensor": {"sampling_period_ms": 8, "noise": 0.02}}]}

    def readings(sim: Simulation) -> list[tuple[float, ...]]:
        out = []
        for k in range(10):  # 40 ms: the motors moving both ways
            for i, m in enumerate(sim.motors):
                m.set_position(sign * (0.2 + 0.1 * k) * (1 if i else -1))
            sim.step(1)
            out.append(tuple(v for m in sim.motors
                             for v in (m.get_position(), m.get_force_feedback())))
        return out

    sim = Simulation.from_config(raw)
    sensors = (sim.bank.position_sensor, sim.bank.force_sensor)
    first = readings(sim)
    sim.step(33)  # the sensors' last refresh well past the periods after the reset
    sim.reset()
    assert (sim.bank.position_sensor, sim.bank.force_sensor) == sensors  # the same objects
    again = readings(sim)
    fresh = readings(Simulation.from_config(raw))
    assert np.array_equal(np.array(again), np.array(fresh), equal_nan=True)
    assert np.array_equal(np.array(again), np.array(first), equal_nan=True)
    # by hand: a at 12, 24, 36 ms; b at 8, 16 ... ms; a's force at 8, 16 ... ms; noisy
    times = [4 * (k + 1) for k in range(10)]
    a_read = [not math.isnan(r[0]) for r in again]
    b_read = [not math.isnan(r[2]) for r in again]
    assert a_read == [t >= 12 for t in times]
    assert b_read == [t >= 8 for t in times]
    assert [not math.isnan(r[1]) for r in again] == [t >= 8 for t in times]
    assert math.isnan(again[0][3])  # b's force feedback: disabled
    # the equality above is the noise drawn again: without noise the readings differ
    quiet = dict(raw, motors=[dict(m, position_sensor=dict(m["position_sensor"], noise=0.0))
                              for m in raw["motors"]])
    noiseless = np.array(readings(Simulation.from_config(quiet)))
    read = ~np.isnan(noiseless[:, 0])
    assert read.any() and not np.any(noiseless[read, 0] == np.array(again)[read, 0])
