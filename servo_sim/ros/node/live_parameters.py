"""The node's parameters in rclpy: the config read from the overrides at start-up, the
parameters declared with descriptors, and a change applied through the same check as
the service that mirrors it (``params.py`` has the specs, without ROS)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter

from ...load import load, on_physics
from ...model import ConfigError, SimulationConfig
from ...model.urdf import apply_urdf
from ...resources import default_config_path
from ...runtime import Runtime
from ..messages import descriptor
from ..params import (
    NODE_SPECS,
    ROS_BUILTIN_PARAMETERS,
    ParameterSpec,
    config_from_parameters,
    hardware_specs,
    motor_parameter_specs,
    node_settings,
    split_motor_parameter,
    top_parameter_specs,
)

#: The longest a service's change of a parameter takes to reach the parameter events, s
ECHO_PERIOD_S = 0.05
#: Node settings that only a simulation honours, with the value real hardware runs at.
SIMULATION_ONLY = {"real_time_factor": 1.0, "start_paused": False}


def read_config(node: Node) -> tuple[dict[str, Any], SimulationConfig]:
    """The node settings and the config from the parameter overrides (params files,
    ``-p``, ``parameter_overrides``): read as given, declared once validated. The config
    is the motor parameters, or the file ``config_file`` names (any kind
    :func:`servo_sim.load.load` reads: YAML, a Webots world or PROTO; with ``physics``
    and ``multibody.model`` beside it, on that body: :func:`servo_sim.load.on_physics`),
    or else the packaged one; a ``robot_description``'s limits go over it."""
    # rclpy keeps the overrides in Node._parameter_overrides (Foxy to Kilted), and has no
    # public getter: declaring them all to read them (automatically_declare_...) costs a
    # parameter event each, seconds for a thousand motors
    overrides = node._parameter_overrides
    params = {k: p.value for k, p in overrides.items()
              if not k.startswith("qos_overrides.") and k not in ROS_BUILTIN_PARAMETERS}
    source = f"parameters of {node.get_fully_qualified_name()}"
    untyped = sorted(k for k, v in params.items() if v is None)
    if untyped:  # `-p name:=[]`: ROS parameters have no type for an empty list
        raise ConfigError(f"{source}: parameter {untyped[0]!r} has no type (an empty "
                          "list cannot be a ROS parameter value)")
    sim_time = overrides.get("use_sim_time")
    settings = node_settings(
        params if sim_time is None else {**params, "use_sim_time": sim_time.value}, source)
    model_keys = sorted(set(params) - {s.name for s in NODE_SPECS})
    if settings["config_file"]:
        path = settings["config_file"]
        body = {k: params[k] for k in ("physics", "multibody.model") if k in params}
        model_keys = [k for k in model_keys if k not in body]  # the file on another body
        if model_keys:
            raise ConfigError(f"{source}: config_file {path!r} and the config parameters "
                              f"{', '.join(model_keys)}: give the config in one place")
        loaded = load(path)
        robot = f"robot {loaded.robot_name!r}, " if loaded.world_path else ""
        node.get_logger().info(f"config_file {path}: {robot}"
                               f"{len(loaded.config.motors)} motor(s)")
        config = on_physics(loaded, body.get("physics"), body.get("multibody.model"))
    elif "motors" in params:
        config = config_from_parameters(params, source)
    else:
        if model_keys:
            raise ConfigError(f"{source}: no 'motors' parameter, but motor parameters "
                              f"{', '.join(model_keys)}")
        path = default_config_path()
        node.get_logger().info(f"no 'motors' parameter: using {path}")
        config = load(path).config
    urdf = settings["robot_description"]
    return settings, (apply_urdf(config, urdf) if urdf else config)


def declare(node: Node, specs: list[ParameterSpec]) -> None:
    node.declare_parameters("", [(s.name, s.value, descriptor(s)) for s in specs],
                            ignore_override=True)


