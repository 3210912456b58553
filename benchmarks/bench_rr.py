#!/usr/bin/env python3
"""Benchmark of the Robot Raconteur door (issue 55) beside the ROS door, measured from a
client here (another process than the server, which this script starts).

For each motor count (6 and 100: every motor a P-controlled rotational joint, step 1 ms,
real_time_factor 1, position sensors at 10 ms), three rows, one after the other:

* ``node+rr``: ``servo_sim_node`` with ``robot_raconteur_port`` (one runtime, both
  doors), the client on the Robot Raconteur door: every motor's ``servo_state`` wire;
* ``node+ros``: the same node, the client on the ROS door: ``~/servo_state`` (published
  with joint_states, ``joint_states_rate`` 1000 Hz here: every cycle, as the wire);
* ``servo-sim-rr``: the door without ROS, the client as in ``node+rr``.

Per row, over ``--duration`` seconds of the state stream: samples received per second
per motor (1000 = the rate held; a ROS message carries every motor), the share of the
1 kHz samples the slowest motor's stream delivered, samples lost (by the seqno), the
interval between arrivals p50 / p99 / max (jitter), the server's CPU share of one core
(its process time / wall time) and this client's. Then, one at a
time: a property read's round trip (Robot Raconteur: ``m0.mode``; ROS: the getter
``/m0/get_velocity``), ``--calls`` of them, p50 / p99; and a command's latency until
``servo_state`` reflects it (Robot Raconteur: a ``position_command`` wire value; ROS: a
``/m0/set_position`` call), from the send to the first state whose
``position_command`` is the new value, p50 / p99.

    python3 benchmarks/bench_rr.py [--motors 6 100] [--duration 10] [--calls 300]

The ROS side reuses bench_node.py's client and node command; the server's CPU,
fleet_measure.py's reader. DDS stays on this machine (bench_node.py sets it; the domain
is SERVO_SIM_BENCH_DOMAIN_ID's).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_node import SENSOR_MS, Client, node_command, percentile
from fleet_measure import cpu_s

from servo_sim.rr.client import client_node, connect, servo_command

#: the rate both doors publish the state at (the runtime's: step 1 ms)
RATE_HZ = 1000.0
#: the longest wait for a server to come up (its table, on a busy machine), s
START_TIMEOUT = 600.0
POSITION = 1  # ServoMode.position_command


class Server:
    """A server process, its output lines collected."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stdout.readline, "")),
                         daemon=True).start()

    def wait_for(self, pattern: str) -> re.Match:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            for line in list(self.lines):
                if m := re.search(pattern, line):
                    return m
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"no {pattern!r} from the server:\n{''.join(self.lines)}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.send_signal(2)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def node_server(n: int) -> tuple[Server, int]:
    """servo_sim_node with both doors (the getter and setter rows only: the table of
    every family for 100 motors takes minutes on a busy machine)."""
    server = Server([*node_command(n, ["getters", "commands"]), "-p",
                     "robot_raconteur_port:=0", "-p", f"joint_states_rate:={RATE_HZ}"])
    port = int(server.wait_for(r"Robot Raconteur door: \d+ servo\(s\) on port (\d+)").group(1))
    server.wait_for("per-motor table complete")
    return server, port


def rr_server(n: int, work: Path) -> tuple[Server, int]:
    """servo-sim-rr with the same motors."""
    config = work / f"rr{n}.yaml"
    config.write_text(yaml.safe_dump({"basic_time_step_ms": 1, "motors": [
        {"name": f"m{i}", "position": 0.001 * i,
         "position_sensor": {"sampling_period_ms": SENSOR_MS}} for i in range(n)]}))
    server = Server([sys.executable, "-u", "-m", "servo_sim.rr.main", str(config),
                     "--port", "0"])
    port = int(server.wait_for(r"m0: rr\+tcp://localhost:(\d+)\?").group(1))
    return server, port


def stream_figures(arrivals: list[list[tuple[float, int]]], window: float) -> dict:
    """Rate per motor, lost samples and arrival intervals of the streams received."""
    rates, lost, gaps = [], 0, []
    for stream in arrivals:
        if len(stream) < 2:
            rates.append(0.0)
            continue
        t = np.array([a[0] for a in stream])
        seq = np.array([a[1] for a in stream])
        rates.append(len(stream) / window)
        lost += int(seq[-1] - seq[0] + 1 - len(seq))
        gaps.append(np.diff(t) * 1000)
    intervals = np.concatenate(gaps) if gaps else np.array([np.nan])
    return {"rate_hz": float(np.mean(rates)), "rate_min_hz": float(np.min(rates)),
            "lost": lost, "interval_p50_ms": float(np.percentile(intervals, 50)),
            "interval_p99_ms": float(np.percentile(intervals, 99)),
            "interval_max_ms": float(np.max(intervals))}


def result(stream: dict, server_cpu: float, client_cpu: float, reads: list[float],
           commands: list[float]) -> dict:
    """One row's figures."""
    return {**stream, "server_cpu": server_cpu, "client_cpu": client_cpu,
            "read_p50_ms": percentile(reads, 0.5), "read_p99_ms": percentile(reads, 0.99),
            "command_p50_ms": percentile(commands, 0.5),
            "command_p99_ms": percentile(commands, 0.99)}


def cpu_share(pid: int, seconds: float) -> tuple[float, float]:
    """(the server's, this process's) CPU share of one core over the next ``seconds``."""
    server, me, t = cpu_s(pid), time.process_time(), time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - t
    return (cpu_s(pid) - server) / wall, (time.process_time() - me) / wall


