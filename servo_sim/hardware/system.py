"""The hardware system: one plugin behind the Webots motor API (ros2_control's resource
manager, for one component).

:class:`HardwareSystem` owns the motor bank (commands, state, sensors, clock) and a
plugin, to which it gives the state and command interfaces the plugin declares (views
of the bank's arrays made once, at ``on_init``; the ``sim`` plugin, the model, gets the
bank itself). Commands go through the model's ``Motor`` handles (Webots semantics) after a
check that the plugin is active and the device supports them; :meth:`cycle` is one
control cycle, the model's step (``model/stepping.py``): supervision (watchdog, halts,
trapezoidal set-points: the model's ``safety``) -> ``read()`` -> clock and sensors ->
``write()``. Enable, disable and the e-stop are the model's and always accepted,
whatever the device's state. Before a real device's ``on_activate()`` its
position-controlled motors hold where they were read.

Failures: a ``read()`` or ``write()`` that does not return SUCCESS puts the plugin
through ``on_error()`` (-> unconfigured); from then on, once every
:data:`RECOVERY_PERIOD_MS`, the system tries ``on_configure()`` + ``on_activate()``
until the device answers again. Meanwhile nothing is written and commands are refused
with the reason; the clock runs and the last state stays. Nothing a plugin does,
raising included, escapes :meth:`cycle`.
"""

from __future__ import annotations

import functools
import logging
import math
import operator
import time
from typing import Any

import numpy as np

from ..model import Motor, Simulation
from ..model.commands import MOTOR_COMMANDS, Command, MotorCommand
from ..model.config import SimulationConfig
from ..model.motor import CommandRefusedError
from ..model.safety import FAULT_FLAGS, Move, report, status
from ..model.simulation import MIRRORED_FIELDS
from ..model.stepping import Stepper
from .base import (
    KNOWN_STATE_INTERFACES,
    CallbackReturn,
    Capabilities,
    HardwareComponent,
    HardwareInfo,
    Interfaces,
    LifecycleState,
    StateFlags,
    capability_names,
    command_modes,
    declaration_error,
)
from .registry import PluginError, load_plugin
from .sim import SimHardware

log = logging.getLogger("servo_sim")

#: How often (simulated/cycle time) a failed plugin is tried again.
RECOVERY_PERIOD_MS = 1000
#: :meth:`HardwareSystem.start` of a real device that must start now (``servo-sim run``,
#: a Webots controller): how many tries, and the wall-clock pause between them, s (a bus
#: may miss a reply as it opens; a dead one fails in 1 s).
START_ATTEMPTS, START_RETRY_S = 3, 0.5

#: The capabilities a device needs for each Motor command (any one of them is enough),
#: from the command table; commands without (enable, e-stop, sensors) are always taken.
COMMAND_CAPABILITIES: dict[str, Capabilities] = {
    c.name: functools.reduce(operator.or_, (Capabilities[n.upper()] for n in c.needs))
    for c in MOTOR_COMMANDS if c.needs}  # set_position to +-inf: VELOCITY_COMMAND
#: CommandRefusedError is the model's: the hardware refuses the same way the model does
__all__ = [
    "COMMAND_CAPABILITIES",
    "RECOVERY_PERIOD_MS",
    "START_ATTEMPTS",
    "START_RETRY_S",
    "CommandRefusedError",
    "HardwareSystem",
]


