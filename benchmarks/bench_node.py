#!/usr/bin/env python3
"""Benchmark of the servo_sim node under ROS 2 (the venv of scripts/setup-ros-venv, or a
sourced ROS 2 with servo_sim colcon-built). Everything runs in one go, side by side.

``table`` (default): for each motor count and executor, the node runs alone in a child
process at ``--step-ms`` (1 ms), real_time_factor 1, every motor's position sensor at
10 ms, joint_states at 100 Hz, while a client node here subscribes to /joint_states and
calls ``/m0/get_velocity`` about 100 times a second. Per row:

* steps/s and the CPU share of one core (process time / wall time);
* step lateness p50 / p99: how long after its due wall time (origin + k * step / rtf)
  each step ran;
* service round trip p50 / p99, the joint_states rate seen here;
* start-up: node constructed (in the child), its last motor's service seen here, the
  first /joint_states received by a subscriber created once that service is seen;
* the free-run real-time factor (real_time_factor 0) of the same node.

Beside each executor, the floor: a minimal rclpy node on the same executor whose timer
at the step rate only publishes one JointState of the same size; node / floor CPU.

``load``: the node (10 motors, 1 ms) while 4 client processes call random per-motor
services with valid and hostile values (NaN, +-inf, huge, negative) as fast as they can:
requests answered, node alive and its state finite, steps/s, round trip p99.

``soak``: the node (10 motors, 1 ms) for ``--duration`` (an hour) with a client calling
and subscribing: RSS growth after the first minute, overruns after it.

``clock``: the cost of publishing /clock (issue 24): 100 motors at 1 ms, /clock off and
on, side by side, measured as in ``table``.

``setters``: a setter that mirrors a parameter against a getter, from another process
(issue 32). For each motor count, ``servo_sim_node`` as ``lifecycle`` starts it; once its
table is complete, ``/m0/set_control_pid`` (new gains each call) and ``/m0/get_velocity``
are called in turn, one at a time, 300 of each: round trip p50 / p99 and set / get.
With 1000 motors the whole table takes longer than 600 s on Fast DDS:
``--motor-interfaces get_velocity set_control_pid`` creates only those two rows.

``lifecycle``: start and stop as users see them, from another process. For each motor
count, ``servo_sim_node`` (the installed entry point, default interfaces, step 1 ms,
joint_states 100 Hz, position sensors at 10 ms) is started while a client here already
subscribes to /joint_states; per row: process start -> first /joint_states received,
-> the last motor's last table entry seen in the graph (the full table; the node's own
log line gives its longest single creation, the most the step loop waited), SIGINT ->
process gone and its exit status, -> the node gone from the client's graph, -> its
services gone, peak RSS. Beside it, the floor: a bare rclpy node creating the same
endpoints (same names and types, in the same order) in one go, then ending with
destroy_node() and rclpy.shutdown() on SIGINT.

    python3 benchmarks/bench_node.py [table] [--duration 10] [--motors 1 10 100 1000]
    python3 benchmarks/bench_node.py load [--duration 60]
    python3 benchmarks/bench_node.py soak [--duration 3600]
    python3 benchmarks/bench_node.py lifecycle [--motors 1 30 100 1000] [--table-timeout 3600]
    python3 benchmarks/bench_node.py clock [--motors 100] [--duration 10]
    python3 benchmarks/bench_node.py setters [--motors 2 100] [--motor-interfaces ...]
    python3 benchmarks/bench_node.py fleet [--fleets 10x6 10x30 30x6] [--discovery simple server]
                                           [--fork true false]

``fleet``: a fleet launched by ``ros2 launch servo_sim fleet.launch.py``, measured from
outside (issue 33): benchmarks/fleet_measure.py says what each column is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

# DDS stays on this machine, on the benchmark's own domain (the child processes inherit
# both; SERVO_SIM_BENCH_DOMAIN_ID picks another domain)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SERVO_SIM_BENCH_DOMAIN_ID", "58")

EXECUTORS = ("events", "single_threaded")
SENSOR_MS = 10
JOINT_STATES_HZ = 100.0


def node_parameters(n: int, step_ms: int, rtf: float, executor: str,
                    interfaces: list[str] | None = None, sim_time: bool = False) -> list[str]:
    """``--ros-args`` for n motors (every motor a P-controlled rotational joint); with
    ``sim_time`` the node publishes /clock (use_sim_time:=true)."""
    args = ["--ros-args", "-p", f"motors:=[{','.join(f'm{i}' for i in range(n))}]",
            "-p", f"basic_time_step_ms:={step_ms}", "-p", f"real_time_factor:={rtf}",
            "-p", f"joint_states_rate:={JOINT_STATES_HZ}", "-p", f"executor:={executor}",
            "-p", f"use_sim_time:={str(sim_time).lower()}", "--log-level", "warn"]
    if interfaces is not None:
        args += ["-p", f"motor_interfaces:=[{','.join(interfaces)}]"]
    for i in range(n):
        args += ["-p", f"m{i}.position_sensor.sampling_period_ms:={SENSOR_MS}",
                 "-p", f"m{i}.position:={0.001 * i}"]
    return args


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


#: Lateness histogram: 10 us bins up to 1 s, the last one for anything later.
LATE_BINS = 100_000


def histogram_percentile(counts, q: float) -> float:
    """The q-quantile, ms, of a lateness histogram (upper edge of its 10 us bin)."""
    total = int(counts.sum())
    if not total:
        return math.nan
    index = int((counts.cumsum() >= max(q * total, 1)).argmax())
    return (index + 1) / 100.0


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(int(len(values) * q), len(values) - 1)] if values else math.nan


# ----------------------------------------------------------------------- child processes

def pacing_of(node: object) -> object:
    """The node's pacing: its runtime (overruns, lateness), or the node's own pacer in
    trees from before the runtime (the benchmark runs on both, side by side)."""
    return getattr(node, "runtime", None) or node._pacer


def child_node(duration: float, warmup: float, ros_args: list[str]) -> None:
    """Run the node for ``duration`` s after ``warmup``, then print its figures as JSON."""
    t_start = time.monotonic()
    import numpy as np
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from servo_sim.ros.entry import make_executor
    from servo_sim.ros.node import ServoSimNode

    # lateness in a fixed histogram of 10 us bins (a list grew by 115 MB in an hour's soak)
    late = np.zeros(LATE_BINS + 1, dtype=np.int64)
    rss: list[tuple[float, float]] = []

    class TimedNode(ServoSimNode):
        def _on_tick(self) -> None:
            before = self.runtime.time_ms
            super()._on_tick()
            pacing = pacing_of(self)
            if pacing.real_time_factor > 0 and self.runtime.time_ms != before:
                late[min(max(int(pacing.lateness() * 1e5), 0), LATE_BINS)] += 1

    rclpy.init(args=ros_args, signal_handler_options=SignalHandlerOptions.NO)
    node = TimedNode()
    constructed = time.monotonic() - t_start
    executor, kind = make_executor(node.get_parameter("executor").value)
    executor.add_node(node)
    while not node.table.done:  # the steady state: the whole table up
        executor.spin_once(timeout_sec=0.1)
    print(json.dumps({"constructed_s": constructed, "executor": kind,
                      "table_s": time.monotonic() - t_start}), flush=True)
    end_warmup = time.monotonic() + warmup
    while time.monotonic() < end_warmup:
        executor.spin_once(timeout_sec=0.1)
    late[:] = 0
    overruns0 = pacing_of(node).overruns
    t0_sim, t0, c0 = node.runtime.time_ms, time.monotonic(), time.process_time()
    end, next_rss = t0 + duration, t0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
        if time.monotonic() >= next_rss:
            rss.append((time.monotonic() - t0, rss_mb()))
            next_rss += max(duration / 60, 1.0)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    step_ms = node.runtime.step_ms
    steps = (node.runtime.time_ms - t0_sim) // step_ms
    readings = node.runtime.readings
    finite = all(bool(np.isfinite(a).all())
                 for a in (readings.position, readings.velocity, readings.effort))
    print(json.dumps({"steps_per_s": steps / wall, "cpu": cpu / wall,
                      "rtf": steps * step_ms / 1000 / wall,
                      "late_p50_ms": histogram_percentile(late, 0.5),
                      "late_p99_ms": histogram_percentile(late, 0.99),
                      "overruns": pacing_of(node).overruns - overruns0, "finite": finite,
                      "rss": rss}), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()


def child_floor(duration: float, executor_kind: str, n: int, step_ms: int) -> None:
    """The floor: a timer at the step rate publishing one JointState of n joints."""
    import rclpy
    from sensor_msgs.msg import JointState

    from servo_sim.ros.entry import make_executor

    rclpy.init()
    node = rclpy.create_node("bench_floor")
    pub = node.create_publisher(JointState, "floor_joint_states", 10)
    msg = JointState(name=[f"m{i}" for i in range(n)], position=[0.0] * n,
                     velocity=[0.0] * n, effort=[0.0] * n)
    node.create_timer(step_ms / 1000, lambda: pub.publish(msg))
    executor, _ = make_executor(executor_kind)
    executor.add_node(node)
    end_warmup = time.monotonic() + 1.0
    while time.monotonic() < end_warmup:
        executor.spin_once(timeout_sec=0.1)
    t0, c0 = time.monotonic(), time.process_time()
    while time.monotonic() < t0 + duration:
        executor.spin_once(timeout_sec=0.1)
    print(json.dumps({"cpu": (time.process_time() - c0) / (time.monotonic() - t0)}),
          flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()


#: Per service type: the hostile and valid request fields ``load`` draws from.
_FLOATS = (0.5, -0.5, 0.0, 2.0, math.nan, math.inf, -math.inf, 1e308, -1e308, -5.0)
_INTS = (0, 10, 16, -1, 2**31 - 1, -(2**31))


def child_hammer(duration: float, n: int, seed: int) -> None:
    """Call random per-motor services of n motors as fast as answers come, for duration."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from servo_sim import srv
    from servo_sim.ros.interface import MOTOR_SERVICES, SRV_FIELDS

    rng = random.Random(seed)
    rclpy.init()
    node = rclpy.create_node(f"bench_hammer_{seed}")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    clients = {}
    for i in range(n):
        for row in MOTOR_SERVICES:
            clients[(i, row.name)] = (node.create_client(getattr(srv, row.srv),
                                                         f"/m{i}/{row.name}"), row.srv)
    for c, _ in clients.values():
        assert c.wait_for_service(timeout_sec=60), "the node did not come up"
    sent = answered = 0
    rtts: list[float] = []
    keys = list(clients)
    end = time.monotonic() + duration
    while time.monotonic() < end:
        client, srv_name = clients[rng.choice(keys)]
        request = getattr(srv, srv_name).Request()
        for kind, field in SRV_FIELDS[srv_name][0]:
            value = (rng.choice(_FLOATS) if kind == "float64" else
                     rng.choice(_INTS) if kind == "int32" else True)
            setattr(request, field, value)
        t = time.perf_counter()
        future = client.call_async(request)
        sent += 1
        deadline = t + 10.0
        while not future.done() and time.perf_counter() < deadline:
            executor.spin_once(timeout_sec=0.01)
        if future.done():
            answered += 1
            rtts.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"sent": sent, "answered": answered, "rtts": rtts}), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()