class EchoFirst:
    """Mixin of the node, before rclpy's ``Node``: its parameter API reads and changes
    parameters only after the echoes of what services applied (``LiveParameters.echo``),
    so a read sees them and a later change is not overwritten by one."""

    def _echo_first(self) -> None:
        live = self.__dict__.get("parameters")  # (none while Node.__init__ runs)
        if live is not None:
            live.flush()

    def get_parameter(self, name: str) -> Parameter:
        self._echo_first()
        return super().get_parameter(name)  # type: ignore[misc]

    def get_parameters(self, names: list[str]) -> list[Parameter]:
        self._echo_first()
        return super().get_parameters(names)  # type: ignore[misc]

    def get_parameter_or(self, name: str, alternative_value: Parameter | None = None) -> Any:
        self._echo_first()
        return super().get_parameter_or(name, alternative_value)  # type: ignore[misc]

    def get_parameters_by_prefix(self, prefix: str) -> dict[str, Any]:
        self._echo_first()
        return super().get_parameters_by_prefix(prefix)  # type: ignore[misc]

    def set_parameters(self, parameter_list: list[Parameter]) -> list[SetParametersResult]:
        self._echo_first()
        return super().set_parameters(parameter_list)  # type: ignore[misc]

    def set_parameters_atomically(self, parameter_list: list[Parameter]) -> SetParametersResult:
        self._echo_first()
        return super().set_parameters_atomically(parameter_list)  # type: ignore[misc]


class LiveParameters:
    """Declares the node's parameters and applies their changes (``on_set`` is the
    node's set-parameters callback). ``retime`` is called after the real-time factor
    changed (the node's timer follows the runtime's period)."""

    def __init__(self, node: Node, runtime: Runtime, settings: dict[str, Any],
                 retime: Callable[[], None]) -> None:
        self._node, self._runtime, self._settings = node, runtime, settings
        self._retime = retime
        #: what services applied, for their parameters to follow after the reply
        self._pending: dict[str, Any] = {}
        #: the parameters being set to what a service applied (not applied again)
        self._echo: frozenset[str] = frozenset()
        specs = [replace(s, value=settings[s.name]) for s in NODE_SPECS]
        config = runtime.config
        specs += top_parameter_specs(config) + hardware_specs(config, runtime.settings)
        declare(node, specs)
        node.add_on_set_parameters_callback(self.on_set)
        # armed by the first echo, disarmed by the flush: no wake-up while nothing is owed
        self._flush_timer = node.create_timer(ECHO_PERIOD_S, self.flush,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._flush_timer.cancel()
        self._armed = False

    def declare_motor(self, motor_name: str) -> None:
        """One motor's parameters (a job of the table)."""
        declare(self._node, motor_parameter_specs(self._runtime.motor(motor_name).config))

    def echo(self, name: str, value: Any) -> None:
        """Parameter ``name`` follows what a service applied, without applying it again:
        at the next read or change of a parameter through the node (``ros2 param get``,
        ``SetParameters``, ``get_parameter``: see :class:`EchoFirst`), and for the
        parameter events within ECHO_PERIOD_S, so that neither the reply nor the next
        request waits for rclpy's set_parameters and the event (echoes of one motor's
        parameter in that time make one event, with the last value)."""
        self._pending[name] = value
        if not self._armed:
            self._armed = True
            self._flush_timer.reset()

    def flush(self) -> None:
        """The parameters that services changed set to what they applied, now."""
        if self._armed:
            self._armed = False
            self._flush_timer.cancel()
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self._echo = frozenset(pending)
        try:
            self._node.set_parameters([Parameter(n, value=v) for n, v in pending.items()])
        finally:
            self._echo = frozenset()

    def on_set(self, params: list[Parameter]) -> SetParametersResult:
        node = self._node
        for p in params:
            if not node.has_parameter(p.name) or p.name in self._echo:
                continue  # being declared, or a service's change echoed: already applied
            if p.name == "use_sim_time" and p.value != self._settings["publish_clock"]:
                reason = ("use_sim_time is publish_clock's (read-only): the time base is "
                          "chosen at start")
                node.get_logger().warning(f"parameter use_sim_time = {p.value!r} rejected: "
                                          f"{reason}")
                return SetParametersResult(successful=False, reason=reason)
            target = split_motor_parameter(self._runtime.config, p.name)
            value = list(p.value) if isinstance(p.value, array) else p.value  # double arrays
            try:
                if target is not None:
                    self._runtime.set_parameter(*target, value)
                elif p.name in self._settings:
                    self._apply_setting(p.name, p.value)
            except ValueError as exc:
                node.get_logger().warning(f"parameter {p.name} = {value!r} rejected: {exc}")
                return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_setting(self, name: str, value: Any) -> None:
        runtime = self._runtime
        if not runtime.simulated and name in SIMULATION_ONLY:
            raise ValueError(f"parameter {name!r}: {runtime.real_time()}")
        if name == "real_time_factor":
            runtime.set_real_time_factor(value)
            self._retime()
        elif name == "joint_states_rate":
            runtime.set_joint_states_rate(value)
        self._settings[name] = value
