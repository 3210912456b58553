"""The ``sim`` plugin: the model bank as a hardware component.

It is the one plugin given the :class:`~servo_sim.model.bank.MotorBank` (``self.bank``,
set by the system): it is the model. Every other plugin sees only the interfaces it
declares (``base.py``).

``read()`` advances the physics one basic time step with the commands in the bank
(the simulated device "moves" and its sensors are read); ``write()`` has nothing to
send, since the commands already sit in the arrays the physics reads. The cycle of
:class:`~servo_sim.hardware.system.HardwareSystem` and the bank's own steps
(``bank.stepper``) are the same :class:`~servo_sim.model.stepping.Stepper` with the same
read (:meth:`Stepper.physics <servo_sim.model.stepping.Stepper.physics>`): the same step.
"""

from __future__ import annotations

import numpy as np

from ..model.bank import MotorBank
from .base import CallbackReturn, Capabilities, HardwareComponent, StateFlags

#: every command: asked at each command's check (made once: the flags' | costs ~10 us)
_ALL = Capabilities.all_webots() | Capabilities.TRAPEZOIDAL_COMMAND


class SimHardware(HardwareComponent):
    """Simulated Webots motors (SPEC §2): every command and setting is supported."""

    SIMULATED = True
    #: the model's bank, set by :class:`~servo_sim.hardware.system.HardwareSystem` before
    #: ``on_init`` (no interfaces declared: the physics reads and writes the bank itself)
    bank: MotorBank = None  # type: ignore[assignment]

    def on_activate(self) -> CallbackReturn:
        self.flags[:] = StateFlags.READY | StateFlags.ENABLED
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        self.flags[:] = StateFlags.READY
        return CallbackReturn.SUCCESS

    def read(self, time: float, period: float) -> CallbackReturn:
        with np.errstate(all="ignore"):  # as Simulation.step: saturation is by design
            self.bank.stepper.physics()
        return CallbackReturn.SUCCESS

    def write(self, time: float, period: float) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def capabilities(self, index: int) -> Capabilities:
        return _ALL
