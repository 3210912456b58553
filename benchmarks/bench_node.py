#!/usr/bin/env python3
"""Benchmark of the servo_sim node under ROS 2 (the venv of scripts/setup-ros-venv, or a
sourced ROS 2 with servo_sim colcon-built).

For 1, 10 and 100 motors at basic_time_step_ms 1, real_time_factor 1, each motor with
its position sensor at 10 ms and joint_states at 100 Hz, the node runs alone in a child
process and reports:

* the achieved step rate and the CPU share of one core (process time / wall time);
* p50 / p99 of the step timing error: how late each step ran after its ideal wall
  time (origin + k * step / real_time_factor);
* the /joint_states rate seen by a subscriber, and the p50 / p99 round trip of a
  service (``/m0/get_velocity``) called from a client node in this process while the
  node steps;

then the free-run real-time factor (real_time_factor 0) for the same motors.

    python3 benchmarks/bench_node.py [--duration 10] [--motors 1 10 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

STEP_MS = 1

# DDS stays on this machine, on the benchmark's own domain (the node's process inherits
# both; SERVO_SIM_BENCH_DOMAIN_ID picks another domain)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SERVO_SIM_BENCH_DOMAIN_ID", "58")


def node_parameters(n: int, rtf: float) -> list[str]:
    """``--ros-args`` for n motors (every motor a P-controlled rotational joint)."""
    args = ["--ros-args", "-p", f"motors:=[{','.join(f'm{i}' for i in range(n))}]",
            "-p", f"basic_time_step_ms:={STEP_MS}", "-p", f"real_time_factor:={rtf}",
            "-p", "joint_states_rate:=100.0", "--log-level", "warn"]
    for i in range(n):
        args += ["-p", f"m{i}.position_sensor.sampling_period_ms:=10",
                 "-p", f"m{i}.position:={0.001 * i}"]
    return args


def child(duration: float, ros_args: list[str]) -> None:
    """Run the node for ``duration`` s, then print its timing as JSON."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from servo_sim.ros.node import ServoSimNode

    late: list[float] = []

    class TimedNode(ServoSimNode):
        def _advance(self, n: int) -> None:
            super()._advance(n)
            if self._pacer.real_time_factor > 0 and n:
                late.append(self._pacer.lateness())

    rclpy.init(args=ros_args)
    node = TimedNode()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    for _ in range(200):  # settle: discovery, first ticks
        executor.spin_once(timeout_sec=0.01)
    late.clear()
    t0_sim, t0, c0 = node.sim.time_ms, time.monotonic(), time.process_time()
    end = t0 + duration
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    steps = (node.sim.time_ms - t0_sim) // STEP_MS
    late_ms = sorted(x * 1000 for x in late) or [float("nan")]
    print(json.dumps({"steps_per_s": steps / wall, "cpu": cpu / wall,
                      "rtf": steps * STEP_MS / 1000 / wall,
                      "late_p50_ms": late_ms[len(late_ms) // 2],
                      "late_p99_ms": late_ms[int(len(late_ms) * 0.99)]}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


def measure(n: int, duration: float) -> dict:
    """Start the node for n motors and measure it from a client node."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from servo_sim import srv

    proc = subprocess.Popen([sys.executable, __file__, "--child", str(duration), "--",
                             *node_parameters(n, 1.0)], stdout=subprocess.PIPE, text=True)
    rclpy.init()
    client_node = rclpy.create_node("bench_node_client")
    executor = SingleThreadedExecutor()
    executor.add_node(client_node)
    stamps: list[float] = []
    client_node.create_subscription(JointState, "/joint_states",
                                    lambda _m: stamps.append(time.monotonic()), 100)
    client = client_node.create_client(srv.GetFloat, "/m0/get_velocity")
    assert client.wait_for_service(timeout_sec=60), "the node did not come up"
    rtts = []
    window_end = time.monotonic() + duration * 0.8
    while time.monotonic() < window_end:
        t = time.perf_counter()
        future = client.call_async(srv.GetFloat.Request(ask=True))
        # a tight spin_once loop: spin_until_future_complete adds ~2 ms of its own in Jazzy
        while not future.done():
            executor.spin_once(timeout_sec=0.001)
            assert time.perf_counter() - t < 10, "no answer in 10 s"
        rtts.append((time.perf_counter() - t) * 1000)
        idle_until = time.perf_counter() + 0.01  # ~90 calls/s; joint_states come in
        while time.perf_counter() < idle_until:
            executor.spin_once(timeout_sec=0.002)
    out = json.loads(proc.communicate(timeout=duration + 60)[0].strip().splitlines()[-1])
    client_node.destroy_node()
    rclpy.shutdown()
    rtts.sort()
    span = stamps[-1] - stamps[0] if len(stamps) > 1 else float("nan")
    out.update(joint_states_hz=(len(stamps) - 1) / span, rtt_p50_ms=rtts[len(rtts) // 2],
               rtt_p99_ms=rtts[int(len(rtts) * 0.99)], rtt_calls=len(rtts))
    return out


def free_run(n: int, duration: float) -> float:
    proc = subprocess.run([sys.executable, __file__, "--child", str(duration), "--",
                           *node_parameters(n, 0.0)], capture_output=True, text=True,
                          timeout=duration + 60, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])["rtf"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--motors", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    parser.add_argument("ros_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.ros_args)
        return
    print(f"servo_sim node, step {STEP_MS} ms, real_time_factor 1, {args.duration:g} s each")
    print("| motors | steps/s | CPU (1 core) | step late p50 / p99 | joint_states | "
          "service RTT p50 / p99 | free-run RTF |")
    print("|---|---|---|---|---|---|---|")
    for n in args.motors:
        r = measure(n, args.duration)
        rtf = free_run(n, min(args.duration, 5.0))
        print(f"| {n} | {r['steps_per_s']:.0f} | {r['cpu']:.0%} | "
              f"{r['late_p50_ms']:.2f} / {r['late_p99_ms']:.2f} ms | "
              f"{r['joint_states_hz']:.1f} Hz | {r['rtt_p50_ms']:.2f} / "
              f"{r['rtt_p99_ms']:.2f} ms ({r['rtt_calls']} calls) | {rtf:.1f} |", flush=True)


if __name__ == "__main__":
    main()
