"""The Webots Python controller API (``from controller import Robot, Motor, ...``) over
servo_sim's model and hardware layer.

Written from the Webots reference manual (Robot, Motor, PositionSensor, Brake, Device)
for servo_sim's devices: each configured motor is a ``RotationalMotor``/``LinearMotor``
with a ``PositionSensor`` on its joint (unless ``position_sensor_name`` is ``""``) and
optionally a ``Brake``. Method and property
names are Webots'. ``servo-sim controller`` makes this module importable as
``controller`` for the script it runs, and only there.

Semantics kept from Webots:

* commands are recorded at once (the getters return them) and act from the next
  ``step``; bad values print a warning on stderr and change nothing (SPEC §4: the
  model's rules; clipping warns and clips);
* sensors (position, force/torque feedback, battery) start disabled, then refresh at
  their sampling period; a disabled one reads NaN, with Webots' error message;
* ``step(duration)`` runs ``duration`` ms (rounded up to whole basic time steps, with
  Webots' warning when it is not a multiple) and returns 0, or -1 once the run is over
  (``--duration`` reached, the battery empty, Ctrl-C); stepping again then ends the
  controller, as Webots ends its process.
"""
# ruff: noqa: N802, N815 - the method names are the Webots API's

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

from ..model.commands import MOTOR_COMMANDS, MotorCommand
from ..model.config import parse_field
from .session import BRAKE, MOTOR, POSITION_SENSOR, ControllerEnded, DeviceSpec, Session

_session: Session | None = None

#: Webots' node types (``WbNodeType`` of include/controller/c/webots/nodes.h in
#: cyberbotics/webots, the current header: POSE and VACUUM_GRIPPER included), in
#: enumeration order.
_NODE_TYPES = (
    "NO_NODE", "APPEARANCE", "BACKGROUND", "BILLBOARD", "BOX", "CAD_SHAPE", "CAPSULE",
    "COLOR", "CONE", "COORDINATE", "CYLINDER", "DIRECTIONAL_LIGHT", "ELEVATION_GRID", "FOG",
    "GROUP", "IMAGE_TEXTURE", "INDEXED_FACE_SET", "INDEXED_LINE_SET", "MATERIAL", "MESH",
    "MUSCLE", "NORMAL", "PBR_APPEARANCE", "PLANE", "POINT_LIGHT", "POINT_SET", "POSE",
    "SHAPE", "SPHERE", "SPOT_LIGHT", "TEXTURE_COORDINATE", "TEXTURE_TRANSFORM", "TRANSFORM",
    "VIEWPOINT",
    # robots, devices
    "ROBOT", "ACCELEROMETER", "ALTIMETER", "BRAKE", "CAMERA", "COMPASS", "CONNECTOR",
    "DISPLAY", "DISTANCE_SENSOR", "EMITTER", "GPS", "GYRO", "INERTIAL_UNIT", "LED", "LIDAR",
    "LIGHT_SENSOR", "LINEAR_MOTOR", "PEN", "POSITION_SENSOR", "PROPELLER", "RADAR",
    "RANGE_FINDER", "RECEIVER", "ROTATIONAL_MOTOR", "SKIN", "SPEAKER", "TOUCH_SENSOR",
    "VACUUM_GRIPPER",
    # misc, experimental
    "BALL_JOINT", "BALL_JOINT_PARAMETERS", "CHARGER", "CONTACT_PROPERTIES", "DAMPING",
    "FLUID", "FOCUS", "HINGE_JOINT", "HINGE_JOINT_PARAMETERS", "HINGE_2_JOINT",
    "IMMERSION_PROPERTIES", "JOINT_PARAMETERS", "LENS", "LENS_FLARE", "PHYSICS",
    "RECOGNITION", "SLIDER_JOINT", "SLOT", "SOLID", "SOLID_REFERENCE", "TRACK",
    "TRACK_WHEEL", "WORLD_INFO", "ZOOM", "MICROPHONE", "RADIO",
)


