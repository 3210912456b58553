"""The per-motor actions (``trapezoidal_move``): goals as the runtime's watched moves.

A goal starts the model's move through the hardware system's check, the runtime reports
its feedback times and its end with the cycles, and a cancel halts the move at once.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from rclpy.node import Node
from rclpy.task import Future

from ... import action as servo_actions
from ...model import ros_name
from ...model.safety import Move
from ...runtime import Runtime
from ..interface import MotorAction

if TYPE_CHECKING:
    from rclpy.action import ActionServer


class Goals:
    """The node's action servers and the goals in progress."""

    def __init__(self, node: Node, runtime: Runtime) -> None:
        self._node, self._runtime = node, runtime
        self._servers: list[ActionServer] = []
        # move -> its goal handle, the future its coroutine awaits, the feedback type
        self._goals: dict[Move, tuple[Any, Future, Any]] = {}
        self._moves: dict[bytes, Move] = {}  # goal id -> its move

    def create_server(self, row: MotorAction, motor_name: str) -> None:
        """The action server of ``row`` for one motor."""
        # imported with the first action server, after the node runs: rclpy.action costs
        # 16 ms of start-up, which ten robots starting at once on two cores feel
        from rclpy.action import ActionServer, CancelResponse, GoalResponse

        def cancel(goal: Any) -> CancelResponse:
            move = self._moves.get(bytes(goal.goal_id.uuid))
            if move is not None and not move.done:
                try:
                    move.cancel()  # ends with the next cycle's report (or poll, paused)
                except ValueError as exc:  # the hardware refuses the halt: the move goes on
                    self._node.get_logger().warning(f"{ros_name(motor_name)}: {exc}")
                    return CancelResponse.REJECT
            return CancelResponse.ACCEPT

        self._servers.append(ActionServer(
            self._node, getattr(servo_actions, row.action), f"{ros_name(motor_name)}/{row.name}",
            execute_callback=partial(self._execute, row, motor_name),
            cancel_callback=cancel, goal_callback=lambda goal: GoalResponse.ACCEPT))

    @property
    def active(self) -> bool:
        return bool(self._goals)

    async def _execute(self, row: MotorAction, motor_name: str, goal: Any) -> Any:
        """A trapezoidal_move goal: start the model's move, wait until it ends."""
        g, action = goal.request, getattr(servo_actions, row.action)
        result = action.Result()
        runtime = self._runtime
        try:
            move = runtime.command(motor_name, row.command, g.target_position,
                                   g.target_velocity, g.max_velocity, g.max_acceleration)
        except ValueError as exc:
            self._node.get_logger().warning(f"{ros_name(motor_name)}/{row.name}: {exc}")
            goal.abort()
            result.success, result.message = False, str(exc)
            return result
        done = Future()
        key = bytes(goal.goal_id.uuid)
        self._goals[move], self._moves[key] = (goal, done, action.Feedback), move
        self._runtime.watch(move)
        self.poll()  # feedback at the start
        try:
            await done
        finally:
            self._moves.pop(key, None)
        result.success = move.state == "succeeded"
        result.message = move.reason or f"reached {move.plan.target:g}"
        result.position = runtime.motor(motor_name).position
        result.duration = ((move.finished_ms or runtime.time_ms) - move.start_ms) / 1000.0
        if move.state == "succeeded":
            goal.succeed()
        elif move.state == "canceled" and goal.is_cancel_requested:
            goal.canceled()
        else:
            goal.abort()
        return result

    def poll(self) -> None:
        """Where no cycle runs (paused, a goal started, a reset): ends and feedback now."""
        if self._goals:
            self.follow(*self._runtime.poll_moves())

    def follow(self, ended: tuple[Move, ...], feedback: tuple[Move, ...]) -> None:
        """Resolve the goals whose move ended, publish the feedback that is due."""
        for move in ended:
            entry = self._goals.pop(move, None)
            if entry is not None:
                entry[1].set_result(move.state)
        for move in feedback:
            entry = self._goals.get(move)
            if entry is not None:
                goal, _, kind = entry
                motor = self._runtime.motor(move.name)
                goal.publish_feedback(kind(position=motor.position, velocity=motor.velocity,
                                           remaining_distance=move.remaining_distance))

    def destroy(self) -> None:
        """Node.destroy_node leaves action servers alone; their handles would keep the
        rcl node alive."""
        for server in self._servers:
            server.destroy()
        self._servers.clear()
