"""The servo_sim node: :class:`ServoSimNode` (server.py) hosts a runtime's motors on
ROS 2, with what it publishes (outputs.py), its actions (goals.py), its live parameters
(live_parameters.py), ros2_control's joint commands (joint_commands.py), the per-motor
table grown while it runs (table.py) and its Robot Raconteur door (rr_door.py)."""

from .server import ServoSimNode

__all__ = ["ServoSimNode"]
