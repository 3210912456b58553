"""Mass properties of rigid bodies, and the load they put on a joint.

Pure geometry on numpy, no file syntax (:mod:`servo_sim.load.world` walks a Webots
world's ``Physics`` nodes, :mod:`.chain` a URDF's ``<inertial>`` elements):

* :class:`Mass` is a body's mass, center of mass and inertia matrix about that center,
  in some frame; :meth:`Mass.moved` re-expresses it in a parent frame and
  :func:`combined` adds bodies by the parallel-axis rule;
* :func:`primitive` is a bounding-object primitive (``Box``, ``Sphere``, ``Cylinder``,
  ``Capsule``): its volume and its inertia per kilogram, as ODE's ``dMassSet*``
  (cylinders and capsules along z, Webots R2022a+);
* :func:`solid_mass` is one Solid's mass as Webots gives it from ``mass`` or
  ``density`` x the bounding object's volume, ``centerOfMass`` and ``inertiaMatrix``;
* :func:`joint_load` turns everything a joint carries into the motor's ``inertia``
  about the joint's axis and its gravity ``load`` (:class:`~servo_sim.model.config.LoadConfig`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

#: Below this, a lever or a sine is taken as 0 (rounding in the file's rotations).
_EPS = 1e-12


@dataclass(frozen=True)
class Mass:
    """A rigid body's mass (kg), center of mass (m) and inertia matrix about that
    center (kg*m^2), in the frame they are given in."""

    mass: float
    center: np.ndarray
    inertia: np.ndarray

    def moved(self, rotation: np.ndarray, translation: np.ndarray) -> Mass:
        """The same body in the parent frame where this frame has ``rotation`` and
        ``translation`` (parent <- this)."""
        return Mass(self.mass, rotation @ self.center + translation,
                    rotation @ self.inertia @ rotation.T)


def combined(masses: Iterable[Mass]) -> Mass | None:
    """The bodies as one (the parallel-axis rule about their common center); None for
    none, or no mass at all."""
    masses = [m for m in masses if m.mass > 0.0]
    total = sum(m.mass for m in masses)
    if total <= 0.0:
        return None
    center = sum(m.mass * m.center for m in masses) / total
    inertia = np.zeros((3, 3))
    for m in masses:
        inertia += m.inertia + m.mass * _shift(m.center - center)
    return Mass(total, center, inertia)


def _shift(d: np.ndarray) -> np.ndarray:
    """The parallel-axis term per kilogram for an offset ``d``: |d|^2 E - d d^T."""
    return float(d @ d) * np.eye(3) - np.outer(d, d)


@dataclass(frozen=True)
class Primitive:
    """A bounding-object primitive at its place in the Solid's frame."""

    volume: float
    center: np.ndarray
    #: inertia per kilogram about its center, in the Solid's frame
    unit_inertia: np.ndarray


def primitive(kind: str, dims: Sequence[float], rotation: np.ndarray,
              translation: np.ndarray, along: int = 2) -> Primitive:
    """``Box`` (``dims`` = size x, y, z), ``Sphere`` (radius), ``Cylinder`` and
    ``Capsule`` (radius, height; along z, or y with ``along`` 1: Webots before R2022a),
    placed by ``rotation`` and ``translation``."""
    if kind == "Box":
        x, y, z = dims
        volume = x * y * z
        diagonal = [(y * y + z * z) / 12, (x * x + z * z) / 12, (x * x + y * y) / 12]
    elif kind == "Sphere":
        (r,) = dims
        volume = 4 / 3 * math.pi * r ** 3
        diagonal = [0.4 * r * r] * 3
    elif kind == "Cylinder":
        r, h = dims
        volume = math.pi * r * r * h
        across = (3 * r * r + h * h) / 12
        diagonal = [across, across, r * r / 2]
    elif kind == "Capsule":  # ODE's dMassSetCapsule: a cylinder and two half spheres
        r, h = dims
        cylinder, spheres = math.pi * r * r * h, 4 / 3 * math.pi * r ** 3
        volume = cylinder + spheres
        across = (cylinder * (0.25 * r * r + h * h / 12)
                  + spheres * (0.4 * r * r + 0.375 * r * h + 0.25 * h * h)) / volume
        diagonal = [across, across, (0.5 * cylinder + 0.4 * spheres) * r * r / volume]
    else:
        raise ValueError(f"not a primitive: {kind}")
    if along == 1:  # the axis's moment (last) on y
        diagonal = [diagonal[0], diagonal[2], diagonal[1]]
    return Primitive(volume, np.asarray(translation, float),
                     rotation @ np.diag(diagonal) @ rotation.T)


#: solid_mass's notes: Webots' fallbacks where a Solid's Physics says too little
DEFAULT_MASS = "density and no boundingObject: Webots' default mass 1 kg"
IDENTITY_INERTIA = "no boundingObject and no inertiaMatrix: Webots' identity inertia matrix"
POINT_MASS = "its mass taken as a point at its center of mass"
NO_MASS = "its mass is not computed (no volume read)"


