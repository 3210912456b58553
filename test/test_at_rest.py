"""Servos at rest as real ones (issue 35): a profiled servo that has reached its goal holds
still, unloaded and under a constant load, with its velocity 0 and its position where
the firmware's law, the gear's friction and the dead zone put it.

Expected values are worked out here by hand from the documents' figures (typed below,
not read from ``profiles.yaml``): a position law whose duty is ``P / full_scale`` per
encoder tick (Feetech: P / 1000; Dynamixel X: P / 128 / 885) drives the motor inside the
gear, whose stall torque is the datasheet's, so one tick of error gives
``k = duty per tick * stall`` N*m. At rest the load ``L`` is met by the motor's
``T = k * e`` within the gear's friction at rest, ``|T - L| <= c``: Coulomb's ``f``
and, for the STS3215 (Rhoban/bam's directional model, its terms at rest), ``a`` of the
load and ``b`` of the motor's torque, ``c = f + a L + b T`` (they push against each
other). So the servo rests at an error ``e`` (ticks) with
``(L (1 - a) - f) / (k (1 + b)) <= e <= (L (1 + a) + f) / (k (1 - b))``, within one
tick of encoder rounding, or within the dead zone (no drive: ``T = 0``) where friction
alone holds the load, ``L (1 - a) <= f``. A limit cycle (the STS3215 profiles before the
gear's friction was in: +-2 ticks and +-0.18 rad/s forever) fails the velocity check.
"""

from __future__ import annotations

import math

import pytest
from conftest import cycle_until, cycle_until_settled, start_on_a_bus

from servo_sim.emulators import dxl_emulator, sts_emulator
from servo_sim.hardware import HardwareSystem
from servo_sim.model import Command, Simulation, parse_config

TICK = 2 * math.pi / 4096
KGCM = 0.0980665
G = 9.81
#: servo -> (stall torque N*m at the rated voltage, P gain, duty per P per tick, gear's
#: Coulomb friction N*m, dead zone in ticks): stall torques as in test_profiles; P the
#: factory gains (ROBOTIS e-Manual control tables; LeRobot's STS default 32); duty per
#: tick of the two laws (servo_sim.model.actuator's table); friction from Rhoban/bam's
#: fitted m1 parameters (params/<servo>/m1.json; for the X servos
#: not measured there, the nearest measured servo's, as profiles.yaml says); the STS3215 dead
#: zone: CW/CCW Dead Zone registers, 1 step each (Waveshare ST3215 register map)
SERVOS = {
    "STS3215-7.4V": (19.5 * KGCM, 32, 1 / 1000, 0.052393, 1),
    "STS3215-12V": (30 * KGCM, 32, 1 / 1000, 0.19587, 1),
    "XL330-M288-T": (0.52, 400, 1 / 256 / 885, 0.0194746, 0),  # P/256, friction measured
    "XL430-W250-T": (1.4, 640, 1 / 128 / 885, 0.020562, 0),   # the XL330's (our choice)
    "XM430-W350-T": (4.1, 800, 1 / 128 / 885, 0.090387, 0),   # the MX-64's (our choice)
    "XM540-W270-T": (10.6, 800, 1 / 128 / 885, 0.10352, 0),   # the MX-106's (our choice)
}
#: the SO-101's shoulder_lift with the arm straight out (config/so101.yaml's masses and
#: lever arms: 0.103, 0.104, 0.079, 0.087, 0.012 kg at 0.090, 0.171, 0.234, 0.276, 0.309 m)
#: Rhoban/bam params/feetech/m6.json (an STS3250, the Feetech servo fitted with
#: load-dependent friction; profiles.yaml takes it for both STS3215): at rest the load's
#: factor is load_friction_external + its Stribeck term, the motor's the same
STS_AT_REST = (0.195734 + 0.417901, 9.09184e-7 + 0.0295310)
#: the XL330's measured on bam's bench recordings (profiles.yaml): 0.25949 of the motor's
#: torque, nothing of the load's
LOAD_FRICTION = {"STS3215-7.4V": STS_AT_REST, "STS3215-12V": STS_AT_REST,
                 "XL330-M288-T": (0.0, 0.25949)}
