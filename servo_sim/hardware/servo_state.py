"""Every motor's servo state (seed 004 ``ServoState``), one consistent sample: what the
ROS node's ``~/servo_state`` and Robot Raconteur's ``servo_state`` wire publish."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.safety import commands
from .system import HardwareSystem


class ServoStates(NamedTuple):
    """Per motor (index of ``sim.motor_names``), named as ``ServoState``'s fields."""

    mode: np.ndarray
    servo_state_flags: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray
    #: the commands in force (after the multiplier), NaN where a motor follows none
    position_command: np.ndarray
    velocity_command: np.ndarray
    effort_command: np.ndarray


def servo_states(system: HardwareSystem) -> ServoStates:
    """Mode and flags (the model's state with the device's flags), the measured values
    and the commands in force of every motor, taken under the bank lock (commands come
    from any thread): arrays of their own, not the bank's."""
    bank = system.sim.bank
    with bank.lock:
        modes, flags = system.report()
        return ServoStates(modes, flags, *bank.measured(), *commands(bank))
