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
only unless asked (then announced for discovery), on the local transport too (found by
``FindServiceByType`` on the same machine), behind password authentication with a users
file, with Robot Raconteur's own ``--robotraconteur-*`` node options (TLS among them).
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from RobotRaconteurCompanion.StdRobDef import RegisterStdRobDefServiceTypes
from RobotRaconteurCompanion.Util.DateTimeUtil import DateTimeUtil

from ..model import ros_name
from ..runtime import Runtime
from . import info, security
from .servo import STATUS_WINDOW, Servo

#: The Robot Raconteur type of every motor's service.
SERVO_TYPE = "com.robotraconteur.servo.Servo"
#: How often (wall time) the door checks which services have clients on a wire or pipe
#: (a new client's first value waits at most this long; the check costs ~1 us a member).
LISTENERS_PERIOD_S = 0.01


class Door:
    """Every motor of ``runtime`` as a service on ``node`` (see the module docstring)."""

    def __init__(self, runtime: Runtime, node: Any, policy: Any = None) -> None:
        self.runtime, self.node = runtime, node
        #: the URL scheme clients use: rrs+tcp where the node requires TLS (serve())
        self.scheme = "rr+tcp"
        self.types = info.Types(node)
        self._time = DateTimeUtil(node)
        self._epoch = self._time.TimeSpec2Now()
        self.timespec3 = node.GetNamedArrayDType("com.robotraconteur.datetime.TimeSpec3")
        #: servo_state's sequence number: the cycles published so far
        self.seqno = 0
        #: servo_state's seqnos as clients see them: the last samples sent or peeked
        #: (every cycle's while nobody listens); command wires' status_seqno is checked
        #: against them (:meth:`status_fresh`)
        self.sent: deque[int] = deque([0], maxlen=STATUS_WINDOW + 1)
        self._sent_lock = threading.Lock()
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

    @property
    def period(self) -> float:
        """The runtime's cycle period, wall s (its step where it runs unpaced)."""
        return self.runtime.period or self.runtime.step_ms / 1000.0

    def isoch_info(self) -> Any:
        """The rate the wires update at (the runtime's cycles per wall second)."""
        return info.isoch_info(self.types, 1.0 / self.period, self._epoch)

    @property
    def listening(self) -> list[str]:
        """The services with a client on a wire or the pipe, as the door last looked
        (every LISTENERS_PERIOD_S while cycles run)."""
        return [servo.service for servo in self._listened]

    def status_fresh(self, status_seqno: int) -> bool:
        """Whether a command's ``status_seqno`` is within STATUS_WINDOW samples of the
        newest ``servo_state`` seqno sent (robotraconteur_abstract_robot's rule): from
        the oldest of the last STATUS_WINDOW + 1 sent to STATUS_WINDOW past the newest."""
        with self._sent_lock:
            return self.sent[0] <= status_seqno <= self.sent[-1] + STATUS_WINDOW

    def _note_sent(self, seqno: int) -> None:
        with self._sent_lock:
            if seqno > self.sent[-1]:
                self.sent.append(seqno)

    def sample(self) -> tuple:
        """Now: (seqno, microseconds, modes, flags, rows: per motor position, velocity,
        acceleration, effort and the three commands)."""
        seqno = self.seqno
        modes, flags, *values = self.runtime.servo_states()
        spec = self.node.NowTimeSpec()
        return (seqno, spec.seconds * 1_000_000 + spec.nanoseconds // 1000, modes, flags,
                np.stack(values, axis=1))

    def peek(self) -> tuple:
        """:meth:`sample` for a client's ``PeekInValue`` (its seqno counts as sent)."""
        sample = self.sample()
        self._note_sent(sample[0])
        return sample

    def publish(self, cycle: Any = None) -> None:
        """After a cycle: the sample of every motor, for the sender thread to put on the
        wires and pipes that have clients (a sample the sender had no time for is
        replaced by the next: a Robot Raconteur send can take longer than a cycle, and
        the runtime's cycle does not wait for them)."""
        self.seqno += 1
        if not self._listened:
            self._note_sent(self.seqno)
            if time.monotonic() >= self._next_listen:  # the sender asks while it sends
                with self._wake:
                    self._wake.notify()
            return
        sample = self.sample()
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
        self._note_sent(seqno)
        ts = self.ts3(microseconds)
        ts2 = functools.cache(self._time.TimeSpec2Now)  # once a sample, where a pipe needs it
        for servo in self._listened:
            i = servo.index
            servo.publish(seqno, ts, tuple(rows[i].tolist()), int(modes[i]), int(flags[i]),
                          ts2, lambda s=servo: self.device_time(s.device_info, seqno))

    def ts3(self, microseconds: int) -> np.ndarray:
        """A ``TimeSpec3`` of ``microseconds`` (the servo_state's ``ts``)."""
        ts = np.zeros((1,), dtype=self.timespec3)
        ts[0]["microseconds"] = microseconds
        return ts

    def device_time(self, device_info: Any, seqno: int) -> Any:
        """A ``DeviceTime`` of the device now at ``seqno``."""
        return self._time.FillDeviceTime(device_info, seqno)

    def url(self, port: int, servo: Servo, host: str = "localhost") -> str:
        """Where a client reaches ``servo``: ``rrs+tcp://`` where the node requires TLS."""
        return f"{self.scheme}://{host}:{port}?service={servo.service}"


@contextmanager
def serve(runtime: Runtime, port: int = 0, *, listen_all: bool = False,
          users: Path | None = None, node_name: str = "servo_sim",
          options: Sequence[str] = ()) -> Iterator[tuple[Door, int]]:
    """A Robot Raconteur node ``node_name`` serving ``runtime``'s motors on TCP ``port``
    (0: a free one) and the local transport, with Robot Raconteur's own
    ``--robotraconteur-*`` ``options``: yields the door and the port; the node shuts
    down on exit (clients see the disconnect). ValueError for a setup Robot Raconteur
    refuses (a bad option, a port or node name in use)."""
    policy = security.security_policy(users) if users is not None else None
    node, setup = security.node_setup(node_name, port, listen_all, list(options))
    try:
        tls = security.require_tls(node, setup)
        RegisterStdRobDefServiceTypes(node)
        door = Door(runtime, node, policy)
        door.scheme = "rrs+tcp" if tls else "rr+tcp"
        try:
            yield door, setup.tcp_transport.GetListenPort()
        finally:
            door.close()
    finally:
        setup.close()
