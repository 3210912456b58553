"""Checks of the launch files' arguments (``launch/*.launch.py``), without ROS: a bad
value is one line naming the argument, e.g. ``use_sim_time:='maybe': must be true or
false``, which ``ros2 launch`` prints as its error."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any


def flag(value: str, name: str) -> bool:
    """``true`` or ``false`` (any case)."""
    if value.lower() not in ("true", "false"):
        raise ValueError(f"{name}:={value!r}: must be true or false")
    return value.lower() == "true"


def number(value: str, name: str) -> float:
    """A float."""
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name}:={value!r}: must be a number") from None


#: The description of the one time-base argument of both launch files.
USE_SIM_TIME = ("One time base for every node started here: true, the servo_sim node "
                "publishes /clock (simulated hardware) and every node follows it; false, "
                "all run on the wall clock.")
#: Descriptions of the arguments both launch files pass to the servo_sim node.
LOG_LEVEL = "Log level: debug, info, warn, error or fatal."
EXECUTOR = "rclpy executor: auto (events where rclpy has it), events or single_threaded."


def rr_port_parameter(value: str, name: str = "robot_raconteur_port") -> dict[str, int]:
    """The node parameter of ``robot_raconteur_port:=`` (an integer in the parameter's
    range; -1, the default: none, the door is off)."""
    from .params import ROBOT_RACONTEUR_PORT

    spec = ROBOT_RACONTEUR_PORT
    try:
        port = int(value)
    except ValueError:
        port = None
    if port is None or not spec.minimum <= port <= spec.maximum:
        raise ValueError(f"{name}:={value!r}: must be an integer from {spec.minimum:g} (off) "
                         f"to {spec.maximum:g}")
    return {} if port == spec.value else {spec.name: port}


def servo_sim_node(namespace: str, config: str, use_sim_time: str, real_time_factor: str,
                   executor: str, log_level: str, env: dict[str, str] | None = None,
                   parent: int | None = None, robot_raconteur_port: str = "-1") -> Any:
    """The launch action of one servo_sim node (launch_ros ``Node``), its arguments as
    given on the command line, each checked (one line if bad): what servo_sim.launch.py
    starts, and fleet.launch.py once per robot (``env``: variables for this process
    only; ``parent``: the pid of the launch, whose end it then follows, through
    servo_sim.ros.fleet.follow; ``robot_raconteur_port``: the node's Robot Raconteur door)."""
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    from .fleet.follow import command

    # follow, then the user's --launch-prefix (gdb, valgrind...), which a prefix of
    # the node's own would otherwise replace
    prefix = None if parent is None else [shlex.join(command(parent, [])) + " ",
                                          LaunchConfiguration("launch-prefix", default="")]

    return Node(
        package="servo_sim",
        executable="servo_sim_node",
        name="servo_sim",
        namespace=namespace,
        output="screen",
        emulate_tty=True,
        parameters=[config_parameters(config),
                    {**node_parameters(use_sim_time, real_time_factor, executor),
                             **rr_port_parameter(robot_raconteur_port)}],
        arguments=["--ros-args", "--log-level", log_level],
        additional_env=env or None,
        prefix=prefix,
        exec_name="servo_sim_node",  # (launch's name for it, prefix or not)
    )


def config_parameters(config: str) -> Any:
    """The node's config as ``config:=`` names it: a ROS parameters file as it is, a
    Webots world or PROTO through the node's ``config_file`` parameter."""
    from ..load import is_webots_file

    return {"config_file": config} if is_webots_file(config) else config


def node_parameters(use_sim_time: str, real_time_factor: str, executor: str) -> dict:
    """The parameters the launch files set on every servo_sim node, checked."""
    return {"use_sim_time": flag(use_sim_time, "use_sim_time"),
            "real_time_factor": number(real_time_factor, "real_time_factor"),
            "executor": executor}


def forked_robots(robots: list[tuple[str, str]], use_sim_time: str, real_time_factor: str,
                  executor: str, log_level: str, parent: int | None = None) -> list[str]:
    """The command of a fleet's robots forked from one host (servo_sim.ros.fleet.host):
    each ``(namespace, config)`` with what servo_sim_node() gives every node; ``parent``:
    the pid of the process that starts the host (launch), whose end the host follows."""
    parameters = node_parameters(use_sim_time, real_time_factor, executor)
    # JSON is YAML, as rcl reads a -p value: false, 1.0, "auto"
    ros_arguments = [a for name, value in parameters.items()
                     for a in ("-p", f"{name}:={json.dumps(value)}")]
    return [sys.executable, "-m", "servo_sim.ros.fleet.host",
            *[a for namespace, config in robots for a in ("--robot", namespace, config)],
            *(["--parent", str(parent)] if parent is not None else []),
            "--ros-args", *ros_arguments, "--log-level", log_level]


#: The description of ros2_control.launch.py's ``physics`` argument.
PHYSICS = ("The simulated robot's physics: empty, the config's (each joint on its own); "
           "mujoco, the motors drive the joints of the robot's URDF in MuJoCo (the "
           "servo_sim[mujoco] extra), simulated hardware.")


def physics_parameters(physics: str, hardware: str, model: str) -> dict[str, str]:
    """The node parameters of ``physics:=`` (empty: none): an engine's body of the
    robot's ``model`` file, on simulated hardware (``hardware:=`` empty or sim)."""
    from ..model.config import BODY_ENGINES, DEFAULT_PLUGIN

    if not physics:
        return {}
    if physics not in BODY_ENGINES:
        raise ValueError(f"physics:={physics!r}: must be empty (the config's) or one of "
                         + ", ".join(BODY_ENGINES))
    if hardware not in ("", DEFAULT_PLUGIN):
        raise ValueError(f"physics:={physics!r} simulates the robot; hardware:={hardware!r} "
                         f"moves real servos (use hardware:={DEFAULT_PLUGIN} or leave it out)")
    return {"physics": physics, "multibody.model": model, "hardware.plugin": DEFAULT_PLUGIN}
