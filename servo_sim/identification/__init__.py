"""System identification, above the hardware layer: from a servo's datasheet to a model
fitted to the servo itself (see docs/sim-to-real.md).

``recordings.py`` (reading ``servo-sim record``'s CSV and Rhoban/bam's bench JSON, with
their bench and torque on/off), ``replay.py`` (a recording's goals on the model: the one
loop that ``replay`` and the fit run), ``fit.py`` (the excitation and the bounded
least-squares fit over many recordings, pure numpy), ``plots.py`` (replay plots),
``recorder.py`` (recording a motor through any hardware plugin: a real bus, an emulator
or the model) and ``cli.py`` (the ``servo-sim profiles``, ``record``, ``replay`` and
``identify`` verbs, registered by ``servo_sim.cli``). No ROS import.
"""
