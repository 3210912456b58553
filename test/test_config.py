"""Config loading (model and ROS-parameters forms) and its one-message errors."""

import pytest
import yaml
from conftest import REPO

from servo_sim.model import (
    ConfigError,
    Simulation,
    from_ros_parameters,
    load_config,
    parse_config,
    ros_name,
)
from servo_sim.model.config import to_dict

DEFAULT = REPO / "config" / "servo_sim.yaml"


def test_defaults_are_the_spec_defaults():
    cfg = parse_config({"motors": [{"name": "arm"}]})
    assert cfg.basic_time_step_ms == 8 and cfg.physics == "dynamic"
    m = cfg.motors[0]
    assert (m.type, m.max_velocity, m.max_force, m.control_pid, m.acceleration) == (
        "rotational", 10.0, 10.0, (10.0, 0.0, 0.0), -1.0)
    assert (m.min_position, m.max_position, m.min_stop, m.max_stop) == (0, 0, 0, 0)
    assert (m.spring_constant, m.damping_constant, m.static_friction) == (0, 0, 0)
    assert (m.multiplier, m.consumption_factor, m.position, m.inertia) == (1, 10, 0, 0.01)
    assert (m.load.gravity_mass, m.load.gravity_distance, m.load.external) == (0, 0, 0)
    assert (m.position_sensor.sampling_period_ms, m.position_sensor.resolution,
            m.position_sensor.noise) == (0, -1, 0)
    assert m.force_feedback_sampling_period_ms == 0


def test_the_shipped_default_config_loads_and_has_an_arm_and_a_gripper():
    sim = Simulation.from_config(DEFAULT)
    assert sim.motor("arm").get_type() == "rotational"
    assert sim.motor("gripper").get_type() == "linear"
    assert sim.motor("arm").get_position_sampling_period() > 0
    assert sim.motor("gripper").get_force_feedback_sampling_period() > 0


def test_ros_form_equals_model_form():
    model = {"basic_time_step_ms": 4, "motors": [
        {"name": "arm", "max_torque": 3.0, "load": {"gravity_mass": 1.0}},
        {"name": "wheel::left", "type": "linear", "max_force": 2.0}]}
    ros = {"servo_sim": {"ros__parameters": {
        "basic_time_step_ms": 4, "motors": ["arm", "wheel::left"], "use_sim_time": False,
        "arm": {"max_torque": 3.0, "load": {"gravity_mass": 1.0}},
        "wheel__left": {"type": "linear", "max_force": 2.0}}}}
    flat = {"basic_time_step_ms": 4, "motors": ["arm", "wheel::left"],
            "arm.max_torque": 3.0, "arm.load.gravity_mass": 1.0,
            "wheel__left.type": "linear", "wheel__left.max_force": 2.0}
    a = parse_config(model)
    assert parse_config(ros).motors == a.motors
    assert parse_config(from_ros_parameters(flat)).motors == a.motors


def test_ros_form_with_namespaced_node_key_and_wildcard():
    params = {"motors": ["m"], "m": {"max_torque": 2.0}}
    for key in ("/robot/servo_sim", "/**"):
        cfg = parse_config({key: {"ros__parameters": params}})
        assert cfg.motors[0].max_force == 2.0
    both = {"/other": {"ros__parameters": {}}, "/ns/servo_sim": {"ros__parameters": params}}
    assert parse_config(both).motors[0].max_force == 2.0


def test_round_trip_through_to_dict():
    cfg = load_config(DEFAULT)
    again = parse_config(to_dict(cfg))
    assert again.motors == cfg.motors


def test_ros_name():
    assert ros_name("wheel::left") == "wheel__left"
    assert ros_name("arm 1-b") == "arm_1_b"


