"""The simulation: a bank of motors, their handles and the simulated clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .bank import MotorBank
from .body import make_body
from .commands import MOTOR_COMMANDS, MotorCommand
from .config import (
    ConfigError,
    SimulationConfig,
    load_config,
    parse_config,
    parse_field,
    to_dict,
)
from .motor import Motor
from .safety import Supervisor, report

#: Motor fields fixed at start-up: changing them would change what the state means, or
#: rename devices that controllers and services have already found.
READ_ONLY_FIELDS = frozenset({"type", "multiplier", "position", "position_sensor_name",
                              "brake_name", "passive", "servo"})
_RUNTIME = "run-time change"
@dataclass(frozen=True)
class MirroredField:
    """A motor config field that is also a command (``control_pid`` and
    ``set_control_pid``): a change of either goes through the command, once, and the
    getter reads it back: the rows of the command table (``commands.py``) with a field,
    for the ROS services that keep a parameter in step, the hardware's capability check
    of a parameter change, run-time changes."""

    field: str
    command: MotorCommand  #: its row of the command table (set_control_pid)
    read: Callable[[Any], Any]  #: the field's value as the motor has it now

    def args(self, value: Any) -> tuple[Any, ...]:
        """The command's arguments for a field value ([p, i, d] -> p, i, d)."""
        return tuple(value) if isinstance(value, list | tuple) else (value,)


#: The fields that are also commands, from the command table (the first command of a
#: field applies it: force_feedback_sampling_period_ms -> enable_force_feedback).
MIRRORED_FIELDS: dict[str, MirroredField] = {}
for _command in MOTOR_COMMANDS:
    if _command.field is not None and _command.read is not None:
        MIRRORED_FIELDS.setdefault(_command.field, MirroredField(
            _command.field, _command, _command.read))


def _changed(config: Any, field: str, value: Any) -> Any:
    """``dataclasses.replace(config, field=value)`` for the config dataclasses, whose
    values are parsed already: frozen, plain (no slots, no ``__post_init__``), so a copy
    of the instance's dict is the same object; replace's generic path re-runs a frozen
    ``__init__`` (about 6 us for a motor's 26 fields, 0.7 us this way)."""
    changed = object.__new__(type(config))
    changed.__dict__.update(vars(config))
    changed.__dict__[field] = value
    return changed


