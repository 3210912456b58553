"""Spinning until a stop signal: what both entry points of the ROS layer share (the
node's in ``entry.py``, the client's in ``client.py``), below both so that neither
imports the other for it. No ROS import: the executor is any object with
``spin_once(timeout_sec=...)``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType

#: How long one executor wait may block, so that a signal is handled promptly even
#: when nothing else wakes the executor.
_WAKE_S = 0.1


class StopSignals:
    """Turns SIGINT and SIGTERM into a flag the spin loop checks, instead of rclpy's handler.

    rclpy's own handler shuts the context down from the signal while the executor may be
    building its wait set (``RCLError: failed to initialize wait set: the given context
    is not valid`` with some rclpy versions). Here the main thread alone shuts down,
    after the loop, and more signals (Ctrl-C reaches the whole process group, launch
    forwards one more) only set the flag again.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: int | None = None
        #: ``time.monotonic()`` when the first signal was handled (a busy process handles
        #: it after the executor's current wait, up to ``_WAKE_S``, or later when starved).
        self.received_at: float | None = None
        #: Until the spin loop runs (a long start-up), a signal interrupts at once.
        self.interrupting = True
        self._previous = {s: signal.signal(s, self._handle) for s in self.SIGNALS}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received_at is None:
            self.received_at = time.monotonic()
        self.received = signum
        if self.interrupting:  # the first signal only: the next ones find the flag set
            self.interrupting = False
            raise KeyboardInterrupt

    def restore(self) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)


def spin_until_signal(executor: object, stop: StopSignals,
                      done: Callable[[], bool] = lambda: False) -> None:
    """Spin ``executor`` until a stop signal arrives or ``done()``."""
    stop.interrupting = False
    while stop.received is None and not done():
        executor.spin_once(timeout_sec=_WAKE_S)
