"""System identification, above the hardware layer: from a servo's datasheet to a model
fitted to the servo itself (see docs/sim-to-real.md).

``fit.py`` (a recording's CSV, the excitation and the least-squares fit, pure numpy),
``recorder.py`` (recording a motor through any hardware plugin: a real bus, an emulator
or the model) and ``cli.py`` (the ``servo-sim profiles``, ``record`` and ``identify``
verbs, registered by ``servo_sim.cli``). No ROS import.
"""
