"""The info structures of a motor's service: ``DeviceInfo``, ``ServoInfo`` (with its
``ParameterInfo`` and ``SignalInfo`` lists) and ``IsochInfo``, from the config, the
device's capabilities and the runtime's rate."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..hardware.base import Capabilities
from ..model import ROTATIONAL
from ..model.config import field_minimum
from ..model.fields import value_type
from ..runtime import Runtime
from . import params

#: The device capabilities that are seed 004's ``ServoCapabilities`` bits.
SERVO_CAPABILITIES = (Capabilities.POSITION_COMMAND | Capabilities.VELOCITY_COMMAND
                      | Capabilities.EFFORT_COMMAND | Capabilities.TRAPEZOIDAL_COMMAND)
#: The one signal of every motor: its e-stop latch (true: latched).
E_STOP_SIGNAL = "e_stop"
#: Robot Raconteur's DataTypeCode of each parameter type (com.robotraconteur.datatype)
_TYPE_CODES = {"bool": "bool_c", "integer": "int64_c", "double": "double_c",
               "double_array": "double_c", "string": "string_c"}


class Types:
    """The structure types and constants of the standard robdefs on one node."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.servo = node.GetConstants("com.robotraconteur.servo")
        self.joints = node.GetConstants("com.robotraconteur.robotics.joints")
        self.datatype = node.GetConstants("com.robotraconteur.datatype")
        self.signal = node.GetConstants("com.robotraconteur.signal")
        self._uuid = node.GetNamedArrayDType("com.robotraconteur.uuid.UUID")
        self.pose = node.GetNamedArrayDType("com.robotraconteur.geometry.Pose")

    def new(self, name: str) -> Any:
        return self.node.NewStructure(name)

    def identifier(self, name: str) -> Any:
        ident = self.new("com.robotraconteur.identifier.Identifier")
        ident.name = name
        ident.uuid = np.zeros((1,), dtype=self._uuid)
        return ident

    def device_class(self, name: str, subclasses: list[str]) -> Any:
        cls = self.new("com.robotraconteur.device.DeviceClass")
        cls.class_identifier = self.identifier(name)
        cls.subclasses = subclasses
        return cls

    def data_type(self, kind: str, length: int) -> Any:
        dt = self.new("com.robotraconteur.datatype.DataType")
        dt.name = ""
        dt.type_code = self.datatype["DataTypeCode"][_TYPE_CODES[kind]]
        dt.type_string = {"double_array": "double[]", "integer": "int64"}.get(kind, kind)
        arrays = self.datatype["ArrayTypeCode"]
        dt.array_type_code = arrays["array_c" if kind == "double_array" else "none_c"]
        dt.array_var_len = False
        dt.array_len = np.array([length], dtype=np.uint32)
        dt.container_type_code = self.datatype["ContainerTypeCode"]["none_c"]
        return dt


def device_info(types: Types, runtime: Runtime, motor: str, service: str) -> Any:
    """What the device is: the motor's name, the plugin (model: the servo profile)."""
    config = runtime.motor(motor).config
    info = types.new("com.robotraconteur.device.DeviceInfo")
    info.device = types.identifier(service)
    info.parent_device = types.identifier("servo_sim")
    info.manufacturer = types.identifier("servo_sim" if runtime.simulated
                                         else runtime.plugin_name)
    info.model = types.identifier(config.servo or f"{runtime.plugin_name} motor")
    info.options = []
    info.capabilities = []
    info.serial_number = ""
    info.device_classes = [types.device_class("servo", [runtime.plugin_name])]
    info.user_description = (f"motor {motor!r} of servo_sim on hardware "
                             f"{runtime.plugin_name!r}")
    info.implemented_types = ["com.robotraconteur.servo.Servo"]
    info.associated_devices = {}
    info.extended = {}
    return info


def _vector(value: float) -> np.ndarray:
    return np.array([float(value)])


