"""What the serial-bus servo plugins (``dynamixel``, ``feetech``) share.

Both vendors' SDKs have the same shape (``PortHandler``, a packet handler with
``getTxRxResult``, ``GroupSyncWrite``; ``COMM_SUCCESS`` is 0 in both), and both plugins
run the same cycle: one sync read of the present values, then the settings where they
changed and one sync write of the goals. :class:`SerialBusHardware` holds that, and
the lifecycle around it; a plugin provides the vendor parts (:meth:`_read_present`,
:meth:`_write_settings`, :meth:`_goal_bytes`, :meth:`_torque`, :meth:`_clear_error`,
optionally :meth:`_activate_settings`) and records in ``_written[i]`` the settings it
last wrote to motor ``i``, its operating mode first. Both declare the state interfaces
and the ``mode`` command interface; each adds the commands it sends.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import numpy as np

from ..model.config import ros_name
from .base import CallbackReturn, HardwareComponent, HardwareInfo, StateFlags

COMM_SUCCESS = 0  # dynamixel-sdk's and feetech-servo-sdk's
#: attempts at switching one servo's torque off before a warning says it may be on
TORQUE_OFF_ATTEMPTS = 2
#: tries of a read whose reply is missing or corrupt (a busy bus, or a busy machine
#: under an emulated one, loses a reply now and then), in a cycle and while configuring
READ_TRIES = 2

log = logging.getLogger("servo_sim")


def integer_in(value: Any, low: int, high: int) -> bool:
    """True if ``value`` is an int (not a bool) within [low, high]: a setting's check."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def positive_number(value: Any) -> bool:
    """True if ``value`` is a finite real number > 0 (not a bool): a setting's check."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value) and value > 0


def register(value: float, low: int, high: int) -> int:
    """``value`` in register units, clamped to the register's range [low, high] before
    rounding (so that a huge or infinite command cannot overflow the register)."""
    return round(min(max(value, low), high))


class SerialBusHardware(HardwareComponent):
    """Servos on one serial bus, each motor a servo id (see the module docstring)."""

    #: the bus-level settings besides port and baud_rate
    BUS_SETTINGS: ClassVar[tuple[str, ...]] = ()
    #: operating modes in which a servo goes on moving by itself (a velocity, a current):
    #: on_error switches their torque off while the bus recovers
    FREE_RUNNING_MODES: ClassVar[tuple[int, ...]] = ()
    STATE_INTERFACES = ("position", "velocity", "effort")

    def parse_bus(self, info: HardwareInfo, baud_rates: Iterable[int]) -> str:
        """Check port, baud_rate and that nothing else is at the top of the group; set
        ``port_name``, ``baud_rate``, ``ids``, ``units``. '' or why not."""
        settings = info.settings
        port = settings.get("port")
        if not isinstance(port, str) or not port:
            return f"setting 'port' = {port!r}: must be a serial port path"
        baud = settings.get("baud_rate", 1000000)
        if baud not in baud_rates or isinstance(baud, bool):
            return f"setting 'baud_rate' = {baud!r}: must be one of " \
                + ", ".join(map(str, baud_rates))
        known = {"plugin", "port", "baud_rate", *self.BUS_SETTINGS} \
            | {ros_name(m.name) for m in info.motors} | {m.name for m in info.motors}
        extra = sorted(set(settings) - known)
        if extra:
            return (f"unknown setting(s) {', '.join(map(repr, extra))} (known: "
                    + ", ".join(("port", "baud_rate", *self.BUS_SETTINGS))
                    + " and one group per motor)")
        self.port_name, self.baud_rate = port, baud
        self.ids: list[int] = []
        self.units: list[dict[str, Any]] = []
        self.port = None
        self._written: dict[int, tuple] = {}  # per motor: (operating mode, ...) last written
        return ""

    def check_ids(self) -> CallbackReturn:
        """SUCCESS, or FAILURE if two motors have one id."""
        if len(set(self.ids)) != len(self.ids):
            dup = next(i for i in self.ids if self.ids.count(i) > 1)
            return self.fail(f"id {dup} is given to more than one motor")
        return CallbackReturn.SUCCESS

    def open_port(self, port_handler: Any) -> bool:
        """Open ``port_handler`` at the baud rate; False with ``reason`` set if not."""
        self._close()
        self.port = port_handler
        why = f"cannot open {self.port_name} at {self.baud_rate}"
        try:
            opened = self.port.openPort() and self.port.setBaudRate(self.baud_rate)
        except Exception as exc:  # noqa: BLE001 - pyserial's SerialException, OSError
            opened, why = False, f"cannot open {self.port_name}: {exc}"
        if not opened:
            self.port = None
            self.reason = why
        return opened

    # ------------------------------------------------------------------ lifecycle

    def on_activate(self) -> CallbackReturn:
        """Write the settings, torque on (the system has set the position-controlled
        servos' goals to where they are)."""
        self._written = {}  # torque off since configure or deactivate: write it all
        ret = self._activate_settings()
        if ret is CallbackReturn.SUCCESS:
            ret = self._send()
        if ret is CallbackReturn.SUCCESS:
            self.flags[:] = StateFlags.READY | StateFlags.ENABLED
        return ret

    def on_error(self) -> CallbackReturn:
        """Clear the servos that report a hardware error, and switch the torque off where
        one is in a FREE_RUNNING_MODES mode, whatever failed (best effort: it would go on
        turning or pushing); the system then retries configure."""
        if self.port is not None:
            self._free_port()
            for i in range(len(self.ids)):
                if self.flags[i] & StateFlags.ERROR:
                    self._clear_error(i)
                elif self._written.get(i, (None,))[0] in self.FREE_RUNNING_MODES:
                    self._torque_off(i)
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        self._torque_off_all()
        self.flags[:] = StateFlags.READY
        return CallbackReturn.SUCCESS

    def on_cleanup(self) -> CallbackReturn:
        """Torque off (an activation a signal interrupted may have switched it on), then
        release the port."""
        if self.port is not None:
            self._torque_off_all()
        self._close()
        return CallbackReturn.SUCCESS

    def on_shutdown(self) -> CallbackReturn:
        if self.port is not None:
            self._torque_off_all()
        self._close()
        return CallbackReturn.SUCCESS

    def read(self, time: float, period: float) -> CallbackReturn:
        return self._read_present()

    def write(self, time: float, period: float) -> CallbackReturn:
        return self._send()

    # ------------------------------------------------------------------ the cycle

    def _send(self) -> CallbackReturn:
        """The commands of every servo: settings where they changed, then the goals (the
        ``mode`` command interface for both)."""
        modes = self.commands.mode
        ret = self._write_settings(modes)
        return self._write_goals(modes) if ret is CallbackReturn.SUCCESS else ret

    def _write_goals(self, modes: np.ndarray) -> CallbackReturn:
        """One sync write of the goals of every servo."""
        self.writer.clearParam()
        for i, servo_id in enumerate(self.ids):
            self.writer.addParam(servo_id, self._goal_bytes(i, int(modes[i])))
        result = self.writer.txPacket()
        if result != COMM_SUCCESS:
            return self._lost(None, "sync write", result)
        return CallbackReturn.SUCCESS

    def _torque_off_all(self) -> None:
        self._free_port()
        for i in range(len(self.ids)):
            self._torque_off(i)

    def _torque_off(self, i: int) -> None:
        """Torque Enable 0 on motor ``i``, a second time if the first got no good answer
        (the write may be lost on the wire); a warning if neither did."""
        for _ in range(TORQUE_OFF_ATTEMPTS):
            result = self._torque(i, 0)
            if result == COMM_SUCCESS:
                return
        log.warning(f"motor {self.info.motor_names[i]!r} (id {self.ids[i]}): torque off got no "
                    f"answer ({self.packet.getTxRxResult(result)}): it may still be on")

    def _free_port(self) -> None:
        """End the transaction a signal interrupted: its KeyboardInterrupt inside the SDK's
        wait for an answer leaves the port 'in use', and the SDK would refuse every later
        transaction without sending it (COMM_PORT_BUSY), the torque off too. Nothing else
        uses the port; the late answer of that transaction is dropped."""
        self.port.is_using = False
        try:
            self.port.ser.reset_input_buffer()
        except Exception:  # noqa: BLE001 - a port that is gone: the writes will say so
            pass

    def _close(self) -> None:
        if getattr(self, "port", None) is not None:
            try:
                self.port.closePort()
            except Exception:  # noqa: BLE001 - closing a dead port
                pass
            self.port = None

    # ------------------------------------------------------------------ reads

    def ask(self, i: int, what: str, call: Callable[..., tuple], *args: Any,
            code: CallbackReturn = CallbackReturn.FAILURE) -> tuple[Any, int] | None:
        """``call(port, id of motor i, *args)``, an SDK read returning (data, result,
        error), tried again where the reply is missing or corrupt (READ_TRIES in all):
        (data, error bits), or None once every try failed, the last failure flagged and
        said as the device's error (``code``: what the caller returns then)."""
        for attempt in range(READ_TRIES):
            data, result, error = call(self.port, self.ids[i], *args)
            if result == COMM_SUCCESS:
                return data, error
            if attempt + 1 < READ_TRIES:
                self._drop_input()
        self._lost(i, what, result, code)
        return None

    def read_tried(self, read_all: Callable[[], tuple[dict, tuple | None]]
                   ) -> tuple[dict, CallbackReturn]:
        """``read_all()`` -> (replies, None) or (partial replies, (motor or None, what,
        the SDK's result)), tried again where a reply is missing or corrupt (READ_TRIES in
        all): (replies, SUCCESS), or ({}, ERROR) with the last failure flagged and said."""
        for attempt in range(READ_TRIES):
            replies, failed = read_all()
            if failed is None:
                return replies, CallbackReturn.SUCCESS
            if attempt + 1 < READ_TRIES:
                self._drop_input()
        return {}, self._lost(*failed)

    def _drop_input(self) -> None:
        """What is left of a failed transaction's replies."""
        self.port.ser.reset_input_buffer()

    # ------------------------------------------------------------------ errors

    def _flag(self, i: int, flag: StateFlags) -> None:
        self.flags[i] = (int(self.flags[i]) | flag) & ~int(StateFlags.ENABLED)

    def _lost(self, i: int | None, what: str, result: int,
              code: CallbackReturn = CallbackReturn.ERROR) -> CallbackReturn:
        """A transaction with motor ``i`` (every motor: None) failed: flag it, say why."""
        why = f"{what}: {self.packet.getTxRxResult(result)}"
        for k in range(len(self.ids)) if i is None else (i,):
            self._flag(k, StateFlags.COMMUNICATION_FAILURE)
        if i is not None:
            why = f"motor {self.info.motor_names[i]!r} (id {self.ids[i]}): {why}"
        return self.fail(why, code)

    # ------------------------------------------------------------------ the vendor's

    def _read_present(self) -> CallbackReturn:
        raise NotImplementedError

    def _write_settings(self, modes: np.ndarray) -> CallbackReturn:
        raise NotImplementedError

    def _goal_bytes(self, i: int, mode: int) -> list[int]:
        raise NotImplementedError

    def _torque(self, i: int, value: int) -> int:
        """Torque Enable of motor ``i``; the SDK's result (COMM_SUCCESS: answered)."""
        raise NotImplementedError

    def _clear_error(self, i: int) -> None:
        """What clears motor ``i``'s hardware error (on_error)."""
        raise NotImplementedError

    def _activate_settings(self) -> CallbackReturn:
        """Settings written once at activation, before the first goals."""
        return CallbackReturn.SUCCESS