# ----------------------------------------------------------------------- the client side

class Client:
    """A client node here: /joint_states arrival times and /m0/get_velocity round trips."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        rclpy.init()
        self.node = rclpy.create_node("bench_node_client")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.stamps: list[float] = []
        self.rtts: list[float] = []
        self.lost = 0  # calls without an answer within LOST_AFTER_S

    def subscribe(self) -> None:
        from sensor_msgs.msg import JointState

        self.node.create_subscription(JointState, "/joint_states",
                                      lambda _m: self.stamps.append(time.monotonic()), 100)

    def wait_for_service(self, name: str, timeout: float = 3600.0):
        client = self.node.create_client(probe_type(name), name)
        assert client.wait_for_service(timeout_sec=timeout), f"no {name} in {timeout} s"
        return client

    def spin_until(self, condition, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not condition() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        return condition()

    def call_for(self, client, duration: float, rate_hz: float = 100.0) -> None:
        """Call ~rate_hz times a second for duration, keeping up with joint_states.

        First one call until answered, asked again every 2 s (not counted): Fast DDS drops
        a response to a client whose reader the service has not matched yet."""
        deadline = time.monotonic() + 30.0
        while True:
            future = client.call_async(probe_type(client.srv_name).Request())
            if self.spin_until(future.done, timeout=2.0):
                break
            client.remove_pending_request(future)
            assert time.monotonic() < deadline, "no answer in 30 s"
        end = time.monotonic() + duration
        while time.monotonic() < end:
            t = time.perf_counter()
            future = client.call_async(probe_type(client.srv_name).Request())
            while not future.done() and time.perf_counter() - t < LOST_AFTER_S:
                self.executor.spin_once(timeout_sec=0.001)
            if future.done():
                self.rtts.append((time.perf_counter() - t) * 1000)
            else:  # a response Fast DDS dropped ("failed to send response (timeout)")
                client.remove_pending_request(future)
                self.lost += 1
            idle_until = t + 1.0 / rate_hz
            while time.perf_counter() < idle_until:
                self.executor.spin_once(timeout_sec=0.002)

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown()


def probe_type(name: str):
    """The type of the services the client calls: a motor's getter, else the node's
    parameter service (where motor_interfaces leaves the getters out)."""
    if name.endswith("get_parameters"):
        from rcl_interfaces.srv import GetParameters

        return GetParameters
    from servo_sim import srv

    return srv.GetFloat


def probe_names(n: int, interfaces: list[str] | None) -> tuple[str, str]:
    """(what is created last: seen = the per-motor table is complete, the probe called).
    With every family the table ends with the last motor's action; the probe's RTT is
    then the node's, not a wait for a table slice."""
    if interfaces is None:
        return f"/m{n - 1}/trapezoidal_move/_action/get_result", "/m0/get_velocity"
    if "getters" in interfaces:
        return f"/m{n - 1}/get_velocity", "/m0/get_velocity"
    return "/servo_sim/get_parameters", "/servo_sim/get_parameters"


