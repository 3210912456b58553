"""servo_sim: simulated servo motors with Webots Motor semantics, for ROS 2 and without it."""

__version__ = "0.1.0"
