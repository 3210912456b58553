"""A Webots world stepped as ODE's ``dWorldStep`` steps it, on MuJoCo's kinematics.

Webots runs ODE: each step, every contact, joint motor and joint stop is a row of one
bounded (mixed) LCP, solved exactly (Dantzig) together with the bodies' dynamics, the
contacts soft through ``softERP``/``softCFM``. MuJoCo's own contact, solved its way,
does not express that spring at a Webots step (docs/multibody.md). A world converted to
MuJoCo (:mod:`.from_world`) therefore steps here: MuJoCo gives the mass matrix, the
bias and passive forces, the contacts its collision found and the Jacobians; the rows
are ODE's (``joint_contact.cpp``, ``joint.cpp``'s limit and motor, ``step.cpp``):

* a contact: a normal row, ``c = softERP * depth / h`` (or ``bounce`` times the approach
  speed where it exceeds ``bounceVelocity`` and is larger), ``cfm = softCFM``, force in
  ``[0, inf)``; two friction rows along ODE's ``dPlaneSpace`` of the normal, ``c = 0``,
  ``cfm`` the world's, bounded by ``+-mu`` times the normal's force
  (``dContactApprox1``);
* a motor (Webots' ideal motor, a stopped motor's static friction, a joint's
  ``staticFriction``): ``c`` the target velocity within ``+-`` the force, ``cfm`` the
  world's;
* a stop the joint is past: ``c = ERP * (stop - q) / h``, pushing back only, ``cfm`` the
  world's.

ODE's step (``step.cpp``): with ``f`` the forces (applied, passive, less bias),
``(J M^-1 J^T + diag(cfm)/h) lambda = c/h - J (v/h + M^-1 f)``, the LCP solved as
``dSolveLCP``: first the rows without a friction index, then the friction rows' bounds
from those normal forces, then all rows (:func:`solve_rows`), each exactly
(:func:`.coupled.solve_box`); then ``v' = v + h M^-1 (f + J^T lambda)`` and the position
integrated by ``mj_integratePos`` (semi-implicit Euler, as ODE and MuJoCo's Euler; a
joint's damping implicit as MuJoCo's Euler has it). Without rows the step is MuJoCo's
Euler step.

No MuJoCo import here: the functions take the ``mujoco`` module, model and data.
"""

from __future__ import annotations

import math
from dataclasses import astuple, dataclass
from typing import Any

import numpy as np

from .coupled import solve_box

#: the name of the MJCF ``<numeric>`` a converted world carries its ODE parameters in
NUMERIC = "webots_ode"


@dataclass(frozen=True)
class OdeParameters:
    """A world's ODE parameters: ``WorldInfo``'s and its default ``ContactProperties``'
    (Webots' defaults where the world says nothing)."""

    #: WorldInfo.ERP, .CFM: the joints' stops and every row's cfm but the contact normal
    erp: float = 0.2
    cfm: float = 1e-5
    #: ContactProperties
    soft_erp: float = 0.2
    soft_cfm: float = 0.001
    bounce: float = 0.5
    bounce_velocity: float = 0.01
    #: coulombFriction (ODE's mu; Webots' -1: infinite)
    mu: float = 1.0

    def numbers(self) -> tuple[float, ...]:
        """The parameters in the order of the MJCF ``<numeric>`` (:data:`NUMERIC`)."""
        return astuple(self)

    @classmethod
    def of_model(cls, mj: Any, model: Any) -> OdeParameters | None:
        """The parameters a converted world's model carries, or None (a model from
        MJCF/URDF: MuJoCo's own step)."""
        i = mj.mj_name2id(model, mj.mjtObj.mjOBJ_NUMERIC, NUMERIC)
        if i < 0:
            return None
        start, size = int(model.numeric_adr[i]), int(model.numeric_size[i])
        return cls(*(float(x) for x in model.numeric_data[start:start + size]))


