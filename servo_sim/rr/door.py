"""The Robot Raconteur door of a runtime: one ``com.robotraconteur.servo.Servo`` service
per motor on one Robot Raconteur node.

One service per motor, named by the motor's ROS name (``rr+tcp://HOST:PORT?service=arm``):
the standard ``Servo`` is one servo, so a client that knows only the standard robdefs
and a URL reaches any motor, and each motor has its own ``servo_info``, mode, wires and
per-client downsampling. (A root object with a member per motor would need a robdef of
our own.)

The host runs the runtime and calls :meth:`Door.publish` after every cycle, which takes
the sample and leaves the sending to the door's own thread (the latest sample: the
cycle never waits for Robot Raconteur); the services'
requests come on Robot Raconteur's threads and go through the runtime, whose
bank lock orders them with the cycle. :func:`serve` starts a node and the door: loopback
only unless asked, behind password authentication with a users file.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import RobotRaconteur as RR  # noqa: N817 - the name its docs use
from RobotRaconteurCompanion.StdRobDef import RegisterStdRobDefServiceTypes
from RobotRaconteurCompanion.Util.DateTimeUtil import DateTimeUtil

from ..model import ros_name
from ..runtime import Runtime
from . import info
from .servo import STATUS_WINDOW, Servo

#: The Robot Raconteur type of every motor's service.
SERVO_TYPE = "com.robotraconteur.servo.Servo"
#: How often (wall time) the door checks which services have clients on a wire or pipe.
LISTENERS_PERIOD_S = 0.1


class Door:
    """Every motor of ``runtime`` as a service on ``node`` (see the module docstring)."""

    def __init__(self, runtime: Runtime, node: Any, policy: Any = None) -> None:
        self.runtime, self.node = runtime, node
        self.types = info.Types(node)
        self._time = DateTimeUtil(node)
        self._epoch = self._time.TimeSpec2Now()
        self._timespec3 = node.GetNamedArrayDType("com.robotraconteur.datetime.TimeSpec3")
        #: servo_state's sequence number: the cycles published so far
        self.seqno = 0
        #: servo_state's seqnos as clients see them: the last samples sent (every
        #: cycle's while nobody listens); command wires' status_seqno is checked
        #: against them (servo.STATUS_WINDOW samples back)
        self.sent: deque[int] = deque([0], maxlen=STATUS_WINDOW + 1)
        self.servos = [Servo(self, name, ros_name(name)) for name in self.runtime.motor_names]
        self._listened: list[Servo] = []
        self._next_listen = 0.0
        #: the latest sample not yet sent, and the sender thread it wakes
        self._sample: tuple | None = None
        self._wake = threading.Condition()
        self._closing = False
        self._sender = threading.Thread(target=self._send_loop, name="rr-door", daemon=True)
        for servo in self.servos:
            if policy is None:
                node.RegisterService(servo.service, SERVO_TYPE, servo)
            else:
                node.RegisterService(servo.service, SERVO_TYPE, servo, policy)
        self._sender.start()  # the services' wires exist now

    def isoch_info(self) -> Any:
        """The rate the wires update at (the runtime's cycles per wall second)."""
        period = self.runtime.period or self.runtime.step_ms / 1000.0
        return info.isoch_info(self.types, 1.0 / period, self._epoch)

    def publish(self, cycle: Any = None) -> None:
        """After a cycle: the sample of every motor, for the sender thread to put on the
        wires and pipes that have clients (a sample the sender had no time for is
        replaced by the next: Robot Raconteur's sends take ~1 ms each on a busy machine,
        and the runtime's cycle does not wait for them)."""
        self.seqno += 1
        if not self._listened:
            self.sent.append(self.seqno)
            if time.monotonic() >= self._next_listen:  # the sender asks while it sends
                with self._wake:
                    self._wake.notify()
            return
        modes, flags, *values = self.runtime.servo_states()
        spec = self.node.NowTimeSpec()
        sample = (self.seqno, spec.seconds * 1_000_000 + spec.nanoseconds // 1000, modes,
                  flags, np.stack(values, axis=1))
        with self._wake:
            self._sample = sample
            self._wake.notify()

    def close(self) -> None:
        """The sender thread ended (before the node shuts down)."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._sender.join()

    def _send_loop(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._sample is not None or self._closing
                                    or time.monotonic() >= self._next_listen)
                if self._closing:
                    return
                sample, self._sample = self._sample, None
            if time.monotonic() >= self._next_listen:
                self._next_listen = time.monotonic() + LISTENERS_PERIOD_S
                self._listened = [s for s in self.servos if s.listened]
            if sample is not None:
                self._send(*sample)

    def _send(self, seqno: int, microseconds: int, modes: np.ndarray, flags: np.ndarray,
              rows: np.ndarray) -> None:
        """One sample on every listened service's wires and pipe."""
        self.sent.append(seqno)
        ts = np.zeros((1,), dtype=self._timespec3)
        ts[0]["microseconds"] = microseconds
        ts2 = functools.cache(self._time.TimeSpec2Now)  # once a sample, where a pipe needs it
        for servo in self._listened:
            i = servo.index
            servo.publish(seqno, ts, tuple(rows[i].tolist()), int(modes[i]), int(flags[i]),
                          ts2, lambda s=servo: self._time.FillDeviceTime(s.device_info, seqno))

    def url(self, port: int, servo: Servo, host: str = "localhost") -> str:
        return f"rr+tcp://{host}:{port}?service={servo.service}"


def security_policy(users: Path) -> Any:
    """Password authentication from a Robot Raconteur users file (each line ``USER
    MD5-OF-PASSWORD PRIVILEGES``): a client without a valid login gets nothing."""
    authenticator = RR.PasswordFileUserAuthenticator(users.read_text())
    return RR.ServiceSecurityPolicy(authenticator, {"requirevaliduser": "true",
                                                    "allowobjectlock": "true"})


def node_flags(listen_all: bool) -> int:
    """TCP only; on loopback unless ``listen_all`` (then announced on the network too)."""
    flags = (RR.RobotRaconteurNodeSetupFlags_ENABLE_TCP_TRANSPORT
             | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_START_SERVER)
    if listen_all:
        return flags | RR.RobotRaconteurNodeSetupFlags_ENABLE_NODE_ANNOUNCE
    return flags | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_LISTEN_LOCALHOST


@contextmanager
def serve(runtime: Runtime, port: int = 0, *, listen_all: bool = False,
          users: Path | None = None, node_name: str = "servo_sim") -> Iterator[tuple[Door, int]]:
    """A Robot Raconteur node serving ``runtime``'s motors on TCP ``port`` (0: a free
    one): yields the door and the port; the node shuts down on exit (clients see the
    disconnect)."""
    policy = security_policy(users) if users is not None else None
    node = RR.RobotRaconteurNode()
    node.Init()
    setup = RR.RobotRaconteurNodeSetup(node_name, port, node_flags(listen_all), 0, node, [])
    try:
        RegisterStdRobDefServiceTypes(node)
        door = Door(runtime, node, policy)
        try:
            yield door, setup.tcp_transport.GetListenPort()
        finally:
            door.close()
    finally:
        setup.close()
