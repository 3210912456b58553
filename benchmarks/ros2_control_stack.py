"""A client of the ros2_control stack of ``launch/ros2_control.launch.py``, for the tests
(``test/test_ros2_control*.py``) and ``bench_ros2_control.py``: goals to
joint_trajectory_controller, commands to forward_position_controller, the broadcaster's
``/joint_states``, controller switches, and the stack's processes.

It imports ROS: the tests import it only after ``require_ros(..., need="ros2_control")``."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import rclpy
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from controller_manager_msgs.srv import ListControllers, SwitchController
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectoryPoint

JTC = "joint_trajectory_controller"
FORWARD = "forward_position_controller"
BROADCASTER = "joint_state_broadcaster"
SUCCEEDED, ABORTED = GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED
#: Seconds to wait for anything the stack does (start-up takes about 10 s here).
TIMEOUT = 60.0


def duration(seconds: float) -> Duration:
    sec = int(seconds)
    return Duration(sec=sec, nanosec=round((seconds - sec) * 1e9))


class StackClient:
    """An rclpy node of its own context that talks to the stack."""

    def __init__(self, joints: Sequence[str] = ("arm", "gripper")) -> None:
        self.joints = list(joints)
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("stack_test_client", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        #: (wall time, message) of every /joint_states of the broadcaster
        self.states: list[tuple[float, JointState]] = []
        #: (wall time, simulated seconds) of every /clock
        self.clock: list[tuple[float, float]] = []
        self.node.create_subscription(JointState, "/joint_states",
                                      lambda m: self.states.append((time.monotonic(), m)), 10)
        self.node.create_subscription(
            Clock, "/clock",
            lambda m: self.clock.append((time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)),
            10)
        self.follow_client = ActionClient(self.node, FollowJointTrajectory,
                                          f"/{JTC}/follow_joint_trajectory")
        self.forward = self.node.create_publisher(Float64MultiArray, f"/{FORWARD}/commands", 10)
        self._clients: dict[str, Any] = {}

    def close(self) -> None:
        self.executor.shutdown()
        self.follow_client.destroy()  # destroy_node leaves it, and it would keep the node
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    # ------------------------------------------------------------------ waiting

    def spin_until(self, condition: Callable[[], Any], what: str,
                   timeout: float = TIMEOUT) -> float:
        """Spin until ``condition()``; the seconds it took. AssertionError on timeout."""
        start = time.monotonic()
        while not condition():
            if time.monotonic() - start > timeout:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.05)
        return time.monotonic() - start

    def spin_for(self, seconds: float) -> None:
        """Spin (receive) for ``seconds`` of wall time."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(end - time.monotonic(), 0.0)))

    def call(self, srv_type: Any, name: str, request: Any, timeout: float = TIMEOUT,
             resend_s: float | None = None) -> Any:
        """Call ``name`` (one client per service, kept). With ``resend_s``, for a query that
        may be asked twice: the request again after that long without an answer, since
        Fast DDS drops a response whose client's reader the server has not discovered yet
        (seen here while a large table was being created beside the stack)."""
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.node.create_client(srv_type, name)
        self.spin_until(client.service_is_ready, name, timeout)
        start = time.monotonic()
        while True:
            future = client.call_async(request)
            wait = timeout if resend_s is None else min(resend_s, timeout)
            try:
                self.spin_until(future.done, f"the answer of {name}", wait)
                return future.result()
            except AssertionError:
                client.remove_pending_request(future)
                if resend_s is None or time.monotonic() - start > timeout:
                    raise

    def controller_states(self) -> dict[str, str]:
        """name -> state ("active", "inactive", ...) of every loaded controller."""
        answer = self.call(ListControllers, "/controller_manager/list_controllers",
                           ListControllers.Request(), resend_s=5.0)
        return {c.name: c.state for c in answer.controller}

    def wait_ready(self, active: str = JTC, timeout: float = TIMEOUT,
                   running: Callable[[], bool] = lambda: True) -> float:
        """Wait until the broadcaster and ``active`` run, the other controller is loaded
        inactive, and /joint_states flows with the node's state (while ``running()``: the
        launch, say, has not ended).

        The topic system's state interfaces are NaN until the node's first joint_states
        reach it, and the JTC takes a goal on NaN state and reports it succeeded (a NaN
        error is within every tolerance): so ready means every joint's position finite."""
        start = time.monotonic()
        self.spin_until(lambda: not running() or "/controller_manager/list_controllers" in
                        dict(self.node.get_service_names_and_types()), "the controller manager")
        assert running(), "the stack ended while starting"

        def ready() -> bool:  # every spawner done: nothing loads while a test runs
            states = self.controller_states()
            return states == {BROADCASTER: "active", JTC: "inactive", FORWARD: "inactive",
                              active: "active"}

        while not ready():
            assert running(), "the stack ended while starting"
            if time.monotonic() - start > timeout:
                raise AssertionError(f"the stack did not come up in {timeout:g} s: "
                                     f"{self.controller_states()}")
            self.spin_for(0.5)
        count = len(self.states)
        self.spin_until(lambda: len(self.states) > count + 2, "/joint_states", timeout)
        self.spin_until(lambda: not running() or all(map(math.isfinite,
                                                         self.positions().values())),
                        "/joint_states with every position finite (the node's state)", timeout)
        assert running(), "the stack ended while starting"
        if active == JTC:
            self.spin_until(self.follow_client.server_is_ready, "the JTC action server")
        return time.monotonic() - start

    # ------------------------------------------------------------------ the state

    def positions(self) -> dict[str, float]:
        """The joints' positions in the last /joint_states."""
        assert self.states, "no /joint_states received"
        return positions_of(self.states[-1][1])

    def wait_positions(self, target: Sequence[float], tolerance: Sequence[float],
                       timeout: float = TIMEOUT) -> dict[str, float]:
        """Wait until every joint is within its tolerance of ``target``."""
        def there() -> bool:
            if not self.states:
                return False
            now = self.positions()
            return all(abs(now[j] - t) <= tol
                       for j, t, tol in zip(self.joints, target, tolerance, strict=True))
        self.spin_until(there, f"positions {list(target)} (+- {list(tolerance)})", timeout)
        return self.positions()

    # ------------------------------------------------------------------ commands

    def send(self, points: Sequence[tuple[float, Sequence[float]]]) -> Any:
        """A FollowJointTrajectory goal of ``(seconds from start, positions)`` points; the
        accepted goal handle."""
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = self.joints
        goal.trajectory.points = [
            JointTrajectoryPoint(positions=[float(p) for p in positions],
                                 velocities=[0.0] * len(positions) if k == len(points) - 1
                                 else [],
                                 time_from_start=duration(t))
            for k, (t, positions) in enumerate(points)]
        self.spin_until(self.follow_client.server_is_ready, "the JTC action server")
        future = self.follow_client.send_goal_async(goal)
        self.spin_until(future.done, "the goal's acceptance")
        handle = future.result()
        assert handle.accepted, "joint_trajectory_controller rejected the goal"
        return handle

    def result(self, handle: Any, timeout: float = TIMEOUT) -> tuple[int, Any]:
        """(status, FollowJointTrajectory.Result) once the goal has ended."""
        future = handle.get_result_async()
        self.spin_until(future.done, "the goal's result", timeout)
        return future.result().status, future.result().result

    def follow(self, points: Sequence[tuple[float, Sequence[float]]]) -> tuple[int, Any, float]:
        """Send a goal and wait for it: (status, result, wall seconds from acceptance)."""
        handle = self.send(points)
        start = time.monotonic()
        status, result = self.result(handle)
        return status, result, time.monotonic() - start

    def command(self, positions: Sequence[float]) -> None:
        """One command to forward_position_controller (the joints' positions), once its
        subscription is matched (a message published before that is lost to it)."""
        self.spin_until(lambda: self.forward.get_subscription_count() > 0,
                        f"/{FORWARD}/commands subscribed")
        self.forward.publish(Float64MultiArray(data=[float(p) for p in positions]))

    def switch(self, activate: Sequence[str], deactivate: Sequence[str]) -> None:
        request = SwitchController.Request(
            activate_controllers=list(activate), deactivate_controllers=list(deactivate),
            strictness=SwitchController.Request.STRICT, activate_asap=True,
            timeout=duration(5.0))
        answer = self.call(SwitchController, "/controller_manager/switch_controller", request)
        assert answer.ok, f"switch_controller {activate} / {deactivate} failed"