def solid_mass(mass: float, density: float, center: Sequence[float] | None,
               inertia: Sequence[float] | None, shapes: Sequence[Primitive],
               complete: bool = True) -> tuple[Mass | None, list[str]]:
    """One Solid's mass in its own frame, as Webots computes it from its Physics, and
    notes where Webots' fallbacks (or ours) were taken.

    ``mass`` > 0 wins over ``density`` (else density x the shapes' volume, the volumes
    simply added). The center is ``center`` if given, else the shapes' volume-weighted
    center, else the Solid's origin. The inertia is ``inertia`` ([I11 I22 I33 I12 I13
    I23] about the center, with a mass) if given, else the shapes' about their own
    center (the mass spread over them by volume), moved with it to ``center``. With no
    shapes, Webots' defaults: the identity matrix (and 1 kg for a density). Shapes not
    all read (``complete`` False) and none left: the mass is a point at its center
    (ours: Webots would compute a mesh's).
    """
    volume = sum(s.volume for s in shapes)
    if mass <= 0.0:  # Webots takes an inertiaMatrix with a mass only
        inertia = None
    if mass <= 0.0 and density > 0.0 and volume > 0.0:
        mass = density * volume
    notes = []
    spread = combined(Mass(mass * s.volume / volume, s.center, mass * s.volume / volume
                           * s.unit_inertia) for s in shapes) if volume > 0.0 else None
    if spread is not None:  # the shapes' center and inertia about it
        centroid, matrix = spread.center, spread.inertia
    elif volume > 0.0:  # no mass (no mass, no density)
        return None, []
    elif not complete:
        if mass <= 0.0:
            return None, [NO_MASS]
        centroid, matrix = np.zeros(3), np.zeros((3, 3))
        notes.append(POINT_MASS)
    else:
        if mass <= 0.0:
            mass = 1.0
            notes.append(DEFAULT_MASS)
        centroid, matrix = np.zeros(3), np.eye(3)
        notes.append(IDENTITY_INERTIA)
    if inertia is not None:
        i11, i22, i33, i12, i13, i23 = inertia
        matrix = np.array([[i11, i12, i13], [i12, i22, i23], [i13, i23, i33]], float)
        notes = [n for n in notes if n not in (IDENTITY_INERTIA, POINT_MASS)]
    com = np.asarray(center, float) if center is not None else centroid
    return Mass(mass, com, matrix), notes


def rotation_matrix(axis_angle: Sequence[float]) -> np.ndarray:
    """A VRML rotation ``x y z angle`` as a matrix (identity for a zero axis)."""
    x, y, z, angle = axis_angle
    axis = np.array([x, y, z], float)
    norm = float(np.linalg.norm(axis))
    if norm == 0.0 or angle == 0.0:
        return np.eye(3)
    k = axis / norm
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


def joint_load(carried: Mass, linear: bool, axis: Sequence[float], anchor: Sequence[float],
               position: float, up: np.ndarray, gravity: float) -> dict:
    """The motor fields for a joint that carries ``carried`` (in the joint's frame, at
    the joint's ``position``): ``inertia`` about the axis through ``anchor`` (the mass
    for a slider) and ``load`` (``gravity_mass``, ``gravity_distance``, ``gravity_angle``,
    ``gravity``), ``up`` being the world's up in that frame.

    Rotational: the torque of the weight about the axis is ``m g |r_perp| sin(tilt)
    sin(psi0 + position - x)``, with ``r_perp`` the center's lever across the axis,
    ``tilt`` the axis's angle from vertical and ``psi0`` the angle from the lever to
    the downward direction across the axis; that is the model's
    ``-m g d cos(x - gravity_angle)`` with ``d = |r_perp| sin(tilt)`` and
    ``gravity_angle = psi0 + position + pi/2``.
    """
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    up = up / np.linalg.norm(up)
    m = carried.mass
    load = {"gravity_mass": m, "gravity": gravity}
    if linear:
        load["gravity_angle"] = math.acos(max(-1.0, min(1.0, float(up @ a))))
        return {"inertia": m, "load": load}
    r = carried.center - np.asarray(anchor, float)
    lever = r - (r @ a) * a
    inertia = float(a @ carried.inertia @ a) + m * float(lever @ lever)
    down = -(up - (up @ a) * a)  # gravity's direction across the axis (unscaled)
    distance, sine = float(np.linalg.norm(lever)), float(np.linalg.norm(down))
    if distance < _EPS or sine < _EPS:  # on the axis, or a vertical axis: no torque
        load.update(gravity_distance=0.0, gravity_angle=0.0)
    else:
        psi0 = math.atan2(float(a @ np.cross(lever, down)), float(lever @ down))
        angle = math.remainder(psi0 + position + math.pi / 2, 2 * math.pi)
        load.update(gravity_distance=distance * sine, gravity_angle=angle)
    return {"inertia": inertia, "load": load}
