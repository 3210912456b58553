"""``bench_node.py fleet``: a fleet of robots started by ``ros2 launch servo_sim
fleet.launch.py``, measured from outside it (issue 33). The user's clock starts when the
launch command starts.

For each fleet (K robots x M motors, each motor with the default interfaces, default
step), each discovery (``simple``, ``server`` = one discovery server the launch starts)
and each ``fork`` (``true``: the robots forked from one host process, the launch's
default; ``false``: each started by launch):

* every robot's first ``/rK/joint_states`` received here (a subscriber made before the
  launch starts, a plain client of the server; each robot's destroyed once its first
  message came, and this process's participant gone once every robot's did, so that what
  follows measures the fleet, not this process taking in its messages and graph updates);
* every robot's per-motor table (its "per-motor table complete" log line, as the launch
  prints it) and the CPU floor: the sum of the robots' CPU time up to their own table
  line (and, forked, the host's: the imports they share), over the cores; the last
  table / floor, and beside it all the CPU that ran up to the last table (the robots'
  steps after their own tables, the servers, the launch's nudge, the launch process) over
  the cores and the floor: the least that ratio could be with that CPU on these cores;
* the fleet's CPU (robots, servers, the launch process and the ros2 daemon it restarted,
  over 1 s windows) right after
  the last table, settled (the mean of the last 5 windows of ``--settle`` seconds), and
  when it came back within 1.5x the settled figure;
* a newcomer: a fresh process calling ``/r{K-1}/m{M-1}/get_velocity`` (start -> answer),
  three times; ``ros2 service list`` as a super client (the environment the launch logs),
  called again until it lists every service of the fleet (as many as a super client
  that waited sees): the time from the first call's start to the end of the first
  complete one, the calls it took; then one more call. With servers, through the daemon
  the launch restarted as their super client; with simple discovery, after ``ros2 daemon
  stop`` (the first call starts a daemon);
* SIGINT to the launch's process group: each robot's exit (launch's "process has finished
  cleanly" line, or the host's "robot /rK ... exited" line) after the signal, and the
  launch's own exit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from servo_sim.ros.fleet import robots as fleet  # noqa: E402
from servo_sim.ros.fleet.host import ENDED_LINE, FORKED_LINE  # noqa: E402

CORES = os.cpu_count() or 1
TICK = os.sysconf("SC_CLK_TCK")
NEWCOMER = """
import sys, time, rclpy
from servo_sim.srv import GetFloat
rclpy.init(); node = rclpy.create_node("newcomer")
client = node.create_client(GetFloat, sys.argv[1])
deadline = time.monotonic() + 60.0
while time.monotonic() < deadline:  # a request the robot did not answer is sent again
    if client.wait_for_service(timeout_sec=deadline - time.monotonic()):
        future = client.call_async(GetFloat.Request(ask=True))
        rclpy.spin_until_future_complete(node, future, timeout_sec=2.0)
        if future.result() is not None:
            print("answered", flush=True); break
        client.remove_pending_request(future)
        print("again", flush=True)
"""


#: A super client that waits until the fleet's services it sees have not changed for 5 s,
#: and prints how many there are (argv: the robots' namespaces); hidden ones (a name part
#: starting with "_", e.g. actions' services) left out as ``ros2 service list`` does.
REFERENCE = """
import sys, time, rclpy
rclpy.init(); node = rclpy.create_node("fleet_bench_reference")
spaces = set(sys.argv[1:])
counts, start = [], time.monotonic()
while time.monotonic() - start < 300:
    rclpy.spin_once(node, timeout_sec=0.05)
    counts.append(sum(1 for n, _ in node.get_service_names_and_types()
                      if n.split("/")[1] in spaces and "/_" not in n))
    if len(counts) > 100 and counts[-1] == counts[-100] > 0:
        break
