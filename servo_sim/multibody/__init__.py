"""Multibody engines as the body of servo_sim's motors (``physics: mujoco``).

Nothing here is imported by the model: a config whose ``physics`` names an engine
(``servo_sim.model.config.BODY_ENGINES``) has it loaded by name
(``servo_sim.model.body.make_body``). MuJoCo is imported only in this package, and
only when a config asks for it (the ``mujoco`` extra: ``pip install
'servo_sim[mujoco]'``).
"""
