"""How the node process leaves: at once, at any motor count.

Tearing a node down entity by entity costs time quadratic in its endpoints (Fast DDS
scans the participant's endpoints for every one removed, and rmw republishes the node's
entity list each time): 43 s for 100 motors. Ending the process without it (``os._exit``)
takes milliseconds, but peers keep the node and its endpoints until the DDS participant's
lease runs out (20 s by default).

So the node process, once its devices are safe, (1) finalizes its rcl node directly:
rmw removes the node from the ROS graph at once (peers' ``ros2 node list`` drops it
within milliseconds) and then deletes the DDS participant with everything in it, which
tells peers the participant is gone; (2) gives that at most ``LEAVE_BUDGET_S`` and ends
the process. The deletion also ends ``LEAVE_WITHIN_S`` after the stop signal was handled
at the latest (ten robots leaving on two cores wait for the CPU before their deletion,
and a real device's torque off comes first too), but is given ``LEAVE_AT_LEAST_S``
however late it starts. Fast DDS deletes each endpoint of a participant against every
other one (quadratic again: 1,000 services in 0.45 s, 3,500 in 10 s), so for a larger
table the deletion is cut short and peers drop the rest of its endpoints when the
participant's lease runs out (20 s by default). A shorter lease, set in a Fast DDS
profile, would shorten that, but makes every peer check the lease ten times as often,
which is what hangs peers in eProsima/Fast-DDS#6502 (a client of this node's included):
the default lease is kept.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from typing import Any, NoReturn

#: The most time the DDS participant's deletion may take before the process ends anyway
#: (about 1,000 services' worth on a 2-core machine).
LEAVE_BUDGET_S = 0.7
#: Where the deletion ends at the latest, counted from the stop signal's handling (the
#: user's Ctrl-C answered within a second, with the process's own end after it).
LEAVE_WITHIN_S = 0.75
#: The least time the deletion is given, however late it starts (the budget's floor).
LEAVE_AT_LEAST_S = 0.1


def _rcl_node_fini() -> Any:
    """``rcl_node_fini`` of the librcl this process loaded, or None."""
    try:
        with open("/proc/self/maps") as maps:
            path = next(line.split()[-1] for line in maps
                        if line.rstrip().endswith("/librcl.so"))
    except (OSError, StopIteration):
        return None
    function = ctypes.CDLL(path).rcl_node_fini
    function.argtypes = [ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


def deletion_budget(budget_s: float, signalled_at: float | None, now: float) -> float:
    """How long the participant's deletion may take from ``now``: ``budget_s``, cut so
    that it ends ``LEAVE_WITHIN_S`` after the stop signal handled at ``signalled_at``
    (``time.monotonic()``; None: no signal), but not below ``LEAVE_AT_LEAST_S`` (or
    ``budget_s`` where that is smaller)."""
    if signalled_at is None:
        return budget_s
    return min(budget_s, max(LEAVE_AT_LEAST_S, signalled_at + LEAVE_WITHIN_S - now))


def leave(node: Any, status: int = 0, budget_s: float = LEAVE_BUDGET_S,
          signalled_at: float | None = None) -> NoReturn:
    """End the process with ``status`` now: ``node`` (an rclpy Node whose executor has
    stopped) leaves the ROS graph, its DDS participant is deleted for at most
    ``budget_s`` (and, given the stop signal's ``time.monotonic()`` as ``signalled_at``,
    no later than ``LEAVE_WITHIN_S`` after it, ``LEAVE_AT_LEAST_S`` at the least), and
    nothing is torn down entity by entity."""
    import rclpy

    pointer = node.handle.pointer
    untrack = getattr(node.context, "untrack_node", None)
    if untrack is not None:  # Kilted on: shutdown would destroy the node entity by entity
        untrack(node)
    # rcutils' logging ends here: its streams (stdout, buffered in a pipe with
    # RCUTILS_LOGGING_BUFFERED_STREAM=1) and log files flushed and closed
    rclpy.try_shutdown(context=node.context)
    finalize = _rcl_node_fini()
    if finalize is not None:  # ctypes releases the GIL: the thread runs while we wait
        worker = threading.Thread(target=finalize, args=(pointer,), daemon=True)
        worker.start()
        worker.join(deletion_budget(budget_s, signalled_at, time.monotonic()))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