#: Webots' node-type constants (``Node.ROTATIONAL_MOTOR``...), for ``getNodeType``.
Node = type("Node", (), {"__doc__": "Webots' node-type constants.",
                         **{name: code for code, name in enumerate(_NODE_TYPES)}})


#: Webots' joint types (WbJointType).
ROTATIONAL, LINEAR = 0, 1


class AnsiCodes:
    """Webots' ANSI escape codes for coloured console output."""

    RESET = "\x1b[0m"
    BOLD = "\x1b[1m"
    UNDERLINE = "\x1b[4m"
    BLACK_BACKGROUND = "\x1b[40m"
    RED_BACKGROUND = "\x1b[41m"
    GREEN_BACKGROUND = "\x1b[42m"
    YELLOW_BACKGROUND = "\x1b[43m"
    BLUE_BACKGROUND = "\x1b[44m"
    MAGENTA_BACKGROUND = "\x1b[45m"
    CYAN_BACKGROUND = "\x1b[46m"
    WHITE_BACKGROUND = "\x1b[47m"
    BLACK_FOREGROUND = "\x1b[30m"
    RED_FOREGROUND = "\x1b[31m"
    GREEN_FOREGROUND = "\x1b[32m"
    YELLOW_FOREGROUND = "\x1b[33m"
    BLUE_FOREGROUND = "\x1b[34m"
    MAGENTA_FOREGROUND = "\x1b[35m"
    CYAN_FOREGROUND = "\x1b[36m"
    WHITE_FOREGROUND = "\x1b[37m"
    CLEAR_SCREEN = "\x1b[2J"


def _error(message: str) -> None:
    """A Webots-style message on stderr (the controller carries on)."""
    print(message, file=sys.stderr, flush=True)


def _active_session() -> Session:
    if _session is None:
        raise RuntimeError("servo_sim's controller module runs under 'servo-sim controller "
                           "SCRIPT.py [CONFIG]': no run is active")
    return _session


def _period(value: Any, function: str) -> int | None:
    """A sampling period in ms, or None after Webots' error message (the battery's: the
    motors' sensors are checked by the model's ``Motor.enable_*``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        _error(f"Error: {function}() called with an invalid sampling period {value!r}: "
               "must be an integer number of ms >= 0.")
        return None
    return int(value)


# --------------------------------------------------------------------------- devices


class Device:
    """A device of the robot, found by its Webots name (or tag, from 1)."""

    def __init__(self, name: str | int) -> None:
        session = _active_session()
        spec = _lookup(session, name)
        if spec is None:
            raise ValueError(f"no device {name!r} on robot {session.robot_name!r}"
                             + session.unread_hint())
        if type(self) not in (Device, _CLASSES[spec.kind]) \
                and type(self).__module__ == __name__:
            raise TypeError(f"device {spec.name!r} is a {spec.kind}, not a "
                            f"{type(self).__name__}")
        self._session = session
        self._spec = spec
        self._tag = session.devices.index(spec) + 1

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def getName(self) -> str:
        return self.name

    def getModel(self) -> str:
        return self.model

    def getNodeType(self) -> int:
        return self.node_type

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def model(self) -> str:
        """Webots' ``model`` field: only Solid-based devices have one; these do not."""
        return ""

    @property
    def node_type(self) -> int:
        """Webots' node type (``Node.ROTATIONAL_MOTOR``, ``Node.POSITION_SENSOR``...)."""
        if self._spec.kind == MOTOR:
            return Node.ROTATIONAL_MOTOR if self._rotational else Node.LINEAR_MOTOR
        return Node.POSITION_SENSOR if self._spec.kind == POSITION_SENSOR else Node.BRAKE

    # the devices of one joint, as Webots links them
    def _joint_device(self, kind: str) -> Device | None:
        for spec in self._session.devices:
            if spec.kind == kind and spec.motor is self._spec.motor:
                return _instance(spec)
        return None

    @property
    def _rotational(self) -> bool:
        return self._spec.motor.type == "rotational"


