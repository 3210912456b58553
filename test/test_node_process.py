"""The node as its own process, as users start it without launch (not on PyPI): the
installed ``servo_sim_node`` entry point serves and publishes, ends quietly with status
0 on SIGINT or SIGTERM whenever it comes, and a bad params file exits 1 with one FATAL
line; ``servo-sim-client`` talks to it from another process.

Skipped, with the reason shown, where no ROS 2 can be had (conftest.require_ros). Every
wait is on a condition (a log line, a service, a message, an exit) with a generous
timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, STARTED, TIMEOUT, NodeProcess, client_command, require_ros

rclpy, servo_srvs = require_ros("rclpy", "servo_sim.srv")
pytestmark = pytest.mark.ros

from rcl_interfaces.srv import GetParameters  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from servo_sim.emulators import dxl_emulator as emu  # noqa: E402


def call(client, srv, name: str, request):
    c = client.create_client(srv, name)
    assert c.wait_for_service(timeout_sec=TIMEOUT), f"no service {name}"
    future = c.call_async(request)
    client.spin_until(future.done, name)
    return future.result()


def test_params_file_node_serves_publishes_and_ends_on_sigint(start, client):
    node = start("pf", "--params-file", str(REPO / "config" / "servo_sim.yaml"))
    node.wait_for_output(STARTED)
    assert "no 'motors' parameter" not in node.output  # the file's motors, not the default
    node.wait_for_output("executor: ")  # auto: the EventsExecutor where rclpy has it
    assert call(client, servo_srvs.SetFloat, "/pf/arm/set_position",
                servo_srvs.SetFloat.Request(value=0.5)).success
    assert call(client, servo_srvs.GetFloat, "/pf/arm/get_target_position",
                servo_srvs.GetFloat.Request(ask=True)).value == 0.5
    received: list[JointState] = []
    client.create_subscription(JointState, "/pf/joint_states", received.append, 10)
    client.spin_until(lambda: len(received) >= 3, "/pf/joint_states")
    assert list(received[-1].name) == ["arm", "gripper"]
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in received]
    assert stamps == sorted(stamps)
    node.proc.send_signal(signal.SIGINT)
    assert node.wait() == 0, node.output
    assert "Traceback" not in node.output


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.2])
def test_a_stop_signal_at_any_moment_ends_the_node_quietly(start, signum, delay, executor_kind):
    """Before the fix, 4 of 21 SIGINTs at such moments ended in status 1 and
    'RCLError: failed to initialize wait set' (rclpy 7.1.6 from PyPI)."""
    node = start(f"sig{signum}_{int(delay * 1000)}_{executor_kind}", "-p",
                 f"executor:={executor_kind}")  # the default config
    node.wait_for_output(f"executor: {executor_kind}")
    time.sleep(delay)  # the moment of the signal, not a wait for a condition
    node.proc.send_signal(signum)
    assert node.wait() == 0, node.output
    assert "Traceback" not in node.output and "Error" not in node.output, node.output


def test_ctrl_c_twice_as_from_a_terminal_and_launch_ends_quietly(start):
    """Ctrl-C reaches the whole process group, and launch forwards one more SIGINT."""
    node = start("twice")
    node.wait_for_output(STARTED)
    node.proc.send_signal(signal.SIGINT)
    node.proc.send_signal(signal.SIGINT)
    assert node.wait() == 0, node.output
    assert "Traceback" not in node.output


#: A robot-scale node (issue 18): its motors, and the longest its stop may take here
#: (SIGINT -> exit: 0.6 s measured for 100 motors, benchmarks/bench_node.py lifecycle).
ROBOT = 100
STOP_BOUND_S = 5.0


def robot(start, namespace: str, *more: str) -> tuple[NodeProcess, list[float]]:
    """A node of ROBOT motors whose max_velocity tells them apart."""
    speeds = [float(f"{1 + i / 100:.2f}") for i in range(ROBOT)]
    args = ["-p", f"motors:=[{','.join(f'm{i}' for i in range(ROBOT))}]"]
    for i, speed in enumerate(speeds):
        args += ["-p", f"m{i}.max_velocity:={speed!r}"]
    return start(namespace, *args, *more), speeds


def stop_within_bound(node: NodeProcess) -> None:
    t = time.monotonic()
    node.proc.send_signal(signal.SIGINT)
    assert node.wait() == 0, node.output
    assert time.monotonic() - t < STOP_BOUND_S, node.output
    assert "Traceback" not in node.output, node.output


def test_a_robot_runs_at_once_its_table_grows_without_a_wrong_answer_and_it_stops(start, client):
    """100 motors: joint_states with every joint, each getter and the parameters answer
    right as soon as they exist (never wrongly while the table grows), the node stops on
    SIGINT within the bound and leaves the graph."""
    node, speeds = robot(start, "robot")
    received: list[JointState] = []
    client.create_subscription(JointState, "/robot/joint_states", received.append, 10)
    getters = {i: client.create_client(servo_srvs.GetFloat, f"/robot/m{i}/get_max_velocity")
               for i in range(ROBOT - 1, -1, -9)}  # the last motor first
    parameters = client.create_client(GetParameters, "/robot/servo_sim/get_parameters")
    answers: dict[object, float] = {}
    pending: dict[object, object] = {}

    def call_what_exists() -> bool:
        for key, c in (*getters.items(), ("parameter", parameters)):
            if key not in answers and key not in pending and c.service_is_ready():
                pending[key] = c.call_async(
                    GetParameters.Request(names=[f"m{ROBOT - 1}.max_velocity"])
                    if key == "parameter" else servo_srvs.GetFloat.Request(ask=True))
        for key, future in list(pending.items()):
            if future.done():
                result = future.result()
                answers[key] = (result.values[0].double_value if key == "parameter"
                                else result.value)
                del pending[key]
        return len(answers) == len(getters) + 1 and bool(received)

    client.spin_until(call_what_exists, "every getter and the parameters of 100 motors")
    assert answers == {**{i: speeds[i] for i in getters}, "parameter": speeds[-1]}
    assert list(received[-1].name) == [f"m{i}" for i in range(ROBOT)]
    assert len(received[-1].position) == ROBOT
    stop_within_bound(node)
    client.spin_until(lambda: ("servo_sim", "/robot") not in
                      client.get_node_names_and_namespaces(), "the node to leave the graph")


def test_while_the_table_grows_calls_are_answered_at_once(start, client, executor_kind):
    """Each call waits at most a slice of the table (5 ms plus one creation), not its
    backlog: with rclpy's EventsExecutor, slices queued by the timer held requests for
    8.6 s, then for good."""
    node, _ = robot(start, f"prompt_{executor_kind}", "-p", f"executor:={executor_kind}")
    getter = client.create_client(servo_srvs.GetFloat, f"/prompt_{executor_kind}/m0/get_velocity")
    assert getter.wait_for_service(timeout_sec=TIMEOUT)
    waits = []
    while len(waits) < 30:
        t = time.monotonic()
        future = getter.call_async(servo_srvs.GetFloat.Request(ask=True))
        client.spin_until(future.done, "an answer")
        waits.append(time.monotonic() - t)
    assert "per-motor table complete" not in node.output  # all of it while it grew
    # 2 to 20 ms measured; the bug held every call behind the backlog. One call of 2.64 s
    # once in 30 (Kilted, CI): a request or answer lost while the table floods discovery
    # on loopback comes again at the writer's next heartbeat (Fast DDS's default period,
    # 3 s), which one call may meet (twice: a lost request, then a lost answer)
    slow = [w for w in waits if w >= 1.0]
    assert len(slow) <= 1 and max(waits) < 7.0, waits


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.05])
def test_ctrl_c_twice_while_the_table_grows_ends_the_node_quietly_within_the_bound(start,
                                                                                  delay):
    """Ctrl-C reaches the whole group and launch forwards one more: two SIGINTs, at
    moments around the end of start-up (before the spin loop, a first one interrupts)."""
    node, _ = robot(start, f"growing{int(delay * 1000)}")
    node.wait_for_output(f"{ROBOT} motor(s) m0, m1")
    time.sleep(delay)  # the moment of the signals, not a wait for a condition
    node.proc.send_signal(signal.SIGINT)
    stop_within_bound(node)  # the second
    assert "per-motor table complete" not in node.output  # it was still growing


def test_real_servos_are_torqued_off_before_the_process_leaves(start):
    """The fast exit (issue 18) comes after the devices are safe: servo_sim_node on the
    emulated Dynamixel bus, SIGINT, and the servos' own Torque Enable is 0."""
    with emu.EmulatorProcess([1, 2], realtime=True) as bus:
        node = start("dxl", "--params-file", str(REPO / "config" / "dynamixel.yaml"),
                     "-p", f"hardware.port:={bus.port}")
        # Active at once, or after a retry where a loaded machine starved the emulator past
        # the SDK's packet timeout at the first ping ("recovered"): the servos say which.
        deadline = time.monotonic() + TIMEOUT
        while [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2)] != [1, 1]:
            assert node.proc.poll() is None, node.output
            assert time.monotonic() < deadline, f"torque never enabled:\n{node.output}"
            time.sleep(0.05)
        stop_within_bound(node)
        assert [bus.get(i, emu.TORQUE_ENABLE, 1) for i in (1, 2)] == [0, 0], node.output


