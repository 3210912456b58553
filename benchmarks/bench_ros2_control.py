#!/usr/bin/env python3
"""Benchmark of servo_sim under ros2_control: ``ros2 launch servo_sim ros2_control.launch.py
update_rate:=R`` (the node steps at the same rate) for each rate, measured from outside
as a controls engineer would. Needs a sourced ROS 2 with ros2_control, ros2_controllers,
joint_state_topic_hardware_interface (or topic_based_ros2_control: the launch file uses
the one installed) and servo_sim colcon-built.

Per update rate, in one run:

* tracking: joint_trajectory_controller follows a 0.5 Hz sine of 0.5 rad on the arm
  (points every 10 ms with their velocities, 6.5 s from rest to the crest). Error =
  the sine at each ``/joint_states`` stamp (the broadcaster's: the state the controllers
  read) minus the arm's position there, RMS and max over t = 2 .. 6.5 s (after the
  start-up transient from rest);
* cycles: ``/joint_states`` messages per second, the cycles missing between their stamps
  (gaps beyond 1.5 periods), the controller_manager's "Overrun detected" warnings (it
  prints at most one a second) and the node's "cannot keep real_time_factor" warnings;
* CPU of one core: the node's and ros2_control_node's process time over the tracking;
* command-to-state latency, with forward_position_controller: steps of +-0.1 rad sent
  to ``/forward_position_controller/commands``; per step, the wall time until the
  node's ``joint_commands`` carries it (controller -> node), until the node's
  ``joint_states`` show the arm moving (node: waiting for its step, one step, the
  publication), until the broadcaster's ``/joint_states`` show it (back into the
  controllers). p50 and max.

    python3 benchmarks/bench_ros2_control.py [--rates 125 500 1000] [--steps 20]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
import time
from pathlib import Path

# DDS stays on this machine, on a domain of this benchmark's own (the launch inherits it)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SERVO_SIM_BENCH_DOMAIN_ID", "56")

import numpy as np
from builtin_interfaces.msg import Time
from control_msgs.action import FollowJointTrajectory
from rclpy.duration import Duration
from ros2_control_stack import (
    FORWARD,
    JTC,
    SUCCEEDED,
    LaunchProcess,
    StackClient,
    descendants,
    duration,
    positions_of,
    proc_stat,
)
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

AMPLITUDE, FREQUENCY = 0.5, 0.5  # rad, Hz
END_S, SETTLED_S = 6.5, 2.0  # the crest at 6.5 s (velocity 0); statistics from 2 s
POINT_S = 0.01
LEAD_S = 1.0  # the trajectory starts this long after it is sent
STEP_RAD = 0.1
#: Between steps: the arm (P = 10, time constant 0.1 s) is then within 1e-7 rad of rest;
#: a step's first motion (8 rad/s^2 for one step) is 8e-6 rad at 1 ms, more at slower rates
SETTLE_S, MOVED = 1.5, 1e-6
CLK_TCK = os.sysconf("SC_CLK_TCK")


def reference(t: np.ndarray) -> np.ndarray:
    return AMPLITUDE * np.sin(2 * math.pi * FREQUENCY * t)


def stamp_s(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def cpu_s(pid: int) -> float:
    """Process time (user + system) of ``pid`` so far, s."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def sine_goal(start: Time) -> FollowJointTrajectory.Goal:
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.header.stamp = start
    goal.trajectory.joint_names = ["arm", "gripper"]
    w = 2 * math.pi * FREQUENCY
    for k in range(1, round(END_S / POINT_S) + 1):
        t = k * POINT_S
        velocity = AMPLITUDE * w * math.cos(w * t) if k < round(END_S / POINT_S) else 0.0
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=[AMPLITUDE * math.sin(w * t), 0.0], velocities=[velocity, 0.0],
            time_from_start=duration(t)))
    return goal


def track(client: StackClient, pids: dict[str, int]) -> dict[str, float]:
    """The sine through joint_trajectory_controller: tracking error, cycles, CPU."""
    now = client.node.get_clock().now()
    start = (now + Duration(nanoseconds=round(LEAD_S * 1e9))).to_msg()
    t0 = stamp_s(start)
    mark = len(client.states)
    future = client.follow_client.send_goal_async(sine_goal(start))
    client.spin_until(future.done, "the goal's acceptance")
    handle = future.result()
    assert handle.accepted
    client.spin_until(lambda: client.states and stamp_s(client.states[-1][1].header.stamp)
                      >= t0 + SETTLED_S, "the settled part")
    cpu0 = {name: cpu_s(pid) for name, pid in pids.items()}
    wall0 = time.monotonic()
    result = handle.get_result_async()
    client.spin_until(result.done, "the end of the sine")
    wall = time.monotonic() - wall0
    cpu = {name: (cpu_s(pid) - cpu0[name]) / wall for name, pid in pids.items()}
    assert result.result().status == SUCCEEDED, result.result().result.error_string
    messages = [m for _, m in client.states[mark:]]
    stamps = np.array([stamp_s(m.header.stamp) for m in messages]) - t0
    arm = np.array([positions_of(m)["arm"] for m in messages])
    window = (stamps >= SETTLED_S) & (stamps <= END_S)
    error = reference(stamps[window]) - arm[window]
    return {"rms": float(np.sqrt(np.mean(error ** 2))), "max": float(np.max(np.abs(error))),
            "stamps": stamps[window], "cpu_node": cpu["node"], "cpu_cm": cpu["cm"]}


