"""``servo-sim-client call`` against a server that loses the answer to each service's
first request, as rmw_fastrtps drops a response its server cannot match to a fresh
client's reader in time (issue 61, servo_sim.ros.link.resend): a servo_sim service that
may be carried out twice is sent again and answered; ``~/step``, and any call with
``--once``, is sent once and reported unanswered, the server having seen it once.

The server is a real rclpy process with servo_sim's services, taking requests itself
and answering the n-th request of a service (n > 1) with n.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from conftest import TIMEOUT, client_process, require_ros

require_ros("rclpy")

import pytest  # noqa: E402

pytestmark = pytest.mark.ros

#: How long the calls that get no answer wait for one (and for their service): time
#: enough to find one server on a loaded machine, and for several re-sends (1, 3, 7 s).
UNANSWERED_S = 20.0

LOSSY = """
import time, rclpy
from servo_sim.srv import GetFloat, SetInt
rclpy.init(); node = rclpy.create_node("servo_sim", namespace="/lossy")
services = [node.create_service(GetFloat, "/lossy/arm/get_velocity", lambda q, r: r),
            node.create_service(GetFloat, "/lossy/arm/get_target_position", lambda q, r: r),
            node.create_service(SetInt, "/lossy/servo_sim/step", lambda q, r: r)]
seen = dict.fromkeys(services, 0)
print("ready", flush=True)
while True:  # never spun: each request taken here, the first of each service unanswered
    for s in services:
        with s.handle:
            request, header = s.handle.service_take_request(s.srv_type.Request)
        if request is None:
            continue
        seen[s] += 1
        print(s.service_name, seen[s], flush=True)
        if seen[s] > 1:
            response = s.srv_type.Response()
            if hasattr(response, "value"):
                response.value = float(seen[s])
            else:
                response.success = True
            s.send_response(response, header)
    time.sleep(0.01)
"""


class Lossy:
    """The lossy server in a process of its own; ``seen[name]``: requests it took."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", LOSSY], stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout.readline() == "ready\n"
        self.seen: dict[str, int] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            name, count = line.split()
            self.seen[name] = int(count)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def lossy():
    server = Lossy()
    yield server
    server.close()


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=TIMEOUT + UNANSWERED_S)
    return proc.returncode, out, err


def test_an_idempotent_call_is_sent_again_and_answered_step_and_once_are_not(lossy):
    # the three at once (each waits for its answer or its timeout)
    answered = client_process("--timeout", str(TIMEOUT), "call", "/lossy/arm/get_velocity")
    once = client_process("--timeout", str(UNANSWERED_S), "--once", "call",
                          "/lossy/arm/get_target_position")
    step = client_process("--timeout", str(UNANSWERED_S), "call", "/lossy/servo_sim/step", "1")
    status, out, err = finished(answered)
    assert status == 0, err
    value = float(out.removeprefix("servo_sim.srv.GetFloat_Response(value=").rstrip(")\n"))
    status, out, err = finished(once)
    assert (status, out) == (1, ""), err
    assert err.endswith(f"servo-sim-client: no answer from /lossy/arm/get_target_position "
                        f"within {UNANSWERED_S:g} s (sent once: --once; it may have been "
                        f"carried out)\n"), err
    status, out, err = finished(step)
    assert (status, out) == (1, ""), err
    assert err.endswith(f"servo-sim-client: no answer from /lossy/servo_sim/step within "
                        f"{UNANSWERED_S:g} s (sent once: not a servo_sim service that may be "
                        f"sent again; it may have been carried out)\n"), err
    # the clients have ended: what the server took is all it will ever take from them
    deadline = time.monotonic() + TIMEOUT
    while len(lossy.seen) < 3 or lossy.seen["/lossy/arm/get_velocity"] < value:
        assert time.monotonic() < deadline, (lossy.seen, value)  # (read by a thread)
        time.sleep(0.05)
    # the answer to a later send (the first is never answered), one the server sent
    assert value.is_integer() and value >= 2, out
    assert lossy.seen["/lossy/arm/get_target_position"] == 1
    assert lossy.seen["/lossy/servo_sim/step"] == 1
