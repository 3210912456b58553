"""The schema of a config (SPEC §5): its dataclasses, defaults and names, the error a
config that cannot be used raises, and how that error names source, motor, field and
value (``parse.py`` reads a mapping into these; ``ros_form.py`` turns a ROS 2 parameters
file into the model form first)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Separator of coupled motor names, "base::specifier" (Webots convention).
COUPLING_SEPARATOR = "::"
#: The hardware plugin of a config without a ``hardware`` group: the model itself.
DEFAULT_PLUGIN = "sim"
#: A motor's position sensor is called "<motor name> sensor" unless the config names it
#: (Webots has no default; its samples name them so, e.g. "left wheel sensor").
DEFAULT_SENSOR_SUFFIX = " sensor"
#: m/s^2, the load's default gravity (Webots' WorldInfo default)
STANDARD_GRAVITY = 9.81
#: ``physics`` values whose joints a multibody engine integrates (``model/body.py``):
#: the engine's name -> its body class (``package.module:Class``, imported only when a
#: config asks for it); its settings are the ``multibody`` group, which it checks.
BODY_ENGINES: dict[str, str] = {"mujoco": "servo_sim.multibody.body:MujocoBody"}
#: The top-level scalar fields of the model form, and its groups beside them.
TOP_FIELDS = ("basic_time_step_ms", "physics", "seed", "battery")
GROUPS = ("motors", "hardware", "multibody")


class ConfigError(ValueError):
    """A config that cannot be used; the message names source, motor, field and value.

    What it is about, for importers that say it in their own terms (the Webots world
    reader): ``motor`` (None: not one motor's), ``field`` (a config field name; None: the
    motor as a whole or nothing in particular), ``value`` and ``reason`` (the message's
    last part; None when the error was not raised by the config checks). A host that
    knows whose config it was sets ``logger_name`` (the ROS node: its own logger's name).
    """

    logger_name: str | None = None

    def __init__(self, message: str, *, motor: str | None = None, field: str | None = None,
                 value: Any = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.motor, self.field, self.value, self.reason = motor, field, value, reason


class _FieldError(ValueError):
    """Raised by a field parser; turned into a ConfigError with full context."""


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class LoadConfig:
    """Passive load on the joint: gravity on a mass and a constant external force/torque.

    Rotational: ``-gravity_mass * gravity * gravity_distance * cos(x - gravity_angle)``
    (the lever is horizontal at ``x = gravity_angle``, the mass hangs at
    ``gravity_angle - pi/2``); linear: ``-gravity_mass * gravity * cos(gravity_angle)``
    (``gravity_angle``: the axis from straight up). The defaults are SPEC §2.2's.
    """

    gravity_mass: float = 0.0
    gravity_distance: float = 0.0
    external: float = 0.0
    gravity: float = STANDARD_GRAVITY
    gravity_angle: float = 0.0


#: The position control laws: Webots' (P/I/D -> velocity), or a servo firmware's
#: (P/I/D in device units on the encoder's ticks -> PWM duty; ``actuator.py``).
CONTROL_LAWS = ("webots", "dynamixel", "feetech")


@dataclass(frozen=True)
class ActuatorConfig:
    """A real servo's actuator (``actuator.py``): beyond Webots' ideal motor, each part
    opt-in (its default leaves the motor as Webots has it).

    * torque-speed envelope: a DC motor, ``stall_torque`` at rest and none at
      ``no_load_speed``, both at ``rated_voltage``, scaled by ``supply_voltage``;
    * ``resolution``: encoder ticks per turn, what the controller and sensors see;
    * ``backlash``: the gear's dead zone, rad (full width);
    * ``deadband``: position errors smaller than this drive nothing, rad;
    * ``friction``: Coulomb friction of the gear, N*m;
    * load-dependent friction (Rhoban/bam's directional Stribeck model, M5): the friction
      grows with the torques the gear carries, ``load_friction_external`` times the
      external load's, ``load_friction_motor`` times the motor's (both dimensionless),
      and near rest by ``friction_stribeck`` (N*m) and the two ``*_stribeck`` factors,
      fading with the speed as ``exp(-(|w| / stribeck_velocity) ** stribeck_alpha)``;
    * ``viscous_friction``: the gear's viscous friction, N*m*s/rad (adds to the joint's
      ``damping_constant``);
    * ``armature``: the rotor's inertia as the output sees it (through the gear ratio),
      kg*m^2 (adds to the joint's ``inertia``);
    * ``control``: the position control law, with the firmware's ``gains`` (times
      ``gain_scale``);
    * ``min_supply_voltage``, ``max_supply_voltage``: the supply's rated range.
    """

    stall_torque: float = 0.0
    no_load_speed: float = 0.0
    rated_voltage: float = 0.0
    supply_voltage: float = 0.0  # 0: the rated voltage
    #: the supply's rated range, V (0: not given); outside it the config check warns
    min_supply_voltage: float = 0.0
    max_supply_voltage: float = 0.0
    resolution: int = 0  # 0: exact
    backlash: float = 0.0
    deadband: float = 0.0
    friction: float = 0.0
    friction_stribeck: float = 0.0
    load_friction_external: float = 0.0
    load_friction_motor: float = 0.0
    load_friction_external_stribeck: float = 0.0
    load_friction_motor_stribeck: float = 0.0
    stribeck_velocity: float = 0.0  # rad/s
    stribeck_alpha: float = 0.0
    viscous_friction: float = 0.0
    armature: float = 0.0
    control: str = "webots"
    gains: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: the firmware's gains in the control law's documented units times this (the
    #: XL330 as measured: 0.5, its P acting as P/256 where the e-Manual says P/128)
    gain_scale: float = 1.0

    @property
    def envelope(self) -> bool:
        """Whether the torque-speed envelope is on (the three figures are given)."""
        return self.stall_torque > 0.0

    @property
    def stribeck(self) -> bool:
        """Whether any friction grows near rest (the Stribeck terms)."""
        return (self.friction_stribeck + self.load_friction_external_stribeck
                + self.load_friction_motor_stribeck) > 0.0

    @property
    def load_dependent(self) -> bool:
        """Whether the friction depends on the torques the gear carries (or the speed)."""
        return self.stribeck or (self.load_friction_external + self.load_friction_motor) > 0.0

    @property
    def voltage(self) -> float:
        """The supply voltage, V (the rated one unless set)."""
        return self.supply_voltage or self.rated_voltage

    def motor_inside(self) -> tuple[float, float]:
        """The stall torque and no-load speed (at the rated voltage) of the motor inside
        the gear: the datasheet's stall torque, and a no-load speed at which the output,
        against the gear's Coulomb and viscous friction, runs free at the datasheet's
        speed ``w`` (the motor's torque ``T`` at ``w`` equals ``friction +
        viscous_friction * w + load_friction_motor * T``: the Stribeck terms are gone at
        speed). ValueError where the friction at ``w`` reaches the stall torque."""
        stall = self.stall_torque
        if self.load_friction_motor >= 1.0:
            raise ValueError(f"the gear's friction grows by {self.load_friction_motor:g} of "
                             "the motor's torque (load_friction_motor), at least all of it")
        # running free, the motor's torque T carries the friction, k_motor T of it too
        lost = ((self.friction + self.viscous_friction * self.no_load_speed)
                / (1.0 - self.load_friction_motor))
        if lost >= stall:
            raise ValueError(f"the gear's friction at the no-load speed ({lost:g} N*m) is "
                             f"not below the stall torque ({stall:g} N*m)")
        return stall, self.no_load_speed / (1.0 - lost / stall)


@dataclass(frozen=True)
class PositionSensorConfig:
    """The motor's position sensor: sampling period (0 = off), quantisation and noise."""

    sampling_period_ms: int = 0
    resolution: float = -1.0
    noise: float = 0.0


@dataclass(frozen=True)
class MotorConfig:
    """One motor, with the Webots fields in snake_case (SPEC §5)."""

    name: str
    type: str = "rotational"
    max_velocity: float = 10.0
    max_force: float = 10.0  # max_torque for rotational motors
    control_pid: tuple[float, float, float] = (10.0, 0.0, 0.0)
    acceleration: float = -1.0
    min_position: float = 0.0
    max_position: float = 0.0
    min_stop: float = 0.0
    max_stop: float = 0.0
    spring_constant: float = 0.0
    damping_constant: float = 0.0
    static_friction: float = 0.0
    multiplier: float = 1.0
    consumption_factor: float = 10.0
    position: float = 0.0
    inertia: float = 0.01
    load: LoadConfig = field(default_factory=LoadConfig)
    position_sensor: PositionSensorConfig = field(default_factory=PositionSensorConfig)
    force_feedback_sampling_period_ms: int = 0
    #: the command watchdog: seconds without a command before a commanded motor halts
    #: (0 = off); beyond Webots (SPEC §3)
    command_timeout: float = 0.0
    #: device name of the motor's PositionSensor (Webots controllers, ``getDevice``);
    #: None: ``"<name> sensor"``; "": the joint has no PositionSensor (see
    #: :attr:`position_sensor_device`)
    position_sensor_name: str | None = None
    #: device name of a Brake on the motor's joint; None: the joint has no brake
    brake_name: str | None = None
    #: a joint without a motor (a Webots joint whose device list has a PositionSensor or
    #: Brake and no motor): moved only by its load, spring, damping and stops; every
    #: command is refused; Webots controllers see its sensor and brake, not a motor
    passive: bool = False
    #: the servo profile the motor's fields came from (``profiles.yaml``), or None
    servo: str | None = None
    #: a real servo's actuator (envelope, encoder, backlash, firmware control); None:
    #: Webots' ideal motor
    actuator: ActuatorConfig | None = None

    @property
    def position_sensor_device(self) -> str | None:
        """The device name of the motor's PositionSensor (configured or the default), or
        None when the config says it has none (``position_sensor_name: ""``)."""
        if self.position_sensor_name is not None:
            return self.position_sensor_name or None
        return f"{self.name}{DEFAULT_SENSOR_SUFFIX}"

    @property
    def coupling_base(self) -> str | None:
        """The base name shared by coupled motors, or None for a motor on its own (or a
        passive joint: it has no motor to couple)."""
        base, sep, _ = self.name.partition(COUPLING_SEPARATOR)
        return base if sep and not self.passive else None

    @property
    def force_field(self) -> str:
        """The config name of the force limit: max_torque (rotational) or max_force."""
        return "max_torque" if self.type == "rotational" else "max_force"


@dataclass(frozen=True)
class BatteryConfig:
    """The robot's battery (Webots ``Robot.battery``): energy now and capacity, J."""

    energy: float
    capacity: float


@dataclass(frozen=True)
class SimulationConfig:
    """A whole simulation: time step, physics mode, noise seed and motors."""

    motors: tuple[MotorConfig, ...]
    basic_time_step_ms: int = 8
    physics: str = "dynamic"
    seed: int = 0
    source: str = "<dict>"
    #: the hardware plugin and its settings: ``{"plugin": "sim"}`` unless the config says
    #: otherwise; the plugin validates the rest (``servo_sim.hardware``)
    hardware: Mapping[str, Any] = field(default_factory=lambda: {"plugin": DEFAULT_PLUGIN})
    #: the battery the motors' energy drains (Webots controllers); None: no battery
    battery: BatteryConfig | None = None
    #: the multibody model of a ``physics`` engine (BODY_ENGINES) and its settings
    #: (``model``, ``joints``...), which the engine checks; None: each joint on its own
    multibody: Mapping[str, Any] | None = None


# --------------------------------------------------------------------------- helpers


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested groups as dotted names: ``{"load": {"external": 1}}`` -> ``{"load.external":
    1}`` (each name after ``prefix``)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


def ros_name(device_name: str) -> str:
    """The ROS name of a motor: every character outside [A-Za-z0-9_] becomes '_'."""
    return re.sub(r"[^A-Za-z0-9_]", "_", device_name)


def _unknown(kind: str, key: Any, known: list[str]) -> str:
    hint = difflib.get_close_matches(str(key), known, n=1)
    tail = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(sorted(known))})"
    return f"unknown {kind} {key!r}{tail}"


class _Context:
    """Formats errors as 'source: motor 'm': field 'f' = v: reason'."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, reason: str, motor: str | None = None, name: str | None = None,
              value: Any = None) -> ConfigError:
        parts = [self.source]
        if motor is not None:
            parts.append(f"motor {motor!r}")
        if name is not None:
            parts.append(f"field {name!r} = {value!r}")
        return ConfigError(": ".join([*parts, reason]), motor=motor, field=name, value=value,
                           reason=reason)

    def parse(self, parser: Callable[[Any], Any], value: Any, motor: str | None,
              name: str) -> Any:
        try:
            return parser(value)
        except _FieldError as exc:
            raise self.error(str(exc), motor, name, value) from None

