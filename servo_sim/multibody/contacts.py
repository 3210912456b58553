"""Webots' ideal motors against contacts: the coupled rows re-solved with MuJoCo's own
constraint solve in the loop.

:mod:`.coupled` solves the motors' velocity rows over the mass matrix alone: a wheel on
the floor is then a free wheel, the few mN*m that spin it up alone are all its motor
gives, and the floor's friction takes the speed back in MuJoCo's step (a balancing robot
cannot accelerate under its pole). ODE, which Webots runs, solves the motors with the
contacts in one problem. Here, where the step has contacts, the rows are corrected by
Newton steps on MuJoCo's constraint solve (``mj_fwdAcceleration``, ``mj_fwdConstraint``:
the velocity each joint reaches with the contacts, for the motor forces in
``qfrc_applied``): each step's response of the rows to their forces probed one row at a
time (finite differences), the correction within each row's bounds solved with
:func:`.coupled.solve_box`, until every row within its bound reaches its target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .coupled import solve_box

#: Newton steps at most; and the velocity error (rad/s or m/s, relative to 1 + |target|)
#: below which a row has reached its target
ITERATIONS = 6
TOLERANCE = 1e-7
#: the probe of a row's response: this much force, relative to 1 + |its force|
PROBE = 1e-3


def with_contacts(body: Any, motors: Any, force: np.ndarray) -> np.ndarray:
    """The motor forces ``force`` with the coupled rows (``body.coupled``) re-solved
    against the step's contacts, and ``qfrc_applied`` with them (see the module
    docstring); ``body``: the :class:`~.body.MujocoBody` after its own solve."""
    mj, model, data, dt = body.mj, body.model, body.data, body.dt
    rows = body.coupled
    dofs = model.jnt_dofadr[body.joints[rows]]
    applied = data.qfrc_applied
    target = motors.state.command_velocity[rows]
    limit = motors.commands.force_limit[rows]
    f = force[rows].astype(float)
    if model.nu:
        mj.mj_fwdActuation(model, data)

    def reached() -> np.ndarray:
        """Each row's velocity after the step, with the contacts (semi-implicit Euler:
        the velocity MuJoCo's step integrates to)."""
        mj.mj_fwdAcceleration(model, data)
        mj.mj_fwdConstraint(model, data)
        return data.qvel[dofs] + dt * data.qacc[dofs]

    v = reached()
    for _ in range(ITERATIONS):
        free = np.abs(f) < limit
        error = target - v
        if not (np.abs(error[free]) > TOLERANCE * (1 + np.abs(target[free]))).any() \
                and not ((f >= limit) & (error < 0) | (f <= -limit) & (error > 0)).any():
            break
        response = np.empty((dofs.size, dofs.size))
        for j, dof in enumerate(dofs):
            probe = PROBE * (1.0 + abs(f[j]))
            applied[dof] += probe
            response[:, j] = (reached() - v) / probe
            applied[dof] -= probe
        response = (response + response.T) / 2
        change = solve_box(response, error, -limit - f, limit - f)
        f += change
        applied[dofs] += change
        v = reached()
    force = force.copy()
    force[rows] = f
    return force