SHOULDER_MASS = 0.103 + 0.104 + 0.079 + 0.087 + 0.012
SHOULDER_LEVER = (0.103 * 0.090 + 0.104 * 0.171 + 0.079 * 0.234 + 0.087 * 0.276
                  + 0.012 * 0.309) / SHOULDER_MASS
GOAL = 0.5


def stiffness(name: str) -> float:
    """N*m per tick of error: the law's duty per tick times the stall torque."""
    stall, p, per_tick, _, _ = SERVOS[name]
    return p * per_tick * stall


def resting_errors(name: str, load: float) -> tuple[float, float]:
    """The errors (ticks) at which the servo can rest under ``load`` (N*m): the module's
    hand calculation, the encoder's rounding not included."""
    k = stiffness(name)
    _, _, _, f, dead_zone = SERVOS[name]
    a, b = LOAD_FRICTION.get(name, (0.0, 0.0))
    low = (load * (1 - a) - f) / (k * (1 + b))
    high = (load * (1 + a) + f) / (k * (1 - b))
    if load * (1 - a) <= f:  # friction alone holds it, the dead zone's errors too
        low, high = min(low, -dead_zone), max(high, dead_zone)
    return low, high


def load_for(name: str) -> float:
    """The SO-101 shoulder's gravity torque at the goal's angle, or, for a servo too weak
    to hold it at ease, a third of its stall torque (N*m)."""
    shoulder = SHOULDER_MASS * G * SHOULDER_LEVER * math.cos(GOAL)
    return min(shoulder, SERVOS[name][0] / 3)


def settle(name: str, torque: float) -> tuple[list[float], list[float]]:
    """The servo ``name`` with a constant gravity ``torque`` at GOAL (as a mass on a
    lever horizontal at GOAL), 3 s to the goal and then 1 s watched: positions, speeds."""
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [{
        "name": "m", "servo": name, "inertia": 0.016,
        "load": {"gravity_mass": SHOULDER_MASS, "gravity_angle": GOAL,
                 "gravity_distance": torque / (SHOULDER_MASS * G)}}]}))
    m = sim.motors[0]
    m.set_position(GOAL)
    sim.step(3000)
    positions, speeds = [], []
    for _ in range(1000):
        sim.step(1)
        positions.append(m.position)
        speeds.append(m.velocity)
    return positions, speeds


@pytest.mark.parametrize("name", sorted(SERVOS))
@pytest.mark.parametrize("loaded", [False, True], ids=["unloaded", "loaded"])
def test_a_servo_at_its_goal_holds_still_where_its_law_and_friction_put_it(name, loaded):
    torque = load_for(name) if loaded else 0.0
    positions, speeds = settle(name, torque)
    assert speeds == [0.0] * len(speeds), f"{name} does not come to rest"
    assert max(positions) == min(positions)
    sag = (GOAL - positions[-1]) / TICK
    low, high = resting_errors(name, torque)
    assert low - 1.0 <= sag <= high + 1.0, (name, sag, low, high)


def test_the_sts3215_profiles_sag_under_the_so101_shoulder_as_the_hand_calculation_says():
    """The figures themselves, for the shoulder load (L = 0.631 N*m at 0.5 rad): 7.4 V,
    k = 32/1000 * 1.9123 = 0.0612 N*m/tick, f = 0.0524 N*m, a = 0.6136, b = 0.0295:
    (0.631 * 0.3864 - 0.0524) / (0.0612 * 1.0295) = 3.04 to
    (0.631 * 1.6136 + 0.0524) / (0.0612 * 0.9705) = 18.0 ticks (Coulomb friction alone
    gave 10.3 +- 0.9: the gear that holds a load is that much harder to back-drive)."""
    torque = load_for("STS3215-7.4V")
    assert torque == pytest.approx(0.385 * G * 0.1903 * math.cos(0.5), rel=1e-3)
    assert stiffness("STS3215-7.4V") == pytest.approx(0.06119, rel=1e-3)
    low, high = resting_errors("STS3215-7.4V", torque)
    assert (low, high) == (pytest.approx(3.04, abs=0.01), pytest.approx(18.02, abs=0.01))
    positions, _ = settle("STS3215-7.4V", torque)
    assert low - 1.0 <= (GOAL - positions[-1]) / TICK <= high + 1.0


