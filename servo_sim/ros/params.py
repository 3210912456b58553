"""The node's ROS parameters: specs (type, description, range, read-only) <-> config.

ROS-free: the node turns each :class:`ParameterSpec` into an rclpy
``ParameterDescriptor``; tests check the conversion without ROS.

Layout (one node, the config format of ``servo_sim.model.config``)::

    publish_clock, real_time_factor, joint_states_rate, start_paused   node settings
    basic_time_step_ms, physics, seed, motors                          read-only
    multibody.model, multibody.joints.<motor> (physics: mujoco)        read-only
    <motor ROS name>.<field>[.<sub-field>]                             one per motor field
    hardware.plugin, hardware.<setting>[.<motor ROS name>.<setting>]   read-only
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model import (
    ConfigError,
    MotorConfig,
    SimulationConfig,
    from_ros_parameters,
    parse_config,
    ros_name,
)
from ..model.config import field_minimum, flatten
from ..model.fields import motor_fields, value_type
from ..model.simulation import READ_ONLY_FIELDS
from .interface import MOTOR_FAMILIES, MOTOR_INTERFACE_CHOICES

#: rclpy declares these itself; the node leaves them alone.
ROS_BUILTIN_PARAMETERS = frozenset({"use_sim_time", "start_type_description_service"})


@dataclass(frozen=True)
class ParameterSpec:
    """One ROS parameter: name, value, its ROS type and descriptor fields."""

    name: str
    value: Any
    description: str
    read_only: bool = False
    minimum: float | None = None  # inclusive lower bound, None = unbounded
    maximum: float | None = None  # inclusive upper bound, None = unbounded
    choices: tuple[str, ...] | None = None  # the values a string may take

    @property
    def type(self) -> str:
        """"bool", "integer", "double", "string", "double_array" or "string_array"."""
        return ros_type(self.value)


#: The ROS parameter type of a plain value ("" if it has none).
ros_type = value_type


#: The node's Robot Raconteur door (ros/rr_door.py): off unless given a port.
ROBOT_RACONTEUR_PORT = ParameterSpec(
    "robot_raconteur_port", -1,
    "Robot Raconteur door (docs/robot-raconteur.md): every motor also a "
    "com.robotraconteur.servo.Servo service on this TCP port, loopback only, the same "
    "motors through the same runtime; -1 = off, 0 = a free port (logged).",
    read_only=True, minimum=-1, maximum=65535)

#: The node's own settings (names listed in config.NODE_PARAMETERS), with defaults.
NODE_SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec("publish_clock", False,
                  "The time base, one switch with use_sim_time (either sets both): true, the "
                  "node is the time source: it publishes the simulation time on /clock, "
                  "stamps with it and its own clock follows it; false, it stamps with its "
                  "ROS clock (the wall clock).", read_only=True),
    ParameterSpec("real_time_factor", 1.0,
                  "Simulated seconds per wall-clock second: 1.0 paces to the wall clock, "
                  "0 runs as fast as possible.", minimum=0.0),
    ParameterSpec("joint_states_rate", 50.0,
                  "Rate of joint_states in simulated time, Hz (0 = off).", minimum=0.0),
    ParameterSpec("start_paused", False,
                  "Start paused; advance with ~/step or ~/resume.", read_only=True),
    ParameterSpec("executor", "auto",
                  "rclpy executor: auto (the EventsExecutor where rclpy has it, else the "
                  "SingleThreadedExecutor), events or single_threaded.", read_only=True,
                  choices=("auto", "events", "single_threaded")),
    ParameterSpec("motor_interfaces", list(MOTOR_FAMILIES),
                  "Per-motor interface families to create: commands, getters, sensors (the "
                  "Webots table), safety (halt, enable, ...), actions (trapezoidal_move), or "
                  "single services by name (get_velocity, position_sensor/enable). All "
                  "families by default; leaving some out speeds up start-up and DDS "
                  "discovery with hundreds of motors.", read_only=True,
                  choices=MOTOR_INTERFACE_CHOICES),
    ParameterSpec("robot_description", "",
                  "URDF. When set, each motor takes its type and limits from the joint of "
                  "its ROS name (<limit lower upper velocity effort>).", read_only=True),
    ParameterSpec("config_file", "",
                  "A config file read instead of the motor parameters: a servo_sim YAML "
                  "config, or a Webots .wbt world or .proto file (its robot's motors; "
                  "webots:// PROTOs from $WEBOTS_HOME). Empty: the parameters.",
                  read_only=True),
    ROBOT_RACONTEUR_PORT,
)

_TOP_DOCS = {
    "basic_time_step_ms": "Simulation step, ms.",
    "physics": "dynamic (inertia, forces), kinematic (Webots without physics) or mujoco "
               "(the motors drive the joints of multibody.model in MuJoCo).",
    "seed": "Seed of the position-sensor noise.",
    "motors": "Device names of the motors; each has a parameter group named by its ROS name.",
}

_FIELD_DOCS = {
    "type": "rotational or linear.",
    "max_velocity": "Velocity limit, rad/s or m/s.",
    "max_torque": "Torque limit, N*m.",
    "max_force": "Force limit, N.",
    "control_pid": "PID gains [P, I, D] of the position controller (P > 0).",
    "acceleration": "Acceleration limit, rad/s^2 or m/s^2; -1 = unlimited.",
    "min_position": "Soft lower limit of the target position (both limits 0 = off).",
    "max_position": "Soft upper limit of the target position (both limits 0 = off).",
    "min_stop": "Hard stop, lower (both stops 0 = off).",
    "max_stop": "Hard stop, upper (both stops 0 = off).",
    "spring_constant": "Spring towards 0, N*m/rad or N/m.",
    "damping_constant": "Viscous damping, N*m*s/rad or N*s/m.",
    "static_friction": "Static friction felt when the motor is off, N*m or N.",
    "multiplier": "Command multiplier (coupled motors).",
    "consumption_factor": "Energy per unit of force and time.",
    "position": "Initial position, rad or m.",
    "inertia": "Rotor + load inertia, kg*m^2 (rotational) or mass, kg (linear); > 0.",
    "load.gravity_mass": "Mass lifted against gravity, kg.",
    "load.gravity_distance": "Distance of that mass from a rotational axis, m.",
    "load.external": "Constant external force or torque on the joint.",
    "load.gravity": "Gravity, m/s^2.",
    "load.gravity_angle": "Rotational: the position where the mass's lever is horizontal "
                          "and its weight pulls towards lower positions (it hangs at this "
                          "- pi/2), rad; linear: the axis from straight up, rad.",
    "position_sensor.sampling_period_ms": "Position sensor period, ms (0 = off).",
    "position_sensor.resolution": "Position sensor resolution (-1 = infinite).",
    "position_sensor.noise": "Standard deviation of the position sensor noise.",
    "force_feedback_sampling_period_ms": "Force/torque feedback period, ms (0 = off).",
    "command_timeout": "Command watchdog, s: no command for this long -> halt (0 = off).",
    "position_sensor_name": "Device name of the motor's PositionSensor (Webots controllers; "
                            "'' = none).",
    "brake_name": "Device name of the joint's Brake (Webots controllers; get_brake_name).",
    "passive": "A joint without a motor: moved by its load, spring and damper only; "
               "commands are refused.",
    "servo": "The servo profile the motor's fields came from (servo-sim profiles).",
    "actuator.stall_torque": "Stall torque at rated_voltage, N*m (envelope; 0 = ideal).",
    "actuator.no_load_speed": "No-load speed at rated_voltage, rad/s.",
    "actuator.rated_voltage": "The voltage of stall_torque and no_load_speed, V.",
    "actuator.supply_voltage": "Supply voltage, V (0 = rated_voltage).",
    "actuator.min_supply_voltage": "The supply's rated range, lowest, V (0 = not given; "
                                   "outside: a warning).",
    "actuator.max_supply_voltage": "The supply's rated range, highest, V (0 = not given).",
    "actuator.resolution": "Encoder ticks per turn: what controller and sensor see (0 = exact).",
    "actuator.backlash": "Gear backlash, rad (the dead zone's full width).",
    "actuator.deadband": "Position errors within this drive nothing, rad.",
    "actuator.friction": "Coulomb friction of the gear, N*m.",
    "actuator.viscous_friction": "Viscous friction of the gear, N*m*s/rad (adds to "
                                 "damping_constant).",
    "actuator.friction_stribeck": "Friction of the gear added near rest, N*m.",
    "actuator.load_friction_external": "The gear's friction per N*m of external load.",
    "actuator.load_friction_motor": "The gear's friction per N*m of motor torque.",
    "actuator.load_friction_external_stribeck": "Near rest, more friction per N*m of "
                                                "external load.",
    "actuator.load_friction_motor_stribeck": "Near rest, more friction per N*m of motor "
                                             "torque.",
    "actuator.stribeck_velocity": "The speed the friction near rest fades over, rad/s.",
    "actuator.stribeck_alpha": "How sharply the friction near rest fades with the speed.",
    "actuator.armature": "The rotor's inertia at the output, kg*m^2 (adds to inertia).",
    "actuator.control": "Position control law: webots, or the dynamixel or feetech firmware's.",
    "actuator.gains": "The firmware's position gains [P, I, D], device units.",
    "actuator.gain_scale": "The gains act at this times the law's documented units (the "
                           "XL330 as measured: 0.5).",
}


def parameter_specs(config: SimulationConfig) -> list[ParameterSpec]:
    """Every parameter the node declares for ``config``, with the config's values."""
    specs = top_parameter_specs(config)
    for m in config.motors:
        specs += motor_parameter_specs(m)
    return specs


