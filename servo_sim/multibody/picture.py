"""A picture of the SO-101 held by its servos in MuJoCo (docs/multibody.md)::

    MUJOCO_GL=egl python -m servo_sim.multibody.picture docs/multibody.png

config/so101.yaml's six STS3215-7.4V drive config/so101.urdf in MuJoCo for 2 s towards
a pose; the arm where they hold it is drawn with MuJoCo's offscreen renderer (needs GL:
``MUJOCO_GL=egl`` or ``osmesa``). The URDF has no meshes: each link is drawn as a
capsule from its joint to the next, its centre of mass as a sphere; the goal pose as a
grey ghost, so the sag under the arm's weight shows. matplotlib writes the PNG.

With ``--world FILE``: a Webots world's robot as MuJoCo builds it from the world
(:mod:`.from_world`, docs/multibody.md), its motors told ``--command
MOTOR=POSITION`` and drawn ``--seconds`` on, each body's bounding objects in a colour of
its own.

With ``--menagerie DIR`` (a folder made by ``scripts/get-menagerie-so101``): MuJoCo
Menagerie's SO-101 with its meshes, ``scene_box.xml`` at its ``pickup`` keyframe, the
servos told to close the gripper on the box; drawn 1.5 s on, the jaw held open by it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..model import Simulation
from ..model.body import with_physics
from ..model.config import load_config, to_dict
from ..resources import data_file
from .body import import_mujoco

#: the pose the servos are told (rad)
POSE = {"shoulder_pan": 0.5, "shoulder_lift": -0.3, "elbow_flex": 0.6, "wrist_flex": 1.2,
        "wrist_roll": 0.0, "gripper": 0.6}


def held_pose(seconds: float = 2.0) -> dict[str, float]:
    """Where the servos hold the arm after ``seconds`` of model time."""
    config = load_config(data_file("config", "so101.yaml"))
    sim = Simulation(with_physics(config, "mujoco", str(data_file("config", "so101.urdf"))))
    for name, target in POSE.items():
        sim.motor(name).set_position(target)
    sim.step(round(seconds * 1000 / sim.basic_time_step_ms))
    return {m.name: m.position for m in sim}


def _drawn(mj, rgba: list[float], ghost: bool):
    """so101.urdf with a capsule per link (joint to joint) and a sphere at each centre
    of mass; ``ghost``: without the floor."""
    spec = mj.MjSpec.from_file(str(data_file("config", "so101.urdf")))
    spec.compiler.discardvisual = False  # (a URDF's default drops geoms that do not collide)
    for body in spec.bodies:
        if body.name == "world":
            continue
        children = [c for c in spec.bodies if c.parent is not None and c.parent.name == body.name]
        for child in children:
            body.add_geom(type=mj.mjtGeom.mjGEOM_CAPSULE, size=[0.012, 0, 0],
                          fromto=[0, 0, 0, *child.pos], rgba=rgba, contype=0, conaffinity=0)
        if body.ipos is not None and body.mass > 0.0:
            body.add_geom(type=mj.mjtGeom.mjGEOM_SPHERE, size=[0.016, 0, 0], pos=body.ipos,
                          rgba=[0.85, 0.35, 0.1, rgba[3]], contype=0, conaffinity=0)
    if not ghost:
        spec.worldbody.add_geom(type=mj.mjtGeom.mjGEOM_PLANE, size=[0.4, 0.4, 0.01],
                                rgba=[0.9, 0.9, 0.88, 1])
        spec.worldbody.add_light(pos=[0.3, -0.3, 1.0], dir=[-0.3, 0.3, -1.0])
    return spec


def render(path: Path, width: int = 640, height: int = 480) -> dict[str, float]:
    """Draw the held arm (and the goal as a ghost) into ``path``; the held pose."""
    mj = import_mujoco()
    held = held_pose()
    spec = _drawn(mj, [0.2, 0.4, 0.8, 1.0], ghost=False)
    goal = _drawn(mj, [0.6, 0.6, 0.6, 0.35], ghost=True)
    frame = spec.worldbody.add_frame()
    frame.attach_body(goal.worldbody.first_body(), "goal_", "")
    model = spec.compile()
    data = mj.MjData(model)
    for name, value in held.items():
        data.qpos[model.joint(name).qposadr[0]] = value
        data.qpos[model.joint(f"goal_{name}").qposadr[0]] = POSE[name]
    mj.mj_forward(model, data)
    _draw(mj, model, data, path, ([0.12, 0.05, 0.15], 0.75, 125.0, -20.0), width, height)
    return held


def _draw(mj, model, data, path: Path, view: tuple, width: int, height: int) -> None:
    """``data``'s scene drawn into ``path`` by MuJoCo's offscreen renderer, from ``view``
    (look-at point, distance, azimuth, elevation)."""
    import matplotlib.image

    camera = mj.MjvCamera()
    camera.lookat[:] = view[0]
    camera.distance, camera.azimuth, camera.elevation = view[1:]
    with mj.Renderer(model, height, width) as renderer:
        renderer.update_scene(data, camera)
        image = renderer.render()
    matplotlib.image.imsave(path, np.ascontiguousarray(image))


def render_grasp(path: Path, menagerie: Path, width: int = 640, height: int = 480
                 ) -> dict[str, float]:
    """Menagerie's scene_box.xml (in ``menagerie``/robotstudio_so101), its servos
    config/so101.yaml's, at the ``pickup`` keyframe, the gripper told to close on the
    box; drawn into ``path`` 1.5 s on. Where the servos hold the joints."""
    mj = import_mujoco()
    scene = menagerie / "robotstudio_so101" / "scene_box.xml"
    keyed = mj.MjModel.from_xml_path(str(scene))
    key = keyed.key("pickup")
    raw = to_dict(with_physics(load_config(data_file("config", "so101.yaml")), "mujoco",
                               str(scene)))
    for motor in raw["motors"]:  # the servos start where the keyframe has the arm
        motor["position"] = float(key.qpos[keyed.joint(motor["name"]).qposadr[0]])
    sim = Simulation.from_config(raw)
    model, data = sim.bank.body.model, sim.bank.body.data
    data.qpos[:] = key.qpos  # and the box where the keyframe puts it
    mj.mj_forward(model, data)
    for motor in raw["motors"]:
        sim.motor(motor["name"]).set_position(
            -0.1 if motor["name"] == "gripper" else motor["position"])
    sim.step(round(1.5 * 1000 / sim.basic_time_step_ms))
    _draw(mj, model, data, path, ([0.1, 0.0, 0.1], 0.62, 120.0, -18.0), width, height)
    return {m.name: m.position for m in sim}


#: a colour per body of a world's robot (cycled), and the floor's (every plane)
COLOURS = ([0.2, 0.4, 0.8, 1.0], [0.85, 0.35, 0.1, 1.0], [0.3, 0.65, 0.3, 1.0],
           [0.8, 0.7, 0.2, 1.0], [0.55, 0.3, 0.7, 1.0], [0.2, 0.7, 0.75, 1.0])
FLOOR = [0.9, 0.9, 0.88, 1.0]


def render_world(path: Path, world: Path, commands: dict[str, float], seconds: float,
                 view: tuple, width: int = 640, height: int = 480) -> dict[str, float]:
    """The robot of the Webots ``world`` on MuJoCo, its motors told ``commands``
    (positions), drawn into ``path`` ``seconds`` on from ``view`` (look-at point,
    distance, azimuth, elevation); where the motors are then."""
    from ..load import load, on_physics  # a world's reader: only for this picture

    mj = import_mujoco()
    sim = Simulation(on_physics(load(world), "mujoco"))
    for name, target in commands.items():
        sim.motor(name).set_position(target)
    sim.step(round(seconds * 1000 / sim.basic_time_step_ms))
    model, data = sim.bank.body.model, sim.bank.body.data
    plane = int(mj.mjtGeom.mjGEOM_PLANE)
    for g in range(model.ngeom):
        body = int(model.geom_bodyid[g])
        model.geom_rgba[g] = FLOOR if int(model.geom_type[g]) == plane else \
            COLOURS[body % len(COLOURS)]
    model.vis.headlight.ambient[:] = 0.5
    _draw(mj, model, data, path, view, width, height)
    return {m.name: m.position for m in sim}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--menagerie", type=Path, metavar="DIR",
                        help="Menagerie's SO-101 closing its gripper on the box instead "
                             "(DIR: made by scripts/get-menagerie-so101)")
    parser.add_argument("--world", type=Path, metavar="FILE",
                        help="a Webots world's robot built by MuJoCo from the world instead")
    parser.add_argument("--command", action="append", default=[], metavar="MOTOR=POSITION",
                        help="with --world: a motor's position command (repeatable)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="with --world: model time before the picture (2)")
    parser.add_argument("--view", type=float, nargs=6, default=[0, 0, 0.2, 1.2, 135, -20],
                        metavar=("X", "Y", "Z", "DISTANCE", "AZIMUTH", "ELEVATION"),
                        help="with --world: the camera's look-at point, distance and angles")
    args = parser.parse_args(argv)
    try:  # what MuJoCo's offscreen renderer draws with (not in mujoco-core's needs)
        import OpenGL  # noqa: F401
    except ImportError:
        parser.error("MuJoCo's offscreen renderer needs PyOpenGL: pip install pyopengl, "
                     "then run with MUJOCO_GL=egl (a GPU or Mesa's EGL) or osmesa")
    if args.world is not None:
        commands = {}
        for text in args.command:
            name, eq, value = text.rpartition("=")
            if not eq or not name:
                parser.error(f"--command {text!r}: expected MOTOR=POSITION")
            commands[name] = float(value)
        view = (args.view[:3], *args.view[3:])
        held = render_world(args.out, args.world, commands, args.seconds, view)
        print("at (rad or m): " + ", ".join(f"{k} {v:+.4f}" for k, v in held.items()))
        return 0
    if args.menagerie is not None:
        scene = args.menagerie / "robotstudio_so101" / "scene_box.xml"
        if not scene.is_file():
            parser.error(f"--menagerie {args.menagerie}: no {scene} (make the folder with "
                         "scripts/get-menagerie-so101)")
        held = render_grasp(args.out, args.menagerie)
        print("held (rad): " + ", ".join(f"{k} {v:+.4f}" for k, v in held.items()))
        return 0
    held = render(args.out)
    print("held (rad): " + ", ".join(f"{k} {v:+.4f} (goal {POSE[k]:+.2f})"
                                     for k, v in held.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
