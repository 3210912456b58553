"""Hardware plugins: the motors behind the node, simulated (``sim``) or real.

No ROS import here. See ``base.py`` for the plugin API (ros2_control's lifecycle and
declared interfaces) and
``registry.py`` for how plugins are found.
"""

from .base import (
    API_VERSION,
    KNOWN_COMMAND_INTERFACES,
    KNOWN_STATE_INTERFACES,
    CallbackReturn,
    Capabilities,
    HardwareComponent,
    HardwareInfo,
    Interfaces,
    LifecycleState,
    Mode,
    StateFlags,
    command_modes,
)
from .registry import ENTRY_POINT_GROUP, PluginError, discover, load_plugin
from .system import START_ATTEMPTS, START_RETRY_S, CommandRefusedError, HardwareSystem

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "KNOWN_COMMAND_INTERFACES",
    "KNOWN_STATE_INTERFACES",
    "START_ATTEMPTS",
    "START_RETRY_S",
    "CallbackReturn",
    "Capabilities",
    "CommandRefusedError",
    "HardwareComponent",
    "HardwareInfo",
    "HardwareSystem",
    "Interfaces",
    "LifecycleState",
    "Mode",
    "PluginError",
    "StateFlags",
    "command_modes",
    "discover",
    "load_plugin",
]