def measure_rr(pid: int, port: int, n: int, duration: float, calls: int) -> dict:
    """The Robot Raconteur client: every motor's servo_state wire, then m0's reads and
    commands."""
    with client_node() as node:
        servos = [connect(node, f"rr+tcp://localhost:{port}?service=m{i}") for i in range(n)]
        arrivals: list[list[tuple[float, int]]] = [[] for _ in servos]
        wires = []
        for servo, stream in zip(servos, arrivals, strict=True):
            wire = servo.servo_state.Connect()
            wire.WireValueChanged += (lambda _w, value, _ts, s=stream:
                                      s.append((time.monotonic(), value.seqno)))
            wires.append(wire)
        time.sleep(1.0)  # the streams under way (not a measurement)
        for stream in arrivals:
            stream.clear()
        server_cpu, client_cpu = cpu_share(pid, duration)
        figures = stream_figures([list(s) for s in arrivals], duration)
        for wire in wires[1:]:
            wire.Close()
        m0, state = servos[0], wires[0]
        rtts = []
        for _ in range(calls):
            t = time.perf_counter()
            m0.mode  # noqa: B018 - the read measured
            rtts.append((time.perf_counter() - t) * 1000)
        m0.mode = POSITION
        command = m0.position_command.Connect()
        latencies = []
        for k in range(1, calls + 1):
            target = 0.001 * (k % 2 + 1) * (-1) ** k  # a new value every time
            t = sent = time.perf_counter()
            command.OutValue = servo_command(node, m0, k, state.InValue.seqno, target)
            while state.InValue.position_command[0] != target:
                if time.perf_counter() - t > 5.0:
                    raise RuntimeError(f"command {target} not in servo_state after 5 s")
                if time.perf_counter() - sent > 0.05:  # dropped (stale): sent again, as
                    sent = time.perf_counter()        # a streaming client would
                    command.OutValue = servo_command(node, m0, k, state.InValue.seqno,
                                                     target)
                time.sleep(0.0001)
            latencies.append((time.perf_counter() - t) * 1000)
        for wire in (state, command):
            wire.Close()
    return result(figures, server_cpu, client_cpu, rtts, latencies)


def measure_ros(pid: int, duration: float, calls: int) -> dict:
    """The ROS client: ~/servo_state, then /m0/get_velocity calls and /m0/set_position
    commands (bench_node.py's client)."""
    from servo_sim import msg, srv

    client = Client()
    try:
        stream: list[tuple[float, int]] = []
        seen: list[float] = [float("nan")]

        def on_state(m) -> None:
            stream.append((time.monotonic(), m.seqno))
            seen[0] = m.position_command[0]

        client.node.create_subscription(msg.ServoState, "/servo_sim/servo_state", on_state, 100)
        client.spin_until(lambda: len(stream) > 100, 120.0)
        stream.clear()
        done = threading.Event()
        spinner = threading.Thread(target=lambda: client.spin_until(done.is_set, duration + 60))
        server = me = 0.0
        spinner.start()
        try:
            server, me = cpu_share(pid, duration)
        finally:
            done.set()
            spinner.join()
        figures = stream_figures([list(stream)], duration)
        getter = client.wait_for_service("/m0/get_velocity")
        client.call_for(getter, duration, rate_hz=calls / duration)
        rtts = client.rtts
        setter = client.node.create_client(srv.SetFloat, "/m0/set_position")
        assert setter.wait_for_service(timeout_sec=60.0)
        latencies = []
        for k in range(1, calls + 1):
            target = 0.001 * (k % 2 + 1) * (-1) ** k
            t = time.perf_counter()
            setter.call_async(srv.SetFloat.Request(value=target))
            if not client.spin_until(lambda v=target: seen[0] == v, 5.0):
                raise RuntimeError(f"set_position {target} not in servo_state after 5 s")
            latencies.append((time.perf_counter() - t) * 1000)
    finally:
        client.close()
    return result(figures, server, me, rtts, latencies)


def row(name: str, n: int, r: dict) -> str:
    return (f"| {name} | {n} | {r['rate_hz']:.0f} (min {r['rate_min_hz']:.0f}) | "
            f"{r['rate_min_hz'] / RATE_HZ * 100:.0f} % | {r['lost']} | "
            f"{r['interval_p50_ms']:.2f} / {r['interval_p99_ms']:.2f} / "
            f"{r['interval_max_ms']:.1f} | {r['server_cpu'] * 100:.0f} % | "
            f"{r['client_cpu'] * 100:.0f} % | {r['read_p50_ms']:.2f} / {r['read_p99_ms']:.2f} | "
            f"{r['command_p50_ms']:.2f} / {r['command_p99_ms']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--motors", type=int, nargs="+", default=[6, 100])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"(Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f})")
    print("| server, client on | motors | state samples/s a motor | delivered (min) | lost | "
          "interval "
          "p50 / p99 / max, ms | server CPU | client CPU | read p50 / p99, ms | "
          "command -> servo_state p50 / p99, ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for n in args.motors:
            server, port = node_server(n)
            try:
                print(row("node, Robot Raconteur", n, measure_rr(
                    server.proc.pid, port, n, args.duration, args.calls)), flush=True)
                print(row("node, ROS", n, measure_ros(
                    server.proc.pid, args.duration, args.calls)), flush=True)
            finally:
                server.stop()
            server, port = rr_server(n, Path(work))
            try:
                print(row("servo-sim-rr, Robot Raconteur", n, measure_rr(
                    server.proc.pid, port, n, args.duration, args.calls)), flush=True)
            finally:
                server.stop()


if __name__ == "__main__":
    main()
