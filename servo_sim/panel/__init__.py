"""The servo panel (Qt): tune and drive a running node's motors; rqt plugin and
``servo-sim-panel``. Qt stays in this package, above the ROS client (``servo_sim.ros``)."""
