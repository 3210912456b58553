"""Sampled position and force/torque sensors (SPEC §2.4)."""

import math

import numpy as np
import pytest
from conftest import make_sim, one

from servo_sim.model.sensors import SampledSensors, measure_position, position_masks


def test_position_is_nan_until_the_first_full_period():
    sim, m = one(max_torque=100.0)
    m.set_position(1.0)
    m.enable_position(16)
    assert m.get_position_sampling_period() == 16
    assert math.isnan(m.get_position())
    sim.step()  # 8 ms: not yet a full period
    assert math.isnan(m.get_position())
    sim.step()  # 16 ms: refreshed with the position after this step
    first = m.position
    assert m.get_position() == first
    sim.step()  # 24 ms: held
    assert m.get_position() == first
    assert m.position != first
    sim.step()  # 32 ms: refreshed
    assert m.get_position() == m.position


def test_period_not_a_multiple_of_the_step_rounds_up():
    # period 10 ms with 8 ms steps: refresh at 16, then 10 ms after -> 32, 48, ...
    sim, m = one(max_torque=100.0)
    m.set_position(1.0)
    m.enable_position(10)
    refreshed = []
    last = m.get_position()
    for _ in range(8):
        sim.step()
        value = m.get_position()
        if not (math.isnan(value) or value == last):
            refreshed.append(sim.time_ms)
        last = value
    assert refreshed == [16, 32, 48, 64]


def test_enabling_later_counts_from_the_enable_time():
    sim, m = one(max_torque=100.0)
    m.set_position(1.0)
    sim.step(3)  # 24 ms
    m.enable_position(8)
    assert math.isnan(m.get_position())
    sim.step()
    assert m.get_position() == m.position


def test_disable_returns_nan_and_period_zero():
    sim, m = one(position_sensor={"sampling_period_ms": 8})
    sim.step()
    assert m.get_position() == 0.0
    m.disable_position()
    assert m.get_position_sampling_period() == 0
    assert math.isnan(m.get_position())
    sim.step(3)
    assert math.isnan(m.get_position())


def test_config_enables_sensors_from_time_zero():
    sim, m = one(position=0.2, position_sensor={"sampling_period_ms": 16},
                 force_feedback_sampling_period_ms=8,
                 load={"gravity_mass": 1.0, "gravity_distance": 0.1})
    sim.step()
    assert math.isnan(m.get_position())
    assert m.get_force_feedback() == pytest.approx(9.81 * 0.1 * math.cos(0.2))
    sim.step()
    assert m.get_position() == 0.2


def test_resolution_quantises_the_reading():
    sim, m = one(max_torque=100.0, position_sensor={"sampling_period_ms": 8,
                                                    "resolution": 0.01})
    m.set_position(0.123456)
    sim.step(200)
    assert m.position == pytest.approx(0.123456, abs=1e-6)
    assert m.get_position() == pytest.approx(0.12, abs=1e-15)


@pytest.mark.parametrize("into", ["new", "out"])
@pytest.mark.parametrize("masks", [False, True])
def test_a_reading_quantises_each_sensor_to_its_own_resolution_and_leaves_the_truth(
        into, masks):
    """Sensors of mixed resolution (0.1 rad, 0.25 rad, infinite), no noise: each reading
    is the true position rounded to its own resolution (half to even, as numpy rounds),
    into a new array or ``out``, with masks made here or given; the true positions stay
    as they were (the caller's array is not a reading)."""
    true = np.array([0.26, -0.38, 0.123456, 0.125])
    resolution = np.array([0.1, 0.25, -1.0, 0.25])
    expected = [0.3, -0.5, 0.123456, 0.0]  # by hand: 2.6 -> 3, -1.52 -> -2, none, 0.5 -> 0
    out = np.full(4, np.nan) if into == "out" else None
    reading = measure_position(true, np.zeros(4), resolution, np.random.default_rng(0),
                               position_masks(np.zeros(4), resolution) if masks else None,
                               out)
    assert reading == pytest.approx(expected, abs=1e-12)
    assert true.tolist() == [0.26, -0.38, 0.123456, 0.125]
    if out is not None:
        assert reading is out


