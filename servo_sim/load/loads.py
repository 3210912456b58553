"""What a joint of a Webots world carries: the walk from its ``endPoint`` through the
Solids, groups, poses and further joints below it, each Solid's ``Physics`` and
``boundingObject`` read into a :class:`~servo_sim.model.physics.Mass` in the joint's frame.

The other joints are where the file puts them (their ``position``). A Solid without
``Physics`` carries nothing, nor do the Solids under it (Webots: a kinematic part, and
below it bodies fixed to the static environment). What cannot be read (a mesh as
bounding object, a template value) is left out, and Webots' fallbacks taken; both are
said once per motor by :mod:`.world` (:attr:`LoadReader.notes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..model.physics import (
    IDENTITY_INERTIA,
    Mass,
    Primitive,
    combined,
    primitive,
    rotation_matrix,
    solid_mass,
)

#: Webots nodes derived from Solid that a robot's parts are written with (devices too).
SOLIDS = frozenset("""
    Solid Robot Charger Track Accelerometer Altimeter Camera Compass Connector Display
    DistanceSensor Emitter GPS Gyro InertialUnit LED Lidar LightSensor Microphone Pen
    Radar Radio RangeFinder Receiver Skin Speaker TouchSensor VacuumCup VacuumGripper
""".split())
#: Nodes that place their children by a translation and rotation of their own.
POSES = frozenset({"Pose", "Transform"})
#: Nodes that hold children: whether they have a pose.
_GROUPS = {"Group": False, **{pose: True for pose in POSES}}
#: The joints (their devices are motors, sensors and brakes).
JOINTS = frozenset({"HingeJoint", "SliderJoint", "Hinge2Joint", "BallJoint"})
#: What holds an endPoint Solid.
_END_POINTS = JOINTS | {"Slot"}
#: Geometry -> its fields and Webots' defaults, in the order primitive() takes them.
_GEOMETRY = {"Box": (("size", (2.0, 2.0, 2.0)),), "Sphere": (("radius", (1.0,)),),
             "Cylinder": (("radius", (1.0,)), ("height", (2.0,))),
             "Capsule": (("radius", (1.0,)), ("height", (2.0,)))}
#: Physics fields read -> Webots' defaults (None: empty) and how many numbers they take.
_PHYSICS = (("mass", (-1.0,), 1), ("density", (1000.0,), 1),
            ("centerOfMass", None, 3), ("inertiaMatrix", None, 6))


class Nodes(Protocol):
    """What the walk needs of the world's importer."""

    def base(self, node: Any, env: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None: ...

    def resolve(self, value: Any, env: dict[str, Any]) -> Any: ...


def numbers(value: Any) -> list[Any]:
    """The scalars of a value, lists and number groups flattened (an MFFloat)."""
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in numbers(item)]
    return [value]


def counted(value: Any, count: int) -> tuple[float, ...] | None:
    """``value`` as ``count`` numbers, None if it is not that (a template value...)."""
    values = numbers(value)
    if len(values) != count or not all(isinstance(v, float) for v in values):
        return None
    return tuple(values)


def expand(nodes: Nodes, value: Any, env: dict[str, Any],
           missing: Callable[[Any, dict[str, Any]], list[tuple[Any, dict[str, Any]]]]
           ) -> list[tuple[Any, dict[str, Any]]]:
    """The nodes of a field's value (a node or a list) with their fields' values, PROTO
    instances expanded to their base node; where one cannot be, what ``missing(node,
    env)`` gives for it."""
    value = nodes.resolve(value, env)
    if isinstance(value, list):
        return [n for item in value for n in expand(nodes, item, env, missing)]
    if not hasattr(value, "fields"):
        return []
    found = nodes.base(value, env)
    return [found] if found is not None else missing(value, env)


