"""The XL330 as measured (issue 63): its P gain acts at P/256 (the bench recordings'
PWM against the error; the e-Manual says P/128), its supply's rated range warns, and
its Profile Velocity default (0) sets no profile (the goal is taken at once)."""

from __future__ import annotations

import logging
import math

import pytest
from xl330_gain_scale import SHARED, gain_divisor

from servo_sim.model import ConfigError, Simulation, parse_config
from servo_sim.model.profiles import servo_profile

TICK = 2 * math.pi / 4096
#: the e-Manual's KPP = P / 128 and PWM Limit 885 = 100 %
DOCUMENTED_DIVISOR = 128
PWM_FULL = 885


def xl330(**fields) -> Simulation:
    return Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
        {"name": "m", "servo": "XL330-M288-T", **fields}]}, "test"))


@pytest.mark.parametrize("ticks", [100, -100, 37, -250])
def test_the_duty_is_p_times_the_error_over_256(ticks):
    """Hand calculation: at rest, ``ticks`` off its goal, P 400, the motor's torque is
    duty x stall torque with duty = 400 x ticks / 256 / 885 (no friction, an inertia so
    large that the first step's speed is nil); the whole error at once, as Profile
    Velocity 0 (no profile: the goal taken at once) has it."""
    sim = xl330(inertia=1e6, actuator={"friction": 0.0, "viscous_friction": 0.0})
    m = sim.motors[0]
    m.set_position(ticks * TICK)
    sim.step()
    duty = 400 * ticks / 256 / PWM_FULL
    assert m.motor_force == pytest.approx(duty * 0.52, rel=1e-4)


def test_a_gain_scale_of_one_is_the_documented_law():
    sim = xl330(inertia=1e6, actuator={"friction": 0.0, "viscous_friction": 0.0,
                                       "gain_scale": 1.0})
    m = sim.motors[0]
    m.set_position(-50 * TICK)
    sim.step()
    assert m.motor_force == pytest.approx(-400 * 50 / 128 / PWM_FULL * 0.52, rel=1e-4)


@pytest.mark.skipif(not SHARED.exists(), reason="the shared recordings are not here")
def test_the_profiles_gain_scale_is_what_the_recordings_show():
    samples, divisor, r = gain_divisor(sorted(SHARED.glob("*.json")))
    assert samples > 1000 and r > 0.9999
    assert divisor == pytest.approx(256, rel=0.01)
    scale = servo_profile("XL330-M288-T").actuator["gain_scale"]
    assert scale == pytest.approx(DOCUMENTED_DIVISOR / divisor, rel=0.01)


def test_a_supply_outside_the_rated_range_warns_once_and_is_simulated(caplog):
    with caplog.at_level(logging.WARNING):
        sim = xl330(actuator={"supply_voltage": 7.4})
        xl330(actuator={"supply_voltage": 7.4})
    warnings = [r.getMessage() for r in caplog.records if "rated range" in r.getMessage()]
    assert warnings == ["test: motor 'm': supply 7.4 V outside the servo's rated range "
                        "3.7-6 V: its torque-speed envelope scaled to it, beyond the "
                        "datasheet"]
    assert sim.motors[0].config.actuator.supply_voltage == 7.4
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        for volts in (3.7, 5.0, 6.0):
            xl330(actuator={"supply_voltage": volts})
        xl330(actuator={"supply_voltage": 3.6})
    assert [("3.6 V" in r.getMessage()) for r in caplog.records] == [True]


@pytest.mark.parametrize(("actuator", "field", "value"), [
    ({"gain_scale": 0.0}, "actuator.gain_scale", 0.0),
    ({"gain_scale": -0.5}, "actuator.gain_scale", -0.5),
    ({"min_supply_voltage": 7.0}, "actuator.min_supply_voltage", 7.0),
    ({"max_supply_voltage": -1.0}, "actuator.max_supply_voltage", -1.0),
    ({"load_friction_motor": 1.0}, "actuator.load_friction_motor", 1.0),
])
def test_bad_scale_or_range_is_refused_naming_motor_field_and_value(actuator, field, value):
    with pytest.raises(ConfigError) as err:
        xl330(actuator=actuator)
    assert err.value.motor == "m" and err.value.field == field and err.value.value == value
    assert f"motor 'm': field '{field}' = {value!r}" in str(err.value)
