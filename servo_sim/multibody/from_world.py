"""A Webots world's robot as a MuJoCo model: MJCF text built from the world itself.

``physics: mujoco`` with a ``.wbt``/``.proto`` file as ``multibody.model`` (``servo-sim
run WORLD.wbt --physics mujoco``) reads the world (:func:`servo_sim.load.world.read_world`:
its PROTOs expanded) and writes, node by node (docs/multibody.md has the table):

* ``WorldInfo``: ``gravity`` (along the world's down: ``coordinateSystem``, a world
  before R2022a y up), ``basicTimeStep`` (the timestep), the default
  ``ContactProperties``' ``coulombFriction`` (every geom's sliding friction); ``ERP``,
  ``CFM`` and the default pair's ``softERP``, ``softCFM``, ``bounce``,
  ``bounceVelocity``: a ``<numeric>`` the world steps with (:mod:`.ode_step`);
* each top-level ``Solid``/``Robot``: a body, free where it has ``Physics``, else fixed;
  a Solid under it: a body welded to its parent; ``Pose``/``Transform``/``Group``: their
  frame carried to what they hold;
* ``HingeJoint``, ``SliderJoint``, ``Hinge2Joint`` (two hinges), ``BallJoint``: joints
  of their ``endPoint``'s body, at the ``anchor`` along the ``axis`` (in the joint's
  frame: a ``Pose`` around the joint turns them), ``ref`` = ``position`` (the endPoint
  is written at it), ``range`` = ``minStop``/``maxStop``; a joint the config names (a
  motor's, or a passive one's: its sensor's name) carries no spring, damper or friction
  here: servo_sim's actuator has them (``springConstant``, ``dampingConstant``,
  ``staticFriction`` from the world); a joint without devices carries them
  (``stiffness``, ``damping``, ``frictionloss``);
* ``Physics``: the body's ``<inertial>`` as Webots computes it (``mass`` or ``density``
  x the bounding object's volume, ``centerOfMass``, ``inertiaMatrix``:
  :meth:`servo_sim.load.loads.LoadReader.solid`, the same as the per-joint loads);
* ``boundingObject``: geoms, ``Box``, ``Sphere``, ``Cylinder``, ``Capsule``, ``Plane``,
  ``Mesh`` (an STL or OBJ file); a robot's parts do not collide with each other unless
  ``selfCollision``;
* the floor of an arena PROTO not found (``RectangleArena``, ``Floor``...): a plane at
  its translation, said once.

What is not built (a bounding object MuJoCo has no primitive for, a ``Track``, a
``Propeller``, a motor on a ``BallJoint``, a ``SolidReference`` loop...) is said once,
in one warning naming the node and its line; nothing is dropped silently.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..load.loads import SOLIDS, LoadReader, counted, expand, numbers
from ..load.world import read_world
from ..model.config.schema import ConfigError
from ..model.physics import rotation_matrix
from .ode_step import NUMERIC, OdeParameters

log = logging.getLogger("servo_sim")

#: The suffixes of a world (or PROTO) file read as a MuJoCo model.
WORLD_SUFFIXES = (".wbt", ".proto")
#: Arena PROTOs whose floor is a plane at their translation when the PROTO is not found.
FLOOR_PROTOS = frozenset({"RectangleArena", "Floor", "CircleArena", "UnevenTerrain"})
#: Nodes that place what they hold by a pose of their own, and that hold without one.
_POSES = frozenset({"Pose", "Transform"})
_GROUPS = _POSES | {"Group"}
#: Nodes without physics (looks, lights, the view): nothing to build, nothing to say.
_NO_PHYSICS = frozenset({
    "Shape", "Viewpoint", "Background", "DirectionalLight", "PointLight", "SpotLight",
    "Fog", "Billboard", "RotationalMotor", "LinearMotor", "PositionSensor", "Brake",
    "Muscle", "CadShape", "Skin"})
#: Solids whose behaviour MuJoCo has no counterpart for (built as plain bodies).
_UNSUPPORTED_SOLIDS = {"Track": "a Track's belt (its wheels and conveyor) is not built: "
                                "a plain body"}
#: A joint endPoint without Physics: the mass given so that MuJoCo can move it.
TINY_MASS = 1e-3
#: m: a point mass's radius of gyration, for MuJoCo, which moves no point mass
POINT_GYRATION = 0.01
#: Webots' default ContactProperties.coulombFriction (ODE's mu); MuJoCo's torsional and
#: rolling friction: its own defaults.
DEFAULT_FRICTION = 1.0


@dataclass
class WorldModel:
    """A world's MJCF and what the conversion said."""

    xml: str
    #: the MuJoCo joints named after the config's motors (a motor drives its namesake)
    joints: list[str] = field(default_factory=list)
    #: what could not be built or was approximated, one line each (node and line)
    warnings: list[str] = field(default_factory=list)