def start_child(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--child", *args],
                            stdout=subprocess.PIPE, text=True)


def json_lines(proc: subprocess.Popen, timeout: float) -> list[dict]:
    out = proc.communicate(timeout=timeout)[0]
    assert proc.returncode == 0, f"child exited {proc.returncode}"
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def measure(n: int, executor: str, step_ms: int, duration: float,
            interfaces: list[str] | None, sim_time: bool = False) -> dict:
    """One row: the node for n motors, measured from a client here."""
    warmup = 2.0
    last, probe = probe_names(n, interfaces)
    t_launch = time.monotonic()
    proc = start_child("node", str(duration), str(warmup), "--",
                       *node_parameters(n, step_ms, 1.0, executor, interfaces, sim_time))
    client = Client()
    try:
        assert client.spin_until(lambda: client.node.count_services(last), 3600.0), \
            f"no {last}"
        services_s = time.monotonic() - t_launch
        client.subscribe()  # a new subscriber, once the services are seen
        client.spin_until(lambda: client.stamps, timeout=120.0)
        first_js_s = (client.stamps[0] - t_launch - services_s) if client.stamps else math.nan
        client.call_for(client.wait_for_service(probe), duration * 0.8)
        started, result = json_lines(proc, timeout=duration + 3600)
    finally:
        client.close()
    span = client.stamps[-1] - client.stamps[0] if len(client.stamps) > 1 else math.nan
    return {**started, **result, "services_s": services_s, "first_joint_states_s": first_js_s,
            "joint_states_hz": (len(client.stamps) - 1) / span,
            "rtt_p50_ms": percentile(client.rtts, 0.5),
            "rtt_p99_ms": percentile(client.rtts, 0.99), "rtt_calls": len(client.rtts),
            "lost": client.lost}


