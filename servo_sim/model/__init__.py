"""servo_sim's motor model: Webots Motor/Servo semantics in a vectorised numpy bank.

Pure Python + numpy; nothing here imports ROS.
"""

from .config import (
    ConfigError,
    MotorConfig,
    SimulationConfig,
    from_ros_parameters,
    load_config,
    parse_config,
    ros_name,
)
from .motor import LINEAR, ROTATIONAL, Motor
from .simulation import Simulation

__all__ = [
    "LINEAR",
    "ROTATIONAL",
    "ConfigError",
    "Motor",
    "MotorConfig",
    "Simulation",
    "SimulationConfig",
    "from_ros_parameters",
    "load_config",
    "parse_config",
    "ros_name",
]
