"""A virtual arm: a robot's Feetech bus emulated, each servo loaded by the arm it moves.

``servo-sim-so101`` is the SO-101: the six STS3215 of ``config/so101.yaml`` (its
``hardware`` ids, LeRobot's: shoulder_pan 1 ... gripper 6; each joint's ``servo``
profile, STS3215-7.4V) on one emulated bus (:mod:`.sts_emulator`), the joints of
``config/so101.urdf`` as their loads: each servo's inertia and the weight it holds at
the arm's present pose (:mod:`servo_sim.model.chain`, updated as the arm moves), its
hard stops at the URDF's limits. The servos start with their factory registers, torque
off, the arm resting where its weight takes it (our choice of start: the URDF's zero
pose, let fall for 4 s of model time before the bus answers; at rest after 3 s: the
shoulder on its upper stop). A joint at 0 rad is at raw position 2048, turning the URDF
axis's way (our choice: a real arm's depends on how its servos were mounted; a LeRobot
calibration maps it either way).

Their EEPROM is kept in a file across restarts, as a real arm keeps it across power
cycles (``--eeprom``; by default ``$XDG_STATE_HOME/servo_sim/so101-eeprom.json``):
LeRobot's calibration written once is found again.

Left out: the coupling of the joints' dynamics (one joint's acceleration pushing on
another), the servos' own housings beyond the links' masses, backlash, contact with
anything (the table, an object in the gripper), cameras. A write of a servo's ID
register is followed and kept (:mod:`.sts_emulator`).

``--physics mujoco`` puts the servos in MuJoCo's body of the same URDF instead
(:mod:`servo_sim.multibody`; the ``mujoco`` extra): the coupling of the joints, gravity
at every pose and the joint limits from MuJoCo, each servo's law as before.

Command line::

    servo-sim-so101                      # prints the port, e.g. /dev/pts/5
    servo-sim-so101 --eeprom arm.json    # another arm's EEPROM
    servo-sim-so101 --physics mujoco     # the servos drive MuJoCo's arm
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..model.chain import KinematicTree
from ..model.config import BODY_ENGINES, ConfigError, SimulationConfig, load_config, ros_name
from ..model.urdf import joint_limits
from ..resources import share_candidates
from . import emulator, sts_emulator

#: model time an arm falls for before its bus answers, s (it comes to rest on its stops)
SETTLE_S = 4.0


def _shared(name: str) -> Path:
    for path in share_candidates("config", name):
        if path.is_file():
            return path
    raise FileNotFoundError(f"{name}: not found in " + ", ".join(
        str(p) for p in share_candidates("config", name)))


def default_eeprom(arm: str) -> Path:
    """Where ``arm``'s EEPROM is kept unless told: the user's XDG state directory."""
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "servo_sim" / f"{arm}-eeprom.json"


def arm_bus(config: SimulationConfig, urdf: str, eeprom: Path | None = None,
            source: str = "URDF", physics: str = "dynamic") -> sts_emulator.Bus:
    """The emulated Feetech bus of the arm of ``config`` (its ``hardware`` ids and its
    motors' ``servo`` profile, one for all) whose joints ``urdf`` describes (a joint per
    motor, by ROS name); ConfigError saying what does not fit. ``physics``: ``dynamic``
    (each joint loaded at the arm's pose) or a multibody engine (``mujoco``: the file
    ``source`` is its model)."""
    hardware = config.hardware
    if hardware.get("plugin") != "feetech":
        raise ConfigError(f"a virtual arm needs a feetech bus, not {hardware.get('plugin')!r}")
    profiles = {m.servo for m in config.motors}
    if len(profiles) != 1 or None in profiles:
        raise ConfigError(f"a virtual arm needs one servo profile for every motor, not "
                          f"{sorted(map(str, profiles))}")
    tree = KinematicTree(urdf, source)
    limits = joint_limits(urdf, source)
    joints: dict[int, str] = {}
    stops: dict[int, dict[str, float]] = {}
    for motor in config.motors:
        joint = ros_name(motor.name)
        if joint not in tree.movable:
            raise ConfigError(f"{source}: no movable joint {joint!r} (motor {motor.name!r})")
        servo_id = int(hardware[motor.name]["id"])
        joints[servo_id] = joint
        low, high = limits[joint].get("min_position"), limits[joint].get("max_position")
        if low is not None and high is not None:
            stops[servo_id] = {"min_stop": low, "max_stop": high}
    engine = physics != "dynamic"
    arm = emulator.Arm(tree, joints, physics=physics, model=source if engine else None)
    bus = sts_emulator.Bus(list(joints), (), {"servo": profiles.pop()}, eeprom, stops, arm)
    bus.settle(SETTLE_S)
    return bus


def so101_bus(eeprom: Path | None = None, physics: str = "dynamic") -> sts_emulator.Bus:
    """The SO-101 of ``config/so101.yaml`` and ``config/so101.urdf`` (``physics``: see
    :func:`arm_bus`)."""
    urdf = _shared("so101.urdf")
    return arm_bus(load_config(_shared("so101.yaml")), urdf.read_text(), eeprom, str(urdf),
                   physics)


class VirtualSO101Process(sts_emulator.EmulatorProcess):
    """The virtual SO-101 in a child process (see :class:`sts_emulator.EmulatorProcess`:
    ``get``, ``set``, ``fault``, ``silence``...)."""

    MODULE = "servo_sim.emulators.virtual_arm"
    WHAT = "virtual SO-101"

    def __init__(self, eeprom: Path, realtime: bool = False, physics: str = "dynamic"
                 ) -> None:
        emulator.EmulatorProcess.__init__(
            self, ["--eeprom", str(eeprom), "--physics", physics], realtime)


def main(argv: list[str] | None = None) -> int:
    """``servo-sim-so101``: print the port, serve until Ctrl-C."""
    parser = argparse.ArgumentParser(
        description="A virtual SO-101 arm: six emulated STS3215 on a pseudo-terminal, "
                    "loaded by the arm's links (config/so101.urdf); prints the port")
    parser.add_argument("--eeprom", type=Path, metavar="FILE", default=default_eeprom("so101"),
                        help="the servos' EEPROM (calibration, limits) kept across restarts "
                             "(default: %(default)s)")
    parser.add_argument("--physics", choices=("dynamic", *BODY_ENGINES), default="dynamic",
                        help="dynamic: each joint loaded by the arm at its pose (default); "
                             "mujoco: the servos drive MuJoCo's arm (the mujoco extra)")
    parser.add_argument("--control", action="store_true",
                        help="take JSON control requests on stdin (VirtualSO101Process)")
    args = parser.parse_args(argv)
    args.eeprom.parent.mkdir(parents=True, exist_ok=True)
    try:
        bus = so101_bus(args.eeprom, args.physics)
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    print(f"servo-sim-so101: ids {' '.join(map(str, bus.servos))}, EEPROM kept in "
          f"{args.eeprom}", file=sys.stderr)
    try:
        emulator.serve(bus, args.control)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