class Simulation:
    """All motors of one config, stepped together (SPEC §5)."""

    def __init__(self, config: SimulationConfig) -> None:
        self._build(config)

    @property
    def config(self) -> SimulationConfig:
        """The config in force (the bank's: changes at run time included)."""
        return self.bank.config

    @classmethod
    def from_config(cls, source: str | Path | Mapping[str, Any] | SimulationConfig
                    ) -> Simulation:
        """Build from a YAML file path, a config mapping (either form) or a parsed config."""
        if isinstance(source, (str, Path)):
            return cls(load_config(source))
        return cls(parse_config(source))

    def _build(self, config: SimulationConfig) -> None:
        self.bank = MotorBank(config, Supervisor, make_body(config))
        groups: dict[str, list[int]] = {}
        for i, m in enumerate(config.motors):
            groups.setdefault(m.coupling_base or f"\0{i}", []).append(i)
        group_of = {i: np.array(g) for g in groups.values() for i in g}
        self._motors = {m.name: Motor(self.bank, i, group_of[i])
                        for i, m in enumerate(config.motors)}
        self._index = {m.name: i for i, m in enumerate(config.motors)}

    def reset(self) -> None:
        """Back to the config's initial state: time 0, positions, commands and sensors.

        The bank is reset in place, so motor handles and whoever holds the bank (a
        hardware plugin) keep working.
        """
        self.bank.reset()

    def e_stop(self) -> None:
        """Node-wide emergency stop: every motor off and latched (see ``Motor.e_stop``)."""
        for m in self:
            m.e_stop()

    def reset_e_stop(self) -> None:
        """Release every motor's e-stop latch; the motors stay disabled until enabled."""
        for m in self:
            m.reset_e_stop()

    def report(self) -> tuple[np.ndarray, np.ndarray]:
        """(mode, flags) of every motor (see ``safety.report``): a simulated device."""
        return report(self.bank)

    def set_parameter(self, motor: str, field: str, value: Any) -> None:
        """Change one config field of ``motor`` at run time ("max_velocity", "load.external").

        The new value is validated by the config code (every start-up rule holds after
        the change); fields that are also commands go through the command
        (``control_pid`` -> ``set_control_pid``, ``acceleration`` -> ``set_acceleration``,
        sampling periods -> ``enable_*``). State and other commands are kept; commands
        the new limits no longer allow are clipped. Raises ``ValueError`` (motor, field,
        value and why) and changes nothing on a bad value, ``KeyError`` on an unknown
        motor.
        """
        handle = self.motor(motor)
        if field in READ_ONLY_FIELDS:
            raise ValueError(f"motor {motor!r}: field {field!r} = {value!r} rejected: "
                             "read-only, fixed at start-up")
        mirrored = MIRRORED_FIELDS.get(field)
        if mirrored is not None:
            self._change_by_command(handle, mirrored, value)
            return
        raw = to_dict(self.config)
        entry = raw["motors"][self._index[motor]]
        *groups, leaf = field.split(".")
        for group in groups:
            entry = entry.get(group) if isinstance(entry.get(group), dict) else None
            if entry is None:
                raise ValueError(f"motor {motor!r}: unknown field {field!r}")
        if leaf not in entry or leaf == "name":
            raise ValueError(f"motor {motor!r}: unknown field {field!r}")
        entry[leaf] = list(value) if isinstance(value, tuple) else value
        try:
            config = parse_config(raw, _RUNTIME)
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix(_RUNTIME + ": ")) from None
        self.bank.apply_config(replace(config, source=self.config.source))

    def _change_by_command(self, handle: Motor, mirrored: MirroredField, value: Any) -> None:
        """A mirrored field changed: validated and applied by its command (the services'
        reasons), then recorded in the config without a re-parse of the others."""
        field = mirrored.field
        value = list(value) if isinstance(value, tuple) else value
        try:
            mirrored.command.call(handle, *mirrored.args(value))
        except TypeError:  # not even the command's arguments: the field's rule says why
            pass
        else:  # accepted: the field's rule accepts it too (test_live_parameters)
            self._record(handle.name, field, parse_field(field, value))
            return
        try:
            parse_field(field, value)
        except ValueError as exc:
            raise ValueError(f"motor {handle.name!r}: field {field!r} = {value!r}: {exc}") \
                from None
        raise ValueError(f"motor {handle.name!r}: field {field!r} = {value!r}: not "
                         f"{mirrored.command.name}'s arguments")

    def _record(self, motor: str, field: str, parsed: Any) -> None:
        """``motor``'s config field ``field`` is ``parsed`` now (already applied)."""
        index = self._index[motor]
        current = self.bank.motor_configs[index]
        group, _, leaf = field.rpartition(".")
        if group:
            parsed = _changed(getattr(current, group), leaf, parsed)
        self.bank.record_motor(index, _changed(current, group or leaf, parsed))

    def motor(self, name: str) -> Motor:
        """The motor called ``name``; KeyError naming the known motors if there is none."""
        try:
            return self._motors[name]
        except KeyError:
            raise KeyError(f"no motor {name!r}; known motors: "
                           + ", ".join(repr(n) for n in self._motors)) from None

    @property
    def motors(self) -> list[Motor]:
        """Every motor, in config order."""
        return list(self._motors.values())

    @property
    def motor_names(self) -> list[str]:
        return list(self._motors)

    def __iter__(self) -> Iterator[Motor]:
        return iter(self._motors.values())

    def __len__(self) -> int:
        return len(self._motors)

    def step(self, n: int = 1) -> None:
        """Advance ``n`` basic time steps."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"step count {n!r} rejected: must be an integer >= 0")
        with np.errstate(all="ignore"):
            self.bank.stepper.run(n)

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self.bank.time_ms / 1000.0

    @property
    def time_ms(self) -> int:
        """Simulated time, ms (exact)."""
        return self.bank.time_ms

    @property
    def basic_time_step_ms(self) -> int:
        return self.config.basic_time_step_ms
