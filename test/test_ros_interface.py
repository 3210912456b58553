"""The ROS interface without ROS: the declarative table against SPEC §6, the .msg/.srv
files parsed as ROS IDL (rosbags), and the parameter <-> config conversion."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import make_sim
from rosbags.typesys import get_types_from_msg

from servo_sim.model import (
    Command,
    ConfigError,
    MotorView,
    ServoMode,
    Simulation,
    StateFlags,
    load_config,
)
from servo_sim.model.config import NODE_PARAMETERS, parse_config, to_dict
from servo_sim.ros.interface import (
    ACTION_FIELDS,
    MOTOR_ACTIONS,
    MOTOR_SERVICES,
    MOTOR_TOPICS,
    MOTOR_TRIGGERS,
    MSG_FIELDS,
    NODE_ENDPOINTS,
    SRV_FIELDS,
    TYPE_CODES,
    default_force_topic,
)
from servo_sim.ros.params import (
    NODE_SPECS,
    ROS_BUILTIN_PARAMETERS,
    config_from_parameters,
    node_settings,
    parameter_specs,
    split_motor_parameter,
)

ROOT = Path(__file__).resolve().parents[1]

# SPEC §6, copied by hand: per-motor name -> servo_sim type
SPEC_SERVICES = {
    **{n: "SetFloat" for n in ("set_position", "set_velocity", "set_acceleration",
                               "set_available_force", "set_available_torque", "set_force",
                               "set_torque")},
    "set_control_pid": "MotorSetControlPid",
    **{n: "GetFloat" for n in ("get_target_position", "get_min_position", "get_max_position",
                               "get_velocity", "get_max_velocity", "get_acceleration",
                               "get_available_force", "get_max_force", "get_available_torque",
                               "get_max_torque", "get_multiplier")},
    **{f"{s}/enable": "SetInt" for s in ("force_feedback_sensor", "torque_feedback_sensor",
                                         "position_sensor")},
    **{f"{s}/get_sampling_period": "GetInt" for s in ("force_feedback_sensor",
                                                      "torque_feedback_sensor",
                                                      "position_sensor")},
    "get_type": "GetInt",
    "get_brake_name": "GetString",
    "get_position_sensor_name": "GetString",
}
SPEC_TOPICS = {"force_feedback": "Float64Stamped", "torque_feedback": "Float64Stamped",
               "position": "Float64Stamped"}
# SPEC §6, the field lists of the types: request ---> response
SPEC_SRV = {
    "SetFloat": "float64 value -> bool success",
    "GetFloat": "bool ask -> float64 value",
    "SetInt": "int32 value -> bool success",
    "GetInt": "bool ask -> int32 value",
    "GetString": "bool ask -> string value",
    "MotorSetControlPid": "float64 controlp, float64 controli, float64 controld -> int8 success",
}


def test_table_has_every_spec_service_with_its_type():
    assert {s.name: s.srv for s in MOTOR_SERVICES} == SPEC_SERVICES
    assert len(MOTOR_SERVICES) == len(SPEC_SERVICES)  # no name twice


def test_table_has_every_spec_topic_with_its_type():
    assert {t.name: t.msg for t in MOTOR_TOPICS} == SPEC_TOPICS


def test_table_field_lists_match_the_spec():
    def text(fields):
        return ", ".join(f"{t} {n}" for t, n in fields)

    assert {k: f"{text(req)} -> {text(resp)}" for k, (req, resp) in SRV_FIELDS.items()} \
        == SPEC_SRV
    assert MSG_FIELDS["Float64Stamped"] == (("std_msgs/Header", "header"), ("float64", "data"))
    # seed 004 ServoState, one array entry per motor
    assert [n for _, n in MSG_FIELDS["ServoState"]] == [
        "header", "seqno", "name", "mode", "servo_state_flags", "position", "velocity",
        "acceleration", "effort", "position_command", "velocity_command", "effort_command"]


def _idl_type(kind, detail) -> str:
    if kind.name == "BASE":
        return detail[0]
    if kind.name == "SEQUENCE":
        return _idl_type(*detail[0]) + "[]"
    return detail.replace("/msg/", "/")


def _idl(text: str, name: str):
    (parsed,) = get_types_from_msg(text, name).values()
    return parsed


def _idl_fields(text: str, name: str) -> tuple[tuple[str, str], ...]:
    return tuple((_idl_type(kind, detail), field) for field, (kind, detail) in _idl(text, name)[1])


@pytest.mark.parametrize("name", sorted(SRV_FIELDS))
def test_srv_files_parse_as_ros_idl_and_match_the_table(name):
    text = (ROOT / "srv" / f"{name}.srv").read_text()
    request, response = text.split("---")
    assert (_idl_fields(request, f"servo_sim/srv/{name}_Request"),
            _idl_fields(response, f"servo_sim/srv/{name}_Response")) == SRV_FIELDS[name]


@pytest.mark.parametrize("name", sorted(MSG_FIELDS))
def test_msg_files_parse_as_ros_idl_and_match_the_table(name):
    fields = _idl_fields((ROOT / "msg" / f"{name}.msg").read_text(), f"servo_sim/msg/{name}")
    assert fields == MSG_FIELDS[name]


def test_servo_state_constants_are_the_model_enums():
    consts = {n: v for n, _, v in _idl((ROOT / "msg" / "ServoState.msg").read_text(),
                                        "servo_sim/msg/ServoState")[0]}
    assert {n.removeprefix("MODE_"): v for n, v in consts.items() if n.startswith("MODE_")} \
        == {m.name: m.value for m in ServoMode}
    flags = {n.removeprefix("FLAG_"): v for n, v in consts.items() if n.startswith("FLAG_")}
    assert flags == {f: StateFlags[f].value for f in flags}
    assert set(flags) == {"READY", "ENABLED", "E_STOP", "ERROR", "FATAL_ERROR", "WARNING",
                          "COMMUNICATION_FAILURE", "VALID_COMMAND"}


@pytest.mark.parametrize("name", sorted(ACTION_FIELDS))
def test_action_files_parse_as_ros_idl_and_match_the_table(name):
    parts = (ROOT / "action" / f"{name}.action").read_text().split("---")
    assert tuple(_idl_fields(text, f"servo_sim/action/{name}_{part}") for text, part in
                 zip(parts, ("Goal", "Result", "Feedback"), strict=True)) == ACTION_FIELDS[name]


def test_safety_rows_send_the_command_tables_rows():
    assert {t.name: t.command for t in MOTOR_TRIGGERS} == {
        "halt": Command.HALT, "enable": Command.ENABLE, "disable": Command.DISABLE,
        "e_stop": Command.E_STOP, "reset_e_stop": Command.RESET_E_STOP}
    (move,) = MOTOR_ACTIONS
    assert (move.name, move.action, move.command) == ("trapezoidal_move", "TrapezoidalMove",
                                                   Command.TRAPEZOIDAL_MOVE)
    goal = [n for _, n in ACTION_FIELDS["TrapezoidalMove"][0]]
    assert goal == ["target_position", "target_velocity", "max_velocity", "max_acceleration"]


def test_every_interface_file_is_in_the_table_and_in_cmake():
    files = {p.stem for folder in ("srv", "msg", "action") for p in (ROOT / folder).glob("*.*")}
    assert files == set(SRV_FIELDS) | set(MSG_FIELDS) | set(ACTION_FIELDS)
    cmake = (ROOT / "CMakeLists.txt").read_text()
    for name in SRV_FIELDS:
        assert f'"srv/{name}.srv"' in cmake
    for name in MSG_FIELDS:
        assert f'"msg/{name}.msg"' in cmake
    for name in ACTION_FIELDS:
        assert f'"action/{name}.action"' in cmake


def test_node_endpoints():
    table = {(e.name, e.kind): e.type for e in NODE_ENDPOINTS}
    assert table == {
        ("joint_states", "publisher"): "sensor_msgs/msg/JointState",
        ("joint_commands", "subscription"): "sensor_msgs/msg/JointState",
        ("/clock", "publisher"): "rosgraph_msgs/msg/Clock",
        ("~/pause", "service"): "std_srvs/srv/Trigger",
        ("~/resume", "service"): "std_srvs/srv/Trigger",
        ("~/step", "service"): "servo_sim/srv/SetInt",
        ("~/reset", "service"): "std_srvs/srv/Trigger",
        ("~/e_stop", "service"): "std_srvs/srv/Trigger",
        ("~/reset_e_stop", "service"): "std_srvs/srv/Trigger",
        ("~/servo_state", "publisher"): "servo_sim/msg/ServoState",
        ("/diagnostics", "publisher"): "diagnostic_msgs/msg/DiagnosticArray",
    }


# --------------------------------------------------------------------- the calls


def _rows():
    return {s.name: s for s in MOTOR_SERVICES}


def test_get_brake_name_answers_the_configured_brake():
    sim = make_sim(dict(name="arm", brake_name="arm brake"), dict(name="wrist"))
    read = _rows()["get_brake_name"].read
    assert (read(MotorView(sim.motor("arm"))), read(MotorView(sim.motor("wrist")))) \
        == ("arm brake", "")


def test_setters_send_their_rows_and_getters_read_the_view():
    sim = make_sim(dict(name="arm", max_velocity=5.0, max_torque=4.0))
    arm, rows = sim.motor("arm"), _rows()
    view = MotorView(arm)
    rows["set_position"].command.call(arm, 0.5)
    rows["set_velocity"].command.call(arm, 2.0)
    rows["set_acceleration"].command.call(arm, 3.0)
    rows["set_available_torque"].command.call(arm, 1.5)
    rows["set_control_pid"].command.call(arm, 7.0, 0.1, 0.2)
    rows["position_sensor/enable"].command.call(arm, 16)
    rows["torque_feedback_sensor/enable"].command.call(arm, 32)
    read = {name: row.read(view) for name, row in rows.items() if row.is_getter}
    assert read == {
        "get_target_position": 0.5, "get_min_position": 0.0, "get_max_position": 0.0,
        "get_velocity": 2.0, "get_max_velocity": 5.0, "get_acceleration": 3.0,
        "get_available_force": 1.5, "get_max_force": 4.0, "get_available_torque": 1.5,
        "get_max_torque": 4.0, "get_multiplier": 1.0, "get_type": 0, "get_brake_name": "",
        "get_position_sensor_name": "arm/position_sensor",
        "position_sensor/get_sampling_period": 16,
        "force_feedback_sensor/get_sampling_period": 32,
        "torque_feedback_sensor/get_sampling_period": 32,
    }
    assert arm.get_control_pid() == (7.0, 0.1, 0.2)
    rows["set_force"].command.call(arm, 1.0)
    assert arm.get_available_force() == 1.5  # force control, force clipped to 1.5 later


def test_get_type_codes_are_webots_constants():
    sim = make_sim(dict(name="a"), dict(name="b", type="linear", max_force=1.0))
    assert TYPE_CODES == {"rotational": 0, "linear": 1}
    assert _rows()["get_type"].read(MotorView(sim.motor("b"))) == 1
    assert default_force_topic(sim.motor("a")) == "torque_feedback"
    assert default_force_topic(sim.motor("b")) == "force_feedback"


def test_setter_rows_reject_nan_with_value_error():
    sim = make_sim(dict(name="arm"))
    for row in MOTOR_SERVICES:
        if row.is_getter:
            continue
        args = [math.nan] * len(row.request_fields)
        if row.srv == "SetInt":
            args = [-1]
        with pytest.raises(ValueError, match="arm"):
            row.command.call(sim.motor("arm"), *args)


def test_parameter_rows_name_real_fields_and_read_the_new_value():
    sim = make_sim(dict(name="arm"))
    specs = {s.name for s in parameter_specs(sim.config)}
    for row in MOTOR_SERVICES:
        if row.parameter is not None:
            assert f"arm.{row.parameter[0]}" in specs
    arm = sim.motor("arm")
    arm.set_control_pid(3.0, 0.0, 1.0)
    assert _rows()["set_control_pid"].parameter[1](arm) == [3.0, 0.0, 1.0]


# --------------------------------------------------------------------- parameters


def test_parameter_specs_types_ranges_and_read_only():
    config = load_config(ROOT / "config" / "servo_sim.yaml")
    specs = {s.name: s for s in parameter_specs(config)}
    assert specs["motors"].value == ["arm", "gripper"] and specs["motors"].read_only
    assert specs["basic_time_step_ms"].type == "integer"
    assert specs["basic_time_step_ms"].minimum == 1
    assert specs["arm.max_velocity"].type == "double" and specs["arm.max_velocity"].value == 2.0
    assert specs["arm.max_velocity"].minimum == 0.0 and not specs["arm.max_velocity"].read_only
    assert specs["arm.max_torque"].value == 5.0 and "gripper.max_force" in specs
    assert "arm.max_force" not in specs
    assert specs["arm.control_pid"].type == "double_array"
    assert specs["arm.control_pid"].value == [10.0, 0.0, 0.0]
    assert specs["arm.load.gravity_mass"].value == 0.5
    assert specs["arm.position_sensor.sampling_period_ms"].type == "integer"
    assert specs["arm.position"].read_only and specs["arm.type"].read_only
    assert specs["arm.multiplier"].read_only
    assert specs["arm.load.external"].minimum is None
    assert all(s.description for s in specs.values())


def test_device_names_are_read_only_parameters_and_round_trip():
    """A config with Webots device names (a world import) starts the node: each name is a
    documented read-only parameter, and the parameters give the same motors back."""
    config = load_config(ROOT / "config" / "servo_sim.yaml")
    raw = to_dict(config)
    raw["motors"][0].update(position_sensor_name="shoulder sensor", brake_name="shoulder brake")
    config = parse_config(raw)
    specs = {s.name: s for s in parameter_specs(config)}
    assert specs["arm.position_sensor_name"].value == "shoulder sensor"
    assert specs["arm.brake_name"].value == "shoulder brake"
    assert specs["arm.brake_name"].read_only and specs["arm.brake_name"].type == "string"
    assert "gripper.brake_name" not in specs
    again = config_from_parameters({s.name: s.value for s in specs.values()}, "test")
    assert again.motors == config.motors
    with pytest.raises(ValueError, match="read-only"):
        Simulation(config).set_parameter("arm", "brake_name", "other")


def test_parameters_round_trip_to_the_same_config():
    config = load_config(ROOT / "config" / "servo_sim.yaml")
    flat = {s.name: s.value for s in parameter_specs(config)}
    again = config_from_parameters(flat, "test")
    assert again.motors == config.motors
    assert again.basic_time_step_ms == config.basic_time_step_ms


def test_split_motor_parameter_maps_ros_names_back():
    sim = Simulation.from_config({"motors": [{"name": "wheel::left"}, {"name": "arm"}]})
    assert split_motor_parameter(sim.config, "wheel__left.max_velocity") == (
        "wheel::left", "max_velocity")
    assert split_motor_parameter(sim.config, "arm.load.external") == ("arm", "load.external")
    assert split_motor_parameter(sim.config, "real_time_factor") is None
    assert split_motor_parameter(sim.config, "arm") is None


def test_node_settings_defaults_coercion_and_errors():
    assert node_settings({}) == {"publish_clock": False, "real_time_factor": 1.0,
                                 "joint_states_rate": 50.0, "start_paused": False,
                                 "executor": "auto", "robot_description": "",
                                 "config_file": "",
                                 "robot_raconteur_port": -1,
                                 "motor_interfaces": ["commands", "getters", "sensors",
                                                      "safety", "actions"]}
    assert node_settings({"motor_interfaces": ["getters"]})["motor_interfaces"] == ["getters"]
    rows = ["get_velocity", "position_sensor/enable", "trapezoidal_move", "safety"]
    assert node_settings({"motor_interfaces": rows})["motor_interfaces"] == rows
    with pytest.raises(ConfigError, match=r"'motor_interfaces' = \['getters', 'setters'\]: "
                                          r"must be one of commands, getters, sensors"):
        node_settings({"motor_interfaces": ["getters", "setters"]}, "p")
    assert node_settings({"executor": "events"})["executor"] == "events"
    with pytest.raises(ConfigError, match=r"^p: parameter 'executor' = 'fast': must be one of "
                                          r"auto, events, single_threaded$"):
        node_settings({"executor": "fast"}, "p")
    assert node_settings({"real_time_factor": 2})["real_time_factor"] == 2.0
    with pytest.raises(ConfigError, match=r"'real_time_factor' = -1.0: must be a double >= 0"):
        node_settings({"real_time_factor": -1.0}, "p")
    with pytest.raises(ConfigError, match=r"'publish_clock' = 'yes': must be a bool"):
        node_settings({"publish_clock": "yes"}, "p")
    for bad in (math.inf, math.nan):  # inf would overflow the pacing; NaN means nothing
        with pytest.raises(ConfigError, match=rf"^p: parameter 'real_time_factor' = {bad}: "
                                              r"must be finite$"):
            node_settings({"real_time_factor": bad}, "p")
        with pytest.raises(ConfigError, match=r"'joint_states_rate' = .*: must be finite$"):
            node_settings({"joint_states_rate": bad}, "p")


@pytest.mark.parametrize(("given", "publish_clock"), [
    ({}, False), ({"use_sim_time": True}, True), ({"publish_clock": True}, True),
    ({"use_sim_time": False}, False), ({"use_sim_time": True, "publish_clock": True}, True),
    ({"use_sim_time": False, "publish_clock": False}, False)])
def test_use_sim_time_and_publish_clock_are_one_switch(given, publish_clock):
    """Issue 24: either one true makes the node the time source (it publishes /clock and
    follows it); a node following a /clock nobody publishes would stall."""
    assert node_settings(given)["publish_clock"] is publish_clock


@pytest.mark.parametrize(("given", "message"), [
    ({"use_sim_time": True, "publish_clock": False},
     r"^p: use_sim_time = True and publish_clock = False contradict each other: they are "
     r"one switch \(the node publishes /clock and follows it, or neither\); set one of them$"),
    ({"use_sim_time": False, "publish_clock": True},
     r"^p: use_sim_time = False and publish_clock = True contradict each other"),
    ({"use_sim_time": "maybe"}, r"^p: parameter 'use_sim_time' = 'maybe': must be a bool$")])
def test_a_contradicting_or_bad_time_base_is_one_message(given, message):
    with pytest.raises(ConfigError, match=message):
        node_settings(given, "p")


def test_node_parameter_names_are_what_the_config_accepts():
    assert {s.name for s in NODE_SPECS} | ROS_BUILTIN_PARAMETERS == NODE_PARAMETERS
    flat = {"motors": ["arm"], "arm.max_velocity": 1.0, "publish_clock": True,
            "real_time_factor": 0.0, "use_sim_time": True}
    assert config_from_parameters(flat, "p").motors[0].max_velocity == 1.0


def test_bad_parameters_fail_with_one_message():
    with pytest.raises(ConfigError, match=r"p: motor 'arm': field 'max_velocity' = -1.0: "
                                          r"must be >= 0"):
        config_from_parameters({"motors": ["arm"], "arm.max_velocity": -1.0}, "p")
    with pytest.raises(ConfigError, match=r"did you mean 'max_velocity'"):
        config_from_parameters({"motors": ["arm"], "arm.max_velocty": 1.0}, "p")


def test_every_per_motor_row_has_its_family():
    from servo_sim.ros.interface import (
        MOTOR_ACTIONS,
        MOTOR_FAMILIES,
        MOTOR_TRIGGERS,
        family,
    )

    families = {}
    for row in MOTOR_SERVICES + MOTOR_TRIGGERS + MOTOR_ACTIONS:
        families.setdefault(family(row), []).append(row.name)
    assert tuple(sorted(families)) == tuple(sorted(MOTOR_FAMILIES))
    assert families["commands"] == ["set_position", "set_velocity", "set_acceleration",
                                    "set_available_force", "set_available_torque",
                                    "set_force", "set_torque", "set_control_pid"]
    assert all(n.startswith("get_") for n in families["getters"])
    assert len(families["getters"]) == 14
    assert families["sensors"] == [r.name for r in MOTOR_SERVICES if "_sensor/" in r.name]
    assert families["safety"] == ["halt", "enable", "disable", "e_stop", "reset_e_stop"]
    assert families["actions"] == ["trapezoidal_move"]
