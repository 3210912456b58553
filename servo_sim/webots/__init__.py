"""Webots controllers against servo_sim, simulated or on real servos (ROS-free).

* :mod:`.api`: the Webots Python controller API (Robot, Motor, PositionSensor, Brake,
  Device, Node, AnsiCodes) over the model and the hardware layer;
* :mod:`.session`: one run (the hardware system, clock, battery, CSV record, end);
* :mod:`.runner`: runs a controller script unchanged, ``controller`` importable for it
  only (``servo-sim controller SCRIPT.py [CONFIG]``, or ``python -m servo_sim.webots``);
* :mod:`.world`: motors from a Webots ``.wbt``/``.proto`` file as a config.
* :mod:`.cli`: the ``controller`` verb of ``servo-sim`` and ``python -m servo_sim.webots``,
  and the CONFIG argument (YAML or a Webots file) every verb reads.
"""
