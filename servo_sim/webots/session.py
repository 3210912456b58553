"""One run of a Webots controller: the hardware system behind it, the clock, the battery,
the CSV record and the end of the run.

The controller API (``api.py``) sees the run only through :class:`Session`: commands go
to :meth:`Session.command` (the hardware system's capability check, then the model's
``Motor`` command; a refusal is a warning, as Webots prints one and carries on) and
``Robot.step`` calls :meth:`Session.cycle` once per basic time step: one cycle of the
runtime (``servo_sim.runtime``), which paces it. ROS-free.
"""

from __future__ import annotations

import csv
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..model import Command, MotorCommand, MotorView
from ..model.config import MotorConfig, SimulationConfig
from ..model.sensors import SampledSensors
from ..record import csv_columns, csv_row, steps_to_reach
from ..runtime import RealTimeError, Runtime, StartError

log = logging.getLogger("servo_sim")

#: Device kinds, as Webots nodes.
MOTOR, POSITION_SENSOR, BRAKE = "motor", "position sensor", "brake"


class SessionError(Exception):
    """A run that cannot start (e.g. a real device that does not answer)."""


class ControllerEnded(BaseException):
    """Raised by ``Robot.step`` when the controller steps again after ``step`` returned
    -1: Webots ends the controller's process then, and so does ``servo-sim controller``.
    A BaseException, so that a controller's ``except Exception`` does not swallow it."""


@dataclass(frozen=True)
class DeviceSpec:
    """One device of the robot: its name, kind and the motor (joint) it belongs to."""

    name: str
    kind: str
    motor: MotorConfig


def device_specs(config: SimulationConfig) -> list[DeviceSpec]:
    """The robot's devices in Webots tag order (tag = index + 1): per motor, the motor
    (none for a passive joint), its position sensor and its brake, each if it has one."""
    specs = []
    for m in config.motors:
        if not m.passive:  # a passive joint has a sensor and maybe a brake, no motor
            specs.append(DeviceSpec(m.name, MOTOR, m))
        if m.position_sensor_device is not None:
            specs.append(DeviceSpec(m.position_sensor_device, POSITION_SENSOR, m))
        if m.brake_name is not None:
            specs.append(DeviceSpec(m.brake_name, BRAKE, m))
    return specs


@contextmanager
def _silenced(logger: logging.Logger) -> Iterator[None]:
    """Drop ``logger``'s records for the duration."""
    def drop(record: logging.LogRecord) -> bool:
        return False

    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


