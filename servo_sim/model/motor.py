"""The per-motor handle: Webots ``wb_motor_*`` commands and getters over the bank.

Every command validates first and changes nothing when it rejects a value (it raises
``ValueError`` naming the motor, the argument and the value). Values that Webots
clips are clipped with a warning on the ``servo_sim`` logger. ``set_position``,
``set_velocity`` and ``set_force``/``set_torque`` are relayed to coupled motors
("base::specifier" names), each applying its own multiplier and limits.
"""

from __future__ import annotations

import logging
import math
import numbers
from typing import Any

import numpy as np

from .bank import MotorBank
from .sensors import SampledSensors

log = logging.getLogger("servo_sim")
# A library logger must reach the application's handlers. ROS 2's `launch` makes its
# LaunchLogger (propagate = False) the logger class once imported, e.g. by the
# launch_testing pytest plugin; were it imported first, our warnings would vanish.
log.propagate = True

ROTATIONAL = "rotational"
LINEAR = "linear"


class Motor:
    """A light handle on one motor of a :class:`~servo_sim.model.Simulation`."""

    def __init__(self, bank: MotorBank, index: int, group: np.ndarray) -> None:
        self._bank = bank
        self._index = index
        self._group = group  # indices of the coupled motors, this one included
        self._one = np.array([index])
        self.name = bank.names[index]

    def __repr__(self) -> str:
        return f"<Motor {self.name!r} ({self.get_type()})>"

    # ------------------------------------------------------------------ validation

    def _number(self, argument: str, value: Any, allow_inf: bool = False) -> float:
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: "
                             "not a number")
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: "
                             + ("NaN" if math.isnan(value) else "must be finite"))
        return value

    def _reject(self, argument: str, value: float, reason: str) -> ValueError:
        return ValueError(f"motor {self.name!r}: {argument} = {value!r} rejected: {reason}")

    def _scaled(self, argument: str, value: float) -> np.ndarray:
        """``value`` times each coupled motor's multiplier; rejected if that overflows."""
        with np.errstate(over="ignore"):
            scaled = value * self._bank.multiplier[self._group]
        if not np.isfinite(scaled).all():
            raise self._reject(argument, value, "overflows once multiplied")
        return scaled

    def _clip(self, argument: str, motors: np.ndarray, values: np.ndarray, low: np.ndarray,
              high: np.ndarray, what: str, warn: bool = True) -> np.ndarray:
        """Clip ``values`` (one per index in ``motors``) to [low, high], warning per motor."""
        clipped = np.clip(values, low, high)
        if warn:
            for k in np.flatnonzero(clipped != values):
                log.warning("motor %r: %s %g exceeds %s [%g, %g]; clipped to %g",
                            self._bank.names[motors[k]], argument, values[k], what,
                            low[k], high[k], clipped[k])
        return clipped

    # ------------------------------------------------------------------ commands

    def set_position(self, position: float) -> None:
        """Target position (rad or m); ``±inf`` selects velocity control. Leaves force control."""
        position = self._number("position", position, allow_inf=True)
        bank, group = self._bank, self._group
        if math.isinf(position):
            target = np.full(len(group), position)
        else:
            target = self._scaled("position", position)
            soft = bank.soft_limits[group]
            low = np.where(soft, bank.min_position[group], -np.inf)
            high = np.where(soft, bank.max_position[group], np.inf)
            target = self._clip("position", group, target, low, high, "the soft limits")
        bank.target_position[group] = target
        bank.requested_position[group] = position
        bank.force_control[group] = False
        bank.applied_force[group] = 0.0
        bank.refresh(group)

    def set_velocity(self, velocity: float) -> None:
        """Target velocity in velocity control, speed limit (its magnitude) in position control."""
        velocity = self._number("velocity", velocity)
        bank, group = self._bank, self._group
        vmax = bank.max_velocity[group]
        target = self._clip("velocity", group, self._scaled("velocity", velocity), -vmax, vmax,
                            "max_velocity")
        bank.target_velocity[group] = target
        bank.requested_velocity[group] = target / bank.multiplier[group]
        bank.refresh(group)

    def set_acceleration(self, acceleration: float) -> None:
        """Acceleration limit of the controller; -1 means unlimited. Not multiplied."""
        acceleration = self._number("acceleration", acceleration)
        if acceleration != -1 and acceleration < 0:
            raise self._reject("acceleration", acceleration, "must be -1 (unlimited) or >= 0")
        self._bank.acceleration[self._index] = acceleration
        self._bank.refresh(self._one)

    def set_available_force(self, force: float) -> None:
        """Force (torque) available to the motor, clipped to the max; 0 switches it off."""
        self._set_available("available_force", force)

    def set_available_torque(self, torque: float) -> None:
        """Alias of :meth:`set_available_force` for rotational motors."""
        self._set_available("available_torque", torque)

    def _set_available(self, argument: str, force: float) -> None:
        force = self._number(argument, force)
        if force < 0:
            raise self._reject(argument, force, "must be >= 0")
        bank, i = self._bank, self._one
        fmax = bank.max_force[i]
        bank.available_force[i] = self._clip(argument, i, np.array([force]), -fmax, fmax,
                                             self._force_field)
        bank.refresh(i)

    def set_control_pid(self, p: float, i: float, d: float) -> None:
        """PID gains (P > 0, I >= 0, D >= 0); resets the error integral and previous error."""
        p = self._number("p", p)
        i = self._number("i", i)
        d = self._number("d", d)
        for argument, value, ok, rule in (("p", p, p > 0, "> 0"), ("i", i, i >= 0, ">= 0"),
                                          ("d", d, d >= 0, ">= 0")):
            if not ok:
                raise self._reject(argument, value, f"must be {rule}")
        bank, one = self._bank, self._one
        bank.control_p[one], bank.control_i[one], bank.control_d[one] = p, i, d
        bank.error_integral[one] = 0.0
        bank.previous_error[one] = 0.0
        bank.refresh(one)

    def set_force(self, force: float) -> None:
        """Force control: apply ``force * multiplier`` (clipped to the available force)."""
        self._set_force("force", force)

    def set_torque(self, torque: float) -> None:
        """Alias of :meth:`set_force` for rotational motors."""
        self._set_force("torque", torque)

    def _set_force(self, argument: str, force: float) -> None:
        force = self._number(argument, force)
        bank, group = self._bank, self._group
        available = bank.available_force[group]
        # Webots silences this warning for coupled motors, and so do we
        applied = self._clip(argument, group, self._scaled(argument, force), -available,
                             available, "the available force", warn=len(group) == 1)
        bank.applied_force[group] = applied
        bank.force_control[group] = True
        bank.command_velocity[group] = 0.0
        bank.refresh(group)

    # ------------------------------------------------------------------ getters

    def get_target_position(self) -> float:
        """The argument of the last ``set_position`` (the initial position before any)."""
        return float(self._bank.requested_position[self._index])

    def get_min_position(self) -> float:
        return float(self._bank.min_position[self._index])

    def get_max_position(self) -> float:
        return float(self._bank.max_position[self._index])

    def get_velocity(self) -> float:
        """The velocity set (after clipping, before the multiplier); max_velocity before any."""
        return float(self._bank.requested_velocity[self._index])

    def get_max_velocity(self) -> float:
        return float(self._bank.max_velocity[self._index])

    def get_acceleration(self) -> float:
        return float(self._bank.acceleration[self._index])

    def get_available_force(self) -> float:
        return float(self._bank.available_force[self._index])

    get_available_torque = get_available_force

    def get_max_force(self) -> float:
        return float(self._bank.max_force[self._index])

    get_max_torque = get_max_force

    def get_multiplier(self) -> float:
        return float(self._bank.multiplier[self._index])

    def get_type(self) -> str:
        """``"rotational"`` or ``"linear"``."""
        return ROTATIONAL if self._bank.rotational[self._index] else LINEAR

    def get_control_pid(self) -> tuple[float, float, float]:
        """The PID gains in use (no Webots getter exists; convenient for tuning)."""
        bank, i = self._bank, self._index
        return (float(bank.control_p[i]), float(bank.control_i[i]), float(bank.control_d[i]))

    # ------------------------------------------------------------------ sensors

    def _enable(self, sensor: SampledSensors, argument: str, period_ms: int) -> None:
        if isinstance(period_ms, bool) or not isinstance(period_ms, numbers.Integral):
            raise ValueError(f"motor {self.name!r}: {argument} = {period_ms!r} rejected: "
                             "the sampling period must be an integer number of ms")
        if period_ms < 0:
            raise self._reject(argument, period_ms, "the sampling period must be >= 0")
        sensor.enable(self._index, int(period_ms), self._bank.time_ms)

    def enable_position(self, sampling_period_ms: int) -> None:
        """Sample the position every ``sampling_period_ms`` ms (0 disables)."""
        self._enable(self._bank.position_sensor, "position sampling period", sampling_period_ms)

    def disable_position(self) -> None:
        self.enable_position(0)

    def get_position(self) -> float:
        """The last sampled position (NaN before the first sample or while disabled)."""
        return float(self._bank.position_sensor.value[self._index])

    def get_position_sampling_period(self) -> int:
        return int(self._bank.position_sensor.period_ms[self._index])

    def enable_force_feedback(self, sampling_period_ms: int) -> None:
        """Sample the motor force every ``sampling_period_ms`` ms (0 disables)."""
        self._enable(self._bank.force_sensor, "force feedback sampling period",
                     sampling_period_ms)

    enable_torque_feedback = enable_force_feedback

    def disable_force_feedback(self) -> None:
        self.enable_force_feedback(0)

    disable_torque_feedback = disable_force_feedback

    def get_force_feedback(self) -> float:
        """The last sampled motor force (NaN before the first sample or while disabled)."""
        return float(self._bank.force_sensor.value[self._index])

    get_torque_feedback = get_force_feedback

    def get_force_feedback_sampling_period(self) -> int:
        return int(self._bank.force_sensor.period_ms[self._index])

    get_torque_feedback_sampling_period = get_force_feedback_sampling_period

    # ------------------------------------------------------------------ true state

    @property
    def position(self) -> float:
        """True position (not sampled)."""
        return float(self._bank.position[self._index])

    @property
    def velocity(self) -> float:
        """True velocity (not sampled)."""
        return float(self._bank.velocity[self._index])

    @property
    def motor_force(self) -> float:
        """Force (torque) the motor itself applied in the last step."""
        return float(self._bank.motor_force[self._index])

    @property
    def energy(self) -> float:
        """Energy consumed so far, J: the integral of |motor force| * consumption_factor."""
        return float(self._bank.energy[self._index])

    @property
    def target_position(self) -> float:
        """The target the controller uses: after the multiplier and the soft limits."""
        return float(self._bank.target_position[self._index])

    @property
    def coupled(self) -> list[str]:
        """Names of the motors coupled with this one (this one included)."""
        return [self._bank.names[k] for k in self._group]

    # ------------------------------------------------------------------ helpers

    @property
    def _force_field(self) -> str:
        return "max_torque" if self._bank.rotational[self._index] else "max_force"