def free_run(n: int, executor: str, step_ms: int, duration: float,
             interfaces: list[str] | None) -> float:
    proc = start_child("node", str(duration), "1.0", "--",
                       *node_parameters(n, step_ms, 0.0, executor, interfaces))
    return json_lines(proc, timeout=duration + 3600)[-1]["rtf"]


def floor(n: int, executor: str, step_ms: int, duration: float) -> float:
    proc = start_child("floor", str(duration), executor, str(n), str(step_ms))
    return json_lines(proc, timeout=duration + 120)[-1]["cpu"]


def table(args: argparse.Namespace) -> None:
    rows = [(n, args.step_ms) for n in args.motors]
    if 1000 in args.motors and args.step_ms == 1:
        rows.append((1000, 10))
    print(f"servo_sim node: real_time_factor 1, position sensors every {SENSOR_MS} ms, "
          f"joint_states {JOINT_STATES_HZ:g} Hz, ~100 service calls/s, "
          f"{args.duration:g} s a row, motor_interfaces "
          f"{args.motor_interfaces if args.motor_interfaces is not None else 'all'}")
    print("| motors | step | executor | steps/s | CPU | floor CPU | node/floor | late p50 / p99"
          " | RTT p50 / p99 | joint_states | constructed / services seen / first joint_states "
          "| free-run RTF |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, step_ms in rows:
        for executor in args.executors:
            r = measure(n, executor, step_ms, args.duration, args.motor_interfaces)
            f = floor(n, executor, step_ms, min(args.duration, 5.0))
            rtf = free_run(n, executor, step_ms, min(args.duration, 5.0), args.motor_interfaces)
            print(f"| {n} | {step_ms} ms | {r['executor']} | {r['steps_per_s']:.0f} | "
                  f"{r['cpu']:.0%} | {f:.0%} | {r['cpu'] / f:.2f} | "
                  f"{r['late_p50_ms']:.2f} / {r['late_p99_ms']:.2f} ms | "
                  f"{r['rtt_p50_ms']:.2f} / {r['rtt_p99_ms']:.2f} ms | "
                  f"{r['joint_states_hz']:.1f} Hz | {r['constructed_s']:.1f} / "
                  f"{r['services_s']:.1f} / {r['first_joint_states_s']:.2f} s | {rtf:.1f} |",
                  flush=True)


def clock(args: argparse.Namespace) -> None:
    """The cost of /clock: the same node without and with it, side by side."""
    n = args.motors[0] if args.motors != [1, 10, 100, 1000] else 100
    print(f"servo_sim node, {n} motors at {args.step_ms} ms, {args.duration:g} s a row: "
          "/clock off (stamps on the node's clock) and on (use_sim_time:=true: /clock "
          "before each step's messages)")
    print("| /clock | executor | steps/s | CPU | late p50 / p99 | RTT p50 / p99 | calls lost |")
    print("|---|---|---|---|---|---|---|")
    for executor in args.executors:
        for sim_time in (False, True):
            r = measure(n, executor, args.step_ms, args.duration, args.motor_interfaces,
                        sim_time)
            print(f"| {'on' if sim_time else 'off'} | {r['executor']} | "
                  f"{r['steps_per_s']:.0f} | {r['cpu']:.0%} | "
                  f"{r['late_p50_ms']:.2f} / {r['late_p99_ms']:.2f} ms | "
                  f"{r['rtt_p50_ms']:.2f} / {r['rtt_p99_ms']:.2f} ms | "
                  f"{r['lost']} of {r['lost'] + r['rtt_calls']} |", flush=True)


def load(args: argparse.Namespace) -> None:
    n, clients = 10, 4
    node = start_child("node", str(args.duration + 15), "1.0", "--",
                       *node_parameters(n, 1, 1.0, "auto"))
    hammers = [start_child("hammer", str(args.duration), str(n), str(seed))
               for seed in range(clients)]
    results = [json_lines(h, timeout=args.duration + 300)[-1] for h in hammers]
    started, r = json_lines(node, timeout=args.duration + 300)
    sent = sum(x["sent"] for x in results)
    answered = sum(x["answered"] for x in results)
    rtts = [t for x in results for t in x["rtts"]]
    print(f"servo_sim node under load: {n} motors at 1 ms ({started['executor']}), {clients} "
          f"client processes calling random per-motor services with valid and hostile values "
          f"for {args.duration:g} s")
    print(f"requests {sent}, answered {answered} ({answered / sent:.2%}), "
          f"{sent / args.duration:.0f}/s; node crashes {int(node.returncode != 0)}; state "
          f"finite {r['finite']}; steps/s {r['steps_per_s']:.0f}; CPU {r['cpu']:.0%}; "
          f"late p99 {r['late_p99_ms']:.2f} ms; overruns {r['overruns']}; "
          f"RTT p50 {percentile(rtts, 0.5):.2f} ms, p99 {percentile(rtts, 0.99):.2f} ms")


def soak(args: argparse.Namespace) -> None:
    n = 10
    proc = start_child("node", str(args.duration), "60.0", "--",
                       *node_parameters(n, 1, 1.0, "auto"))
    client = Client()
    try:
        client.subscribe()
        client.call_for(client.wait_for_service("/m0/get_velocity"), args.duration + 60,
                        rate_hz=10.0)
        started, r = json_lines(proc, timeout=args.duration + 600)
    finally:
        client.close()
    rss = r["rss"]
    growth = (rss[-1][1] - rss[0][1]) / rss[0][1]
    print(f"servo_sim node soak: {n} motors at 1 ms ({started['executor']}), "
          f"{args.duration:g} s after a 60 s warm-up; client calling 10/s and subscribed")
    print(f"steps/s {r['steps_per_s']:.1f}; CPU {r['cpu']:.0%}; overruns {r['overruns']}; "
          f"late p50 / p99 {r['late_p50_ms']:.2f} / {r['late_p99_ms']:.2f} ms; RSS "
          f"{rss[0][1]:.1f} MB -> {rss[-1][1]:.1f} MB ({growth:+.2%}); service calls "
          f"{len(client.rtts)}, RTT p99 {percentile(client.rtts, 0.99):.2f} ms")
    print("RSS MB by minute: " + ", ".join(f"{m:.1f}" for _, m in rss[::max(len(rss) // 60, 1)]))


# ----------------------------------------------------------------------- life cycle

def table_endpoints(node, n: int) -> None:
    """The endpoints of n motors' per-motor table on a bare rclpy node, in the node's
    order (servo_sim.ros.node.table), with handlers that do nothing."""
    from rclpy.action import ActionServer
    from std_srvs.srv import Trigger

    from servo_sim import action, msg, srv
    from servo_sim.ros.interface import MOTOR_FAMILIES, MotorService, MotorTrigger
    from servo_sim.ros.node.table import FEEDBACK_TOPICS, table_rows

    for row in table_rows(MOTOR_FAMILIES):
        for i in range(n):
            if row == FEEDBACK_TOPICS:  # the position sensor the benchmark's config enables
                node.create_publisher(msg.Float64Stamped, f"m{i}/position", 10)
            elif isinstance(row, MotorService):
                node.create_service(getattr(srv, row.srv), f"m{i}/{row.name}", lambda q, r: r)
            elif isinstance(row, MotorTrigger):
                node.create_service(Trigger, f"m{i}/{row.name}", lambda q, r: r)
            else:
                ActionServer(node, getattr(action, row.action), f"m{i}/{row.name}",
                             execute_callback=lambda goal: None)


def child_floor_table(n: int) -> None:
    """The floor of the life cycle: a bare rclpy node named servo_sim with the table of n
    motors and a joint_states publisher; on SIGINT, destroy_node() and shutdown()."""
    import signal

    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    stop: list[int] = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("servo_sim")
    joint_states = node.create_publisher(JointState, "joint_states", 10)
    table_endpoints(node, n)
    joint_states.publish(JointState(name=[f"m{i}" for i in range(n)]))
    while not stop:
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.shutdown()


def peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return math.nan


def node_command(n: int, interfaces: list[str] | None = None) -> list[str]:
    """servo_sim_node as users start it (the entry point beside this Python), logging at
    info (its start and table lines)."""
    entry = Path(sys.executable).with_name("servo_sim_node")
    program = [str(entry)] if entry.exists() else [
        sys.executable, str(Path(__file__).resolve().parents[1] / "scripts" / "servo_sim_node")]
    args = node_parameters(n, 1, 1.0, "auto", interfaces)
    at = args.index("--log-level")
    return program + args[:at] + ["--log-level", "info"] + args[at + 2:]


#: a call unanswered this long counts as lost (and is not waited for), s
LOST_AFTER_S = 2.0
#: lifecycle: how long after SIGINT a process is watched before it is killed, s
EXIT_WAIT_S = 120.0


def life_cycle(client: Client, n: int, floor: bool, table_timeout: float) -> dict:
    """Start (node or floor) with n motors, wait for the full table, SIGINT, watch it go."""
    import signal

    last = f"/m{n - 1}/trapezoidal_move/_action/get_result"
    first_js: list[float] = []
    client.on_joint_states = lambda: first_js or first_js.append(time.monotonic())
    log = Path(f"/tmp/bench_node_lifecycle_{os.getpid()}.log")
    t0 = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", "floor_table", str(n)] if floor
            else node_command(n), stdout=out, stderr=subprocess.STDOUT)
    row: dict = {"first_joint_states_s": math.nan, "table_s": math.nan}
    rss = math.nan
    next_poll = t0
    while time.monotonic() - t0 < table_timeout:
        client.executor.spin_once(timeout_sec=0.01)
        if first_js and math.isnan(row["first_joint_states_s"]):
            row["first_joint_states_s"] = first_js[0] - t0
        if time.monotonic() >= next_poll:
            next_poll += 0.1
            rss = max(peak_rss_mb(proc.pid), 0 if math.isnan(rss) else rss)
            if client.node.count_services(last):
                row["table_s"] = time.monotonic() - t0
                break
            assert proc.poll() is None, f"exited {proc.returncode}: {log.read_text()[-2000:]}"
    if math.isnan(row["table_s"]):  # how far the table got by the timeout
        row["services_seen"] = sum(1 for name, _ in client.node.get_service_names_and_types()
                                   if name.startswith("/m"))
        last = "/m0/set_position"  # the first of the table: what is there to see go
    if not floor:  # the first joint_states may come after the table at small counts
        client.spin_until(lambda: first_js, timeout=30.0)
        row["first_joint_states_s"] = first_js[0] - t0 if first_js else math.nan
    row["rss_mb"] = max(rss, peak_rss_mb(proc.pid))
    t_sig = time.monotonic()
    proc.send_signal(signal.SIGINT)
    gone: dict[str, float] = {}
    while len(gone) < 3 and time.monotonic() - t_sig < EXIT_WAIT_S:
        now = time.monotonic() - t_sig
        if "exit" not in gone and proc.poll() is not None:
            gone["exit"] = now
        if "node" not in gone and "servo_sim" not in client.node.get_node_names():
            gone["node"] = now
        if "services" not in gone and not client.node.count_services(last):
            gone["services"] = now
        client.executor.spin_once(timeout_sec=0.005)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    text = log.read_text()
    log.unlink()
    longest = [line.rsplit("longest creation ", 1)[1].split(" ms")[0]
               for line in text.splitlines() if "longest creation" in line]
    return {**row, "exit_s": gone.get("exit", math.inf), "status": proc.returncode,
            "node_gone_s": gone.get("node", math.inf),
            "services_gone_s": gone.get("services", math.inf),
            "longest_ms": float(longest[0]) if longest else math.nan,
            "traceback": "Traceback" in text}


def lifecycle(args: argparse.Namespace) -> None:
    client = Client()
    from sensor_msgs.msg import JointState

    client.on_joint_states = lambda: None
    client.node.create_subscription(JointState, "/joint_states",
                                    lambda _m: client.on_joint_states(), 10)
    print("servo_sim_node start and stop from another process: default interfaces, step "
          f"1 ms, joint_states {JOINT_STATES_HZ:g} Hz, position sensors every {SENSOR_MS} "
          "ms; floor: a bare rclpy node with the same endpoints")
    print("| motors | process | first joint_states | full table | longest creation | "
          "SIGINT -> exit (status) | -> node gone from the graph | -> its services gone | "
          "peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    try:
        for n in args.motors:
            for floor in (False, True):
                r = life_cycle(client, n, floor, args.table_timeout)

                def s(x: float, limit: float = EXIT_WAIT_S) -> str:
                    return "—" if math.isnan(x) else f"> {limit:g} s" \
                        if math.isinf(x) else f"{x:.2f} s"

                table = s(r["table_s"]) if "services_seen" not in r else \
                    f"> {args.table_timeout:g} s ({r['services_seen']} motor services by then)"

                longest = "—" if floor else f"{r['longest_ms']:.1f} ms"
                print(f"| {n} | {'floor' if floor else 'servo_sim_node'} | "
                      f"{'—' if floor else s(r['first_joint_states_s'])} | {table} | "
                      f"{longest} | {s(r['exit_s'])} "
                      f"({r['status']}{', traceback' if r['traceback'] else ''}) | "
                      f"{s(r['node_gone_s'])} | {s(r['services_gone_s'])} | "
                      f"{r['rss_mb']:.0f} MB |", flush=True)
    finally:
        client.close()


def setters(args: argparse.Namespace) -> None:
    import signal

    from servo_sim.srv import GetFloat, MotorSetControlPid

    client = Client()
    calls = 300
    print(f"/m0/set_control_pid against /m0/get_velocity from another process, {calls} "
          "of each in turn, after the table (servo_sim_node, step 1 ms, motor_interfaces "
          f"{args.motor_interfaces if args.motor_interfaces is not None else 'all'})")
    print("| motors | get_velocity p50 / p99 | set_control_pid p50 / p99 | set / get (p50) |")
    print("|---|---|---|---|")
    try:
        for n in args.motors:
            log = Path(f"/tmp/bench_node_setters_{os.getpid()}.log")
            with log.open("w") as out:
                proc = subprocess.Popen(node_command(n, args.motor_interfaces),
                                        stdout=out, stderr=subprocess.STDOUT)
            try:  # the table's last row (see servo_sim/ros/table.py) of the last motor
                last = (f"/m{n - 1}/trapezoidal_move/_action/get_result"
                        if args.motor_interfaces is None else f"/m{n - 1}/set_control_pid")
                assert client.spin_until(lambda last=last: client.node.count_services(last),
                                         args.table_timeout), f"no {last}"
                get = client.node.create_client(GetFloat, "/m0/get_velocity")
                put = client.node.create_client(MotorSetControlPid, "/m0/set_control_pid")
                times: dict[str, list[float]] = {"get": [], "set": []}
                for k in range(-20, calls):  # the first 20 of each: matching, not counted
                    for key, c, request in (
                            ("get", get, GetFloat.Request(ask=True)),
                            ("set", put, MotorSetControlPid.Request(
                                controlp=10.0 + (k % 7), controli=0.0, controld=0.0))):
                        assert c.wait_for_service(timeout_sec=60.0)
                        t = time.perf_counter()
                        future = c.call_async(request)
                        assert client.spin_until(future.done, 30.0), f"no answer from {key}"
                        if key == "set":
                            assert future.result().success, log.read_text()[-2000:]
                        if k >= 0:
                            times[key].append((time.perf_counter() - t) * 1000)
                g, p = (sorted(times[k]) for k in ("get", "set"))
                print(f"| {n} | {percentile(g, 0.5):.2f} / {percentile(g, 0.99):.2f} ms | "
                      f"{percentile(p, 0.5):.2f} / {percentile(p, 0.99):.2f} ms | "
                      f"{percentile(p, 0.5) / percentile(g, 0.5):.2f} |", flush=True)
                client.node.destroy_client(get)
                client.node.destroy_client(put)
            finally:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=EXIT_WAIT_S)
                log.unlink()
    finally:
        client.close()


def fleet_command(args: argparse.Namespace) -> None:
    from fleet_measure import fleet_command as measure

    measure(args)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "node":
            child_node(float(rest[0]), float(rest[1]), rest[3:])
        elif kind == "floor_table":
            child_floor_table(int(rest[0]))
        elif kind == "floor":
            child_floor(float(rest[0]), rest[1], int(rest[2]), int(rest[3]))
        else:
            child_hammer(float(rest[0]), int(rest[1]), int(rest[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", default="table",
                        choices=("table", "load", "soak", "lifecycle", "clock", "setters",
                                 "fleet"))
    parser.add_argument("--duration", type=float,
                        help="seconds a row (10), of load (60) or of soak (3600)")
    parser.add_argument("--motors", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--executors", nargs="+", default=list(EXECUTORS), choices=EXECUTORS)
    parser.add_argument("--step-ms", type=int, default=1)
    parser.add_argument("--table-timeout", type=float, default=3600.0,
                        help="lifecycle: the longest wait for a full table, s")
    parser.add_argument("--motor-interfaces", nargs="*", metavar="FAMILY",
                        help="the node's motor_interfaces (default: all families)")
    parser.add_argument("--fleets", nargs="+", default=["10x6", "10x30", "30x6"],
                        metavar="KxM", help="fleet: K robots of M motors each")
    parser.add_argument("--discovery", nargs="+", default=["simple", "server"],
                        choices=("simple", "server"), help="fleet: the discoveries")
    parser.add_argument("--fork", nargs="+", default=["true"], choices=("true", "false"),
                        help="fleet: the launch's fork argument(s): robots forked from one "
                             "host, or each started by launch")
    parser.add_argument("--settle", type=float, default=30.0,
                        help="fleet: seconds of fleet CPU watched after the last table")
    args = parser.parse_args()
    args.duration = args.duration or {"table": 10.0, "load": 60.0, "soak": 3600.0,
                                      "lifecycle": 0.0, "clock": 10.0, "setters": 0.0,
                                      "fleet": 0.0}[args.mode]
    print(f"(Python {sys.version.split()[0]}, {Path(sys.executable).parent.parent.name}, "
          f"rmw {os.environ.get('RMW_IMPLEMENTATION', 'default')}, {os.cpu_count()} cores)")
    {"table": table, "load": load, "soak": soak, "lifecycle": lifecycle,
     "clock": clock, "setters": setters, "fleet": fleet_command}[args.mode](args)


if __name__ == "__main__":
    main()
