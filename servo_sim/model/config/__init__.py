"""Configuration of a simulation: schema, defaults, validation and the ROS-parameter form.

A config is a plain mapping (from YAML or code) in one of two forms:

* the model form of SPEC §5::

      {basic_time_step_ms: 8, physics: dynamic, motors: [{name: arm, ...}, ...]}

* a ROS 2 parameters file of the same content (ros2_controllers style)::

      {servo_sim: {ros__parameters: {basic_time_step_ms: 8, motors: [arm], arm: {...}}}}

  where each motor's group is keyed by its ROS name (see :func:`ros_name`) and may
  also be given flat, as ``arm.max_torque: 10.0`` (how rclpy lists parameters).

Validation builds nothing on error: it raises one :class:`ConfigError` whose message
names the source, the motor, the field and the value. The modules: ``schema.py`` (the
dataclasses, defaults and the error), ``parse.py`` (the parsers and checks, YAML, the
dict form) and ``ros_form.py`` (the ROS-parameter form).
"""

from .parse import (
    field_minimum,
    load_config,
    motor_to_dict,
    parse_config,
    parse_field,
    to_dict,
)
from .ros_form import (
    NODE_PARAMETERS,
    from_ros_parameters,
    unflatten,
)
from .schema import (
    BODY_ENGINES,
    CONTROL_LAWS,
    COUPLING_SEPARATOR,
    DEFAULT_PLUGIN,
    DEFAULT_SENSOR_SUFFIX,
    GROUPS,
    STANDARD_GRAVITY,
    TOP_FIELDS,
    ActuatorConfig,
    BatteryConfig,
    ConfigError,
    LoadConfig,
    MotorConfig,
    PositionSensorConfig,
    SimulationConfig,
    flatten,
    ros_name,
)

__all__ = ["BODY_ENGINES", "CONTROL_LAWS", "COUPLING_SEPARATOR", "DEFAULT_PLUGIN",
           "DEFAULT_SENSOR_SUFFIX", "GROUPS", "NODE_PARAMETERS", "STANDARD_GRAVITY",
           "TOP_FIELDS", "ActuatorConfig", "BatteryConfig", "ConfigError", "LoadConfig",
           "MotorConfig", "PositionSensorConfig", "SimulationConfig", "field_minimum",
           "flatten", "from_ros_parameters", "load_config", "motor_to_dict",
           "parse_config", "parse_field", "ros_name", "to_dict", "unflatten"]
