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

Interfaces. Like ros2_control's handles, the state and command interfaces are shared
memory: the arrays of the motor bank (``info.bank``, one entry per motor, SI units,
after the multiplier). The Webots command semantics (validation, clipping, multiplier,
coupled motors) are applied once, by the model's ``Motor`` handles, before a plugin
sees a command.

State (``read()`` fills them)::

    bank.position, bank.velocity, bank.motor_force (effort)

Commands (``write()`` sends them; :func:`command_modes` names the active one)::

    bank.target_position    finite: position control; +-inf: velocity control
    bank.target_velocity    velocity control: the signed target;
                            position control: its magnitude is the speed limit
    bank.force_control, bank.applied_force      effort control and its effort
    bank.available_force    force/torque limit; 0 = motor off (passive joint)
    bank.control_p, control_i, control_d        position PID gains
    bank.acceleration       acceleration limit; -1 = unlimited
    bank.velocity_setpoint  velocity control: the velocity to follow now (the target,
                            or the ramp of a halt)
    bank.speed_limit        position control: the speed limit now
    bank.enabled            False: torque off (disabled or e-stopped)

The model computes trapezoidal moves, halts and the watchdog before each cycle
(``servo_sim.model.safety``): a plugin only ever sees position, velocity and effort
commands.

Per motor, ``self.flags`` (:class:`StateFlags`) and ``self.faults`` (text) say what
the device reported.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..model.bank import MotorBank
from ..model.config import MotorConfig, SimulationConfig, ros_name
from ..model.safety import StateFlags as StateFlags  # re-exported: the plugins' flags

#: Version of this base class. A plugin states the version it was written for in
#: ``API_VERSION``; the registry refuses a plugin whose major version differs.
API_VERSION = 1


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


def command_modes(bank: MotorBank) -> np.ndarray:
    """The :class:`Mode` of every motor (an int array) from the bank's command arrays."""
    modes = np.where(np.isfinite(bank.target_position), int(Mode.POSITION), int(Mode.VELOCITY))
    modes[bank.force_control] = int(Mode.EFFORT)
    modes[((bank.available_force <= 0.0) | ~bank.enabled) & ~bank.force_control] = int(Mode.OFF)
    return modes


@dataclass
class HardwareInfo:
    """What a plugin is given at ``on_init`` (ros2_control's ``HardwareInfo``).

    ``settings`` is the config's ``hardware`` group without ``plugin``; per-motor
    settings sit in a sub-group named by the motor's ROS name (or device name), which
    :meth:`motor_settings` finds.
    """

    plugin: str
    config: SimulationConfig
    bank: MotorBank
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def motors(self) -> tuple[MotorConfig, ...]:
        return self.config.motors

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

    def __init__(self) -> None:
        self.info: HardwareInfo | None = None
        self.reason = ""
        self.flags = np.zeros(0, dtype=np.int64)
        self.faults: list[str] = []

    # ------------------------------------------------------------------ lifecycle

    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        """Parse and validate the settings (no I/O). The base keeps ``info``."""
        self.info = info
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
    def bank(self) -> MotorBank:
        """The state and command interfaces (see the module docstring)."""
        assert self.info is not None, "on_init() was not called"
        return self.info.bank

    def fail(self, reason: str, code: CallbackReturn = CallbackReturn.FAILURE) -> CallbackReturn:
        """Record why and return ``code`` (FAILURE unless told)."""
        self.reason = reason
        return code
