"""ROS messages and descriptors made from the model: parameter descriptors, simulated
stamps, the /diagnostics array. No node state: the node passes what each needs."""

from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import IntegerRange, ParameterDescriptor, ParameterType

from ..model import ServoMode, StateFlags
from ..runtime import Runtime
from .params import ParameterSpec

_TYPES = {"bool": ParameterType.PARAMETER_BOOL, "integer": ParameterType.PARAMETER_INTEGER,
          "double": ParameterType.PARAMETER_DOUBLE, "string": ParameterType.PARAMETER_STRING,
          "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY,
          "string_array": ParameterType.PARAMETER_STRING_ARRAY}
_LEVELS = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR)


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The rclpy descriptor of a parameter spec.

    No range for a bound on one side only: rqt_reconfigure draws any range as a slider,
    and one up to the largest float cannot be used (issue 19). The minimum is in the
    description and in ``additional_constraints``, and the node's own check refuses a
    value below it, naming motor, field and value. An integer bounded on both sides
    (robot_raconteur_port) has its range."""
    d = ParameterDescriptor(name=spec.name, type=_TYPES[spec.type],
                            description=spec.description, read_only=spec.read_only)
    if spec.minimum is not None and spec.maximum is not None and spec.type == "integer":
        d.integer_range = [IntegerRange(from_value=int(spec.minimum),
                                        to_value=int(spec.maximum), step=1)]
    elif spec.minimum is not None:
        d.additional_constraints = f">= {spec.minimum:g}"
    return d


def stamp(time_ms: int) -> Time:
    """A builtin_interfaces/Time for a simulated time in ms."""
    sec, ms = divmod(time_ms, 1000)
    return Time(sec=sec, nanosec=ms * 1_000_000)


def flag_names(flags: StateFlags) -> str:
    """'ready|enabled' (or 'none')."""
    return "|".join(f.name.lower() for f in StateFlags if f.value and f in flags) or "none"


def diagnostics(node_name: str, runtime: Runtime, time_stamp: Time) -> DiagnosticArray:
    """One status per motor of ``runtime``: OK / WARN / ERROR and why, with its mode,
    flags, state, command timeout and the device's telemetry."""
    modes, flags = reported = runtime.report()
    now = runtime.readings
    position, velocity, effort = now.position, now.velocity, now.effort
    timeout = now.command_timeout_ms
    msg = DiagnosticArray()
    msg.header.stamp = time_stamp
    for i, (level, why) in enumerate(runtime.status(reported)):
        values = {"mode": ServoMode(int(modes[i])).name.lower(),
                  "flags": flag_names(StateFlags(int(flags[i]))),
                  "position": f"{position[i]:.6g}", "velocity": f"{velocity[i]:.6g}",
                  "effort": f"{effort[i]:.6g}",
                  "command_timeout": f"{timeout[i] / 1000.0:g}",
                  **runtime.telemetry(i)}
        msg.status.append(DiagnosticStatus(
            level=_LEVELS[level], name=f"{node_name}: {now.names[i]}", message=why,
            hardware_id=runtime.plugin_name,
            values=[KeyValue(key=k, value=v) for k, v in values.items()]))
    return msg
