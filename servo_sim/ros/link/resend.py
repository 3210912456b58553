"""Which service calls a client may send again when no answer came, and when (issue 61).

rmw_fastrtps (Jazzy's 8.4, Kilted's 9.3) sends a service's response only once the
server's response writer has matched the client's response reader, and waits for that
match only the writer's ``max_blocking_time`` (Fast DDS's default: 100 ms); past it, the
response is dropped (rclpy's server warns "failed to send response (timeout): client
will not receive response") and the client waits for ever. rclpy's ``wait_for_service``
sees the server's endpoints in the graph, not whether the server has matched the
client's reader: on a loaded machine, a fresh client's first request may be answered
into nothing. No rmw offers a client a way to wait for the server's match; the request
is sent again instead, where that is safe: a servo_sim service whose request, carried
out twice, leaves what once does (``NodeEndpoint.idempotent``; every per-motor service
and trigger is), after ``resend_offsets``.

No ROS import: the client (``servo_sim.ros.link.answered``) and the tests use it.
"""

from __future__ import annotations

from ..interface import MOTOR_SERVICES, MOTOR_TRIGGERS, NODE_ENDPOINTS, MotorService

#: The first re-send, seconds after the first request went out without an answer.
RESEND_FIRST_S = 1.0
#: The gap between two sends doubles up to this.
RESEND_GAP_MAX_S = 8.0
#: The type of the per-motor triggers.
TRIGGER_TYPE = "std_srvs/srv/Trigger"


def _resendable_rows() -> frozenset[tuple[str, str]]:
    """(name under the node or motor, full type) of every idempotent servo_sim service."""
    rows = {(r.name, f"servo_sim/srv/{r.srv}") for r in MOTOR_SERVICES
            if isinstance(r, MotorService)}
    rows |= {(r.name, TRIGGER_TYPE) for r in MOTOR_TRIGGERS}
    rows |= {(ep.name.removeprefix("~/"), ep.type) for ep in NODE_ENDPOINTS
             if ep.kind == "service" and ep.idempotent}
    return frozenset(rows)


RESENDABLE = _resendable_rows()


def resendable(service: str, srv_type: str) -> bool:
    """Whether ``service`` (a full name, e.g. ``/r0/arm/get_velocity``) of ``srv_type``
    (``pkg/srv/Name``) is a servo_sim service a client may send again: its name ends in
    an idempotent row of the node's table, with that row's type."""
    return any(service.endswith(f"/{name}") and srv_type == kind for name, kind in RESENDABLE)


def resend_offsets(timeout_s: float, first_s: float = RESEND_FIRST_S,
                   gap_max_s: float = RESEND_GAP_MAX_S) -> list[float]:
    """When to send the request again, in seconds after the first send, within
    ``timeout_s``: ``first_s``, then gaps doubling up to ``gap_max_s`` (1, 3, 7, 15,
    23, ... s by default)."""
    if first_s <= 0 or gap_max_s <= 0:
        raise ValueError(f"resend_offsets: first_s = {first_s!r} and gap_max_s = "
                         f"{gap_max_s!r} must be > 0")
    offsets: list[float] = []
    at, gap = first_s, first_s
    while at < timeout_s:
        offsets.append(at)
        gap = min(2 * gap, gap_max_s)
        at += gap
    return offsets