@dataclass
class Rows:
    """A step's LCP rows: Jacobian (rows x nv), ``c`` (velocity), ``cfm``, bounds and
    each friction row's normal (``findex``, -1: none; its ``lo``/``hi`` then ``+-mu``)."""

    jacobian: np.ndarray
    c: np.ndarray
    cfm: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    findex: np.ndarray


def plane_space(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ODE's ``dPlaneSpace``: two unit vectors orthogonal to ``n`` and each other (the
    friction directions of a contact without ``dContactFDir1``)."""
    if abs(n[2]) > math.sqrt(0.5):
        a = n[1] * n[1] + n[2] * n[2]
        k = 1.0 / math.sqrt(a)
        p = np.array([0.0, -n[2] * k, n[1] * k])
        q = np.array([a * k, -n[0] * p[2], n[0] * p[1]])
    else:
        a = n[0] * n[0] + n[1] * n[1]
        k = 1.0 / math.sqrt(a)
        p = np.array([-n[1] * k, n[0] * k, 0.0])
        q = np.array([-n[2] * p[1], n[2] * p[0], a * k])
    return p, q


def solve_rows(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               findex: np.ndarray) -> np.ndarray:
    """``lambda`` of the mixed LCP ``A lambda = b + w`` as ODE's ``dSolveLCP`` solves it:
    the rows without a friction index first (the friction rows' forces 0), then each
    friction row bounded by ``|hi * lambda[findex]|`` of that solution, then all rows;
    each an exact solve (:func:`.coupled.solve_box`). Rows bounded to 0 both ways carry 0."""
    n = b.shape[0]
    x = np.zeros(n)
    friction = findex >= 0
    first = ~friction
    if first.any():
        x[first] = _solve(a[np.ix_(first, first)], b[first], lo[first], hi[first])
    if not friction.any():
        return x
    lo, hi = lo.copy(), hi.copy()
    normal = np.abs(x[findex[friction]])
    with np.errstate(invalid="ignore"):  # mu infinite on a normal carrying 0: 0
        bound = np.nan_to_num(np.abs(hi[friction]) * normal, nan=0.0)
    hi[friction], lo[friction] = bound, -bound
    return _solve(a, b, lo, hi)


def _solve(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The box LCP with rows fixed at 0 (``lo == hi == 0``) left out."""
    x = np.zeros(b.shape[0])
    live = (lo < 0.0) | (hi > 0.0)
    if live.any():
        x[live] = solve_box(a[np.ix_(live, live)], b[live], lo[live], hi[live])
    return x


def contact_rows(mj: Any, model: Any, data: Any, ode: OdeParameters, h: float) -> Rows:
    """The rows of the contacts MuJoCo's collision found (``data.contact``), as ODE's
    contact joint makes them (module docstring)."""
    n = data.ncon
    nv = model.nv
    jacobian = np.zeros((3 * n, nv))
    c = np.zeros(3 * n)
    cfm = np.full(3 * n, ode.cfm)
    lo = np.full(3 * n, -np.inf)
    hi = np.full(3 * n, np.inf)
    findex = np.full(3 * n, -1)
    mu = math.inf if ode.mu < 0 else ode.mu
    point_jacobian = np.zeros((3, nv))
    other = np.zeros((3, nv))
    contact = data.contact
    for i in range(n):
        g1, g2 = contact.geom[i]
        normal = contact.frame[i][:3]  # from geom1 to geom2: pushes geom2's body
        pos = contact.pos[i]
        mj.mj_jac(model, data, point_jacobian, None, pos, model.geom_bodyid[g2])
        mj.mj_jac(model, data, other, None, pos, model.geom_bodyid[g1])
        relative = point_jacobian - other
        p, q = plane_space(normal)
        r = 3 * i
        jacobian[r] = normal @ relative
        jacobian[r + 1] = p @ relative
        jacobian[r + 2] = q @ relative
        depth = max(-float(contact.dist[i]), 0.0)
        push = ode.soft_erp * depth / h
        if ode.bounce > 0.0:
            outgoing = float(jacobian[r] @ data.qvel)
            if ode.bounce_velocity >= 0.0 and -outgoing > ode.bounce_velocity:
                push = max(push, -ode.bounce * outgoing)
        c[r] = push
        cfm[r] = ode.soft_cfm
        lo[r], hi[r] = 0.0, np.inf
        lo[r + 1:r + 3], hi[r + 1:r + 3] = -mu, mu
        findex[r + 1:r + 3] = r
    return Rows(jacobian, c, cfm, lo, hi, findex)


def joint_rows(model: Any, data: Any, ode: OdeParameters, h: float, dofs: np.ndarray,
               target: np.ndarray, force: np.ndarray, stop_low: np.ndarray,
               stop_high: np.ndarray, position: np.ndarray) -> Rows:
    """The rows of joints: a motor on each of ``dofs`` (``target`` velocity within
    ``+-force``), each joint's ``frictionloss`` as a motor at 0 (Webots' joint
    ``staticFriction``), and a stop row where a joint is past its stop (``stop_low``,
    ``stop_high`` at ``position`` of ``dofs``; the model's ``range`` of its other limited
    hinges and slides)."""
    nv = model.nv
    rows_dof, rows_c, rows_lo, rows_hi = [], [], [], []
    for dof, v, f in zip(dofs, target, force, strict=True):
        rows_dof.append(dof), rows_c.append(v), rows_lo.append(-f), rows_hi.append(f)
    held = set(int(d) for d in dofs)
    for dof in np.flatnonzero(model.dof_frictionloss > 0):
        if int(dof) not in held:
            loss = float(model.dof_frictionloss[dof])
            rows_dof.append(dof), rows_c.append(0.0), rows_lo.append(-loss)
            rows_hi.append(loss)
    stops = [(int(d), lo_, hi_, x) for d, lo_, hi_, x in
             zip(dofs, stop_low, stop_high, position, strict=True)]
    for j in np.flatnonzero(model.jnt_limited):
        dof = int(model.jnt_dofadr[j])
        if dof in held or int(model.jnt_type[j]) not in (2, 3):  # slide 2, hinge 3
            continue
        stops.append((dof, *model.jnt_range[j], float(data.qpos[model.jnt_qposadr[j]])))
    for dof, low, high, x in stops:
        if x < low:  # ODE's limit row: only once past the stop, pushing back
            rows_dof.append(dof), rows_c.append(ode.erp * (low - x) / h)
            rows_lo.append(0.0), rows_hi.append(np.inf)
        elif x > high:
            rows_dof.append(dof), rows_c.append(ode.erp * (high - x) / h)
            rows_lo.append(-np.inf), rows_hi.append(0.0)
    m = len(rows_dof)
    jacobian = np.zeros((m, nv))
    jacobian[np.arange(m), np.array(rows_dof, dtype=int)] = 1.0
    return Rows(jacobian, np.array(rows_c, float), np.full(m, ode.cfm),
                np.array(rows_lo, float), np.array(rows_hi, float), np.full(m, -1))


def step(mj: Any, model: Any, data: Any, rows: Rows, h: float,
         extra_mass: np.ndarray | None = None) -> np.ndarray:
    """One step ``h`` after ``mj_step1`` (and ``mj_fwdActuation``): the forces of
    ``rows`` solved as ``dWorldStep`` solves them (module docstring), ``qvel``,
    ``qacc`` and ``qpos`` integrated, ``time`` advanced. ``extra_mass``: added to the
    mass matrix's diagonal (an implicit damper's ``h * damping``: MuJoCo's own
    ``dof_damping`` is added here). The rows' forces ``lambda``."""
    nv = model.nv
    mass = np.zeros((nv, nv))
    mj.mj_fullM(model, data, mass)
    mass[np.diag_indices(nv)] += h * model.dof_damping
    if extra_mass is not None:
        mass[np.diag_indices(nv)] += extra_mass
    force = data.qfrc_passive + data.qfrc_actuator + data.qfrc_applied - data.qfrc_bias
    xfrc = data.xfrc_applied
    for b in np.flatnonzero(np.abs(xfrc).sum(axis=1)):  # at each body's centre of mass
        mj.mj_applyFT(model, data, xfrc[b, :3], xfrc[b, 3:], data.xipos[b], int(b), force)
    v = data.qvel.copy()
    factor = np.linalg.cholesky(mass)

    def inverse(x: np.ndarray) -> np.ndarray:
        """M^-1 x."""
        return np.linalg.solve(factor.T, np.linalg.solve(factor, x))

    free = inverse(force)  # M^-1 f
    lam = np.zeros(rows.c.shape[0])
    if lam.size:
        j = rows.jacobian
        response = inverse(j.T)  # M^-1 J^T
        a = j @ response
        a[np.diag_indices(lam.size)] += rows.cfm / h
        b = rows.c / h - j @ (v / h + free)
        lam = solve_rows(a, b, rows.lo, rows.hi, rows.findex)
        free = free + response @ lam
    data.qacc[:] = free
    data.qvel[:] = v + h * free
    mj.mj_integratePos(model, data.qpos, data.qvel, h)
    data.time += h
    return lam


def world_rows(mj: Any, model: Any, data: Any, ode: OdeParameters, h: float,
               dofs: np.ndarray | None = None, target: np.ndarray | None = None,
               force: np.ndarray | None = None, stop_low: np.ndarray | None = None,
               stop_high: np.ndarray | None = None) -> Rows:
    """A step's rows after ``mj_step1``: the motors on ``dofs`` (none by default) and
    their stops (:func:`joint_rows`, at ``qpos``), then the contacts
    (:func:`contact_rows`)."""
    dofs = np.zeros(0, int) if dofs is None else np.asarray(dofs, int)
    none = np.zeros(dofs.size)
    position = data.qpos[model.jnt_qposadr[model.dof_jntid[dofs]]]
    return joined(
        joint_rows(model, data, ode, h, dofs, none if target is None else target,
                   none if force is None else force,
                   none - np.inf if stop_low is None else stop_low,
                   none + np.inf if stop_high is None else stop_high, position),
        contact_rows(mj, model, data, ode, h))


def joined(*parts: Rows) -> Rows:
    """Rows one after the other (each part's friction index moved with it)."""
    offset, findex = 0, []
    for part in parts:
        findex.append(np.where(part.findex >= 0, part.findex + offset, -1))
        offset += part.c.shape[0]
    return Rows(*(np.concatenate([getattr(p, f) for p in parts])
                  for f in ("jacobian", "c", "cfm", "lo", "hi")),
                np.concatenate(findex).astype(int))


def world_step(body: Any, motors: Any, force: np.ndarray, loads: np.ndarray) -> np.ndarray:
    """A converted world's step after ``mj_step1`` and the law's torques in
    ``qfrc_applied`` (``body``: the :class:`~.body.MujocoBody`, ``body.ode`` its
    parameters): the ideal motors (``body.coupled``, their own ``loads`` as forces) and
    their stops, the contacts, the other stops and joints' friction solved as ODE's
    ``dWorldStep`` (:func:`step`). The motor forces, the solved ones for the ideal
    motors."""
    mj, model, data, h, ode = body.mj, body.model, body.data, body.dt, body.ode
    coupled = body.coupled if body.coupled is not None else np.zeros(len(body.joints), bool)
    dofs = body.dadr[coupled]
    applied = data.qfrc_applied
    applied[dofs] = loads[coupled]
    servo_mass = body.servo_mass[coupled]
    extra = np.zeros(model.nv)
    extra[dofs] = h * servo_mass
    if model.nu:
        mj.mj_fwdActuation(model, data)
    rows = world_rows(mj, model, data, ode, h, dofs, motors.state.command_velocity[coupled],
                      motors.commands.force_limit[coupled], body.stop_low[coupled],
                      body.stop_high[coupled])
    lam = step(mj, model, data, rows, h, extra)
    motor = lam[:dofs.size]
    applied[dofs] += motor - servo_mass * data.qvel[dofs]
    force = force.copy()
    force[coupled] = motor
    return force