def positions_of(message: JointState) -> dict[str, float]:
    """name -> position of a JointState."""
    return dict(zip(message.name, message.position, strict=True))


# ---------------------------------------------------------------------- processes


def proc_stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, pgrp, ...,
    utime at [11], stime at [12]), or None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, :func:`proc_stat` fields) of every process still there."""
    for entry in Path("/proc").glob("[0-9]*"):
        fields = proc_stat(entry.name)
        if fields is not None:
            yield int(entry.name), fields


def descendants(pattern: str, root: int | None = None) -> list[int]:
    """Pids of the processes under ``root`` (this one) whose command line has ``pattern``."""
    children: dict[int, list[int]] = {}
    for pid, fields in processes():
        children.setdefault(int(fields[1]), []).append(pid)
    found, todo = [], list(children.get(root or os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if pattern in cmdline:
            found.append(pid)
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


def kill(pid: int, sig: int = signal.SIGTERM) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def group_alive(pgid: int) -> list[int]:
    """Pids still running in process group ``pgid``."""
    return [pid for pid, fields in processes() if int(fields[2]) == pgid and fields[0] != "Z"]


class LaunchProcess:
    """``ros2 launch servo_sim ros2_control.launch.py ARGS`` in a session of its own (so
    that SIGINT reaches the whole group, as Ctrl-C in a terminal does), output in a file."""

    def __init__(self, log: Path, *arguments: str) -> None:
        self.log = log
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                ["ros2", "launch", "servo_sim", "ros2_control.launch.py", *arguments],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)

    @property
    def output(self) -> str:
        return self.log.read_text()

    def interrupt(self, timeout: float = TIMEOUT) -> float:
        """Ctrl-C: SIGINT to the group; the seconds until every process of it ended."""
        start = time.monotonic()
        kill(-self.proc.pid, signal.SIGINT)
        while group_alive(self.proc.pid):
            if time.monotonic() - start > timeout:
                raise AssertionError(f"the launch still runs {timeout:g} s after SIGINT")
            time.sleep(0.02)
        self.proc.wait()
        return time.monotonic() - start

    def stop(self) -> None:
        """End whatever is left (a test that failed half-way)."""
        if group_alive(self.proc.pid):
            try:
                self.interrupt(20.0)
            except AssertionError:
                kill(-self.proc.pid, signal.SIGKILL)
        self.proc.wait()
