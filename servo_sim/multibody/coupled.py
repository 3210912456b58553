"""Webots motors on a coupled body: every joint's velocity target solved together.

In Webots (ODE) a motor is not a force: it is a row of the constraint solver, "reach
this velocity in the step", bounded by +-the available force, solved with the rest of
the body. A stopped motor is the same row with the velocity 0 and the static friction as
its bound; a hard stop is a row that pushes outward only. On a body whose joints are
coupled through its mass matrix, one joint's motor pushes on the others, so each row's
force depends on all of them.

A step's problem, for the rows ``r`` acting on the dofs ``S`` of a body whose velocity
after the step is ``v' = v_free + A^-1 S f`` (``A``: the mass matrix over the step, the
implicit springs and dampers with it)::

    W = S^T A^-1 S,   c = target - S^T v_free
    find lo <= f <= hi with, for each row i, (W f - c)_i
        = 0 where lo_i < f_i < hi_i,  <= 0 where f_i = hi_i,  >= 0 where f_i = lo_i

the KKT conditions of the box-bounded quadratic program min 1/2 f'Wf - c'f, which
:func:`solve_box` solves exactly (block principal pivoting, with projected Gauss-Seidel
where a pivot set repeats). Where the bounds allow, each row's joint reaches its target;
where one saturates, it sits at its bound and the others still reach theirs.

No MuJoCo here: :class:`~servo_sim.multibody.body.MujocoBody` builds ``A`` and
``v_free`` from MuJoCo's state.
"""

from __future__ import annotations

import numpy as np

#: block principal pivoting's iterations before falling back to Gauss-Seidel
PIVOT_ITERATIONS = 50
#: projected Gauss-Seidel's sweeps at most (a fallback, and where W is singular)
SWEEPS = 200


def solve_box(w: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              tolerance: float = 1e-12) -> np.ndarray:
    """The ``f`` within ``[lo, hi]`` that satisfies the box-bounded complementarity
    conditions of ``W f - c`` (module docstring). ``W`` symmetric positive
    (semi-)definite, ``lo <= 0 <= hi`` (infinite bounds allowed). ``tolerance``: the
    complementarity residual accepted, relative to the scale of ``W`` and ``c``."""
    n = c.shape[0]
    f = np.zeros(n)
    if n == 0:
        return f
    try:  # most steps: every row within its bound
        f = np.linalg.solve(w, c)
        if (f >= lo).all() and (f <= hi).all():
            return f
    except np.linalg.LinAlgError:
        pass
    scale = max(float(np.abs(w).max()), 1e-300) * max(1.0, float(np.abs(c).max()))
    # block principal pivoting (Judice & Pires): guess which rows sit at a bound, solve
    # the others exactly, flip every guess the solution contradicts
    at_lo = np.zeros(n, dtype=bool)
    at_hi = np.zeros(n, dtype=bool)
    seen: set[bytes] = set()
    for _ in range(PIVOT_ITERATIONS):
        free = ~(at_lo | at_hi)
        f = np.where(at_lo, lo, np.where(at_hi, hi, 0.0))
        if free.any():
            rhs = c[free] - w[np.ix_(free, ~free)] @ f[~free]
            block = w[np.ix_(free, free)]
            try:
                f[free] = np.linalg.solve(block, rhs)
            except np.linalg.LinAlgError:  # singular (two rows on one joint): fall back
                break
        residual = w @ f - c
        wrong_free_lo = free & (f < lo)
        wrong_free_hi = free & (f > hi)
        wrong_lo = at_lo & (residual < -tolerance * scale)
        wrong_hi = at_hi & (residual > tolerance * scale)
        wrong = wrong_free_lo | wrong_free_hi | wrong_lo | wrong_hi
        if not wrong.any():
            return np.clip(f, lo, hi)
        key = (at_lo.tobytes() + at_hi.tobytes())
        if key in seen:  # cycling: pivot the last wrong row only (Murty)
            last = np.flatnonzero(wrong)[-1]
            wrong[:] = False
            wrong[last] = True
            wrong_free_lo &= wrong
            wrong_free_hi &= wrong
        seen.add(key)
        at_lo = (at_lo & ~wrong) | wrong_free_lo
        at_hi = (at_hi & ~wrong) | wrong_free_hi
    return _gauss_seidel(w, c, lo, hi, np.clip(f, lo, hi), tolerance * scale)


def _gauss_seidel(w: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  f: np.ndarray, tolerance: float) -> np.ndarray:
    """Projected Gauss-Seidel sweeps from ``f`` until a sweep changes no row's
    residual by more than ``tolerance``."""
    diagonal = np.diag(w)
    for _ in range(SWEEPS):
        largest = 0.0
        for i in range(c.shape[0]):
            if diagonal[i] <= 0.0:
                continue
            residual = w[i] @ f - c[i]
            new = min(max(f[i] - residual / diagonal[i], lo[i]), hi[i])
            largest = max(largest, abs(new - f[i]) * diagonal[i])
            f[i] = new
        if largest <= tolerance:
            break
    return f