def test_the_emulated_sts3215_reads_speed_0_and_a_still_position_at_rest():
    """What LeRobot saw: one second after the goal, Present_Speed alternated +-183
    steps/s and the position +-2 ticks, forever. Through the feetech plugin (the vendor's
    SDK) on the emulated bus, watched for 1 s of the servo's own time."""
    with sts_emulator.EmulatorProcess([1], realtime=True, servo="STS3215-7.4V") as bus:
        position, seen = _rest_on_emulator(bus)
    assert seen == {(position, 0)}
    assert abs(position - (2048 + GOAL / TICK)) <= 2  # the dead zone and the rounding


def test_the_emulated_xm430_reads_velocity_0_and_a_still_position_at_rest():
    """The same through the dynamixel plugin on the emulated X-series bus: Present
    Velocity 0 and one Present Position for 1 s of the servo's time, within the
    unloaded band of the hand calculation (the MX-64's friction over k: 3.1 ticks) and
    one tick of rounding of the goal."""
    with dxl_emulator.EmulatorProcess([1], realtime=True, servo="XM430-W350-T") as bus:
        position, seen = _rest_on_emulator(bus, "dynamixel")
    assert seen == {(position, 0)}
    _, high = resting_errors("XM430-W350-T", 0.0)
    assert abs(position - (2048 + GOAL / TICK)) <= high + 1.0


#: per plugin: the emulator module, the Present Position and Present speed registers
#: (address, size) and the plugin's settings of servo 1
EMULATED = {
    "feetech": (sts_emulator, (sts_emulator.PRESENT_POSITION, 2),
                (sts_emulator.PRESENT_SPEED, 2), {"id": 1}),
    "dynamixel": (dxl_emulator, (dxl_emulator.PRESENT_POSITION, 4),
                  (dxl_emulator.PRESENT_VELOCITY, 4), {"id": 1, "torque_constant": 4.1 / 2.3}),
}


def _rest_on_emulator(bus, plugin: str = "feetech") -> tuple[int, set[tuple[int, int]]]:
    """Move the emulated servo 1 to GOAL through ``plugin``, wait until its position
    holds for 0.3 s of its own time, then watch it for 1 s: the position it settled at,
    and every (position, speed) read meanwhile."""
    _, position_register, speed_register, settings = EMULATED[plugin]
    hardware = {"plugin": plugin, "port": bus.port, "j": settings}
    if plugin == "dynamixel":
        hardware["baud_rate"] = 4000000
    system = HardwareSystem(parse_config({
        "basic_time_step_ms": 8, "hardware": hardware,
        "motors": [{"name": "j", "min_position": -3.0, "max_position": 3.0}]}))
    try:
        start_on_a_bus(system)
        system.command("j", Command.POSITION, GOAL)
        position = cycle_until_settled(
            system, bus, lambda: bus.get(1, *position_register), hold_s=0.3)
        seen: set[tuple[int, int]] = set()
        start = bus.time()

        def watched() -> bool:
            seen.add((bus.get(1, *position_register), bus.get(1, *speed_register)))
            return bus.time() - start >= 1.0

        cycle_until(system, watched, "1 s of the servo's time")
    finally:
        system.shutdown()
    return position, seen


def test_the_emulated_dead_zone_registers_start_at_the_factory_values_and_act():
    """CW/CCW Dead Zone (26/27) read 1 step as shipped; written wider, the servo stops
    once the error is within them (and stays put)."""
    with sts_emulator.EmulatorProcess([1], realtime=True, servo="STS3215-7.4V") as bus:
        assert [bus.get(1, a, 1) for a in (sts_emulator.CW_DEAD_ZONE,
                                           sts_emulator.CCW_DEAD_ZONE)] == [1, 1]
        for address in (sts_emulator.CW_DEAD_ZONE, sts_emulator.CCW_DEAD_ZONE):
            bus.set(1, address, 1, 20)
        position, seen = _rest_on_emulator(bus)
    assert seen == {(position, 0)}
    error = 2048 + GOAL / TICK - position
    assert 0 <= error <= 21, error
