"""The hardware plugin API: ros2_control's hardware component lifecycle, in Python.

A plugin subclasses :class:`HardwareComponent`. The :class:`~servo_sim.hardware.system.
HardwareSystem` drives it through the lifecycle of ros2_control's
``hardware_interface::SystemInterface``::

    on_init(info)      parse and validate the settings, no I/O      -> unconfigured
    on_configure()     open the bus, read the states                -> inactive
    on_activate()      power/torque on, accept commands             -> active
    read(time, period) / write(time, period)   every cycle while active
    on_deactivate()    torque off                                   -> inactive
    on_cleanup()       close the bus                                -> unconfigured
    on_shutdown()      from any state                               -> finalized
    on_error()         after an ERROR, to recover                   -> unconfigured

Each returns a :class:`CallbackReturn`. A plugin that fails says why in ``self.reason``
(:meth:`HardwareComponent.fail` sets it and returns the code).

Interfaces (API 2). As a ros2_control component exports the state and command
interfaces it has, a plugin declares the ones it uses, by name, in the class
attributes ``STATE_INTERFACES`` and ``COMMAND_INTERFACES``; it is given those and
nothing else of the model, as two :class:`Interfaces` objects, ``self.state`` and
``self.commands``: one numpy array per interface, one entry per motor, SI units (after
the multiplier). They are the model's own arrays, made once (no copy per cycle): what
``read()`` writes into ``self.state`` is what the node publishes; ``self.commands``
are read-only views. An interface that was not declared raises an AttributeError
saying where to declare it; a declared name that is not below makes ``on_init`` fail.

State (``read()`` fills them, ros2_control's names)::

    position, velocity, effort (force or torque)

Commands (``write()`` sends them; the Webots semantics (validation, clipping,
multiplier, coupled motors) are applied by the model's ``Motor`` handles before)::

    mode               the :class:`Mode` each motor follows (derived from the ones
                       below; refreshed before on_activate() and every write())
    target_position    finite: position control; +-inf: velocity control
    target_velocity    velocity control: the signed target;
                       position control: its magnitude is the speed limit
    velocity_setpoint  velocity control: the velocity to follow now (the target, or
                       the ramp of a halt)
    speed_limit        position control: the speed limit now
    force_control, applied_force    effort control and its effort
    available_force    force/torque limit; 0 = motor off (passive joint)
    control_p, control_i, control_d position PID gains
    acceleration       acceleration limit; -1 = unlimited
    enabled            False: torque off (disabled or e-stopped)

The model computes trapezoidal moves, halts and the watchdog before each cycle
(``servo_sim.model.safety``): a plugin only ever sees position, velocity and effort
commands. Before a real device's ``on_activate()`` (``SIMULATED`` false) the system
holds every position-controlled motor where ``on_configure()`` read it, so that the
first goals sent are where the device stands.

Per motor, ``self.flags`` (:class:`StateFlags`) and ``self.faults`` (text) say what
the device reported.

The ``sim`` plugin (:mod:`.sim`) is the one exception: it is the model, steps the
motor bank's physics and is given the bank itself; no other plugin is.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..model.config import MotorConfig, SimulationConfig, ros_name
from ..model.safety import StateFlags as StateFlags  # re-exported: the plugins' flags

#: Version of this base class. A plugin states the version it was written for in
#: ``API_VERSION``; the registry refuses a plugin whose major version differs.
#: 2: a plugin declares its interfaces and gets them, not the MotorBank (API_1_TO_2).
API_VERSION = 2
#: What changed from API 1, for the registry's refusal of an API 1 plugin.
API_1_TO_2 = ("API 2 gives a plugin the state and command interfaces it declares in "
              "STATE_INTERFACES and COMMAND_INTERFACES (self.state, self.commands) instead "
              "of the MotorBank (self.bank, info.bank; motor_force is now 'effort', "
              "command_modes(bank) the 'mode' command interface), and the system holds the "
              "position-controlled motors at activation (no bank.supervisor.hold); see "
              "docs/hardware.md, 'From API 1 to API 2'")

#: The state interfaces a plugin may declare (ros2_control's names) -> the model's array.
KNOWN_STATE_INTERFACES: Mapping[str, str] = {
    "position": "position", "velocity": "velocity", "effort": "motor_force"}
#: The command interfaces a plugin may declare: the model's command arrays of those
#: names, and ``mode`` (:func:`command_modes`, kept by the system).
KNOWN_COMMAND_INTERFACES: tuple[str, ...] = (
    "mode", "target_position", "target_velocity", "velocity_setpoint", "speed_limit",
    "force_control", "applied_force", "available_force", "control_p", "control_i",
    "control_d", "acceleration", "enabled")


class CallbackReturn(enum.Enum):
    """What a lifecycle callback, ``read`` or ``write`` returns (ros2_control's)."""

    SUCCESS = "success"
    FAILURE = "failure"  # the transition did not happen; the state is unchanged
    ERROR = "error"  # something broke: the system calls on_error()


class LifecycleState(enum.Enum):
    """The primary states of a ros2_control hardware component."""

    UNCONFIGURED = "unconfigured"
    INACTIVE = "inactive"
    ACTIVE = "active"
    FINALIZED = "finalized"


class Capabilities(enum.IntFlag):
    """What a device can be commanded to do (seed 004 ``ServoCapabilities``, plus settings).

    The low bits are seed 004's; the settings a Webots motor also has (its gains,
    available force, velocity and acceleration limits) use bits that seed 004 leaves free.
    """

    UNKNOWN = 0
    POSITION_COMMAND = 0x1
    VELOCITY_COMMAND = 0x2
    EFFORT_COMMAND = 0x4
    TRAPEZOIDAL_COMMAND = 0x8
    SIGNALS = 0x1000
    PID_GAINS = 0x10000
    AVAILABLE_FORCE = 0x20000
    VELOCITY_LIMIT = 0x40000
    ACCELERATION_LIMIT = 0x80000

    @classmethod
    def all_webots(cls) -> Capabilities:
        """Everything a Webots motor supports."""
        return (cls.POSITION_COMMAND | cls.VELOCITY_COMMAND | cls.EFFORT_COMMAND
                | cls.PID_GAINS | cls.AVAILABLE_FORCE | cls.VELOCITY_LIMIT
                | cls.ACCELERATION_LIMIT)


def capability_names(caps: Capabilities) -> str:
    """'position_command or velocity_command': the single flags set in ``caps``."""
    names = [c.name.lower() for c in Capabilities
             if c.value and c.value & (c.value - 1) == 0 and c & caps]
    return " or ".join(names) or "unknown"


class Mode(enum.IntEnum):
    """The command a motor is following, as the bank's command arrays say."""

    OFF = -1  # available force 0, disabled or e-stopped: the passive joint of SPEC §2.2
    POSITION = 1
    VELOCITY = 2
    EFFORT = 3


def command_modes(commands: Any, out: np.ndarray | None = None) -> np.ndarray:
    """The :class:`Mode` of every motor (an int array, into ``out`` if given) from the
    command arrays of ``commands`` (the motor bank, or a plugin's ``self.commands`` with
    target_position, force_control, available_force and enabled declared)."""
    force = commands.force_control
    modes = np.where(np.isfinite(commands.target_position), int(Mode.POSITION),
                     int(Mode.VELOCITY))
    modes[force] = int(Mode.EFFORT)
    modes[((commands.available_force <= 0.0) | ~commands.enabled) & ~force] = int(Mode.OFF)
    if out is None:
        return modes
    out[:] = modes
    return out


class _Undeclared:
    """A known interface a plugin did not declare: using it says where to declare it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, interfaces: Interfaces | None, owner: type | None = None) -> Any:
        if interfaces is None:
            return self
        kind, plugin, component = interfaces._where
        raise AttributeError(
            f"hardware plugin {plugin!r}: {kind} interface {self.name!r} is not declared: "
            f"add it to {component}.{kind.upper()}_INTERFACES")


class Interfaces:
    """The state or the command interfaces a plugin declared: one array per name.

    ``self.state.position`` is the model's array (write into it, do not rebind it);
    ``self.commands.target_position`` a read-only view of one. A known name that was
    not declared raises an AttributeError naming the plugin, the interface and the class
    attribute to declare it in. The system makes them once, before ``on_init``.
    """

    def __new__(cls, kind: str, plugin: str, component: str,
                arrays: Mapping[str, np.ndarray]) -> Interfaces:
        # the undeclared names are descriptors of a class of its own: a declared one is a
        # plain instance attribute, as fast to look up as the bank's (no __getattr__)
        known = KNOWN_STATE_INTERFACES if kind == "state" else KNOWN_COMMAND_INTERFACES
        undeclared = {name: _Undeclared(name) for name in known if name not in arrays}
        return object.__new__(type(cls.__name__, (cls,), undeclared))

    def __init__(self, kind: str, plugin: str, component: str,
                 arrays: Mapping[str, np.ndarray]) -> None:
        object.__setattr__(self, "_where", (kind, plugin, component))
        for name, array in arrays.items():  # the bank's rows, valid for its whole life
            object.__setattr__(self, name, array)

    @property
    def names(self) -> tuple[str, ...]:
        """The declared names."""
        return tuple(k for k in vars(self) if not k.startswith("_"))

    def __setattr__(self, name: str, value: Any) -> None:
        kind, plugin, _ = self._where
        raise AttributeError(f"hardware plugin {plugin!r}: {kind} interface {name!r} cannot "
                             f"be replaced" + (f": write into it (self.state.{name}[i] = ...)"
                                               if kind == "state" else " (read-only)"))

    def __repr__(self) -> str:
        return f"<{self._where[0]} interfaces: {', '.join(self.names)}>"


def declaration_error(cls: type[HardwareComponent]) -> str:
    """Why the interfaces ``cls`` declares are not usable ('' if they are)."""
    for attr, known in (("STATE_INTERFACES", KNOWN_STATE_INTERFACES),
                        ("COMMAND_INTERFACES", KNOWN_COMMAND_INTERFACES)):
        names = getattr(cls, attr, ())
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            return f"{cls.__name__}.{attr} = {names!r}: must be a tuple of interface names"
        unknown = [n for n in names if n not in known]
        if unknown:
            return (f"{cls.__name__}.{attr}: unknown interface {unknown[0]!r} (known: "
                    f"{', '.join(known)})")
    return ""


@dataclass
class HardwareInfo:
    """What a plugin is given at ``on_init`` (ros2_control's ``HardwareInfo``).

    ``settings`` is the config's ``hardware`` group without ``plugin``; per-motor
    settings sit in a sub-group named by the motor's ROS name (or device name), which
    :meth:`motor_settings` finds. ``state`` and ``commands`` are the interfaces the
    plugin declared (the base's ``on_init`` keeps them as ``self.state`` and
    ``self.commands``).
    """

    plugin: str
    config: SimulationConfig
    settings: Mapping[str, Any] = field(default_factory=dict)
    state: Interfaces | None = None
    commands: Interfaces | None = None

    @property
    def motors(self) -> tuple[MotorConfig, ...]:
        return self.config.motors

    @property
    def motor_names(self) -> tuple[str, ...]:
        """The motors' names, in interface order (what messages name a motor by)."""
        return tuple(m.name for m in self.config.motors)

    def motor_settings(self, motor: MotorConfig) -> Mapping[str, Any]:
        """The settings group of ``motor`` ({} if it has none)."""
        for key in (ros_name(motor.name), motor.name):
            group = self.settings.get(key)
            if isinstance(group, Mapping):
                return group
        return {}


class HardwareComponent(ABC):
    """Base class of every hardware plugin (see the module docstring)."""

    #: the version of this base the plugin was written for (see :data:`API_VERSION`)
    API_VERSION: ClassVar[int] = API_VERSION
    #: True for a simulation: the node may then pause, step and reset it, and its
    #: clock is simulated time. A real device runs in wall-clock time.
    SIMULATED: ClassVar[bool] = False
    #: the settings the plugin reads from the ``hardware`` group, with a description
    #: (the node declares them as read-only parameters)
    SETTINGS: ClassVar[Mapping[str, str]] = {}
    #: the state interfaces the plugin uses (of :data:`KNOWN_STATE_INTERFACES`)
    STATE_INTERFACES: ClassVar[tuple[str, ...]] = ()
    #: the command interfaces the plugin uses (of :data:`KNOWN_COMMAND_INTERFACES`)
    COMMAND_INTERFACES: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.info: HardwareInfo | None = None
        self.state: Interfaces | None = None
        self.commands: Interfaces | None = None
        self.reason = ""
        self.flags = np.zeros(0, dtype=np.int64)
        self.faults: list[str] = []

    # ------------------------------------------------------------------ lifecycle

    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        """Parse and validate the settings (no I/O). The base keeps ``info`` and the
        interfaces (``self.state``, ``self.commands``)."""
        self.info = info
        self.state, self.commands = info.state, info.commands
        self.flags = np.zeros(len(info.motors), dtype=np.int64)
        self.faults = [""] * len(info.motors)
        return CallbackReturn.SUCCESS

    def on_configure(self) -> CallbackReturn:
        """Open the bus and read the states."""
        return CallbackReturn.SUCCESS

    def on_activate(self) -> CallbackReturn:
        """Power on; from now on ``write()`` is called and commands are accepted."""
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        """Power off; commands are no longer accepted."""
        return CallbackReturn.SUCCESS

    def on_cleanup(self) -> CallbackReturn:
        """Close the bus."""
        return CallbackReturn.SUCCESS

    def on_shutdown(self) -> CallbackReturn:
        """Leave the device safe, whatever the state."""
        return CallbackReturn.SUCCESS

    def on_error(self) -> CallbackReturn:
        """After an ERROR: leave the device ready for configure (SUCCESS) or give up."""
        return CallbackReturn.SUCCESS

    @abstractmethod
    def read(self, time: float, period: float) -> CallbackReturn:
        """Fill the state arrays; ``time`` is the cycle's time, ``period`` the last cycle's."""

    @abstractmethod
    def write(self, time: float, period: float) -> CallbackReturn:
        """Send the command arrays to the device."""

    # ------------------------------------------------------------------ capabilities

    def capabilities(self, index: int) -> Capabilities:
        """What motor ``index`` can be commanded to do."""
        return Capabilities.UNKNOWN

    def telemetry(self, index: int) -> dict[str, str]:
        """What else the device last reported of motor ``index`` (voltage, temperature...),
        as text by name, for /diagnostics."""
        return {}

    # ------------------------------------------------------------------ helpers

    @property
    def bank(self) -> Any:
        """API 1's motor bank: gone (only the ``sim`` plugin, the model, has one)."""
        raise AttributeError(
            f"{type(self).__name__}.bank: a plugin is not given the MotorBank since "
            "API_VERSION 2: declare STATE_INTERFACES and COMMAND_INTERFACES and use "
            "self.state and self.commands (docs/hardware.md, 'From API 1 to API 2')")

    def fail(self, reason: str, code: CallbackReturn = CallbackReturn.FAILURE) -> CallbackReturn:
        """Record why and return ``code`` (FAILURE unless told)."""
        self.reason = reason
        return code
