"""The node's Robot Raconteur door (issue 55): with ``robot_raconteur_port`` >= 0, every
motor of the node is also a ``com.robotraconteur.servo.Servo`` service (``servo_sim.rr``),
on loopback: one runtime, both doors, the same motors.

The door publishes after each cycle the node publishes (``Outputs.cycle_listeners``);
its requests come on Robot Raconteur's threads and go through the node's hardware
system, whose bank lock orders them with the cycle, as ``servo-sim-rr``'s do. Robot
Raconteur is imported only when the door is asked for (and only in ``servo_sim.rr``).
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any

from ...model import ConfigError
from ...runtime import Cycle, Runtime

log = logging.getLogger("servo_sim")  # the node's log (RosLogHandler)


class RrDoor:
    """The Robot Raconteur door of ``runtime`` on TCP ``port`` (0: a free one), its
    Robot Raconteur node named ``name`` (the ROS node's), open until :meth:`close`."""

    def __init__(self, runtime: Runtime, port: int, name: str = "servo_sim") -> None:
        try:
            from ...rr.door import serve
        except ImportError as exc:
            raise ConfigError(f"parameter 'robot_raconteur_port' = {port}: Robot Raconteur "
                              f"is not installed ({exc}; pip install "
                              "'servo_sim[rr]')") from None
        self._stack = ExitStack()
        try:
            self.door, self.port = self._stack.enter_context(serve(runtime, port, node_name=name))
        except Exception as exc:  # noqa: BLE001 - Robot Raconteur's own (a port in use)
            raise ConfigError(f"parameter 'robot_raconteur_port' = {port}: cannot serve: "
                              f"{exc}") from None

    def publish(self, cycle: Cycle) -> None:
        """One sample on every listened wire (after each cycle)."""
        self.door.publish(cycle)

    def urls(self) -> str:
        """Where the services are, for the node's log."""
        first = self.door.servos[0]
        return (f"Robot Raconteur door: {len(self.door.servos)} servo(s) on port {self.port}, "
                f"rr+tcp://localhost:{self.port}?service=<motor ROS name> (e.g. "
                f"{self.door.url(self.port, first)})")

    def close(self) -> None:
        """The node's Robot Raconteur node down (clients see the disconnect; idempotent)."""
        self._stack.close()


def open_door(runtime: Runtime, port: int, listeners: list[Any], name: str) -> RrDoor | None:
    """The door on ``port`` (None when -1: off) as the Robot Raconteur node of the ROS
    node ``name`` (``/rrn/servo_sim``: ``rrn.servo_sim``), a cycle listener; URLs logged."""
    if port < 0:
        return None
    door = RrDoor(runtime, port, name.strip("/").replace("/", "."))
    listeners.append(door.publish)
    log.info(door.urls())
    return door
