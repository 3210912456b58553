"""The loads of a robot's joints from its URDF, at any pose: what each joint carries.

A joint carries every link after it; at a pose (the joint positions, 0 where not
given) :meth:`KinematicTree.loads` gives each movable joint the motor fields of
:func:`~servo_sim.model.physics.joint_load`: its ``inertia`` about the axis (the links'
``<inertial>`` by the parallel-axis rule) and its gravity ``load`` (mass, lever and
phase: the weight's torque as the model computes it, ``-m g d cos(x - gravity_angle)``,
exact for the joint's own motion). Gravity points along the root link's -z (REP 103).

Left out: the coupling of the joints' dynamics (one joint's acceleration pushing on
another, Coriolis and centrifugal terms), the servos' own masses beyond the links' and
contact with anything. A caller moving the joints calls :meth:`loads` again as the pose
changes (the shoulder's load follows the elbow).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .config import STANDARD_GRAVITY, ConfigError
from .physics import Mass, combined, joint_load, rotation_matrix
from .urdf import _float, _root

_MOVABLE = ("revolute", "continuous", "prismatic")


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


@dataclass(frozen=True)
class _Joint:
    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray  # parent link -> joint frame (the origin's)
    translation: np.ndarray
    axis: np.ndarray  # unit, in the joint frame


class KinematicTree:
    """A URDF's links (their ``<inertial>``) and joints; ConfigError naming the element
    where one cannot be read."""

    def __init__(self, urdf: str, source: str = "URDF") -> None:
        root = _root(urdf, source)
        self.source = source
        self.masses: dict[str, Mass | None] = {}
        for link in root.iter("link"):
            name = link.get("name")
            if name is None:
                raise ConfigError(f"{source}: a <link> without a name")
            self.masses[name] = self._inertial(link, f"{source}: link {name!r}")
        self.joints: dict[str, _Joint] = {}
        by_child: dict[str, _Joint] = {}
        for element in root.iter("joint"):
            joint = self._joint(element, source)
            if joint is None:
                continue
            for link in (joint.parent, joint.child):
                if link not in self.masses:
                    raise ConfigError(f"{source}: joint {joint.name!r}: no link {link!r}")
            if joint.child in by_child:
                raise ConfigError(f"{source}: link {joint.child!r} is the child of two "
                                  f"joints ({by_child[joint.child].name!r}, {joint.name!r})")
            by_child[joint.child] = joint
            self.joints[joint.name] = joint
        roots = [link for link in self.masses if link not in by_child]
        if len(roots) != 1:
            raise ConfigError(f"{source}: expected one root link, found {roots}")
        self.root = roots[0]
        self.children: dict[str, list[_Joint]] = {link: [] for link in self.masses}
        for joint in self.joints.values():
            self.children[joint.parent].append(joint)

    @property
    def movable(self) -> list[str]:
        """The joints a motor can drive (revolute, continuous, prismatic), in file order."""
        return [name for name, j in self.joints.items() if j.type in _MOVABLE]

    @staticmethod
    def _origin(element, where: str) -> tuple[np.ndarray, np.ndarray]:
        origin = element.find("origin")
        xyz, rpy = [0.0] * 3, [0.0] * 3
        if origin is not None:
            for attribute, out in (("xyz", xyz), ("rpy", rpy)):
                text = origin.get(attribute)
                if text is None:
                    continue
                try:
                    values = [float(v) for v in text.split()]
                except ValueError:
                    values = []
                if len(values) != 3:
                    raise ConfigError(f"{where} <origin>: {attribute}={text!r} is not three "
                                      "numbers")
                out[:] = values
        return rpy_matrix(*rpy), np.array(xyz)

    def _inertial(self, link, where: str) -> Mass | None:
        inertial = link.find("inertial")
        if inertial is None:
            return None
        rotation, center = self._origin(inertial, where + " <inertial>")
        mass_element = inertial.find("mass")
        mass = _float(mass_element, "value", where + " <mass>") if mass_element is not None \
            else None
        if mass is None or not math.isfinite(mass) or mass < 0.0:
            raise ConfigError(f"{where} <inertial>: <mass value> must be a number >= 0")
        element = inertial.find("inertia")
        values = {k: (_float(element, k, where + " <inertia>") or 0.0) if element is not None
                  else 0.0 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        tensor = np.array([[values["ixx"], values["ixy"], values["ixz"]],
                           [values["ixy"], values["iyy"], values["iyz"]],
                           [values["ixz"], values["iyz"], values["izz"]]])
        return Mass(mass, center, rotation @ tensor @ rotation.T)

    def _joint(self, element, source: str) -> _Joint | None:
        name, kind = element.get("name"), element.get("type", "")
        where = f"{source}: joint {name!r}"
        parent, child = element.find("parent"), element.find("child")
        if name is None or parent is None or child is None:
            return None  # not a URDF joint (a <ros2_control> <joint> has no parent)
        rotation, translation = self._origin(element, where)
        axis = np.array([1.0, 0.0, 0.0])
        axis_element = element.find("axis")
        if axis_element is not None and axis_element.get("xyz") is not None:
            try:
                axis = np.array([float(v) for v in axis_element.get("xyz").split()])
            except ValueError:
                axis = np.zeros(0)
            if axis.shape != (3,) or not np.linalg.norm(axis) > 0.0:
                raise ConfigError(f"{where} <axis>: xyz={axis_element.get('xyz')!r} is not "
                                  "a non-zero vector")
        return _Joint(name, kind, parent.get("link"), child.get("link"), rotation,
                      translation, axis / np.linalg.norm(axis))

    def _pose(self, positions: Mapping[str, float]
              ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, Mass]]:
        """Each joint frame's pose in the root frame, and each joint's carried mass in
        the root frame (None: nothing), at ``positions``."""
        frames: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        carried: dict[str, Mass | None] = {}

        def visit(link: str, rotation: np.ndarray, translation: np.ndarray) -> Mass | None:
            own = self.masses[link]
            parts = [own.moved(rotation, translation)] if own is not None else []
            for j in self.children[link]:
                r = rotation @ j.rotation
                t = rotation @ j.translation + translation
                frames[j.name] = (r, t)
                q = float(positions.get(j.name, 0.0)) if j.type in _MOVABLE else 0.0
                if j.type == "prismatic":
                    below = visit(j.child, r, t + r @ (j.axis * q))
                else:
                    below = visit(j.child, r @ rotation_matrix((*j.axis, q)), t)
                carried[j.name] = below
                if below is not None:
                    parts.append(below)
            return combined(parts)

        visit(self.root, np.eye(3), np.zeros(3))
        return frames, carried

    def loads(self, positions: Mapping[str, float] | None = None,
              gravity: float = STANDARD_GRAVITY) -> dict[str, dict]:
        """Per movable joint, its motor fields at ``positions`` (rad or m by joint name;
        0 where not given): ``inertia`` and ``load`` (see the module docstring); a joint
        that carries no mass gets inertia 0 and no load."""
        positions = positions or {}
        frames, carried = self._pose(positions)
        up = np.array([0.0, 0.0, 1.0])
        out: dict[str, dict] = {}
        for name in self.movable:
            j, mass = self.joints[name], carried[name]
            if mass is None:
                out[name] = {"inertia": 0.0, "load": {"gravity_mass": 0.0}}
                continue
            r, t = frames[name]
            local = mass.moved(r.T, -r.T @ t)  # in the joint's frame
            out[name] = joint_load(local, j.type == "prismatic", j.axis, np.zeros(3),
                                   float(positions.get(name, 0.0)), r.T @ up, gravity)
        return out