def test_servo_sim_node_drives_the_virtual_so101_on_its_port(start, client, tmp_path):
    """config/so101.yaml on servo-sim-so101's port: /joint_states reads the arm where it
    lies (joint = (Present Position - 2048) / 4096 turn), velocity 0 at rest; a position
    set through the node's service is where the servo goes; SIGINT leaves the torque off."""
    import math

    from servo_sim.emulators import sts_emulator as sts
    from servo_sim.emulators.virtual_arm import VirtualSO101Process

    joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll",
              "gripper"]
    tick = 2 * math.pi / 4096
    with VirtualSO101Process(tmp_path / "eeprom.json", realtime=True) as arm:
        node = start("so101", "--params-file", str(REPO / "config" / "so101.yaml"),
                     "-p", f"hardware.port:={arm.port}")
        received: list[JointState] = []
        client.create_subscription(JointState, "/so101/joint_states", received.append, 10)
        def where_it_lies() -> bool:  # a joint settling under its load may still creep
            # a tick or two after a sample at velocity 0: the state of the arm at rest
            if not received or any(received[-1].velocity):
                return False
            state = dict(zip(received[-1].name, received[-1].position, strict=True))
            present = [arm.get(i, sts.PRESENT_POSITION, 2) for i in range(1, 7)]
            return [state[j] for j in joints] == pytest.approx(
                [(p - 2048) * tick for p in present], abs=1.01 * tick)

        client.spin_until(where_it_lies, "/so101/joint_states at rest, where the arm lies")
        # refused only while the bus recovers from a reply a busy machine lost
        deadline = time.monotonic() + TIMEOUT
        while not call(client, servo_srvs.SetFloat, "/so101/shoulder_pan/set_position",
                       servo_srvs.SetFloat.Request(value=0.4)).success:
            assert time.monotonic() < deadline, f"set_position refused for {TIMEOUT} s"
        client.spin_until(lambda: abs(arm.get(1, sts.PRESENT_POSITION, 2)
                                      - (2048 + 0.4 / tick)) <= 1.5, "the pan at 0.4 rad")
        stop_within_bound(node)
        assert [arm.get(i, sts.TORQUE_ENABLE, 1) for i in range(1, 7)] == [0] * 6


