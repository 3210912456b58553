"""Device emulators: servo buses of the model on a pseudo-terminal, for the real plugins
(``dynamixel``, ``feetech``) and their vendor SDKs to talk to without a device.

``emulator.py`` (what both share: the pty, the model motors, the child process),
``dxl_emulator.py`` (Dynamixel Protocol 2.0, ``servo-sim-dxl-emulator``),
``sts_emulator.py`` (Feetech STS/SCS, ``servo-sim-sts-emulator``) and ``virtual_arm.py``
(a virtual SO-101 on an emulated Feetech bus, ``servo-sim-so101``). No import of the
hardware plugins (``servo_sim.hardware``) nor of ROS: they only share the model.
"""
