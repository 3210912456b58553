"""How the node process leaves: at once, at any motor count, without a stale graph.

Tearing a node down entity by entity costs time quadratic in its endpoints (Fast DDS
scans the participant's endpoints for every one removed, and rmw republishes the node's
entity list each time): 43 s for 100 motors. Ending the process without it (``os._exit``)
takes milliseconds, but peers keep the node and its endpoints until the DDS participant's
lease runs out (20 s by default).

So the node process, once its devices are safe, (1) finalizes its rcl node directly:
rmw removes the node from the ROS graph at once (peers' ``ros2 node list`` drops it
within milliseconds) and then deletes the DDS participant with everything in it, which
tells peers the participant is gone; (2) gives that at most ``LEAVE_BUDGET_S`` (enough
for a few hundred endpoints) and ends the process. Where the deletion is not finished
by then, peers drop the rest when the participant's lease runs out:
:func:`short_lease_profile` makes that 2 s on Fast DDS (``config/fastdds_short_lease.xml``),
unless the user configured Fast DDS profiles of their own.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

from ..resources import share_candidates

#: The most time the DDS participant's deletion may take before the process ends anyway.
LEAVE_BUDGET_S = 0.5
#: The Fast DDS profile of the node process: a 2 s participant lease.
PROFILE_NAME = "fastdds_short_lease.xml"

#: The environment variables and working-directory files through which Fast DDS (2.x
#: FASTRTPS_*, 3.x FASTDDS_*) loads a user's XML profiles.
_PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
_PROFILE_FILES = ("DEFAULT_FASTRTPS_PROFILES.xml", "DEFAULT_FASTDDS_PROFILES.xml")
_FAST_DDS_RMWS = ("", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")


def short_lease_profile(environ: dict[str, str] | None = None,
                        cwd: Path | None = None) -> str | None:
    """Set up the short-lease Fast DDS profile in ``environ`` (``os.environ``) before
    rclpy.init; return why not where it is not used: another RMW, or the user's own
    profiles (a profile variable set, or a default profile file in the working
    directory, or ``SKIP_DEFAULT_XML``), which are left as they are."""
    env = os.environ if environ is None else environ
    rmw = env.get("RMW_IMPLEMENTATION", "")
    if rmw not in _FAST_DDS_RMWS:
        return f"RMW {rmw}"
    for name in (*_PROFILE_VARIABLES, "SKIP_DEFAULT_XML"):
        if env.get(name):
            return f"{name} is set"
    directory = Path.cwd() if cwd is None else cwd
    for name in _PROFILE_FILES:
        if (directory / name).is_file():
            return f"{directory / name} exists"
    path = next((p for p in share_candidates("config", PROFILE_NAME) if p.is_file()), None)
    if path is None:
        return f"no {PROFILE_NAME} installed"
    env[profile_variable(env)] = str(path)
    return None


def profile_variable(environ: dict[str, str]) -> str:
    """The profile variable of the Fast DDS beside this ROS 2: FASTRTPS_* for 2.x
    (libfastrtps, Jazzy), else FASTDDS_* (libfastdds, Kilted on; 3.x warns that the old
    name is deprecated, 2.x does not read the new one)."""
    prefixes = [*filter(None, environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)),
                sys.prefix]
    for prefix in prefixes:
        if Path(prefix, "lib", "libfastdds.so").exists():
            return "FASTDDS_DEFAULT_PROFILES_FILE"
        if Path(prefix, "lib", "libfastrtps.so").exists():
            return "FASTRTPS_DEFAULT_PROFILES_FILE"
    return "FASTDDS_DEFAULT_PROFILES_FILE"


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


def leave(node: Any, status: int = 0, budget_s: float = LEAVE_BUDGET_S) -> NoReturn:
    """End the process with ``status`` now: ``node`` (an rclpy Node whose executor has
    stopped) leaves the ROS graph, its DDS participant is deleted for at most
    ``budget_s``, and nothing is torn down entity by entity."""
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
        worker.join(budget_s)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
