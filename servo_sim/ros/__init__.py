"""The ROS 2 layer: the declarative interface table, parameters and the rclpy node."""
