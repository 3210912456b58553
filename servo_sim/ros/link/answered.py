"""A service call that a live node answers under load: the request is sent again after
a bounded wait while no answer came, where ``servo_sim.ros.link.resend`` says that is
safe (issue 61: rmw_fastrtps drops a response that its server cannot match to the
client's reader in time). ``servo-sim-client call`` and the fleet tests' newcomers call
through here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rclpy.client import Client

from .resend import resend_offsets

#: How long one executor wait may block, so that a due re-send, the deadline or a stop
#: is seen promptly.
_WAKE_S = 0.05


@dataclass(frozen=True)
class Outcome:
    """What a call came to: the response (None if none came) and how many times the
    request was sent."""

    response: Any | None
    sent: int


def call_answered(client: Client, request: Any, timeout_s: float, executor: Any,
                  resend: bool, stopped: Callable[[], bool] = lambda: False) -> Outcome:
    """Send ``request`` through ``client`` and spin ``executor`` (which has the client's
    node) until an answer to any of its sends, ``timeout_s`` or ``stopped()``; with
    ``resend``, send it again at each of ``resend_offsets(timeout_s)`` while no answer
    came. The first answer wins; the requests still pending are forgotten."""
    start = time.monotonic()
    futures = [client.call_async(request)]
    due = iter(resend_offsets(timeout_s) if resend else ())
    next_send = next(due, None)

    def answered() -> Any | None:
        return next((f for f in futures if f.done()), None)

    try:
        while True:
            elapsed = time.monotonic() - start
            if (done := answered()) is not None:
                return Outcome(done.result(), len(futures))
            if elapsed >= timeout_s or stopped():
                return Outcome(None, len(futures))
            if next_send is not None and elapsed >= next_send:
                futures.append(client.call_async(request))
                next_send = next(due, None)
            wake = timeout_s if next_send is None else min(next_send, timeout_s)
            executor.spin_once(timeout_sec=max(0.0, min(_WAKE_S, wake - elapsed)))
    finally:
        for f in futures:
            if not f.done():
                client.remove_pending_request(f)
                f.cancel()