class HardwareSystem:
    """Motors of one config, driven through the hardware plugin the config names."""

    def __init__(self, config: SimulationConfig,
                 plugin: type[HardwareComponent] | None = None) -> None:
        self.sim = Simulation(config)
        settings = dict(config.hardware)
        self.plugin_name = settings.pop("plugin")
        cls = plugin if plugin is not None else load_plugin(self.plugin_name)
        self.component = cls()
        self.state = LifecycleState.UNCONFIGURED
        self.info = HardwareInfo(self.plugin_name, config, settings)
        self._retry_at_ms = 0
        self._last_report = ""
        #: the model's step with the plugin's read and write (a real device's joint
        #: acceleration measured over the cycle's period; the sim's physics keeps it)
        self._stepper = Stepper(self.sim.bank, self._read, self._write,
                                measure=not self.simulated)
        #: the ``mode`` command interface, if declared (kept by :meth:`_refresh_modes`)
        self._modes: np.ndarray | None = None
        why = declaration_error(cls)
        if why:
            self.component.reason = why
            ret = CallbackReturn.FAILURE
        else:
            if "mode" in cls.COMMAND_INTERFACES:
                self._modes = np.zeros(self.sim.bank.n, dtype=np.int64)
            state, commands = self._interface_arrays()
            where = (self.plugin_name, cls.__name__)
            self.info.state = Interfaces("state", *where, state)
            self.info.commands = Interfaces("command", *where, commands)
            if isinstance(self.component, SimHardware):  # the model itself: the bank
                self.component.bank = self.sim.bank
            ret = self._call("on_init", self.info)
        if ret is not CallbackReturn.SUCCESS:
            self.state = LifecycleState.FINALIZED
            raise PluginError(f"{config.source}: hardware {self.plugin_name!r}: "
                              f"{self.component.reason or 'on_init failed'}")

    def _interface_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The arrays of the interfaces the plugin declared: the bank's state arrays
        themselves, read-only views of its command arrays (and of ``mode``)."""
        bank, cls = self.sim.bank, type(self.component)
        state = {name: getattr(bank, KNOWN_STATE_INTERFACES[name])
                 for name in cls.STATE_INTERFACES}
        commands = {}
        for name in cls.COMMAND_INTERFACES:
            view = (self._modes if name == "mode" else getattr(bank, name)).view()
            view.flags.writeable = False
            commands[name] = view
        return state, commands

    def _refresh_modes(self) -> None:
        """The ``mode`` command interface from the command arrays (if declared)."""
        if self._modes is not None:
            command_modes(self.sim.bank, self._modes)

    # ------------------------------------------------------------------ lifecycle

    @property
    def simulated(self) -> bool:
        """True when the plugin simulates (the clock may pause, step and reset)."""
        return bool(self.component.SIMULATED)

    @property
    def active(self) -> bool:
        return self.state is LifecycleState.ACTIVE

    def start(self, *, attempts: int = 1, retry_s: float = START_RETRY_S) -> bool:
        """Active from the state the plugin is in: ``on_configure()`` if unconfigured,
        then ``on_activate()`` if inactive (nothing if active); while that fails, again
        ``retry_s`` s (wall clock) later, ``attempts`` tries in all.

        True once active; False when the tries run out or the plugin is finalized
        (``on_error()`` gave up: no further try), ``component.reason`` saying why. Each
        failure is logged as :meth:`configure` and :meth:`activate` log it.
        """
        if attempts < 1:
            raise ValueError(f"attempts = {attempts!r}: must be >= 1")
        for attempt in range(attempts):
            if attempt:
                time.sleep(retry_s)
            if self.state is LifecycleState.UNCONFIGURED:
                self.configure()
            if self.state is LifecycleState.INACTIVE:
                self.activate()
            if self.state is LifecycleState.ACTIVE:
                return True
            if self.state is LifecycleState.FINALIZED:
                return False
        return False

    def configure(self) -> bool:
        return self._transition("on_configure", LifecycleState.UNCONFIGURED,
                                LifecycleState.INACTIVE)

    def activate(self) -> bool:
        """``on_activate()``; a real device's position-controlled motors hold where
        ``on_configure()`` read them first, so that its first goals are where it stands."""
        if self.state is LifecycleState.INACTIVE:
            bank = self.sim.bank
            with bank.lock:
                if not self.simulated:
                    bank.hold_position_targets()
                self._refresh_modes()
        return self._transition("on_activate", LifecycleState.INACTIVE, LifecycleState.ACTIVE)

    def deactivate(self) -> bool:
        return self._transition("on_deactivate", LifecycleState.ACTIVE,
                                LifecycleState.INACTIVE)

    def cleanup(self) -> bool:
        return self._transition("on_cleanup", LifecycleState.INACTIVE,
                                LifecycleState.UNCONFIGURED)

    def shutdown(self) -> None:
        """Deactivate and clean up if needed, then ``on_shutdown()``: finalized."""
        if self.state is LifecycleState.ACTIVE:
            self.deactivate()
        if self.state is LifecycleState.INACTIVE:
            self.cleanup()
        if self.state is not LifecycleState.FINALIZED:
            self._call("on_shutdown")
            self.state = LifecycleState.FINALIZED

    def _transition(self, callback: str, source: LifecycleState,
                    target: LifecycleState) -> bool:
        if self.state is not source:
            raise RuntimeError(f"hardware {self.plugin_name!r}: {callback} needs state "
                               f"{source.value}, not {self.state.value}")
        ret = self._call(callback)
        if ret is CallbackReturn.SUCCESS:
            self.state = target
            return True
        if ret is CallbackReturn.FAILURE:
            self._report(logging.WARNING, f"hardware {self.plugin_name!r}: {callback} failed: "
                         f"{self.component.reason or 'no reason given'}; retrying every "
                         f"{RECOVERY_PERIOD_MS / 1000:g} s")
            self._retry_at_ms = self.sim.time_ms + RECOVERY_PERIOD_MS
        else:
            self._handle_error(callback)
        return False

    def _report(self, level: int, message: str) -> None:
        """Log ``message``, at debug level when it repeats the last one (retries)."""
        log.log(level if message != self._last_report else logging.DEBUG, message)
        self._last_report = message

    def _handle_error(self, where: str) -> None:
        """ros2_control's error path: on_error(); SUCCESS -> unconfigured, else finalized.

        The enabled motors are halted first (a move in progress is aborted), so that a
        recovered device holds where it is."""
        why = self.component.reason or "error"
        self._report(logging.ERROR, f"hardware {self.plugin_name!r}: {where}: {why}; "
                     "commands halted")
        self.sim.bank.halt_enabled(f"hardware error: {why}")
        ret = self._call("on_error")
        self.state = (LifecycleState.UNCONFIGURED if ret is CallbackReturn.SUCCESS
                      else LifecycleState.FINALIZED)
        if self.state is LifecycleState.FINALIZED:
            log.error("hardware %r: on_error failed (%s): giving up", self.plugin_name,
                      self.component.reason)
        self._retry_at_ms = self.sim.time_ms + RECOVERY_PERIOD_MS

    def _call(self, callback: str, *args: Any) -> CallbackReturn:
        """A plugin callback; an exception counts as ERROR with its message as reason."""
        try:
            ret = getattr(self.component, callback)(*args)
        except Exception as exc:  # noqa: BLE001 - nothing a plugin does may escape
            self.component.reason = f"{callback} raised {type(exc).__name__}: {exc}"
            return CallbackReturn.ERROR
        if not isinstance(ret, CallbackReturn):
            self.component.reason = f"{callback} returned {ret!r}, not a CallbackReturn"
            return CallbackReturn.ERROR
        return ret

    # ------------------------------------------------------------------ the cycle

    def cycle(self, period: float | None = None) -> bool:
        """One control cycle; ``period`` is the real time since the last (default: the
        basic time step). True if the device was read.

        The model's step (:class:`~servo_sim.model.stepping.Stepper`) with the plugin's
        read and write; while the plugin is not active, the clock runs and the retries
        come due."""
        bank = self.sim.bank
        with bank.lock:
            active = self.state is LifecycleState.ACTIVE
            if not active and self.state in (LifecycleState.UNCONFIGURED,
                                             LifecycleState.INACTIVE) \
                    and bank.time_ms >= self._retry_at_ms:
                self._recover()
            return self._stepper.step(period, active)

    def _read(self, period: float) -> bool:
        """The plugin's ``read()`` of a cycle; a failure goes through the error path."""
        if self._call("read", self.sim.bank.time_ms / 1000.0, period) \
                is CallbackReturn.SUCCESS:
            return True
        self._handle_error("read")
        return False

    def _write(self, period: float) -> bool:
        """The plugin's ``write()`` of a cycle (after the ``mode`` interface is brought up
        to date); a failure goes through the error path."""
        if self._modes is not None:
            command_modes(self.sim.bank, self._modes)
        if self._call("write", self.sim.bank.time_ms / 1000.0, period) \
                is CallbackReturn.SUCCESS:
            return True
        self._handle_error("write")
        return False

    def step(self, n: int = 1) -> None:
        """``n`` cycles (simulated time for the sim plugin)."""
        for _ in range(n):
            self.cycle()

    def _recover(self) -> None:
        """A retry of the cycle, from unconfigured or from inactive (a failed activate):
        a device that configures but does not activate is cleaned up, so that the next
        retry opens it again."""
        self._retry_at_ms = self.sim.time_ms + RECOVERY_PERIOD_MS
        reason = self.component.reason
        if self.start():
            log.info("hardware %r: recovered (was: %s)", self.plugin_name, reason)
            self._last_report = ""
        elif self.state is LifecycleState.INACTIVE:
            self.cleanup()

    # ------------------------------------------------------------------ commands

    def command(self, motor: str, command: MotorCommand, *args: Any) -> Any:
        """``command`` (a row of the command table, e.g. ``Command.POSITION``) to
        ``motor`` with ``args``, if the hardware can take it.

        Raises :class:`CommandRefusedError` (a ValueError) naming the motor, the command and
        why when the plugin is not active or a device lacks the capability; ValueError
        from the command itself as the model raises it; TypeError for anything that is
        not a row of the table.
        """
        if not isinstance(command, MotorCommand):
            raise TypeError(f"motor {motor!r}: command {command!r}: not a row of the "
                            "command table (servo_sim.model.Command)")
        handle = self.sim.motor(motor)
        self.check(handle, command.name, args)
        result = command.call(handle, *args)
        if isinstance(result, Move):  # its cancel is a halt: the same check
            result.check_cancel_with(functools.partial(self.check, handle, Command.HALT.name))
        return result

    def set_parameter(self, motor: str, field: str, value: Any) -> None:
        """Change one config field of ``motor`` at run time (``Simulation.set_parameter``);
        a field that is also a command (``control_pid``) passes the same check as the
        command (CommandRefusedError naming the motor, the command and why)."""
        mirrored = MIRRORED_FIELDS.get(field)
        if mirrored is not None:
            self.check(self.sim.motor(motor), mirrored.command.name)
        self.sim.set_parameter(motor, field, value)

    def check(self, handle: Motor, command: str, args: tuple[Any, ...] = ()) -> None:
        """Raise :class:`CommandRefusedError` unless ``command`` can go to ``handle`` now."""
        needed = COMMAND_CAPABILITIES.get(command)
        if needed is None:  # getters, sensors: served from the bank
            return
        if command == "set_position" and args and isinstance(args[0], float) \
                and math.isinf(args[0]):
            needed = Capabilities.VELOCITY_COMMAND
        if self.state is not LifecycleState.ACTIVE:
            why = self.component.reason
            raise CommandRefusedError(
                f"motor {handle.name!r}: {command} refused: hardware {self.plugin_name!r} "
                f"is {self.state.value}" + (f" ({why})" if why else ""))
        names = self.sim.bank.names
        for name in handle.coupled:
            index = names.index(name)
            if not self.component.capabilities(index) & needed:
                raise CommandRefusedError(
                    f"motor {name!r}: {command} not supported by hardware "
                    f"{self.plugin_name!r} (needs {capability_names(needed)})")

    def flags(self, motor: str) -> StateFlags:
        """The device's state flags for ``motor`` (as the plugin reports them)."""
        return StateFlags(int(self.component.flags[self.sim.motor_names.index(motor)]))

    def device_flags(self) -> np.ndarray:
        """Every motor's device flags; not ready while the plugin is not active, ERROR
        when it failed without flagging a motor."""
        flags = np.asarray(self.component.flags, dtype=np.int64).copy()
        if self.state is not LifecycleState.ACTIVE:
            flags &= ~int(StateFlags.READY | StateFlags.ENABLED)
            if self.component.reason:
                flags |= np.where(flags & int(FAULT_FLAGS), 0, int(StateFlags.ERROR))
        return flags

    def report(self) -> tuple[np.ndarray, np.ndarray]:
        """(mode, flags) of every motor: the model's state with the device's flags, one
        sample between two steps."""
        with self.sim.bank.lock:
            return report(self.sim.bank, self.device_flags())

    def status(self, reported: tuple[np.ndarray, np.ndarray] | None = None
               ) -> list[tuple[int, str]]:
        """Per motor, (diagnostic level 0/1/2, why): for /diagnostics; ``reported`` is
        :meth:`report`'s answer if the caller has it already."""
        modes, flags = reported if reported is not None else self.report()
        bank, faults = self.sim.bank, self.component.faults
        fallback = self.component.reason if self.state is not LifecycleState.ACTIVE else ""
        return [status(bank, i, int(modes[i]), int(flags[i]), faults[i] or fallback)
                for i in range(bank.n)]

    def reset(self) -> None:
        """Back to the initial state (simulated hardware only)."""
        if not self.simulated:
            raise CommandRefusedError(f"hardware {self.plugin_name!r} is real: it cannot be reset")
        self.sim.reset()  # in place: the interfaces, views of the bank's rows, stay valid