def servo_info(types: Types, runtime: Runtime, motor: str, service: str) -> Any:
    """``ServoInfo``: type, capabilities, one axis, units, the config's limits, the
    multiplier as gear ratio, the position sensor's resolution, the parameters, the
    e-stop signal."""
    handle = runtime.motor(motor)
    config = handle.config
    rotational = config.type == ROTATIONAL
    codes = types.servo["ServoTypeCode"]
    info = types.new("com.robotraconteur.servo.ServoInfo")
    info.device_info = device_info(types, runtime, motor, service)
    if runtime.simulated:
        info.servo_type = codes["generic_revolute" if rotational else "generic_prismatic"]
    else:
        info.servo_type = codes["revolute_electric" if rotational else "prismatic_electric"]
    caps = Capabilities(runtime.capabilities(motor)) & SERVO_CAPABILITIES
    info.capabilities = int(caps) | types.servo["ServoCapabilities"]["signals"]
    info.axis_count = 1
    units = types.joints
    info.position_units = [units["JointPositionUnits"]["radian" if rotational else "meter"]]
    info.effort_units = [units["JointEffortUnits"]["newton_meter" if rotational
                                                   else "newton"]]
    low, high = config.min_position, config.max_position
    if low == high == 0:  # soft limits off: the hard stops, else none
        low, high = (config.min_stop, config.max_stop) if config.min_stop != config.max_stop \
            else (-math.inf, math.inf)
    info.position_min, info.position_max = _vector(low), _vector(high)
    info.velocity_min = _vector(-config.max_velocity)
    info.velocity_max = _vector(config.max_velocity)
    accel = config.acceleration if config.acceleration >= 0 else math.inf
    info.acceleration_min, info.acceleration_max = _vector(-accel), _vector(accel)
    info.torque_min, info.torque_max = _vector(-config.max_force), _vector(config.max_force)
    info.gear_ratio = _vector(config.multiplier)
    info.sensor_resolution = _vector(sensor_resolution(config))
    info.effort_command_resolution = _vector(0.0)
    info.parameter_info = parameter_info(types, runtime, motor)
    info.signal_info = [e_stop_signal_info(types)]
    info.extended = {}
    return info


def sensor_resolution(config: Any) -> float:
    """The position sensor's step in position units (0: exact): the encoder's
    (2 pi / ticks per turn), else the sensor's own resolution."""
    actuator = config.actuator
    if actuator is not None and actuator.resolution > 0:
        return 2.0 * math.pi / actuator.resolution
    resolution = config.position_sensor.resolution
    return resolution if resolution > 0 else 0.0


def parameter_info(types: Types, runtime: Runtime, motor: str) -> list[Any]:
    """One ``ParameterInfo`` per live parameter: name, type, value now, lower bound."""
    out = []
    for name, value in params.field_values(runtime, motor).items():
        if not params.live(name):
            continue
        kind = value_type(value)
        p = types.new("com.robotraconteur.param.ParameterInfo")
        p.parameter_identifier = types.identifier(name)
        p.parameter_class = types.device_class("parameter", ["live"])
        p.data_type = types.data_type(kind, len(value) if kind == "double_array" else 1)
        p.data_units = []
        p.description = f"the config field {name!r} of motor {motor!r} (docs/model.md)"
        p.default_value = to_varvalue(value)
        minimum = field_minimum(name)
        p.min_value = None if minimum is None else to_varvalue(float(minimum))
        p.max_value = None
        p.enum_values = {}
        p.extended = {}
        out.append(p)
    return out


def e_stop_signal_info(types: Types) -> Any:
    """The e-stop latch as a read-write boolean signal."""
    s = types.new("com.robotraconteur.signal.SignalInfo")
    s.signal_identifier = types.identifier(E_STOP_SIGNAL)
    s.signal_class = types.device_class("e_stop", [])
    s.units = []
    s.data_type = types.data_type("bool", 1)
    s.signal_type = types.signal["SignalType"]["digital"]
    s.access_level = types.signal["SignalAccessLevel"]["all"]
    s.address = np.zeros(0, dtype=np.uint32)
    s.user_description = ("the motor's e-stop latch: true latches it (torque off, every "
                          "command refused), false releases it (the motor stays disabled "
                          "until mode = halt)")
    s.min_value = None
    s.max_value = None
    s.extended = {}
    return s


def isoch_info(types: Types, rate_hz: float, epoch: Any) -> Any:
    info = types.new("com.robotraconteur.device.isoch.IsochInfo")
    info.update_rate = float(rate_hz)
    info.isoch_epoch = epoch
    info.max_downsample = 1000
    return info


def to_varvalue(value: Any) -> Any:
    """A plain parameter value as a Robot Raconteur ``varvalue``."""
    import RobotRaconteur as RR  # noqa: N817 - the name its docs use

    if isinstance(value, bool):
        return RR.VarValue(np.array([value], dtype=np.bool_), "bool[]")
    if isinstance(value, int):
        return RR.VarValue(np.array([value], dtype=np.int64), "int64[]")
    if isinstance(value, float):
        return RR.VarValue(np.array([value]), "double[]")
    if isinstance(value, str):
        return RR.VarValue(value, "string")
    return RR.VarValue(np.array(value, dtype=np.float64), "double[]")