class LoadReader:
    """Reads the mass a joint carries; ``notes`` says what it left out or assumed.

    ``linear``: for a slider (only the mass counts, not the inertia); ``along``: the axis
    of cylinders and capsules (2: z, 1: y before Webots R2022a).
    """

    def __init__(self, nodes: Nodes, linear: bool = False, along: int = 2) -> None:
        self.nodes = nodes
        self.linear, self.along = linear, along
        self.notes: list[str] = []

    def carried(self, end_point: Any, env: dict[str, Any]) -> Mass | None:
        """Everything under a joint's ``endPoint`` as one body, in the joint's frame."""
        return combined(self._bodies(end_point, env, np.eye(3), np.zeros(3)))

    def solid(self, node: Any, env: dict[str, Any]) -> Mass | None:
        """One Solid's own mass (not what is under it) in its frame: None without
        Physics (or where its Physics is not numbers: noted)."""
        physics = self._physics(node, env)
        return None if physics is None else self._solid(node, env, *physics)

    def _expanded(self, value: Any, env: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        """The nodes of a field's value (a node or a list), PROTOs expanded."""
        return expand(self.nodes, value, env, self._left_out)

    def _left_out(self, node: Any, env: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        self.notes.append(f"{node.label()}: a PROTO not found, or empty: left out")
        return []

    def _bodies(self, value: Any, env: dict[str, Any], rotation: np.ndarray,
                translation: np.ndarray) -> list[Mass]:
        return [b for node, node_env in self._expanded(value, env)
                for b in self._node_bodies(node, node_env, rotation, translation)]

    def _node_bodies(self, node: Any, env: dict[str, Any], rotation: np.ndarray,
                     translation: np.ndarray) -> list[Mass]:
        if node.type in _END_POINTS:  # a further joint: its endPoint in the same frame
            return self._bodies(node.fields.get("endPoint"), env, rotation, translation)
        if node.type not in SOLIDS and node.type not in _GROUPS:
            return []
        if node.type in SOLIDS or _GROUPS[node.type]:
            rotation, translation = self._pose(node, env, rotation, translation)
        own: list[Mass] = []
        if node.type in SOLIDS:
            physics = self._physics(node, env)
            if physics is None:
                return []
            mass = self._solid(node, env, *physics)
            own = [mass.moved(rotation, translation)] if mass is not None else []
        return own + self._bodies(node.fields.get("children", []), env, rotation,
                                  translation)

    def _pose(self, node: Any, env: dict[str, Any], rotation: np.ndarray,
              translation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The frame of ``node`` (its ``translation`` and ``rotation``) in the joint's."""
        t = self._vector(node, env, "translation", (0.0, 0.0, 0.0), 3)
        r = self._vector(node, env, "rotation", (0.0, 0.0, 1.0, 0.0), 4)
        if self._vector(node, env, "scale", (1.0, 1.0, 1.0), 3) not in (None, (1.0, 1.0, 1.0)):
            self.notes.append(f"{node.label()}: field 'scale' not applied")
        if t is None or r is None:
            return rotation, translation
        return rotation @ rotation_matrix(r), translation + rotation @ np.asarray(t)

    def _vector(self, node: Any, env: dict[str, Any], key: str, default: tuple,
                count: int) -> tuple | None:
        """A numeric field of ``count`` numbers (its default when absent); None, noted
        as unread, when it is not that (a template value)."""
        if key not in node.fields:
            return default
        values = counted(self.nodes.resolve(node.fields[key], env), count)
        if values is None:
            self.notes.append(f"{node.label()}: field {key!r} not read (not {count} numbers)")
        return values

    def _physics(self, node: Any, env: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
        """A Solid's Physics node (expanded), None without one."""
        found = self._expanded(node.fields.get("physics"), env)
        return found[0] if found and found[0][0].type == "Physics" else None

    def _solid(self, node: Any, env: dict[str, Any], physics: Any,
               p_env: dict[str, Any]) -> Mass | None:
        """The mass of a Solid with Physics, in its frame (None: none, or not read)."""
        values = {}
        for key, default, count in _PHYSICS:
            raw = physics.fields.get(key)
            if raw is None or numbers(self.nodes.resolve(raw, p_env)) == []:
                values[key] = default  # absent, or an empty list
                continue
            values[key] = self._vector(physics, p_env, key, (), count)
            if values[key] is None:
                return None  # not numbers: noted
        read = len(self.notes)
        shapes = self._shapes(node.fields.get("boundingObject"), env, np.eye(3), np.zeros(3))
        mass, notes = solid_mass(values["mass"][0], values["density"][0],
                                 values["centerOfMass"], values["inertiaMatrix"], shapes,
                                 complete=len(self.notes) == read)
        self.notes += [f"{node.label()}: {note}" for note in notes
                       if not (self.linear and note == IDENTITY_INERTIA)]
        return mass

    def _shapes(self, value: Any, env: dict[str, Any], rotation: np.ndarray,
                translation: np.ndarray) -> list[Primitive]:
        """The primitives of a bounding object, in its Solid's frame."""
        return [s for node, node_env in self._expanded(value, env)
                for s in self._node_shapes(node, node_env, rotation, translation)]

    def _node_shapes(self, node: Any, env: dict[str, Any], rotation: np.ndarray,
                     translation: np.ndarray) -> list[Primitive]:
        if node.type == "Shape":
            return self._shapes(node.fields.get("geometry"), env, rotation, translation)
        if node.type in _GROUPS:
            if _GROUPS[node.type]:
                rotation, translation = self._pose(node, env, rotation, translation)
            return self._shapes(node.fields.get("children", []), env, rotation, translation)
        if node.type not in _GEOMETRY:
            self.notes.append(f"{node.label()}: a bounding object whose volume is not "
                              "computed")
            return []
        dims: list[float] = []
        for key, default in _GEOMETRY[node.type]:
            value = self._vector(node, env, key, default, len(default))
            if value is None:
                return []
            dims.extend(value)
        return [primitive(node.type, dims, rotation, translation, self.along)]