def test_noise_is_gaussian_with_the_configured_std_and_seeded():
    def readings(seed):
        sim = make_sim(*[{"position_sensor": {"sampling_period_ms": 8, "noise": 0.01}}] * 50,
                       seed=seed)
        out = []
        for _ in range(100):
            sim.step()
            out.append([m.get_position() for m in sim])
        return np.array(out)

    a, b, c = readings(7), readings(7), readings(8)
    np.testing.assert_array_equal(a, b)  # reproducible
    assert not np.array_equal(a, c)
    assert abs(a.mean()) < 0.01 * 4 / math.sqrt(a.size)
    assert a.std() == pytest.approx(0.01, rel=0.05)


def test_force_and_torque_feedback_are_one_sensor():
    sim, m = one(load={"external": 0.5})
    m.enable_torque_feedback(8)
    assert m.get_force_feedback_sampling_period() == 8
    assert m.get_torque_feedback_sampling_period() == 8
    sim.step()
    assert m.get_torque_feedback() == m.get_force_feedback() == pytest.approx(-0.5)
    m.disable_torque_feedback()
    assert m.get_force_feedback_sampling_period() == 0
    assert math.isnan(m.get_torque_feedback())


def test_force_feedback_samples_the_saturated_motor_force():
    sim, m = one(max_torque=3.0)
    m.enable_force_feedback(8)
    m.set_position(10.0)
    sim.step()
    assert m.get_force_feedback() == 3.0


@pytest.mark.parametrize(("enable", "argument"), [
    ("enable_position", "position sampling period"),
    ("enable_force_feedback", "force feedback sampling period"),
    ("enable_torque_feedback", "force feedback sampling period")])
def test_a_bad_sampling_period_is_rejected_naming_the_sensor(enable, argument):
    """Not an integer, or negative: one error naming the motor, the sensor and the value;
    the sensor stays as it was."""
    _, m = one()
    with pytest.raises(ValueError) as bad:
        getattr(m, enable)(1.5)
    assert str(bad.value) == (f"motor 'm0': {argument} = 1.5 rejected: the sampling "
                              "period must be an integer number of ms")
    with pytest.raises(ValueError) as bad:
        getattr(m, enable)(-8)
    assert str(bad.value) == (f"motor 'm0': {argument} = -8 rejected: the sampling period "
                              "must be >= 0")
    assert (m.get_position_sampling_period(), m.get_force_feedback_sampling_period()) == (0, 0)


@pytest.mark.parametrize("which", [0, 1])
def test_enabling_one_motors_sensor_leaves_the_others_off(which):
    """Of two motors, only the one whose sensors are enabled samples."""
    sim = make_sim({}, {})
    motor = sim.motors[which]
    motor.enable_position(8)
    motor.enable_force_feedback(16)
    sim.step(2)
    for k, m in enumerate(sim.motors):
        mine = k == which
        assert (m.get_position_sampling_period(), m.get_force_feedback_sampling_period()) \
            == ((8, 16) if mine else (0, 0))
        assert math.isnan(m.get_position()) is not mine
        assert math.isnan(m.get_force_feedback()) is not mine


def refresh_times(sensors: SampledSensors, until_ms: int, changes: dict) -> dict[int, list]:
    """Each sensor's refresh times over 1..until_ms; ``changes``: time -> (index, period)
    enabled at that time (before that step's refresh)."""
    times: dict[int, list] = {}
    for now in range(1, until_ms + 1):
        if now in changes:
            sensors.enable(*changes[now], now)
        due = sensors.due(now)
        for i in [] if due is None else due:
            times.setdefault(int(i), []).append(now)
    return times


def test_sensors_refreshed_together_keep_their_schedules_when_one_restarts():
    """Two sensors of one period refresh together (whole arrays at once); one restarted
    at 20 ms goes on from there, the other on its own schedule, each every 8 ms."""
    times = refresh_times(SampledSensors(np.array([8, 8])), 40, {20: (1, 8)})
    assert times == {0: [8, 16, 24, 32, 40], 1: [8, 16, 28, 36]}


def test_sensors_of_two_periods_or_one_disabled_refresh_each_on_its_own():
    times = refresh_times(SampledSensors(np.array([8, 12, 0])), 36, {})
    assert times == {0: [8, 16, 24, 32], 1: [12, 24, 36]}
    times = refresh_times(SampledSensors(np.array([8, 8, 8])), 24, {10: (2, 0)})
    assert times == {0: [8, 16, 24], 1: [8, 16, 24], 2: [8]}