def world_mjcf(path: str | Path, webots_home: str | Path | None = None) -> WorldModel:
    """The MJCF of the world (or PROTO) file ``path``; ConfigError as the world's
    loader says it. The warnings are returned, not logged (:func:`world_model` logs)."""
    with _quiet():  # the config's own reading of the file has said what it says
        world, importer, nodes = read_world(path, webots_home)
    builder = _Builder(importer, world.config.basic_time_step_ms)
    return builder.build(nodes, Path(path))


def world_model(mj: Any, path: str | Path, webots_home: str | Path | None = None) -> Any:
    """The MuJoCo model of the world file ``path`` (:func:`world_mjcf`), its warnings
    logged, each once; ValueError as MuJoCo's compiler says it."""
    built = world_mjcf(path, webots_home)
    for warning in built.warnings:
        log.warning("%s", warning)
    return mj.MjModel.from_xml_string(built.xml)


@contextmanager
def _quiet() -> Iterator[None]:
    """servo_sim's log silent: the world read a second time says nothing again."""
    logger = logging.getLogger("servo_sim")
    disabled, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = disabled


def _quaternion(r: np.ndarray) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method: from
    its largest component, exact near half turns too)."""
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    candidates = [trace, r[0, 0], r[1, 1], r[2, 2]]
    k = int(np.argmax(candidates))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = [s / 4, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    elif k == 1:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [(r[2, 1] - r[1, 2]) / s, s / 4, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
    elif k == 2:
        s = 2.0 * math.sqrt(1.0 - r[0, 0] + r[1, 1] - r[2, 2])
        q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, s / 4, (r[1, 2] + r[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 - r[0, 0] - r[1, 1] + r[2, 2])
        q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, s / 4]
    q = np.array(q)
    return q / np.linalg.norm(q)


def _numbers(values: Any) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(values))


def _frame(r: np.ndarray, t: np.ndarray) -> str:
    """An element's pos and quat attributes (left out where they are the identity)."""
    text = f' pos="{_numbers(t)}"' if np.any(t) else ""
    if not np.allclose(r, np.eye(3), rtol=0.0, atol=0.0):
        text += f' quat="{_numbers(_quaternion(r))}"'
    return text


#: z (MuJoCo's axis of cylinders, capsules and the plane's normal) to y (Webots' before
#: R2022a): a quarter turn about x
_Z_TO_Y = rotation_matrix((1.0, 0.0, 0.0, -math.pi / 2))


