"""The Robot Raconteur door: every motor a ``com.robotraconteur.servo.Servo`` service.

A host of the runtime beside ``ros/`` and ``webots/`` (importing neither): ``door.py``
serves the motors of one :class:`~servo_sim.runtime.Runtime` (one service per motor,
named by its ROS name), ``servo.py`` is the service object, ``security.py`` the node's
setup and logins, ``params.py`` the live parameters as ``varvalue``, ``info.py`` the
info structures, ``main.py`` the ``servo-sim-rr`` command and ``client.py`` a client's
connection. Robot Raconteur is imported only in this room. See docs/robot-raconteur.md.
"""
