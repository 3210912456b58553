"""The motor's own constants (torque constant and resistance) as an alternative to the
envelope's stall torque and no-load speed: the conversion against the DC motor's law by
hand, both ways; ``--set`` takes them; ``identify`` fits them and writes what loads."""

from __future__ import annotations

import math
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_identify_bench import BENCH, BUDGET, HIDDEN, STEP_MS, made

from servo_sim import cli
from servo_sim.identification.fit import Model, fitted_config, identify
from servo_sim.identification.motor_constants import (
    CONSTANTS,
    constants,
    envelope,
    resolve,
    resolved,
)
from servo_sim.identification.recordings import write_recording
from servo_sim.identification.replay import motor_fields, refusal
from servo_sim.model import ConfigError

XL330 = {"servo": "XL330-M288-T"}


def test_the_xl330s_constants_by_hand():
    """The profile: 0.52 N*m and 10.78613 rad/s at 5 V, friction 0.0194746 +
    0.0103162 w, load_friction_motor 0.25949. Running free, the motor carries
    (0.0194746 + 0.0103162 * 10.78613) / (1 - 0.25949) = 0.176564 N*m, 0.339546 of its
    stall torque, so it runs free at 10.78613 / 0.660454 = 16.3314 rad/s inside:
    kt = 5 / 16.3314 = 0.306160, R = 0.306160 * 5 / 0.52 = 2.94385 ohm."""
    kt, r = constants(resolve(XL330))
    assert kt == pytest.approx(0.306160, rel=1e-5)
    assert r == pytest.approx(2.94385, rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(kt=st.floats(0.05, 2.0), r=st.floats(0.5, 20.0), friction=st.floats(0.0, 0.05),
       viscous=st.floats(0.0, 0.01), k=st.floats(0.0, 0.5))
def test_the_envelope_of_kt_and_r_is_the_dc_motor_with_its_gear(kt, r, friction, viscous, k):
    """At the stall torque the motor is at rest: kt V / R; at the no-load speed w the
    DC motor's torque kt (V - kt w) / R carries the gear's friction f + c w + k T; and
    back again, the same kt and R."""
    fields = motor_fields(XL330, {"actuator.friction": friction,
                                  "actuator.viscous_friction": viscous,
                                  "actuator.load_friction_motor": k})
    actuator = resolve(fields)
    stall, speed = envelope(actuator, kt, r)
    assert stall == pytest.approx(kt * 5.0 / r, rel=1e-12)
    if speed <= 0.0:  # the gear's friction takes the whole motor: refused, below
        return
    torque = kt * (5.0 - kt * speed) / r
    assert torque == pytest.approx(friction + viscous * speed + k * torque, rel=1e-9,
                                   abs=1e-12)
    again = resolve(motor_fields(fields, {"actuator.stall_torque": stall,
                                          "actuator.no_load_speed": speed}))
    assert constants(again) == pytest.approx((kt, r), rel=1e-9)


def test_one_constant_given_keeps_the_other():
    """A torque constant alone: the resistance stays the profile's 2.94385 ohm, so the
    stall torque grows with kt (0.35 * 5 / 2.94385 = 0.594460 N*m)."""
    fields = motor_fields(XL330, {"actuator.torque_constant": 0.35})
    assert "torque_constant" not in fields["actuator"]
    assert fields["actuator"]["stall_torque"] == pytest.approx(0.594460, rel=1e-5)
    assert constants(resolve(fields)) == pytest.approx((0.35, 2.943846), rel=1e-6)
    fields = motor_fields(XL330, {"actuator.resistance": 2.0})  # 0.30616 * 5 / 2
    assert fields["actuator"]["stall_torque"] == pytest.approx(0.765400, rel=1e-5)


@pytest.mark.parametrize(("field", "value"), [("torque_constant", 0.0),
                                              ("resistance", -1.0), ("resistance", "x")])
def test_a_bad_constant_is_one_error_naming_field_and_value(field, value):
    with pytest.raises(ConfigError, match=rf"field 'actuator\.{field}' = {value!r}: must be"):
        resolved({"servo": "XL330-M288-T", "actuator": {field: value}})


def test_a_motor_without_an_envelope_cannot_take_them():
    with pytest.raises(ConfigError, match=r"^motor 'arm': field 'actuator\.resistance' = 3: "
                       "the motor has no torque-speed envelope"):
        resolved({"name": "arm", "actuator": {"resistance": 3}})


def test_both_constants_given_need_not_suit_the_motor_they_replace():
    """A friction of 0.5 N*m (with the profile's viscous 0.0103 and load share 0.259)
    is refused on the profile's 0.52 N*m motor, not on kt 1.0, R 2.0 (2.5 N*m at 5 V):
    at 3.55065 rad/s that motor gives (5 - 3.55065) / 2 = 0.724675 N*m, which is what
    the gear takes there: 0.5 + 0.0103162 * 3.55065 + 0.25949 * 0.724675."""
    base = motor_fields(XL330, {"actuator.friction": 0.5})
    assert refusal(base) is not None
    fields = motor_fields(base, {"actuator.torque_constant": 1.0, "actuator.resistance": 2.0})
    assert refusal(fields) is None
    assert fields["actuator"]["stall_torque"] == pytest.approx(2.5)
    assert fields["actuator"]["no_load_speed"] == pytest.approx(3.55065, rel=1e-5)


def test_a_motor_whose_friction_takes_its_whole_torque_is_refused_not_simulated():
    """kt 0.1, R 20: a stall torque of 0.025 N*m against the profile's 0.0195 N*m of
    Coulomb friction and the load-dependent share: the output never runs free."""
    fields = motor_fields(XL330, {"actuator.torque_constant": 0.1,
                                  "actuator.resistance": 20.0})
    assert "no_load_speed" in str(refusal(fields))


HIDDEN_MOTOR = {"actuator.torque_constant": 0.33, "actuator.resistance": 3.2}


def test_kt_and_r_come_back_from_noisy_recordings_and_are_written_as_the_envelope():
    """The gear known (HIDDEN), the motor hidden (kt 0.33, R 3.2: 0.516 N*m at 5 V, off
    the profile's 0.306 and 2.94): the swing and the lift-and-drop made by servo_sim
    with 2 mrad of noise give them back within 3 %."""
    hidden = {**HIDDEN, **HIDDEN_MOTOR}
    recordings = [made("swing", hidden, 11, duration=1.8), made("drop", hidden, 12)]
    model = Model(motor_fields(XL330, HIDDEN), step_ms=STEP_MS)
    fit = identify(recordings, model, CONSTANTS, *BUDGET)  # 0.25 % off here
    for name, value in fit.values().items():
        assert value == pytest.approx(HIDDEN_MOTOR[name], rel=0.03), name
    assert fit.undetermined == ()
    motor = fitted_config(model, fit)["motors"][0]
    assert refusal(motor) is None
    assert set(motor["actuator"]) >= {"stall_torque", "no_load_speed"}
    assert not set(motor["actuator"]) & {"torque_constant", "resistance"}
    assert constants(resolve(motor)) == pytest.approx(tuple(fit.value), rel=1e-5)
    assert motor["actuator"]["stall_torque"] == pytest.approx(0.33 * 5.0 / 3.2, rel=0.04)
    assert BENCH.vin == 5.0 and math.isfinite(fit.rms_after)


def test_replay_takes_the_constants_with_set(tmp_path, capsys):
    """A recording made with kt 0.33, R 3.2 replays within its noise (2 mrad: a mean
    |error| of 1.6) given them with --set, and further off on the profile's own."""
    hidden = {**HIDDEN, **HIDDEN_MOTOR}
    path = tmp_path / "drop.csv"
    write_recording(path, made("drop", hidden, 13))
    bench = [f"--set={k}={v}" for k, v in {**BENCH.fields(), **HIDDEN}.items()]
    maes = []
    for constants_given in ([], [f"--set={k}={v}" for k, v in HIDDEN_MOTOR.items()]):
        assert cli.main(["replay", str(path), "--servo", "XL330-M288-T", "--step-ms",
                         str(STEP_MS), *bench, *constants_given]) == 0
        line = capsys.readouterr().out.splitlines()[-1]
        maes.append(float(re.fullmatch(r"mean MAE ([\d.]+) mrad over 1 recordings",
                                       line).group(1)))
    assert maes[1] < 2.5 < 5.0 < maes[0]
    assert cli.main(["replay", str(path), "--servo", "XL330-M288-T",
                     "--set=actuator.resistance=0"]) == 2
    err = capsys.readouterr().err
    assert "field 'actuator.resistance' = 0: must be a number > 0" in err


def test_identify_says_how_it_wrote_the_constants(tmp_path, capsys):
    path = tmp_path / "swing.csv"
    write_recording(path, made("swing", {**HIDDEN, **HIDDEN_MOTOR}, 14, duration=0.6))
    out = tmp_path / "fitted.yaml"
    assert cli.main(["identify", str(path), "--servo", "XL330-M288-T", "--step-ms",
                     str(STEP_MS), *(f"--set={k}={v}" for k, v in BENCH.fields().items()),
                     "--pattern-runs", "1", "--iterations", "1", "--fit", *CONSTANTS,
                     "--out", str(out), "--plot", str(tmp_path / "fit.png")]) == 0
    text = capsys.readouterr().out
    written = yaml.safe_load(out.read_text())["motors"][0]["actuator"]
    assert (f"the motor's constants written as actuator.stall_torque "
            f"{written['stall_torque']:g} N*m and no_load_speed "
            f"{written['no_load_speed']:g} rad/s") in text
    assert re.search(r"^  actuator\.torque_constant +0\.3062 ", text, re.M)  # before
