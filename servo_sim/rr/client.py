"""A Robot Raconteur client of servo_sim's servos (tests, benchmarks, scripts): a client
node of its own, a connection by URL (with a login where the service asks for one) and
``ServoCommand`` values. Only Robot Raconteur's client and the standard robdefs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import RobotRaconteur as RR  # noqa: N817 - the name its docs use


@contextmanager
def client_node() -> Iterator[Any]:
    """A Robot Raconteur client node (not the process-wide one), shut down on exit."""
    node = RR.RobotRaconteurNode()
    node.Init()
    setup = RR.ClientNodeSetup(node=node, argv=[])
    try:
        yield node
    finally:
        setup.close()


def connect(node: Any, url: str, username: str | None = None,
            password: str | None = None) -> Any:
    """The servo at ``url`` (``rr+tcp://localhost:PORT?service=NAME``)."""
    if username is None:
        return node.ConnectService(url)
    return node.ConnectService(url, username, {"password": RR.VarValue(password, "string")})


def servo_command(node: Any, servo: Any, seqno: int, status_seqno: int,
                  value: float | list[float]) -> Any:
    """A ``ServoCommand`` for ``servo``'s command wires."""
    cmd = node.NewStructure("com.robotraconteur.servo.ServoCommand", servo)
    cmd.seqno, cmd.status_seqno = seqno, status_seqno
    cmd.command = np.atleast_1d(np.asarray(value, dtype=float))
    return cmd
