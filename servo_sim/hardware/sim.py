"""The ``sim`` plugin: the model bank as a hardware component.

``read()`` advances the physics one basic time step with the commands in the bank
(the simulated device "moves" and its sensors are read); ``write()`` has nothing to
send, since the commands already sit in the arrays the physics reads. The cycle of
:class:`~servo_sim.hardware.system.HardwareSystem` is therefore exactly
:meth:`MotorBank.step`.
"""

from __future__ import annotations

import numpy as np

from .base import CallbackReturn, Capabilities, HardwareComponent, StateFlags


class SimHardware(HardwareComponent):
    """Simulated Webots motors (SPEC §2): every command and setting is supported."""

    SIMULATED = True

    def on_activate(self) -> CallbackReturn:
        self.flags[:] = StateFlags.READY | StateFlags.ENABLED
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        self.flags[:] = StateFlags.READY
        return CallbackReturn.SUCCESS

    def read(self, time: float, period: float) -> CallbackReturn:
        with np.errstate(all="ignore"):  # as Simulation.step: saturation is by design
            self.bank.step_physics()
        return CallbackReturn.SUCCESS

    def write(self, time: float, period: float) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def capabilities(self, index: int) -> Capabilities:
        return Capabilities.all_webots() | Capabilities.TRAPEZOIDAL_COMMAND