def _first(samples: list[tuple[float, float]], start: int, moved) -> float | None:
    """Time of the first sample from ``start`` on whose value ``moved``."""
    return next((t for t, v in samples[start:] if moved(v)), None)


def latency(client: StackClient, steps: int) -> dict[str, np.ndarray]:
    """Steps through forward_position_controller: controller -> node -> controllers."""
    commands: list[tuple[float, float]] = []
    node_states: list[tuple[float, float]] = []
    for topic, samples in (("/servo_sim/joint_commands", commands),
                           ("/servo_sim/joint_states", node_states)):
        client.node.create_subscription(
            JointState, topic,
            lambda m, samples=samples: samples.append((time.monotonic(),
                                                       positions_of(m)["arm"])), 100)
    client.switch([FORWARD], [JTC])
    client.spin_until(lambda: node_states and client.states, "the joint states")
    hops: dict[str, list[float]] = {"to_node": [], "node": [], "back": []}
    for k in range(steps):
        target = STEP_RAD if k % 2 == 0 else -STEP_RAD
        client.spin_for(SETTLE_S)  # the last step done: the arm moves < 1e-9 rad a step
        rest_node, rest_state = node_states[-1][1], client.positions()["arm"]
        marks = len(commands), len(node_states), len(client.states)
        sent = time.monotonic()
        client.command([target, 0.0])
        times: list[float | None] = [None, None, None]

        def seen(target=target, rest_node=rest_node, rest_state=rest_state, marks=marks,
                 times=times) -> bool:
            times[:] = [_first(commands, marks[0], lambda v: v == target),
                        _first(node_states, marks[1], lambda v: abs(v - rest_node) > MOVED),
                        _first([(t, positions_of(m)["arm"])
                                for t, m in client.states[marks[2]:]],
                               0, lambda v: abs(v - rest_state) > MOVED)]
            return None not in times

        client.spin_until(seen, f"step {k} through the loop", timeout=5.0)
        t1, t2, t3 = times
        hops["to_node"].append(t1 - sent)
        hops["node"].append(t2 - t1)
        hops["back"].append(t3 - t2)
    client.switch([JTC], [FORWARD])
    return {k: np.array(v) for k, v in hops.items()}


def run_rate(rate: int, steps: int, logs: Path) -> dict:
    launch = LaunchProcess(logs / f"launch_{rate}.log", f"update_rate:={rate}")
    client = StackClient()
    try:
        client.wait_ready(JTC, running=lambda: launch.proc.poll() is None)
        pids = {"node": descendants("servo_sim_node", launch.proc.pid)[0],
                "cm": descendants("ros2_control_node", launch.proc.pid)[0]}
        before = launch.output
        tracked = track(client, pids)
        during = launch.output[len(before):]
        gaps = np.diff(tracked["stamps"]) * rate
        hops = latency(client, steps)
    finally:
        client.close()
        launch.stop()
    return {"rate": rate, **tracked, "hops": hops,
            "cycles_per_s": len(tracked["stamps"]) / (END_S - SETTLED_S),
            "missed": int(np.sum(np.maximum(np.round(gaps) - 1, 0)[gaps > 1.5])),
            "cm_warnings": len(re.findall("Overrun detected", during)),
            "node_warnings": len(re.findall("cannot keep real_time_factor", during))}


def ms(values: np.ndarray) -> str:
    return f"{np.median(values) * 1e3:.2f} / {np.max(values) * 1e3:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=int, nargs="+", default=[125, 500, 1000])
    parser.add_argument("--steps", type=int, default=10, help="latency steps per rate")
    args = parser.parse_args()
    print(f"servo_sim under ros2_control ({os.cpu_count()} cores, "
          f"ROS_DOMAIN_ID {os.environ['ROS_DOMAIN_ID']}); sine {AMPLITUDE} rad at "
          f"{FREQUENCY} Hz on the arm, error over t = {SETTLED_S:g}..{END_S:g} s")
    with tempfile.TemporaryDirectory() as logs:
        rows = [run_rate(rate, args.steps, Path(logs)) for rate in args.rates]
    print("| update rate | node step | cycles/s | missed cycles | cm overrun warnings "
          "| node slip warnings | tracking RMS / max | CPU node / cm |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rate']} Hz | {1000 // r['rate']} ms | {r['cycles_per_s']:.0f} "
              f"| {r['missed']} | {r['cm_warnings']} | {r['node_warnings']} "
              f"| {r['rms'] * 1e3:.1f} / {r['max'] * 1e3:.1f} mrad "
              f"| {r['cpu_node']:.0%} / {r['cpu_cm']:.0%} |")
    print()
    print(f"command-to-state latency, ms, p50 / max of {args.steps} steps of "
          f"{STEP_RAD} rad (forward_position_controller):")
    print("| update rate | controller -> node | node (step + publish) "
          "| node -> controllers | total |")
    print("|---|---|---|---|---|")
    for r in rows:
        h = r["hops"]
        print(f"| {r['rate']} Hz | {ms(h['to_node'])} | {ms(h['node'])} | {ms(h['back'])} "
              f"| {ms(h['to_node'] + h['node'] + h['back'])} |")


if __name__ == "__main__":
    main()