print(counts[-1])
"""


def cpu_s(pid: int) -> float:
    """User + system CPU time of a process, in seconds (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def daemon_pids() -> list[int]:
    """The ros2 daemons of this process's domain (a daemon is a process of its own, not
    one the launch reports)."""
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"ros2-daemon" in argv and domain.encode() in argv:
                pids.append(int(entry.name))
    return pids


class LaunchOutput:
    """The launch's output read line by line, with the moments that matter."""

    STARTED = re.compile(r"\[INFO\] \[(\S+)\]: process started with pid \[(\d+)\]")
    NAMED = re.compile(r"^\[((?:servo_sim_node|servo_sim_fleet)-\d+)\] .*\[(\w+)\.servo_sim\]")
    FINISHED = re.compile(r"\[INFO\] \[(servo_sim_node-\d+)\]: process has finished cleanly")
    DIED = re.compile(r"\[(servo_sim_node-\d+)\]: process has died .*exit code (-?\d+)")
    # a robot forked by the fleet's host (fork:=true): its pid, and how it ended
    FORKED, FORK_ENDED = FORKED_LINE, ENDED_LINE
    # the launch's nudge (servo_sim.ros.fleet.nudge) as it ends: its own CPU time
    NUDGE_CPU = re.compile(r"servo_sim_fleet_nudge: .* \((\d+\.\d+) s of CPU\)")

    def __init__(self, proc: subprocess.Popen, log: Path, robots: int | None = None) -> None:
        self.proc, self.log, self.robots = proc, log, robots
        self.pids: dict[str, int] = {}       # launch's process label -> pid
        self.robot: dict[str, str] = {}      # launch's process label -> namespace
        self.forked: dict[str, int] = {}     # namespace -> pid of a forked robot
        self.table: dict[str, tuple[float, float]] = {}  # ns -> (moment, CPU s)
        self.host_cpu_s = 0.0                # the host's CPU s at the last table
        self.cpu_at_last_table: dict[str, float] = {}  # every part's CPU s then
        self.ended: dict[str, tuple[float, int]] = {}    # ns -> (moment, exit status)
        self.lines: list[str] = []
        self.cpu_used: dict[int, float] = {}  # pid -> CPU s, the most seen
        self.nudge_cpu_s = 0.0                # as the nudge said it when it left
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with self.log.open("w") as out:
            for line in self.proc.stdout:
                now = time.monotonic()
                out.write(line)
                self.lines.append(line)
                if m := self.STARTED.search(line):
                    self.pids[m[1]] = int(m[2])
                elif m := self.NUDGE_CPU.search(line):
                    self.nudge_cpu_s = float(m[1])
                elif m := self.FORKED.search(line):
                    self.forked[m[1]] = int(m[2])
                elif m := self.NAMED.search(line):
                    self.robot.setdefault(m[1], m[2])
                    if "per-motor table complete" in line:
                        pid = self.forked.get(m[2], self.pids[m[1]])
                        self.table[m[2]] = (now, cpu_s(pid))
                        if m[2] in self.forked:
                            self.host_cpu_s = cpu_s(self.pids[m[1]])
                        if len(self.table) == self.robots:
                            self.cpu_at_last_table = self.fleet_cpu_s()
                if m := self.FINISHED.search(line):
                    self.ended[self.robot.get(m[1], m[1])] = (now, 0)
                elif m := self.DIED.search(line):
                    self.ended[self.robot.get(m[1], m[1])] = (now, int(m[2]))
                elif m := self.FORK_ENDED.search(line):
                    self.ended[m[1]] = (now, int(m[2]) if m[2] is not None
                                        else -signal.Signals[m[3]].value)

    def fleet_cpu_s(self) -> dict[str, float]:
        """CPU time of everything the launch started (with the ros2 daemon that its
        ``ros2 daemon start`` left running) and of the launch itself, by part (robots,
        servers, ros2 daemon, the nudge, launch); a process that ended (the ros2 daemon's
        start and stop) counts with what it last used, the nudge with what it said."""
        labels = {pid: label for label, pid in self.pids.items()}
        labels.update({pid: f"servo_sim_node /{ns}" for ns, pid in self.forked.items()})
        parts: dict[str, float] = {"robots": 0.0, "servers": 0.0, "ros2 daemon": 0.0,
                                   "nudge": 0.0, "launch": 0.0}
        for pid in [*self.pids.values(), *self.forked.values(), self.proc.pid,
                    *daemon_pids()]:
            self.cpu_used[pid] = max(self.cpu_used.get(pid, 0.0), cpu_s(pid))
        for pid in self.cpu_used:  # (a daemon stopped meanwhile counts with its last)
            label = labels.get(pid, "")
            part = ("robots" if label.startswith(("servo_sim_node", "servo_sim_fleet")) else
                    "servers" if label.startswith("discovery_server") else
                    "nudge" if label.startswith("fleet_nudge") else
                    "launch" if pid == self.proc.pid else "ros2 daemon")
            parts[part] += self.cpu_used[pid]
        parts["nudge"] = max(parts["nudge"], self.nudge_cpu_s)
        return parts


def _config(path: Path, motors: int) -> Path:
    path.write_text("/**/servo_sim:\n  ros__parameters:\n"
                    f"    motors: [{', '.join(f'm{i}' for i in range(motors))}]\n")
    return path


def _until(condition, timeout: float, spin=None) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        spin() if spin else time.sleep(0.02)
    return True


def run_one(robots: int, motors: int, discovery: str, fork: str, settle: float, work: Path,
            ros2: str) -> dict:
    """One fleet, measured; a dict of figures (seconds from the launch command's start)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    port = fleet.free_port()
    plan = fleet.discovery(discovery, str(port))
    spaces = [f"r{k}" for k in range(robots)]
    os.environ.pop("ROS_SUPER_CLIENT", None)
    os.environ.pop("ROS_DISCOVERY_SERVER", None)
    os.environ.update(plan.node_environment())  # before this process's first participant
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("fleet_bench", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    first: dict[str, float] = {}
    listening = {ns: node.create_subscription(  # raw: not decoded
        JointState, f"/{ns}/joint_states",
        lambda m, ns=ns: first.setdefault(ns, time.monotonic()), 10, raw=True)
        for ns in spaces}

    def spin() -> None:
        """Take what came; a robot's subscription goes with its first message (30 robots
        at 50 Hz are 1,500 messages a second that this process's threads would take in
        on the fleet's cores, and that the robots would send, while tables grow)."""
        executor.spin_once(timeout_sec=0.01)
        for ns in [ns for ns in listening if ns in first]:
            node.destroy_subscription(listening.pop(ns))

    def leave() -> None:
        if context.ok():
            executor.shutdown()
            node.destroy_node()
            rclpy.shutdown(context=context)

    config = _config(work / f"{motors}.yaml", motors)
    t0 = time.monotonic()
    launch = subprocess.Popen(
        [ros2, "launch", "servo_sim", "fleet.launch.py", f"robots:={robots}",
         f"config:={config}", f"discovery:={discovery}", f"discovery_port:={port}",
         f"fork:={fork}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out = LaunchOutput(launch, work / f"launch-{robots}x{motors}-{discovery}-{fork}.log",
                       robots)
    row: dict = {"fleet": f"{robots} x {motors}", "discovery": discovery, "fork": fork}
    try:
        _until(lambda: len(first) == robots, 120, spin)
        row["first_joint_states_s"] = max(first.values()) - t0 if len(first) == robots \
            else None
        # then this process's participant leaves: it would go on taking in every robot's
        # graph updates (one per endpoint a table adds, each with the robot's whole
        # endpoint list) on the fleet's cores while the tables grow
        leave()
        if not _until(lambda: len(out.table) == robots, 900):
            raise RuntimeError(f"tables: {len(out.table)} of {robots}")
        _until(lambda: out.cpu_at_last_table, 10)  # (taken just after the line: /proc)
        ends = [t for t, _ in out.table.values()]
        row["tables_s"] = (min(ends) - t0, max(ends) - t0)
        floor = (sum(c for _, c in out.table.values()) + out.host_cpu_s) / CORES
        row["cpu_floor_s"] = floor
        row["tables_over_floor"] = (max(ends) - t0) / floor
        # all the CPU that ran up to the last table (robots' steps after their own
        # tables, servers, launch) over the cores: what no scheduling could beat
        row["cpu_to_last_table_s"] = out.cpu_at_last_table
        row["all_cpu_over_floor"] = sum(out.cpu_at_last_table.values()) / CORES / floor
        # the fleet's CPU over 1 s windows from the last table on
        windows: list[float] = []
        last_table = max(time.monotonic(), max(ends))  # (the windows cannot start earlier)
        row["cpu_windows_from_s"] = last_table - max(ends)
        previous = first_window = out.fleet_cpu_s()
        while len(windows) < settle:
            window_end = last_table + len(windows) + 1
            _until(lambda: time.monotonic() >= window_end, 5)  # noqa: B023
            now = out.fleet_cpu_s()
            # % of one core over the 1 s window
            windows.append(sum(now.values()) * 100 - sum(previous.values()) * 100)
            row.setdefault("cpu_windows_by_part_pct", []).append(
                {part: round((now[part] - previous[part]) * 100) for part in now})
            previous = now
        row["cpu_by_part_s"] = {part: now[part] - first_window[part] for part in now}
        settled = sum(windows[-5:]) / 5
        back = next((k for k in range(len(windows))
                     if all(w <= 1.5 * max(settled, 1.0) for w in windows[k:])), None)
        row["cpu_windows_pct"] = windows
        row["cpu_right_after_pct"] = windows[0]
        row["cpu_settled_pct"] = settled
        row["cpu_back_within_1_5x_s"] = back
        # newcomers
        target = f"/r{robots - 1}/m{motors - 1}/get_velocity"
        row["newcomer_call_s"] = [_newcomer(target) for _ in range(3)]
        row["service_list"] = _service_list(ros2, plan, spaces)
    finally:
        t_sigint = time.monotonic()
        try:
            os.killpg(launch.pid, 2)
            launch.wait(timeout=60)
        finally:
            if launch.poll() is None:
                os.killpg(launch.pid, 9)
        out.thread.join(timeout=10)
        leave()
    row["sigint_exits_s"] = [out.ended[ns][0] - t_sigint if ns in out.ended else None
                             for ns in spaces]
    row["exit_statuses"] = sorted({out.ended[ns][1] for ns in spaces if ns in out.ended})
    row["launch_exit"] = launch.returncode
    return row


def _newcomer(service: str) -> float | None:
    """A fresh process's start -> its call answered (it prints 'answered')."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", NEWCOMER, service], stdout=subprocess.PIPE,
                            text=True)
    for line in proc.stdout:  # (it gives up after 60 s: no answer)
        if line.startswith("answered"):
            took = time.monotonic() - start
            proc.wait(timeout=30)
            return took
    proc.wait(timeout=30)
    return None


def _service_list(ros2: str, plan, spaces: list[str]) -> dict:
    """``ros2 service list`` as a super client: with no daemon running, then through the
    daemon the first one started; the fleet's services listed, of all (a super client
    here, given time)."""
    env = {**os.environ, **plan.tool_environment()}
    if plan.simple:  # (with servers, the daemon is the one fleet.launch.py started)
        subprocess.run([ros2, "daemon", "stop"], env=env, capture_output=True, timeout=60)
    reference = subprocess.run([sys.executable, "-c", REFERENCE, *spaces], env=env,
                               capture_output=True, text=True, timeout=300)
    total = int(reference.stdout.split()[-1])

    def fleet_services(names) -> int:
        return sum(1 for n in names if n.split("/")[1:2] and n.split("/")[1] in spaces)

    start = time.monotonic()
    calls: list[tuple[float, int]] = []  # (took, fleet services listed) per call
    while time.monotonic() - start < 60:
        began = time.monotonic()
        done = subprocess.run([ros2, "service", "list"], env=env, capture_output=True,
                              text=True, timeout=120)
        calls.append((time.monotonic() - began, fleet_services(done.stdout.split())))
        if calls[-1][1] >= total:
            break
    whole = time.monotonic() - start if calls[-1][1] >= total else None
    began = time.monotonic()
    subprocess.run([ros2, "service", "list"], env=env, capture_output=True, timeout=120)
    warm = time.monotonic() - began
    if plan.simple:
        subprocess.run([ros2, "daemon", "stop"], env=env, capture_output=True, timeout=60)
    return {"total": total, "calls": calls, "whole_listed_after_s": whole, "warm_s": warm}


def fleet_command(args) -> None:
    """The ``fleet`` subcommand of bench_node.py."""
    import tempfile

    ros2 = shutil.which("ros2")
    if not ros2:
        sys.exit("bench_node.py fleet needs ros2 launch: a sourced ROS 2 installation, or "
                 "the ROS 2 Python tools built onto the venv (docs/testing.md)")
    work = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    # bytecode written once, as an installation has it (with PYTHONDONTWRITEBYTECODE set,
    # every robot would compile the modules changed since at each start)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "servo_sim")],
                   capture_output=True)
    print(f"# fleet: {CORES} cores, {os.environ.get('RMW_IMPLEMENTATION', 'rmw default')}, "
          f"domain {os.environ['ROS_DOMAIN_ID']}, logs in {work}")
    print("| fleet | discovery | fork | every first joint_states | tables (first-last) |"
          " CPU floor | last table / floor | fleet CPU right after -> settled | back within 1.5x |"
          " newcomer answered | `ros2 service list` lists the whole fleet | SIGINT: robots"
          " exited (max), status |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.fleets:
        robots, motors = (int(x) for x in spec.lower().split("x"))
        for discovery, fork in ((d, f) for d in args.discovery for f in args.fork):
            # a process of its own per row: Fast DDS reads the discovery environment once
            # per process
            done = subprocess.run([sys.executable, __file__, str(robots), str(motors),
                                   discovery, fork, str(args.settle), str(work), ros2],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(f"| {spec} | {discovery} | {fork} | failed: {done.stderr[-600:]!r} |")
                continue
            row = json.loads(done.stdout.splitlines()[-1])
            with (work / "rows.jsonl").open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(_row(row), flush=True)


def _row(r: dict) -> str:
    def s(x) -> str:
        return "-" if x is None else f"{x:.2f} s"

    lists = r["service_list"]
    parts = r["cpu_by_part_s"]
    listed = (f"{s(lists['whole_listed_after_s'])} ({len(lists['calls'])} calls, first "
              f"{lists['calls'][0][1]}/{lists['total']}); warm {lists['warm_s']:.2f} s")
    exits = [x for x in r["sigint_exits_s"] if x is not None]
    return (f"| {r['fleet']} | {r['discovery']} | {r['fork']} | "
            f"{s(r['first_joint_states_s'])} | "
            f"{r['tables_s'][0]:.1f}-{r['tables_s'][1]:.1f} s | {r['cpu_floor_s']:.1f} s | "
            f"{r['tables_over_floor']:.2f} (all CPU {r['all_cpu_over_floor']:.2f}; nudge "
            f"{r['cpu_to_last_table_s'].get('nudge', 0.0):.1f} s) | "
            f"{r['cpu_right_after_pct']:.0f} % -> "
            f"{r['cpu_settled_pct']:.0f} % (servers {parts['servers']:.1f} s, daemon "
            f"{parts['ros2 daemon']:.1f} s of CPU in {len(r['cpu_windows_pct'])} s) | "
            f"{'-' if r['cpu_back_within_1_5x_s'] is None else r['cpu_back_within_1_5x_s']} s"
            f" | {', '.join(s(x) for x in r['newcomer_call_s'])} | {listed} | "
            f"{len(exits)}/{len(r['sigint_exits_s'])} in {max(exits, default=0):.2f} s, "
            f"{r['exit_statuses']}, launch {r['launch_exit']} |")


if __name__ == "__main__":
    _robots, _motors, _discovery, _fork, _settle, _work, _ros2 = sys.argv[1:8]
    print(json.dumps(run_one(int(_robots), int(_motors), _discovery, _fork, float(_settle),
                             Path(_work), _ros2)))