class _Builder:
    """Walks the world's nodes into MJCF lines."""

    def __init__(self, importer: Any, step_ms: int) -> None:
        self.nodes = importer
        self.source = importer.source
        self.legacy = importer.legacy
        self.step_ms = step_ms
        self.reader = LoadReader(importer, along=1 if self.legacy else 2)
        #: each joint's motor names in visit order, by (type, where): popped as walked
        self.axes: dict[tuple[str, str], list[dict[str, str]]] = {}
        for (joint, suffix), motor in zip(importer.axes, importer.motors, strict=True):
            key = (joint.type, joint.where)
            if not self.axes.get(key) or suffix in self.axes[key][-1]:
                self.axes.setdefault(key, []).append({})
            self.axes[key][-1][suffix] = motor["name"]
        self.seen: dict[tuple[str, str], int] = {}
        self.warnings: dict[str, None] = {}
        self.names: set[str] = set()
        self.assets: list[str] = []
        self.joint_names: list[str] = []
        self.friction = DEFAULT_FRICTION
        #: WorldInfo's ERP, CFM and the default ContactProperties' softness and bounce:
        #: what the world's step solves with (:mod:`.ode_step`)
        self.ode: dict[str, float] = {}
        self.self_collision = False

    # ------------------------------------------------------------------ helpers

    def warn(self, node: Any, what: str) -> None:
        self.warnings.setdefault(f"{self.source}: {node.label()}: {what}", None)

    def expanded(self, value: Any, env: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        """The nodes of a field's value, PROTOs expanded; one not found is left out (the
        world's loader said it), but an arena's (its floor: :meth:`top`)."""
        return expand(self.nodes, value, env,
                      lambda node, e: [(node, e)] if node.type in FLOOR_PROTOS else [])

    def vector(self, node: Any, env: dict[str, Any], key: str, default: tuple,
               count: int) -> np.ndarray:
        """A numeric field (its default when absent or not numbers, which is said)."""
        if node is None or key not in node.fields:
            return np.array(default, float)
        values = counted(self.nodes.resolve(node.fields[key], env), count)
        if values is None:
            self.warn(node, f"field {key!r} not read (not {count} numbers): Webots' default")
            return np.array(default, float)
        return np.array(values, float)

    def number(self, node: Any, env: dict[str, Any], key: str, default: float) -> float:
        return float(self.vector(node, env, key, (default,), 1)[0])

    def pose(self, node: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        """``node``'s frame (translation, rotation) in the frame ``r, t`` is in."""
        own_t = self.vector(node, env, "translation", (0.0, 0.0, 0.0), 3)
        own_r = rotation_matrix(self.vector(node, env, "rotation", (0.0, 0.0, 1.0, 0.0), 4))
        if "scale" in node.fields and not np.allclose(
                self.vector(node, env, "scale", (1.0, 1.0, 1.0), 3), 1.0):
            self.warn(node, "field 'scale' not applied")
        return r @ own_r, t + r @ own_t

    def unique(self, name: str) -> str:
        candidate, n = name, 1
        while candidate in self.names:
            n += 1
            candidate = f"{name} ({n})"
        self.names.add(candidate)
        return candidate

    # ------------------------------------------------------------------ the world

    def build(self, nodes: list[Any], path: Path) -> WorldModel:
        body: list[str] = []
        for node, env in self.expanded(nodes, {}):
            if node.type == "WorldInfo":
                self.world_info(node, env)
        for node, env in self.expanded(nodes, {}):
            self.top(node, env, np.eye(3), np.zeros(3), body)
        if path.suffix.lower() == ".proto":  # the file's own PROTO, with its defaults
            for proto in self.nodes.parser.protos.values():
                for node, env in self.expanded(proto.body, dict(proto.defaults)):
                    self.top(node, env, np.eye(3), np.zeros(3), body)
        gravity = -self.nodes.gravity * np.asarray(self.nodes.up, float)
        xml = [f'<mujoco model="{_attr(path.stem)}">',
               '  <compiler angle="radian" autolimits="true" inertiafromgeom="false"/>',
               f'  <option timestep="{self.step_ms / 1000.0!r}" gravity="{_numbers(gravity)}"/>',
               f'  <default><geom friction="{self.friction!r} 0.005 0.0001"/></default>',
               f'  <custom><numeric name="{NUMERIC}" data="{_numbers(self.ode_parameters())}"/>'
               '</custom>',
               *(["  <asset>", *self.assets, "  </asset>"] if self.assets else []),
               "  <worldbody>", *body, "  </worldbody>", "</mujoco>"]
        return WorldModel("\n".join(xml) + "\n", self.joint_names, list(self.warnings))

    def ode_parameters(self) -> tuple[float, ...]:
        """The world's ODE parameters (:class:`.ode_step.OdeParameters`: Webots'
        defaults where the world says nothing), its friction among them."""
        return OdeParameters(**self.ode, mu=self.friction).numbers()

    def world_info(self, node: Any, env: dict[str, Any]) -> None:
        """The default contact's friction, softness and bounce, the world's ERP and CFM;
        other materials' pairs said not built, as the world's default damping."""
        defaults = OdeParameters()
        for key, name in (("ERP", "erp"), ("CFM", "cfm")):
            self.ode[name] = self.number(node, env, key, getattr(defaults, name))
        if self.expanded(node.fields.get("defaultDamping"), env):
            self.warn(node, "field 'defaultDamping': not built (MuJoCo damps joints, not "
                            "bodies)")
        for contact, c_env in self.expanded(node.fields.get("contactProperties", []), env):
            pair = {self.nodes.resolve(contact.fields.get(k, "default"), c_env)
                    for k in ("material1", "material2")}
            if pair != {"default"}:
                self.warn(contact, "a pair of contact materials: not built (every contact "
                                   "has the default pair's coulombFriction)")
                continue
            for key, name in (("softERP", "soft_erp"), ("softCFM", "soft_cfm"),
                              ("bounce", "bounce"), ("bounceVelocity", "bounce_velocity")):
                self.ode[name] = self.number(contact, c_env, key, getattr(defaults, name))
            values = numbers(self.nodes.resolve(contact.fields.get("coulombFriction", []),
                                                c_env))
            if values and isinstance(values[0], float) and values[0] >= 0:
                self.friction = values[0]
            if len(values) > 1 or (values and not (isinstance(values[0], float)
                                                   and values[0] >= 0)):
                self.warn(contact, f"coulombFriction {values}: MuJoCo's friction is one "
                                   f"coefficient, {self.friction:g} taken")

    def top(self, node: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
            out: list[str]) -> None:
        """A node of the world's top (or of a group there) in the world frame."""
        if node.use or node.type in _NO_PHYSICS or node.type == "WorldInfo":
            return
        if node.type in FLOOR_PROTOS and self.nodes.base(node, env) is None:
            fr, ft = self.pose(node, env, r, t)
            self.warn(node, "its PROTO not found: its floor built as a plane at its "
                            "translation (no walls)")
            fr = fr @ _Z_TO_Y if self.legacy else fr
            out.append(f'    <geom name="{_attr(self.unique("floor"))}" type="plane" '
                       f'size="0 0 1"{_frame(fr, ft)} contype="1" conaffinity="2"/>')
            return
        if node.type in _GROUPS:
            if node.type in _POSES:
                r, t = self.pose(node, env, r, t)
            for child, c_env in self.expanded(node.fields.get("children", []), env):
                self.top(child, c_env, r, t, out)
        elif node.type in SOLIDS:
            robot = node.type == "Robot"
            if robot:
                self.self_collision = self.nodes.resolve(
                    node.fields.get("selfCollision", False), env) is True
            mass = self.reader.solid(node, env)
            head = ["<freejoint/>"] if mass is not None else []
            fr, ft = self.pose(node, env, r, t)
            self.body(node, env, fr, ft, head, out, 2, robot=robot, mass=mass)
        else:
            self.warn(node, f"a {node.type} at the world's top: not built")

    # ------------------------------------------------------------------ bodies

    def body(self, node: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
             head: list[str], out: list[str], depth: int, robot: bool = False,
             mass: Any = None, moving: bool = False) -> None:
        """A Solid as a body at ``r, t`` in its parent body, ``head`` its joints."""
        pad = "  " * depth
        name = self.nodes.resolve(node.fields.get("name", "solid"), env)
        name = self.unique(name if isinstance(name, str) and name else node.type.lower())
        if node.type in _UNSUPPORTED_SOLIDS:
            self.warn(node, _UNSUPPORTED_SOLIDS[node.type])
        self.unbuilt(node, env)
        out.append(f'{pad}<body name="{_attr(name)}"{_frame(r, t)}>')
        out += [f"{pad}  {line}" for line in head]
        if mass is None and head:  # a joint's endPoint without Physics: MuJoCo moves
            self.warn(node, f"an endPoint without Physics: given {TINY_MASS:g} kg so "
                            "that MuJoCo moves it")  # masses only
            out.append(f'{pad}  <inertial pos="0 0 0" mass="{TINY_MASS!r}" '
                       f'diaginertia="1e-06 1e-06 1e-06"/>')
        elif mass is not None:
            i = mass.inertia
            if not i.any():  # a point mass (a mesh's volume is not computed): MuJoCo
                i = mass.mass * POINT_GYRATION ** 2 * np.eye(3)  # moves none
                self.warn(node, f"its inertia not computed (a point mass): that of "
                                f"{mass.mass:g} kg at {POINT_GYRATION * 100:g} cm from "
                                "its center each way")
            full = _numbers([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]])
            out.append(f'{pad}  <inertial pos="{_numbers(mass.center)}" mass="{mass.mass!r}" '
                       f'fullinertia="{full}"/>')
        inside = robot or self._in_robot
        saved, self._in_robot = self._in_robot, inside
        moving = moving or bool(head)
        contact = ' contype="3" conaffinity="3"' if (self.self_collision or not inside) \
            and moving else ' contype="2" conaffinity="1"' if inside else \
            ' contype="1" conaffinity="2"'
        self.geoms(node.fields.get("boundingObject"), env, np.eye(3), np.zeros(3), out,
                   depth + 1, contact)
        self.children(node.fields.get("children", []), env, np.eye(3), np.zeros(3), out,
                      depth + 1, moving)
        self._in_robot = saved
        out.append(f"{pad}</body>")

    _in_robot = False

    def unbuilt(self, node: Any, env: dict[str, Any]) -> None:
        """Say what of a Solid MuJoCo has no place for: its Physics' Damping (MuJoCo
        damps joints, not bodies), a start velocity."""
        for physics, p_env in self.expanded(node.fields.get("physics"), env):
            if self.expanded(physics.fields.get("damping"), p_env):
                self.warn(physics, "its Damping (a body's linear and angular damping): "
                                   "not built")
        for key in ("linearVelocity", "angularVelocity"):
            if key in node.fields and self.vector(node, env, key, (0.0, 0.0, 0.0), 3).any():
                self.warn(node, f"field {key!r}: not built (the body starts at rest)")

    def children(self, value: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
                 out: list[str], depth: int, moving: bool) -> None:
        """What a Solid holds, at ``r, t`` in its frame."""
        for node, c_env in self.expanded(value, env):
            if node.use or node.type in _NO_PHYSICS:
                continue
            if node.type in _GROUPS:
                cr, ct = self.pose(node, c_env, r, t) if node.type in _POSES else (r, t)
                self.children(node.fields.get("children", []), c_env, cr, ct, out, depth,
                              moving)
            elif node.type in SOLIDS:
                cr, ct = self.pose(node, c_env, r, t)
                self.body(node, c_env, cr, ct, [], out, depth,
                          mass=self.reader.solid(node, c_env), moving=moving)
            elif node.type in ("HingeJoint", "SliderJoint", "Hinge2Joint", "BallJoint"):
                self.joint(node, c_env, r, t, out, depth)
            elif node.type == "Slot":
                for end, e_env in self.expanded(node.fields.get("endPoint"), c_env):
                    self.children([end], e_env, r, t, out, depth, moving)
            elif node.type == "Propeller":
                self.warn(node, "a Propeller's thrust and torque are not built")
            else:
                self.warn(node, f"a {node.type} in a Solid's children: not built")

    def joint(self, node: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
              out: list[str], depth: int) -> None:
        """A joint at ``r, t`` in the body being written: its endPoint's body with the
        joint's axes (anchor and axis in the joint's frame, the endPoint's pose too)."""
        key = (node.type, node.where)
        found = self.axes.get(key, [])
        index = self.seen.get(key, 0)
        self.seen[key] = index + 1
        names = found[index] if index < len(found) else {}
        ends = self.expanded(node.fields.get("endPoint"), env)
        if not ends:
            return
        end, e_env = ends[0]
        if end.type not in SOLIDS:
            self.warn(node, f"its endPoint, a {end.type}, is not built (a loop of "
                            "SolidReference: MuJoCo bodies make a tree)")
            return
        er, et = self.pose(end, e_env, r, t)
        params = [self.nodes.resolve(node.fields.get("jointParameters" + s), env)
                  for s in ("", "2", "3")]
        # anchor and axis: in the joint's parent frame (a Pose around it turns them)
        anchor = r @ self.vector(params[0], env, "anchor", (0.0, 0.0, 0.0), 3) + t
        head = []
        if node.type == "BallJoint":
            if names:  # a free ball would drop their commands: refused, not left out
                motors = ", ".join(repr(names[key]) for key in sorted(names))
                raise ConfigError(f"{self.source}: {node.label()}: its motors {motors} "
                                  "cannot be built on MuJoCo (a ball joint has no axis to "
                                  "drive): run this world on the per-joint body (without "
                                  "physics mujoco)")
            name = self.unique(f"{node.type} {node.where}")
            head.append(f'<joint name="{_attr(name)}" type="ball" '
                        f'pos="{_numbers(er.T @ (anchor - et))}"/>')
        axes = {"HingeJoint": [("", (1.0, 0.0, 0.0))],
                "SliderJoint": [("", (0.0, 0.0, 1.0))],
                "Hinge2Joint": [("", (1.0, 0.0, 0.0)), ("2", (0.0, 0.0, 1.0))]}
        turned = np.eye(3)  # a Hinge2Joint's first hinge turns its second axis
        for suffix, default in axes.get(node.type, []):
            p = params[int(suffix or 1) - 1]
            axis = turned @ r @ self.vector(p, env, "axis", default, 3)
            motor = names.get(suffix)
            name = self.unique(motor if motor else f"{node.type} {node.where}"
                               + (f" axis {suffix}" if suffix else ""))
            if motor:
                self.joint_names.append(name)
            kind = "slide" if node.type == "SliderJoint" else "hinge"
            attrs = [f'name="{_attr(name)}"', f'type="{kind}"']
            if kind == "hinge":
                attrs.append(f'pos="{_numbers(er.T @ (anchor - et))}"')
            attrs.append(f'axis="{_numbers(er.T @ axis)}"')
            position = self.number(p, env, "position", 0.0)
            if position:
                attrs.append(f'ref="{position!r}"')
            turned = rotation_matrix((*axis, position))
            low, high = (self.number(p, env, k, 0.0) for k in ("minStop", "maxStop"))
            if low < high:
                attrs.append(f'range="{low!r} {high!r}"')
            if not motor:  # servo_sim's actuator has a named joint's spring, damper...
                for webots, mujoco in (("springConstant", "stiffness"),
                                       ("dampingConstant", "damping"),
                                       ("staticFriction", "frictionloss")):
                    value = self.number(p, env, webots, 0.0)
                    if value:
                        attrs.append(f'{mujoco}="{value!r}"')
            head.append(f"<joint {' '.join(attrs)}/>")
        mass = self.reader.solid(end, e_env)
        self.body(end, e_env, er, et, head, out, depth, mass=mass, moving=True)

    # ------------------------------------------------------------------ geoms

    def geoms(self, value: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
              out: list[str], depth: int, contact: str) -> None:
        """A bounding object's primitives at ``r, t`` in its Solid's frame."""
        pad = "  " * depth
        value = self.nodes.resolve(value, env)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not hasattr(item, "fields"):
                continue
            found = self.nodes.base(item, env)
            if found is None:
                self.warn(item, "a bounding object whose PROTO is not found: not built")
                continue
            node, g_env = found
            if node.type == "Shape":
                self.geoms(node.fields.get("geometry"), g_env, r, t, out, depth, contact)
            elif node.type in _GROUPS:
                gr, gt = self.pose(node, g_env, r, t) if node.type in _POSES else (r, t)
                self.geoms(node.fields.get("children", []), g_env, gr, gt, out, depth,
                           contact)
            elif node.type == "Box":
                size = self.vector(node, g_env, "size", (2.0, 2.0, 2.0), 3) / 2
                out.append(f'{pad}<geom type="box" size="{_numbers(size)}"{_frame(r, t)}'
                           f"{contact}/>")
            elif node.type == "Sphere":
                radius = self.number(node, g_env, "radius", 1.0)
                out.append(f'{pad}<geom type="sphere" size="{radius!r}"{_frame(r, t)}'
                           f"{contact}/>")
            elif node.type in ("Cylinder", "Capsule"):
                radius = self.number(node, g_env, "radius", 1.0)
                height = self.number(node, g_env, "height", 2.0)
                gr = r @ _Z_TO_Y if self.legacy else r
                out.append(f'{pad}<geom type="{node.type.lower()}" size="{radius!r} '
                           f'{height / 2!r}"{_frame(gr, t)}{contact}/>')
            elif node.type == "Plane":
                size = self.vector(node, g_env, "size", (1.0, 1.0), 2) / 2
                gr = r @ _Z_TO_Y if self.legacy else r
                out.append(f'{pad}<geom type="plane" size="{_numbers(size)} 1"'
                           f'{_frame(gr, t)}{contact}/>')
            elif node.type == "Mesh":
                self.mesh(node, g_env, r, t, out, pad, contact)
            else:
                self.warn(node, f"a {node.type} as bounding object: MuJoCo has no such "
                                "primitive, not built (give a Box, Sphere, Cylinder, "
                                "Capsule, Plane or an STL/OBJ Mesh)")

    def mesh(self, node: Any, env: dict[str, Any], r: np.ndarray, t: np.ndarray,
             out: list[str], pad: str, contact: str) -> None:
        """A Mesh bounding object: its STL or OBJ file (its convex hull: MuJoCo's)."""
        urls = self.nodes.resolve(node.fields.get("url", []), env)
        urls = urls if isinstance(urls, list) else [urls]
        url = next((u for u in urls if isinstance(u, str)), None)
        scope = node.scope.source if node.scope is not None else self.source
        file = (Path(scope).parent / url).resolve() if url else None
        if file is None or file.suffix.lower() not in (".stl", ".obj") or not file.is_file():
            self.warn(node, f"a Mesh {url!r}: not built (an STL or OBJ file beside the "
                            "world is)")
            return
        name = self.unique(f"mesh {file.stem}")
        self.assets.append(f'    <mesh name="{_attr(name)}" file="{_attr(str(file))}"/>')
        self.warn(node, "a Mesh: its convex hull collides (MuJoCo's)")
        out.append(f'{pad}<geom type="mesh" mesh="{_attr(name)}"{_frame(r, t)}{contact}/>')


def _attr(text: str) -> str:
    """``text`` as an XML attribute value."""
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))
