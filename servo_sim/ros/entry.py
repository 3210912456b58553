"""Process entry points of the ROS layer: ``servo_sim_node`` and ``servo-sim-client``.

Imports ROS lazily, so that a Python without ROS 2 gets one line saying what to do
instead of a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .spin import StopSignals, spin_until_signal

_NO_ROS = ("needs ROS 2: rclpy and servo_sim's built interfaces ({exc}). Set up a venv with "
           "scripts/setup-ros-venv, or source a ROS 2 installation and colcon build servo_sim")


def _ros_or_exit(program: str) -> None:
    try:
        import rclpy  # noqa: F401

        from servo_sim import msg  # noqa: F401
    except ImportError as exc:
        print(f"{program}: {_NO_ROS.format(exc=exc)}", file=sys.stderr)
        raise SystemExit(1) from None


_EXECUTOR_CLASSES = {"events": "rclpy.experimental.EventsExecutor",
                     "single_threaded": "rclpy.executors.SingleThreadedExecutor"}


def make_executor(choice: str = "auto", context: Any = None) -> tuple[Any, str]:
    """The executor the ``executor`` parameter asks for, and what it is.

    ``auto`` and ``events``: rclpy's EventsExecutor (rclpy >= 7.1.4 in Jazzy, and Kilted),
    whose wait set is not rebuilt in Python on every spin; where rclpy has none, the
    SingleThreadedExecutor (``events`` says so as a warning).
    """
    from rclpy.executors import SingleThreadedExecutor

    if choice in ("auto", "events"):
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            if choice == "events":
                import rclpy.logging

                rclpy.logging.get_logger("servo_sim").warning(
                    "executor 'events': this rclpy has no EventsExecutor; using "
                    "single_threaded")
        else:
            return EventsExecutor(context=context), "events"
    return SingleThreadedExecutor(context=context), "single_threaded"


def node_main(args: list[str] | None = None) -> int:
    """``servo_sim_node [--ros-args ...]`` (``ros2 run servo_sim servo_sim_node``)."""
    # Before numpy is imported: its bundled OpenBLAS otherwise starts a worker thread that
    # spins about 0.1 s of CPU at import, a third of a node's start-up CPU (ten robots
    # starting at once on two cores wait for it); the bank's per-motor arrays gain
    # nothing from threaded BLAS. A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    stop = StopSignals()  # before init: a Ctrl-C during start-up ends the node quietly too
    _ros_or_exit("servo_sim_node")
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from ..model import ConfigError
    from .leave import leave
    from .node import ServoSimNode

    node = executor = None
    try:
        try:
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except Exception as exc:  # noqa: BLE001 - rcl's errors (a missing --params-file)
            raise ConfigError(f"cannot start: {exc}") from None
        node = ServoSimNode()
        # from here a signal only sets the flag, which the spin loop checks at once: an
        # exception raised inside rclpy's Executor.__init__ leaves an executor whose
        # __del__ prints an AttributeError traceback ('_sigint_gc')
        stop.interrupting = False
        executor, kind = make_executor(node.get_parameter("executor").value)
        node.get_logger().info(f"executor: {kind} ({_EXECUTOR_CLASSES[kind]})")
        executor.add_node(node)
        spin_until_signal(executor, stop)
    except ConfigError as exc:
        rclpy.logging.get_logger(exc.logger_name or "servo_sim").fatal(str(exc))
        rclpy.try_shutdown()
        stop.restore()
        return 1
    except KeyboardInterrupt:  # a signal during start-up: leave as after spinning
        pass
    except BaseException:  # a bug: real devices torque off all the same
        if node is not None:
            node.stop_hardware()
        raise
    stop.interrupting = False
    if node is None:  # interrupted before the node existed
        rclpy.try_shutdown()
        stop.restore()
        return 0
    if executor is not None:
        executor.shutdown()
    node.stop_hardware()  # real devices torque off first
    leave(node, signalled_at=stop.received_at)  # never returns: see leave.py


def client_main(argv: list[str] | None = None) -> int:
    """``servo-sim-client``: call a service or echo a topic of the node (see client.py)."""
    _ros_or_exit("servo-sim-client")
    from .link.client import main

    return main(argv)