def _linked(kind: str) -> property:
    """The device of ``kind`` on the same joint (None if there is none), as a property."""
    return property(lambda self: self._joint_device(kind),
                    doc=f"The {kind} on the same joint, or None.")


def _getter(attribute: str, name: str) -> Any:
    """Webots' getX() method form of a property."""
    def get(self: Any) -> Any:
        return getattr(self, attribute)

    get.__name__ = get.__qualname__ = name
    return get


#: The command table's rows by Webots method.
WEBOTS_COMMANDS = {c.webots: c for c in MOTOR_COMMANDS if c.webots}


def _command_method(name: str) -> Any:
    """Webots' method ``name``: its row of the command table, through the session (the
    hardware system's one check)."""
    command = WEBOTS_COMMANDS[name]

    def call(self: Motor, *args: Any) -> None:
        self._command(command, *args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = (f"The model's ``Motor.{command.name}({', '.join(command.args)})``, "
                    "through the hardware system's check.")
    return call


def _model_getter(method: str, name: str) -> Any:
    """Webots' getter ``name``: the model Motor's ``method()``."""
    def get(self: Motor) -> Any:
        return getattr(self._motor, method)()

    get.__name__ = get.__qualname__ = name
    get.__doc__ = f"The model's ``Motor.{method}()``."
    return get


class _JointDevice(Device):
    """What the devices of a joint share: the joint's type."""

    ROTATIONAL = ROTATIONAL
    LINEAR = LINEAR

    @property
    def type(self) -> int:
        return ROTATIONAL if self._rotational else LINEAR

    getType = _getter("type", "getType")


class Motor(_JointDevice):
    """A ``RotationalMotor`` or ``LinearMotor`` (one motor of the config)."""

    def __init__(self, name: str | int) -> None:
        super().__init__(name)
        self._motor = self._session.motor(self._spec.motor.name)

    def _command(self, command: MotorCommand, *args: Any) -> None:
        self._session.command(self._spec.name, command, *args)

    # commands: rows of the command table (model/commands.py)
    setPosition = _command_method("setPosition")
    setVelocity = _command_method("setVelocity")
    setAcceleration = _command_method("setAcceleration")
    setAvailableForce = _command_method("setAvailableForce")
    setAvailableTorque = _command_method("setAvailableTorque")
    setControlPID = _command_method("setControlPID")
    setForce = _command_method("setForce")
    setTorque = _command_method("setTorque")

    # getters (what was set, before the multiplier; the config before any command)
    getTargetPosition = _model_getter("get_target_position", "getTargetPosition")
    getMinPosition = _model_getter("get_min_position", "getMinPosition")
    getMaxPosition = _model_getter("get_max_position", "getMaxPosition")
    getVelocity = _model_getter("get_velocity", "getVelocity")
    getMaxVelocity = _model_getter("get_max_velocity", "getMaxVelocity")
    getAcceleration = _model_getter("get_acceleration", "getAcceleration")
    getAvailableForce = _model_getter("get_available_force", "getAvailableForce")
    getAvailableTorque = _model_getter("get_available_torque", "getAvailableTorque")
    getMaxForce = _model_getter("get_max_force", "getMaxForce")
    getMaxTorque = _model_getter("get_max_torque", "getMaxTorque")
    getMultiplier = _model_getter("get_multiplier", "getMultiplier")

    # force / torque feedback
    enableForceFeedback = _command_method("enableForceFeedback")

    def disableForceFeedback(self) -> None:
        self.enableForceFeedback(0)

    def getForceFeedbackSamplingPeriod(self) -> int:
        return self._motor.get_force_feedback_sampling_period()

    def getForceFeedback(self) -> float:
        return self._feedback("force")

    enableTorqueFeedback = enableForceFeedback
    disableTorqueFeedback = disableForceFeedback
    getTorqueFeedbackSamplingPeriod = getForceFeedbackSamplingPeriod

    def getTorqueFeedback(self) -> float:
        return self._feedback("torque")

    def _feedback(self, what: str) -> float:
        if self._motor.get_force_feedback_sampling_period() <= 0:
            _error(f"Error: wb_motor_get_{what}_feedback() called for a disabled device! "
                   f"Please use: wb_motor_enable_{what}_feedback().")
        return self._motor.get_force_feedback()

    # the devices of the joint
    brake = _linked(BRAKE)
    position_sensor = _linked(POSITION_SENSOR)
    getBrake = _getter("brake", "getBrake")
    getPositionSensor = _getter("position_sensor", "getPositionSensor")

    # Webots' property forms
    target_position = property(getTargetPosition, setPosition)
    target_velocity = property(getVelocity, setVelocity)
    target_acceleration = property(getAcceleration, setAcceleration)
    available_force = property(getAvailableForce, setAvailableForce)
    available_torque = property(getAvailableTorque, setAvailableTorque)
    force_feedback_sampling_period = property(getForceFeedbackSamplingPeriod,
                                              enableForceFeedback)
    torque_feedback_sampling_period = property(getTorqueFeedbackSamplingPeriod,
                                               enableTorqueFeedback)
    min_position = property(getMinPosition)
    max_position = property(getMaxPosition)
    max_velocity = property(getMaxVelocity)
    max_force = property(getMaxForce)
    max_torque = property(getMaxTorque)
    multiplier = property(getMultiplier)
    force_feedback = property(getForceFeedback)
    torque_feedback = property(getTorqueFeedback)
    force = property(fset=setForce)
    torque = property(fset=setTorque)


class PositionSensor(_JointDevice):
    """The position sensor on a motor's joint (the model's sampled position)."""

    def __init__(self, name: str | int, sampling_period: int | None = None) -> None:
        super().__init__(name)
        self._motor = self._session.motor(self._spec.motor.name)
        if isinstance(name, str):  # Webots: built by name, it is enabled at once
            self.enable(int(self._session.step_ms) if sampling_period is None
                        else sampling_period)

    def enable(self, sampling_period: int) -> None:
        self._session.command(self._spec.motor.name, WEBOTS_COMMANDS["enable"],
                              sampling_period)

    def disable(self) -> None:
        self.enable(0)

    def getSamplingPeriod(self) -> int:
        return self._motor.get_position_sampling_period()

    def getValue(self) -> float:
        if self._motor.get_position_sampling_period() <= 0:
            _error("Error: wb_position_sensor_get_value() called for a disabled device! "
                   "Please use: wb_position_sensor_enable().")
        return self._motor.get_position()

    motor = _linked(MOTOR)
    brake = _linked(BRAKE)
    getMotor = _getter("motor", "getMotor")
    getBrake = _getter("brake", "getBrake")

    value = property(getValue)
    sampling_period = property(getSamplingPeriod,
                               lambda self, p: self.enable(0 if p is None else p))


class Brake(_JointDevice):
    """A brake on a motor's joint: its damping adds to the joint's ``damping_constant``."""

    def setDampingConstant(self, c: float) -> None:
        """The brake's damping, N*m*s/rad or N*s/m (>= 0), added to the joint's own."""
        motor = self._spec.motor.name
        try:  # the rule of the config's damping_constant
            damping = parse_field("damping_constant", c)
        except ValueError as exc:
            _error(f"Warning: brake {self.name!r} (motor {motor!r}): damping constant "
                   f"{c!r} rejected: {exc}.")
            return
        runtime = self._session.runtime
        if not runtime.simulated and not self._session.warned_brake:
            self._session.warned_brake = True
            _error(f"Warning: brake {self.name!r}: hardware {runtime.plugin_name!r} has no "
                   "brake; the damping changes the model's joint only.")
        try:  # through the runtime's check, as every parameter change
            runtime.set_parameter(motor, "damping_constant",
                                  self._spec.motor.damping_constant + damping)
        except ValueError as exc:
            _error(f"Warning: brake {self.name!r}: {exc}")

    dampingConstant = property(fset=setDampingConstant)
    motor = _linked(MOTOR)
    position_sensor = _linked(POSITION_SENSOR)
    getMotor = _getter("motor", "getMotor")
    getPositionSensor = _getter("position_sensor", "getPositionSensor")


class NotSimulatedDevice(Device):
    """A device the world has and servo_sim does not simulate (a ``Display``, a
    ``Camera``, a motor outside a joint...): what ``getDevice`` returns for it, as Webots
    returns the device. Its name answers; any other use raises :class:`NotSimulatedError`
    naming the device, its Webots type and line, and the use."""

    def __init__(self, name: str, what: str) -> None:  # not Device's: no DeviceSpec
        self._name = name
        self._what = what  #: its Webots type and where, e.g. "Display, line 221"

    def __getattribute__(self, attribute: str) -> Any:
        if attribute.startswith("_") or attribute in ("name", "getName"):
            return object.__getattribute__(self, attribute)
        raise NotSimulatedError(
            f'servo-sim controller: device "{self._name}" ({self._what}) is in the world '
            f"but not simulated, so its {attribute} cannot run: servo_sim simulates the "
            "motors of joints, their position sensors and brakes, and passive joints' "
            "sensors and brakes")

    @property
    def name(self) -> str:
        return self._name


_CLASSES: dict[str, type[Device]] = {MOTOR: Motor, POSITION_SENSOR: PositionSensor,
                                     BRAKE: Brake}
_instances: dict[str, Device] = {}


def _lookup(session: Session, name: str | int) -> DeviceSpec | None:
    if isinstance(name, numbers.Integral) and not isinstance(name, bool):
        return session.devices[name - 1] if 1 <= name <= len(session.devices) else None
    return next((s for s in session.devices if s.name == name), None)


def _instance(spec: DeviceSpec) -> Device:
    """The one object of each device (what getDevice and the joint links return)."""
    if spec.name not in _instances:
        _instances[spec.name] = _CLASSES[spec.kind](_active_session().devices.index(spec) + 1)
    return _instances[spec.name]


# --------------------------------------------------------------------------- robot


class Robot:
    """The robot the controller runs: its devices, the clock and the battery."""

    EVENT_QUIT = -1
    EVENT_NO_EVENT = 0
    EVENT_MOUSE_CLICK = 1
    EVENT_MOUSE_MOVE = 2
    EVENT_KEYBOARD = 4
    EVENT_JOYSTICK_BUTTON = 8
    EVENT_JOYSTICK_AXIS = 16
    EVENT_JOYSTICK_POV = 32
    MODE_SIMULATION = 0
    MODE_CROSS_COMPILATION = 1
    MODE_REMOTE_CONTROL = 2
    created: Robot | None = None

    def __init__(self) -> None:
        session = _active_session()
        if Robot.created is not None:
            _error("Error: only one Robot instance can be created per controller process.")
        Robot.created = Robot.created or self
        self._session = session
        self.devices: dict[str, Device] = {s.name: _instance(s) for s in session.devices}
        self._custom_data = ""
        self._warned_step = False
        self._pending: int | None = None

    # ------------------------------------------------------------------ stepping

    def step(self, duration: int | None = None) -> int:
        """Run ``duration`` ms (the basic time step by default); 0, or -1 when the run
        is over. Stepping after -1 ends the controller."""
        s = self._session
        if s.told:
            raise ControllerEnded(s.end_reason or "")
        if duration is None:
            duration = s.step_ms
        if isinstance(duration, bool) or not isinstance(duration, numbers.Real) \
                or not math.isfinite(duration) or duration < 0:
            _error(f"Error: wb_robot_step() called with an invalid duration {duration!r}: "
                   "must be >= 0 ms.")
            duration = 0
        steps = math.ceil(duration / s.step_ms)
        if steps * s.step_ms != duration and not self._warned_step:
            self._warned_step = True
            _error(f"Warning: the time step used by the controller ({duration:g} ms) is not "
                   f"a multiple of WorldInfo.basicTimeStep ({s.step_ms} ms): each step "
                   f"runs {steps * s.step_ms} ms.")
        for _ in range(steps):
            if s.end_reason is not None:
                break
            s.cycle()
        if s.end_reason is not None:
            s.told = True
            return -1
        return 0

    def stepBegin(self, duration: int | None = None) -> int:
        self._pending = self.step(duration)
        return 0

    def stepEnd(self) -> int:
        result, self._pending = self._pending, None
        return 0 if result is None else result

    # ------------------------------------------------------------------ devices

    def getDevice(self, name: str) -> Device | None:
        """The device called ``name`` (Webots' name, spaces and ``::`` included)."""
        device = self.devices.get(name)
        if device is None and name in self._session.unsimulated:
            # in the world, not simulated: a handle, as Webots gives; its use raises
            if name not in _instances:
                _instances[name] = NotSimulatedDevice(name, self._session.unsimulated[name])
            return _instances[name]
        if device is None:
            _error(f'Device "{name}" was not found on robot "{self.name}"'
                   + self._session.unread_hint())
        return device

    def getDeviceByIndex(self, index: int) -> Device | None:
        if isinstance(index, numbers.Integral) and 0 <= index < len(self._session.devices):
            return self.devices[self._session.devices[index].name]
        _error("Error: The index of wb_robot_get_device_by_index() is out of the bounds.")
        return None

    def getNumberOfDevices(self) -> int:
        return len(self._session.devices)

    def _deprecated(self, what: str, name: str) -> Device | None:
        _error(f"DEPRECATION: Robot.{what} is deprecated, please use Robot.getDevice "
               "instead.")
        return self.getDevice(name)

    def getMotor(self, name: str) -> Device | None:
        return self._deprecated("getMotor", name)

    def getPositionSensor(self, name: str) -> Device | None:
        return self._deprecated("getPositionSensor", name)

    def getBrake(self, name: str) -> Device | None:
        return self._deprecated("getBrake", name)

    # ------------------------------------------------------------------ battery

    def batterySensorEnable(self, sampling_period: int) -> None:
        period = _period(sampling_period, "wb_robot_battery_sensor_enable")
        if period is not None:
            self._session.enable_battery(period)

    def batterySensorDisable(self) -> None:
        self.batterySensorEnable(0)

    def batterySensorGetSamplingPeriod(self) -> int:
        return int(self._session.battery_sensor.period_ms[0])

    def batterySensorGetValue(self) -> float:
        """Energy left in the battery, J (the config's ``battery`` less what the motors
        consumed), at the sensor's last refresh; NaN while disabled or without one."""
        if self.batterySensorGetSamplingPeriod() <= 0:
            _error("Error: wb_robot_battery_sensor_get_value() called for a disabled "
                   "device! Please use: wb_robot_battery_sensor_enable().")
        return float(self._session.battery_sensor.value[0])

    # ------------------------------------------------------------------ the robot

    @property
    def basic_time_step(self) -> float:
        return float(self._session.step_ms)

    @property
    def time(self) -> float:
        return self._session.time_ms / 1000.0

    @property
    def name(self) -> str:
        return self._session.robot_name

    @property
    def world_path(self) -> str:
        """The Webots file the motors came from ("" for a servo_sim config)."""
        return self._session.world_path

    # what a robot run by servo_sim always is
    model = property(lambda self: "", doc="Robot.model: none.")
    mode = property(lambda self: Robot.MODE_SIMULATION, doc="Always a simulation.")
    project_path = property(lambda self: "", doc="No Webots project.")
    supervisor = property(lambda self: False, doc="Never a Supervisor.")
    synchronization = property(lambda self: True, doc="Always synchronous.")

    getBasicTimeStep = _getter("basic_time_step", "getBasicTimeStep")
    getTime = _getter("time", "getTime")
    getName = _getter("name", "getName")
    getModel = _getter("model", "getModel")
    getWorldPath = _getter("world_path", "getWorldPath")
    getMode = _getter("mode", "getMode")
    getProjectPath = _getter("project_path", "getProjectPath")
    getSupervisor = _getter("supervisor", "getSupervisor")
    getSynchronization = _getter("synchronization", "getSynchronization")

    def getCustomData(self) -> str:
        return self._custom_data

    def setCustomData(self, data: str) -> None:
        self._custom_data = str(data)

    # The robot window: as Webots with no robot window open (its robot.py over
    # wb_robot_wwi_send / wb_robot_wwi_receive_text): a text sent goes nowhere, and
    # there is never a text to receive.
    def wwiSendText(self, text: str) -> None:
        """Send ``text`` to the robot window: there is none, so it is dropped."""
        str.encode(text)  # Webots' robot.py encodes it: a non-str is the same TypeError

    def wwiReceiveText(self) -> str | None:
        """The robot window's next text: None, as Webots with no robot window."""
        return None

    # Webots' user input: not simulated (a clear error, not an AttributeError)
    def getKeyboard(self) -> Any:
        raise NotImplementedError(not_provided("Keyboard"))

    def getMouse(self) -> Any:
        raise NotImplementedError(not_provided("Mouse"))

    def getJoystick(self) -> Any:
        raise NotImplementedError(not_provided("Joystick"))

    keyboard = property(getKeyboard)
    mouse = property(getMouse)
    joystick = property(getJoystick)

    @property
    def number_of_devices(self) -> int:
        return self.getNumberOfDevices()

    @property
    def battery_sensor_sampling_period(self) -> int:
        return self.batterySensorGetSamplingPeriod()

    @battery_sensor_sampling_period.setter
    def battery_sensor_sampling_period(self, period: int | None) -> None:
        """None: the basic time step (as Webots' robot.py)."""
        self.batterySensorEnable(int(self._session.step_ms) if period is None else period)

    custom_data = property(getCustomData, setCustomData)


def activate(session: Session | None) -> None:
    """Make ``session`` the run the API serves (None: none; forgets the Robot)."""
    global _session
    _session = session
    Robot.created = None
    _instances.clear()


class NotSimulatedError(NotImplementedError):
    """The use of a device the world has and servo_sim does not simulate (its
    :class:`NotSimulatedDevice`)."""


def not_provided(name: str) -> str:
    """Why Webots' ``name`` (Camera, Keyboard...) fails here."""
    return (f"servo-sim controller: {name} is not available: servo_sim provides the "
            "motors, their position sensors and brakes (" + ", ".join(__all__) + ")")


__all__ = ["AnsiCodes", "Brake", "Device", "Motor", "Node", "PositionSensor", "Robot"]

#: The rest of Webots' controller module: not simulated here.
NOT_PROVIDED = frozenset({
    "Accelerometer", "Altimeter", "Camera", "CameraRecognitionObject", "Compass",
    "Connector", "ContactPoint", "Display", "DistanceSensor", "Emitter", "Field", "GPS",
    "Gyro", "InertialUnit", "Joystick", "Keyboard", "LED", "Lidar", "LidarPoint",
    "LightSensor", "Motion", "Mouse", "MouseState", "Pen", "Radar", "RadarTarget",
    "RangeFinder", "Receiver", "Skin", "Speaker", "Supervisor", "TouchSensor",
    "VacuumGripper",
})