def test_what_the_node_logged_before_it_stopped_reaches_its_output(start, client,
                                                                    monkeypatch):
    """rcutils writes through C stdio: to stdout, fully buffered in a file or a pipe, with
    RCUTILS_LOGGING_USE_STDOUT=1 and RCUTILS_LOGGING_BUFFERED_STREAM=1 (stderr, its
    default, is not buffered): the fast exit must not lose it."""
    monkeypatch.setenv("RCUTILS_LOGGING_USE_STDOUT", "1")
    monkeypatch.setenv("RCUTILS_LOGGING_BUFFERED_STREAM", "1")
    node = start("logged")
    last = "/logged/gripper/trapezoidal_move/_action/get_result"  # the table's last entry
    client.spin_until(lambda: client.count_services(last) > 0, "the complete table")
    node.proc.send_signal(signal.SIGINT)
    assert node.wait() == 0
    assert "per-motor table complete" in node.output, node.output


def test_the_node_is_where_ros2_run_and_ros2_launch_look_for_it():
    """<prefix>/lib/servo_sim/servo_sim_node of the ament index's servo_sim (the venv's
    link, or colcon's install) starts the node: here with a bad parameter, so that it
    answers with its FATAL line and status 1."""
    from ament_index_python.packages import get_package_prefix

    program = Path(get_package_prefix("servo_sim"), "lib", "servo_sim", "servo_sim_node")
    assert os.access(program, os.X_OK), f"{program} is not an executable"
    r = subprocess.run([str(program), "--ros-args", "-p", "executor:=fast"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 1 and "parameter 'executor' = 'fast'" in r.stdout + r.stderr


def test_a_missing_params_file_exits_1_with_one_fatal_line(start, tmp_path):
    node = start("nofile", "--params-file", str(tmp_path / "missing.yaml"))
    assert node.wait() == 1, node.output
    fatal = [line for line in node.output.splitlines() if "FATAL" in line]
    assert len(fatal) == 1 and "cannot start" in fatal[0], node.output
    assert "Traceback" not in node.output


def test_a_parameter_rclpy_refuses_exits_1_with_one_fatal_line(start):
    node = start("empty", "-p", "motor_interfaces:=[]")  # no type: rclpy's ValueError
    assert node.wait() == 1, node.output
    fatal = [line for line in node.output.splitlines() if "FATAL" in line]
    assert len(fatal) == 1 and ("parameter 'motor_interfaces' has no type (an empty list "
                                "cannot be a ROS parameter value)") in fatal[0], node.output
    assert "Traceback" not in node.output


def test_bad_params_file_exits_1_with_one_fatal_line(start, tmp_path):
    params = tmp_path / "bad.yaml"
    params.write_text("/**/servo_sim:\n  ros__parameters:\n    motors: [arm]\n"
                      "    arm: {max_velocty: 2.0}\n")
    node = start("bad", "--params-file", str(params))
    assert node.wait() == 1, node.output
    fatal = [line for line in node.output.splitlines() if "FATAL" in line]
    assert len(fatal) == 1, node.output
    assert "[bad.servo_sim]" in fatal[0]  # the node's logger: a fleet's robots told apart
    assert ("parameters of /bad/servo_sim: motor 'arm': unknown field 'max_velocty' "
            "(did you mean 'max_velocity'?)") in fatal[0]
    assert "Traceback" not in node.output


def test_servo_sim_client_calls_and_echoes_as_the_readme_shows(start):
    node = start("cl")
    node.wait_for_output(STARTED)
    r = client_command("call", "/cl/arm/set_position", "1.0")
    assert (r.returncode, r.stdout) == (0, "servo_sim.srv.SetFloat_Response(success=True)\n"), \
        r.stderr
    r = client_command("call", "/cl/arm/get_target_position")
    assert r.stdout == "servo_sim.srv.GetFloat_Response(value=1.0)\n", r.stderr
    r = client_command("call", "/cl/arm/set_position", "nan")
    assert r.stdout == "servo_sim.srv.SetFloat_Response(success=False)\n", r.stderr
    r = client_command("call", "/cl/arm/set_control_pid", "15", "0", "0.2")
    assert r.stdout == "servo_sim.srv.MotorSetControlPid_Response(success=1)\n", r.stderr
    r = client_command("echo", "/cl/joint_states", "--count", "2")
    assert r.returncode == 0, r.stderr
    documents = r.stdout.split("---\n")
    assert len(documents) == 3 and documents[-1] == ""
    assert "name:\n- arm\n- gripper\n" in documents[0]
    r = client_command("call", "/cl/arm/set_position", "fast")
    assert (r.returncode, r.stderr) == (
        1, "servo-sim-client: field 'value' (double): cannot use 'fast'\n")
    r = client_command("--timeout", "1", "call", "/cl/no_such_service")
    assert r.returncode == 1 and "no service /cl/no_such_service within 1 s" in r.stderr
    node.proc.send_signal(signal.SIGINT)
    assert node.wait() == 0
    assert "arm/set_position: motor 'arm': position = nan rejected: NaN" in node.output
