"""servo_sim's motor model: Webots Motor/Servo semantics in a vectorised numpy bank.

Pure Python + numpy; nothing here imports ROS.
"""

from .commands import Command, MotorCommand
from .config import (
    ConfigError,
    MotorConfig,
    SimulationConfig,
    from_ros_parameters,
    load_config,
    parse_config,
    ros_name,
)
from .motor import LINEAR, ROTATIONAL, CommandRefusedError, Motor
from .safety import Move, ServoMode, StateFlags, Trapezoid, plan_trapezoid
from .simulation import Simulation
from .view import MotorView

__all__ = [
    "LINEAR",
    "ROTATIONAL",
    "Command",
    "CommandRefusedError",
    "ConfigError",
    "Motor",
    "MotorCommand",
    "MotorConfig",
    "MotorView",
    "Move",
    "ServoMode",
    "Simulation",
    "SimulationConfig",
    "StateFlags",
    "Trapezoid",
    "from_ros_parameters",
    "load_config",
    "parse_config",
    "plan_trapezoid",
    "ros_name",
]
