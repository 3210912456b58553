"""Which servo_sim service calls a client sends again when no answer came, and when
(servo_sim.ros.link.resend, no ROS; issue 61). The expectations are written out by hand
from SPEC §6 and the node's table, not taken from the table the module reads."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.ros.interface import NODE_ENDPOINTS
from servo_sim.ros.link.resend import resend_offsets, resendable

#: SPEC §6's per-motor services (name, type), and the modes and safety triggers.
MOTOR_ROWS = [
    *((n, "servo_sim/srv/SetFloat") for n in (
        "set_position", "set_velocity", "set_acceleration", "set_available_force",
        "set_available_torque", "set_force", "set_torque")),
    ("set_control_pid", "servo_sim/srv/MotorSetControlPid"),
    *((n, "servo_sim/srv/GetFloat") for n in (
        "get_target_position", "get_min_position", "get_max_position", "get_velocity",
        "get_max_velocity", "get_acceleration", "get_available_force", "get_max_force",
        "get_available_torque", "get_max_torque", "get_multiplier")),
    *((f"{s}/enable", "servo_sim/srv/SetInt") for s in (
        "force_feedback_sensor", "torque_feedback_sensor", "position_sensor")),
    *((f"{s}/get_sampling_period", "servo_sim/srv/GetInt") for s in (
        "force_feedback_sensor", "torque_feedback_sensor", "position_sensor")),
    ("get_type", "servo_sim/srv/GetInt"),
    ("get_brake_name", "servo_sim/srv/GetString"),
    ("get_position_sensor_name", "servo_sim/srv/GetString"),
    *((n, "std_srvs/srv/Trigger") for n in ("halt", "enable", "disable", "e_stop",
                                            "reset_e_stop")),
]
#: The node-wide services: (name, type, may be sent again). ``step`` advances the
#: simulation by its value each time it is carried out.
NODE_ROWS = [("pause", "std_srvs/srv/Trigger", True), ("resume", "std_srvs/srv/Trigger", True),
             ("reset", "std_srvs/srv/Trigger", True), ("e_stop", "std_srvs/srv/Trigger", True),
             ("reset_e_stop", "std_srvs/srv/Trigger", True),
             ("step", "servo_sim/srv/SetInt", False)]

NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True)
NAMESPACES = st.lists(NAMES, max_size=3).map(lambda parts: "".join(f"/{p}" for p in parts))


def test_the_node_table_has_one_service_that_may_not_be_sent_again_step():
    assert [ep.name for ep in NODE_ENDPOINTS if ep.kind == "service" and not ep.idempotent] \
        == ["~/step"]


@given(NAMESPACES, NAMES)
def test_every_motor_service_and_trigger_is_sent_again_in_any_namespace(namespace, motor):
    for name, kind in MOTOR_ROWS:
        assert resendable(f"{namespace}/{motor}/{name}", kind), (name, kind)


@given(NAMESPACES, NAMES)
def test_the_node_services_are_sent_again_but_step(namespace, node):
    for name, kind, again in NODE_ROWS:
        assert resendable(f"{namespace}/{node}/{name}", kind) is again, name


@pytest.mark.parametrize(("service", "kind"), [
    ("/r0/arm/get_velocity", "std_srvs/srv/Trigger"),  # a known name of another type
    ("/r0/arm/get_velocity", "example_interfaces/srv/GetFloat"),
    ("/r0/arm/xget_velocity", "servo_sim/srv/GetFloat"),  # a name that only ends alike
    ("/r0/arm/get_velocity/more", "servo_sim/srv/GetFloat"),
    ("/r0/servo_sim/step", "servo_sim/srv/SetInt"),
    ("/r0/servo_sim/get_parameters", "rcl_interfaces/srv/GetParameters"),  # not servo_sim's
    ("/other/node/start", "std_srvs/srv/Trigger"),
])
def test_a_service_outside_the_idempotent_rows_is_sent_once(service, kind):
    assert not resendable(service, kind)


def test_the_resends_come_1_3_7_15_s_after_the_first_then_every_8_s():
    # gaps 1, 2, 4, 8, 8, ... (hand-counted)
    assert resend_offsets(10.0) == [1.0, 3.0, 7.0]
    assert resend_offsets(60.0) == [1.0, 3.0, 7.0, 15.0, 23.0, 31.0, 39.0, 47.0, 55.0]
    assert resend_offsets(1.0) == [] == resend_offsets(0.5)
    assert resend_offsets(1.5, first_s=0.5, gap_max_s=0.75) == [0.5, 1.25]


@given(st.floats(0.0, 500.0), st.floats(0.01, 10.0), st.floats(0.01, 20.0))
def test_the_resends_lie_within_the_timeout_with_gaps_growing_to_the_cap(timeout, first, cap):
    offsets = resend_offsets(timeout, first, cap)
    assert all(0 < t < timeout for t in offsets)
    assert offsets[:1] == ([first] if first < timeout else [])
    gaps = [b - a for a, b in zip([0.0, *offsets], offsets, strict=False)]
    assert all(b >= a - 1e-9 or b >= cap - 1e-9 for a, b in pairwise(gaps))
    assert all(g <= max(first, cap) + 1e-9 for g in gaps)
    assert all(b <= 2 * a + 1e-9 for a, b in pairwise(gaps))
    if offsets:  # none left out: the next one would be at or past the timeout
        assert offsets[-1] + min(2 * gaps[-1], cap) >= timeout - 1e-9


@pytest.mark.parametrize(("first", "cap"), [(0.0, 8.0), (-1.0, 8.0), (1.0, 0.0)])
def test_a_resend_schedule_without_a_positive_gap_is_refused(first, cap):
    with pytest.raises(ValueError, match=f"first_s = {first!r} and gap_max_s = {cap!r}"):
        resend_offsets(10.0, first, cap)