def top_parameter_specs(config: SimulationConfig) -> list[ParameterSpec]:
    """The read-only parameters of the whole simulation (step, physics, seed, motors,
    and a multibody engine's ``multibody.*``: its model and joints)."""
    specs = [ParameterSpec(name, value, _TOP_DOCS[name], read_only=True,
                           minimum=field_minimum(name))
             for name, value in (("basic_time_step_ms", config.basic_time_step_ms),
                                 ("physics", config.physics), ("seed", config.seed),
                                 ("motors", [m.name for m in config.motors]))]
    for name, value in flatten(config.multibody or {}).items():
        doc = _MULTIBODY_DOCS.get(name.partition(".")[0], "Multibody engine setting.")
        specs.append(ParameterSpec(f"multibody.{name}", value, doc, read_only=True))
    return specs


_MULTIBODY_DOCS = {
    "model": "The multibody model (MJCF or URDF) whose joints the motors drive "
             "(physics: mujoco).",
    "joints": "The joint a motor drives (multibody.joints.<motor>; default: its namesake).",
}


def motor_parameter_specs(m: MotorConfig) -> list[ParameterSpec]:
    """The parameters of one motor (``<ROS name>.<field>``), with its config's values."""
    specs = []
    for field, value in motor_fields(m).items():
        if isinstance(value, list):
            value = [float(v) for v in value]
        specs.append(ParameterSpec(f"{ros_name(m.name)}.{field}", value,
                                   f"{m.name}: {_FIELD_DOCS[field]}",
                                   read_only=field in READ_ONLY_FIELDS,
                                   minimum=field_minimum(field)))
    return specs


