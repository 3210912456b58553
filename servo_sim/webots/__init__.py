"""Webots controllers against servo_sim, simulated or on real servos (ROS-free).

* :mod:`.api`: the Webots Python controller API (Robot, Motor, PositionSensor, Brake,
  Device, Node, AnsiCodes) over the model and the hardware layer;
* :mod:`.session`: one run (the hardware system, clock, battery, CSV record, end);
* :mod:`.runner`: runs a controller script unchanged, ``controller`` importable for it
  only (``servo-sim controller SCRIPT.py [CONFIG]``, or ``python -m servo_sim.webots``);
* :mod:`.cli`: the ``controller`` verb of ``servo-sim`` and ``python -m servo_sim.webots``.

Motors from a Webots ``.wbt``/``.proto`` file are read by :mod:`servo_sim.load`.
"""