class Session:
    """The state of one controller run (see the module docstring)."""

    def __init__(self, config: SimulationConfig, *, robot_name: str = "robot",
                 world_path: str = "", unsimulated: Mapping[str, str] | None = None,
                 unread: Mapping[str, str] | None = None,
                 duration: float | None = None,
                 real_time_factor: float | None = None, csv_path: str | Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.robot_name = robot_name
        self.world_path = world_path
        self.runtime = Runtime.open(config, clock=clock)
        if real_time_factor is not None:
            try:
                self.runtime.set_real_time_factor(real_time_factor)
            except RealTimeError:
                self.runtime.close()
                raise SessionError(f"hardware {self.runtime.plugin_name!r} is real: it runs "
                                   f"in real time (--real-time-factor 1), not "
                                   f"{real_time_factor:g}") from None
        self.step_ms = config.basic_time_step_ms
        #: --duration reached: the first whole step at or after it
        self.end_ms = None if duration is None \
            else steps_to_reach(duration, self.step_ms) * self.step_ms
        self.devices = device_specs(config)
        #: the world's devices not simulated: name -> Webots type, where (getDevice gives
        #: a handle whose use raises)
        self.unsimulated = dict(unsimulated or {})
        #: PROTOs inside the robot that could not be read: name -> first instance
        self.unread = dict(unread or {})
        self.battery = config.battery
        #: the battery sensor: one sampled sensor (Webots' sampling-period rules)
        self.battery_sensor = SampledSensors(np.zeros(1, dtype=np.int64))
        self.end_reason: str | None = None  #: why the run is over (None: it is not)
        self.told = False  #: step() has returned -1
        self.warned_brake = False  #: a brake on real hardware was reported
        self._refused: dict[tuple[str, str], str] = {}  # (motor, command) -> refusal
        self._csv_handle: IO[str] | None = None
        self._csv: Any = None
        if csv_path is not None:
            try:
                self._csv_handle = open(csv_path, "w", newline="")
            except OSError as exc:
                raise SessionError(f"--csv {csv_path}: cannot write: "
                                   f"{exc.strerror or exc}") from None
            self._csv = csv.writer(self._csv_handle)
        # a real device gets its tries (a bus may miss a reply), not logged: a failure is
        # reported by the SessionError
        try:
            with _silenced(log):
                self.runtime.start()
        except StartError as exc:
            self.close()
            raise SessionError(f"{config.source}: {exc}") from None
        # in Webots every sensor starts disabled, whatever the config's periods say
        for name in self.runtime.motor_names:
            self.runtime.command(name, Command.ENABLE_POSITION, 0)
            self.runtime.command(name, Command.ENABLE_FORCE_FEEDBACK, 0)
        if self._csv is not None:
            self._csv.writerow(csv_columns(self.runtime.motor_names))
            self._csv.writerow(csv_row(self.runtime.time, self.runtime.readings))

    # ------------------------------------------------------------------ commands

    def unread_hint(self) -> str:
        """For a device not found: the PROTOs of the robot it may be in, that could not
        be read ("" when none)."""
        if not self.unread:
            return ""
        return (" (it may be inside a PROTO that could not be read and was left out: "
                + ", ".join(self.unread.values()) + ")")

    def command(self, motor: str, command: MotorCommand, *args: Any) -> bool:
        """``command`` (a row of the command table) through the hardware system; a
        refused or rejected value is logged as a warning (Webots prints one and carries
        on) and changes nothing. True if it was taken."""
        key = (motor, command.name)
        try:
            self.runtime.command(motor, command, *args)
        except ValueError as exc:
            # the same refusal of the same command, step after step (a device recovering,
            # a NaN in a loop), is said once until that command is taken again
            said = self._refused.get(key) == str(exc)
            log.log(logging.DEBUG if said else logging.WARNING, "%s", exc)
            self._refused[key] = str(exc)
            return False
        self._refused.pop(key, None)
        return True

    def motor(self, name: str) -> MotorView:
        """Motor ``name``, read-only (the runtime's view)."""
        return self.runtime.motor(name)

    # ------------------------------------------------------------------ time

    @property
    def time_ms(self) -> int:
        return self.runtime.time_ms

    def end(self, reason: str) -> None:
        """End the run: the next (or current) ``step`` returns -1."""
        if self.end_reason is None:
            self.end_reason = reason

    def cycle(self) -> None:
        """One basic time step: wait for the wall clock if paced, one hardware cycle,
        the battery, a CSV row; ends the run at the duration or an empty battery."""
        self.runtime.cycle()
        level = self.battery_level()
        due = self.battery_sensor.due(self.time_ms)
        if due is not None and len(due):
            self.battery_sensor.value[0] = level
        if self._csv is not None:
            self._csv.writerow(csv_row(self.runtime.time, self.runtime.readings))
        if self.end_ms is not None and self.time_ms >= self.end_ms:
            self.end(f"--duration reached at t = {self.time_ms / 1000:g} s")
        if self.battery is not None and level <= 0.0:
            self.end(f"the battery is empty at t = {self.time_ms / 1000:g} s")

    # ------------------------------------------------------------------ battery

    def battery_level(self) -> float:
        """Energy left, J: the battery's energy minus what the motors consumed (NaN
        without a battery)."""
        if self.battery is None:
            return math.nan
        return max(0.0, self.battery.energy - float(self.runtime.readings.energy.sum()))

    def enable_battery(self, period_ms: int) -> None:
        self.battery_sensor.enable(0, period_ms, self.time_ms)

    # ------------------------------------------------------------------ end

    def close(self) -> None:
        """Torque off (the hardware's shutdown) and the CSV file closed."""
        try:
            self.runtime.close()
        finally:
            if self._csv_handle is not None:
                self._csv_handle.close()
                self._csv_handle = None