def hardware_specs(config: SimulationConfig,
                   documented: Mapping[str, str] | None = None) -> list[ParameterSpec]:
    """The read-only ``hardware.*`` parameters of ``config`` (plugin name and settings).

    ``documented`` maps setting names (``port``, ``<motor>.id``) to descriptions, as a
    plugin's ``SETTINGS`` does.
    """
    documented = documented or {}
    motors = {ros_name(m.name) for m in config.motors}
    specs = []
    for name, value in flatten(config.hardware).items():
        head, _, tail = name.partition(".")
        key = f"<motor>.{tail}" if head in motors and tail else name
        doc = ("Hardware plugin: sim (the model), dynamixel, an entry point of group "
               "servo_sim.hardware or package.module:Class." if name == "plugin"
               else documented.get(key, "Hardware plugin setting."))
        if isinstance(value, (list, tuple)) and ros_type(value) == "double_array":
            value = [float(v) for v in value]
        if ros_type(value):
            specs.append(ParameterSpec(f"hardware.{name}", value, doc, read_only=True))
    return specs


def split_motor_parameter(config: SimulationConfig, name: str) -> tuple[str, str] | None:
    """``'arm.load.external'`` -> ``('arm', 'load.external')``; None if not a motor field."""
    group, _, field = name.partition(".")
    for m in config.motors:
        if ros_name(m.name) == group and field:
            return m.name, field
    return None


def node_settings(params: Mapping[str, Any], source: str = "<parameters>") -> dict[str, Any]:
    """The node settings among ``params``, checked and with defaults filled in."""
    settings = {}
    for spec in NODE_SPECS:
        value = params.get(spec.name, spec.value)
        if isinstance(spec.value, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if ros_type(value) != spec.type or (spec.minimum is not None and value < spec.minimum) \
                or (spec.maximum is not None and value > spec.maximum):
            rule = spec.type + (f" from {spec.minimum:g} to {spec.maximum:g}"
                                if spec.maximum is not None
                                else f" >= {spec.minimum}" if spec.minimum is not None else "")
            article = "an" if spec.type == "integer" else "a"
            raise ConfigError(f"{source}: parameter {spec.name!r} = {value!r}: must be "
                              f"{article} {rule}")
        if spec.type == "double" and not math.isfinite(value):  # as the config's numbers
            raise ConfigError(f"{source}: parameter {spec.name!r} = {value!r}: must be finite")
        values = value if isinstance(value, list) else [value]
        if spec.choices is not None and not set(values) <= set(spec.choices):
            raise ConfigError(f"{source}: parameter {spec.name!r} = {value!r}: must be one of "
                              + ", ".join(spec.choices))
        settings[spec.name] = value
    _one_time_base(params, settings, source)
    return settings


def _one_time_base(params: Mapping[str, Any], settings: dict[str, Any], source: str) -> None:
    """publish_clock and use_sim_time are one switch: either one true sets both (a node
    following a /clock that nobody publishes would stall); given both, they must agree."""
    sim_time = params.get("use_sim_time")
    if sim_time is not None and not isinstance(sim_time, bool):
        raise ConfigError(f"{source}: parameter 'use_sim_time' = {sim_time!r}: must be a bool")
    if "publish_clock" not in params:
        settings["publish_clock"] = bool(sim_time)
    elif sim_time is not None and sim_time != settings["publish_clock"]:
        raise ConfigError(
            f"{source}: use_sim_time = {sim_time} and publish_clock = "
            f"{settings['publish_clock']} contradict each other: they are one switch (the "
            "node publishes /clock and follows it, or neither); set one of them")


def config_from_parameters(params: Mapping[str, Any], source: str) -> SimulationConfig:
    """Validate the node's parameters (flat rclpy names) into a SimulationConfig (the
    node's own settings left out: they are not the model's)."""
    model = {k: v for k, v in params.items() if k not in {s.name for s in NODE_SPECS}}
    return parse_config(from_ros_parameters(model, source), source)

