"""``servo-sim-client``: talk to a running node without ros2cli (not on PyPI).

    servo-sim-client call SERVICE [VALUE ...]      e.g. call /arm/set_position 1.0
    servo-sim-client echo TOPIC [--count N]        e.g. echo /joint_states --count 1

The type comes from the ROS graph; VALUEs fill the request's fields in their order
(a getter's ``ask`` may be left out). The answer prints as ``ros2 service call`` prints
it, messages as YAML documents like ``ros2 topic echo``. Only what a user of servo_sim
needs from a second terminal: for anything more, use ros2cli.

A call to a servo_sim service that may be carried out twice (all but ``~/step``) is sent
again while no answer came, 1, 3, 7, ... s after the first send (``--once``: never):
rmw_fastrtps may drop the answer to a fresh client's first request on a loaded machine
(servo_sim.ros.link.resend says why).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from typing import Any

import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from ..spin import StopSignals, spin_until_signal
from .answered import call_answered
from .resend import resendable

_BOOL = {"true": True, "false": False, "1": True, "0": False}


class ClientError(Exception):
    """A user error: one line on stderr, exit status 1."""


class StopRequestedError(Exception):
    """Ctrl-C (or SIGTERM) while waiting: exit status 130, quietly."""


def import_type(name: str) -> Any:
    """``pkg/srv/Name`` or ``pkg/msg/Name`` -> the Python class."""
    package, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), cls)


def fill(request: Any, values: list[str]) -> Any:
    """Set ``request``'s fields, in their declared order, from text ``values``."""
    fields = list(request.get_fields_and_field_types().items())
    if len(values) > len(fields):
        raise ClientError(f"{type(request).__name__} has {len(fields)} field(s) "
                          f"({', '.join(n for n, _ in fields)}), got {len(values)} values")
    for (name, kind), text in zip(fields, values, strict=False):
        try:
            if kind == "boolean":
                value: Any = _BOOL[text.lower()]
            elif kind in ("float", "double"):
                value = float(text)
            elif kind == "string":
                value = text
            else:  # the integer types
                value = int(text)
        except (KeyError, ValueError):
            raise ClientError(f"field {name!r} ({kind}): cannot use {text!r}") from None
        setattr(request, name, value)
    return request


def plain(msg: Any) -> Any:
    """A message as plain Python data (dicts, lists, numbers, strings) for YAML."""
    if hasattr(msg, "get_fields_and_field_types"):
        return {name: plain(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if hasattr(msg, "tolist"):  # numpy arrays and array.array
        return msg.tolist()
    if isinstance(msg, (list, tuple)):
        return [plain(x) for x in msg]
    return msg


class _Client:
    """A node that waits for one name in the graph, then calls or subscribes."""

    def __init__(self, timeout: float, stop: StopSignals, once: bool = False) -> None:
        self.node = Node(f"servo_sim_client_{os.getpid()}")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.timeout, self.stop, self.once = timeout, stop, once

    def wait_for(self, what: str, name: str, lister: Any) -> str:
        """The type of service/topic ``name`` once it is in the graph."""
        full = self.node.resolve_service_name(name) if what == "service" \
            else self.node.resolve_topic_name(name)
        deadline = time.monotonic() + self.timeout
        while True:
            types = dict(lister())
            if full in types:
                return types[full][0]
            if time.monotonic() > deadline:
                raise ClientError(f"no {what} {full} within {self.timeout:g} s (is the node "
                                  "running, with the same ROS_DOMAIN_ID?)")
            self.executor.spin_once(timeout_sec=0.1)
            if self.stop.received is not None:
                raise StopRequestedError

    def call(self, name: str, values: list[str]) -> Any:
        """The response of service ``name`` to the request ``values`` fill; sent again
        while no answer came where that is safe (servo_sim.ros.link.resend)."""
        type_name = self.wait_for("service", name, self.node.get_service_names_and_types)
        srv = import_type(type_name)
        request = fill(srv.Request(), values)
        client = self.node.create_client(srv, name)
        if not client.wait_for_service(timeout_sec=self.timeout):
            raise ClientError(f"service {name} is not available")
        resend = not self.once and resendable(client.service_name, type_name)
        outcome = call_answered(client, request, self.timeout, self.executor, resend,
                                lambda: self.stop.received is not None)
        if self.stop.received is not None:
            raise StopRequestedError
        if outcome.response is None:
            how = (f"sent {outcome.sent} time{'s' * (outcome.sent != 1)}" if resend else
                   "sent once: " + ("--once" if self.once else "not a servo_sim service "
                                    "that may be sent again") +
                   "; it may have been carried out")
            raise ClientError(f"no answer from {name} within {self.timeout:g} s ({how})")
        return outcome.response

    def echo(self, name: str, count: int) -> int:
        msg_type = import_type(self.wait_for("topic", name, self.node.get_topic_names_and_types))
        received = 0

        def show(msg: Any) -> None:
            nonlocal received
            received += 1
            sys.stdout.write(yaml.safe_dump(plain(msg), sort_keys=False) + "---\n")
            sys.stdout.flush()

        self.node.create_subscription(msg_type, name, show, 10)
        spin_until_signal(self.executor, self.stop, lambda: 0 < count <= received)
        return received

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="servo-sim-client", description=__doc__.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the service or topic, and for an answer")
    p.add_argument("--once", action="store_true",
                   help="send a call's request once (by default a servo_sim service that "
                        "may be carried out twice is sent again while no answer came, "
                        "1, 3, 7, ... s after the first send)")
    sub = p.add_subparsers(dest="verb", required=True)
    call = sub.add_parser("call", help="call a service, print the response")
    call.add_argument("service", help="e.g. /arm/set_position")
    call.add_argument("values", nargs="*", help="request fields in order, e.g. 1.0")
    echo = sub.add_parser("echo", help="print a topic's messages as YAML")
    echo.add_argument("topic", help="e.g. /joint_states")
    echo.add_argument("--count", type=int, default=0, help="stop after N messages (0: Ctrl-C)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one ``call`` or ``echo``; exit status 1 on a user error or a timeout."""
    args = parser().parse_args(argv)
    stop = StopSignals()
    stop.interrupting = False  # every wait here checks the flag
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    client = _Client(args.timeout, stop, args.once)
    try:
        if args.verb == "call":
            print(client.call(args.service, args.values))
        else:
            client.echo(args.topic, args.count)
    except ClientError as exc:
        print(f"servo-sim-client: {exc}", file=sys.stderr)
        return 1
    except StopRequestedError:
        return 130
    finally:
        client.close()
        rclpy.try_shutdown()
        stop.restore()
    return 0