def write(tmp_path, data, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


BAD_MOTORS = [
    ({"max_torque": -1.0}, "max_torque", "-1.0", ">= 0"),
    ({"max_velocity": "fast"}, "max_velocity", "'fast'", "number"),
    ({"max_velocity": True}, "max_velocity", "True", "number"),
    ({"max_velocity": float("inf")}, "max_velocity", "inf", "finite"),
    ({"control_pid": [0.0, 0.0, 0.0]}, "control_pid", "[0.0, 0.0, 0.0]", "P > 0"),
    ({"control_pid": [1.0, 2.0]}, "control_pid", "[1.0, 2.0]", "three"),
    ({"acceleration": -2.0}, "acceleration", "-2.0", "-1"),
    ({"multiplier": 0.0}, "multiplier", "0.0", "non-zero"),
    ({"inertia": 0.0}, "inertia", "0.0", "> 0"),
    ({"type": "angular"}, "type", "'angular'", "rotational"),
    ({"max_force": 5.0}, "max_force", "5.0", "take 'max_torque'"),
    ({"min_position": 1.0, "max_position": 0.5, "position": 0.7}, "min_position", "1.0",
     "<= max_position"),
    ({"min_position": -1.0, "max_position": 1.0, "position": 2.0}, "position", "2.0",
     "soft limits"),
    ({"min_stop": -0.5, "max_stop": 0.5, "position": 0.6}, "position", "0.6", "hard stops"),
    ({"min_stop": -0.5, "max_stop": 0.5, "min_position": -0.6, "max_position": 0.1},
     "min_position", "-0.6", "min_stop"),
    ({"min_stop": 0.5, "max_stop": -0.5}, "min_stop", "0.5", "<= max_stop"),
    ({"position_sensor": {"sampling_period_ms": -8}}, "position_sensor.sampling_period_ms",
     "-8", ">= 0"),
    ({"position_sensor": {"sampling_period_ms": 8.5}}, "position_sensor.sampling_period_ms",
     "8.5", "integer"),
    ({"position_sensor": {"resolution": 0.0}}, "position_sensor.resolution", "0.0", "-1"),
    ({"load": {"gravity_mass": -1.0}}, "load.gravity_mass", "-1.0", ">= 0"),
    ({"force_feedback_sampling_period_ms": -1}, "force_feedback_sampling_period_ms", "-1",
     ">= 0"),
    ({"passive": "yes"}, "passive", "'yes'", "must be true or false"),
    ({"passive": 1}, "passive", "1", "must be true or false"),
]


@pytest.mark.parametrize("fields, field, value, reason", BAD_MOTORS,
                         ids=[b[1] + "=" + b[2] for b in BAD_MOTORS])
def test_bad_motor_field_fails_with_file_motor_field_and_value(tmp_path, fields, field,
                                                                value, reason):
    path = write(tmp_path, {"motors": [{"name": "ok"}, {"name": "arm", **fields}]})
    with pytest.raises(ConfigError) as err:
        Simulation.from_config(path)
    text = str(err.value)
    assert text.startswith(str(path) + ": motor 'arm': field ")
    assert f"'{field}' = {value}" in text
    assert reason in text


@pytest.mark.parametrize("raw, expected", [
    ({"motors": [{"name": "a", "max_torq": 1.0}]}, "unknown field 'max_torq' (did you mean "
                                                  "'max_torque'?)"),
    ({"motors": [{"name": "a", "load": {"mass": 1.0}}]}, "unknown field in 'load':"),
    ({"motors": []}, "non-empty list"),
    ({"motors": [{"type": "linear"}]}, "'name'"),
    ({"motors": [{"name": "a"}, {"name": "a"}]}, "motor 'a': duplicate motor name"),
    ({"motors": [{"name": "a-b"}, {"name": "a_b"}]}, "clashes with motor 'a-b'"),
    ({"motors": [{"name": "2arm"}]}, "must not start with a digit"),
    ({"basic_time_step_ms": 0, "motors": [{"name": "a"}]}, "'basic_time_step_ms' = 0"),
    ({"basic_time_step_ms": 2.5, "motors": [{"name": "a"}]}, "integer"),
    ({"physics": "ode", "motors": [{"name": "a"}]}, "'physics' = 'ode'"),
    ({"timestep": 8, "motors": [{"name": "a"}]}, "unknown top-level field 'timestep'"),
    ([1, 2], "must be a mapping"),
    ({"servo_sim": {"ros__parameters": {"motors": "arm"}}}, "parameter 'motors'"),
    ({"servo_sim": {"ros__parameters": {"motors": ["arm"], "arms": {"max_torque": 1.0}}}},
     "group 'arms' is not a motor listed in 'motors'"),
    ({"servo_sim": {"ros__parameters": {"motors": ["arm"], "rate": 3}}},
     "unknown parameter 'rate'"),
    ({"servo_sim": {"ros__parameters": {"motors": ["arm"], "arm": {"max_torque": -2.0}}}},
     "motor 'arm': field 'max_torque' = -2.0"),
    ({"servo_sim": {"ros__parameters": {"motors": ["arm"], "arm": {"name": "elbow"}}}},
     "motor 'arm': field 'name' = 'elbow': the name comes from 'motors'"),
])
def test_bad_config_structure(raw, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(raw, "cfg.yaml")
    assert str(err.value).startswith("cfg.yaml: ")
    assert expected in str(err.value)


def test_missing_and_broken_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "motors: [name: a\n  - : :"))


def test_bad_config_builds_nothing(tmp_path):
    # one precise message, raised before any motor is built
    path = write(tmp_path, {"motors": [{"name": "a"}, {"name": "b", "inertia": -1}]})
    with pytest.raises(ConfigError) as err:
        Simulation.from_config(path)
    assert str(err.value).count("\n") == 0
