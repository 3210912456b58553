"""A Webots world stepped as ODE's dWorldStep (servo_sim/multibody/ode_step.py).

The LCP solve against a brute-force enumeration of its active sets; the step against
closed forms of ODE's soft contact (derived from ODE's rows: ``J v' = c - cfm*lambda``
with ``c = softERP*depth/h`` or the bounce, ``A = J M^-1 J^T + cfm/h``); without rows,
MuJoCo's own Euler step.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.multibody.ode_step import (
    OdeParameters,
    plane_space,
    solve_rows,
    step,
    world_rows,
)

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed: pip install "
                                              "'servo_sim[mujoco]'")
from servo_sim.multibody.from_world import world_model  # noqa: E402

G = 9.81
H = 0.016


# --------------------------------------------------------------------- the LCP solve

def brute_force(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The box LCP ``A x = b + w`` by enumerating every row's state (at lo, at hi,
    between): the one assignment whose solution satisfies all conditions."""
    n = b.size
    found = []
    for states in itertools.product((0, 1, 2), repeat=n):
        s = np.array(states)
        if ((s == 0) & ~np.isfinite(lo)).any() or ((s == 1) & ~np.isfinite(hi)).any():
            continue
        x = np.where(s == 0, lo, np.where(s == 1, hi, 0.0))
        free = s == 2
        if free.any():
            x[free] = np.linalg.solve(a[np.ix_(free, free)],
                                      b[free] - a[np.ix_(free, ~free)] @ x[~free])
        w = a @ x - b
        tol = 1e-9 * (1 + np.abs(b).max())
        if ((x < lo - tol) | (x > hi + tol)).any():
            continue
        if (free & (np.abs(w) > tol)).any() or ((s == 0) & (w < -tol)).any() \
                or ((s == 1) & (w > tol)).any():
            continue
        found.append(x)
    assert found, "no solution"
    return found[0]


def problem(seed: int, n: int, friction: bool) -> tuple:
    """A random positive definite problem with ODE's kinds of rows: contact normals
    (0, inf), motors (+-f), stops (one side) and, with ``friction``, a friction row
    after each normal (bounds +-mu)."""
    rng = np.random.default_rng(seed)
    j = rng.normal(size=(n, n + 2))
    a = j @ j.T + np.diag(rng.uniform(1e-3, 0.1, n))
    b = rng.normal(size=n) * 3
    kinds = rng.integers(0, 3, n)
    lo = np.where(kinds == 0, 0.0, np.where(kinds == 1, -rng.uniform(0.1, 2, n), -np.inf))
    hi = np.where(kinds == 0, np.inf, np.where(kinds == 1, -lo, 0.0))
    findex = np.full(n, -1)
    if friction:
        for i in range(0, n - 1, 2):
            lo[i], hi[i] = 0.0, np.inf  # a normal, then its friction row
            mu = rng.uniform(0.2, 1.5)
            lo[i + 1], hi[i + 1], findex[i + 1] = -mu, mu, i
    return a, b, lo, hi, findex


@pytest.mark.parametrize("seed", range(40))
def test_the_solve_is_the_lcps_one_solution(seed):
    n = 1 + seed % 6
    a, b, lo, hi, findex = problem(seed, n, friction=False)
    assert solve_rows(a, b, lo, hi, findex) == pytest.approx(brute_force(a, b, lo, hi),
                                                             abs=1e-8)


@pytest.mark.parametrize("seed", range(40))
def test_friction_rows_are_bounded_by_the_normals_solved_first(seed):
    """dSolveLCP: the rows without a friction index solved alone, then each friction
    row bounded by mu times its normal's force of that solution, then all rows."""
    n = 2 + seed % 5
    a, b, lo, hi, findex = problem(seed, n, friction=True)
    first = findex < 0
    x1 = brute_force(a[np.ix_(first, first)], b[first], lo[first], hi[first])
    normal = np.zeros(n)
    normal[first] = x1
    with np.errstate(invalid="ignore"):  # inf * 0 where no friction index
        bound = np.where(findex >= 0, hi * np.abs(normal[np.maximum(findex, 0)]), 0.0)
    lo2 = np.where(findex >= 0, -bound, lo)
    hi2 = np.where(findex >= 0, bound, hi)
    live = (lo2 < 0) | (hi2 > 0)
    expected = np.zeros(n)
    expected[live] = brute_force(a[np.ix_(live, live)], b[live], lo2[live], hi2[live])
    assert solve_rows(a, b, lo, hi, findex) == pytest.approx(expected, abs=1e-8)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.booleans())
def test_property_the_solution_is_complementary(seed, n, friction):
    a, b, lo, hi, findex = problem(seed, n, friction)
    x = solve_rows(a, b, lo, hi, findex)
    if friction:  # the bounds the friction rows got (from the first solve)
        first = findex < 0
        normal = np.zeros(n)
        normal[first] = solve_rows(a[np.ix_(first, first)], b[first], lo[first], hi[first],
                                   findex[first])
        with np.errstate(invalid="ignore"):
            bound = hi * np.abs(normal[np.maximum(findex, 0)])
        lo = np.where(findex >= 0, -bound, lo)
        hi = np.where(findex >= 0, bound, hi)
    w = a @ x - b
    tol = 1e-9 * (1 + np.abs(b).max()) * (1 + np.abs(a).max())
    assert (x >= lo - tol).all() and (x <= hi + tol).all()
    between = (x > lo + tol) & (x < hi - tol)
    assert np.abs(w[between]).max(initial=0) < tol
    fixed = lo == hi  # a friction row whose normal carries nothing: 0, any w
    assert (x[fixed] == 0).all()
    assert (w[(np.abs(x - lo) <= tol) & ~fixed] >= -tol).all()
    assert (w[(np.abs(x - hi) <= tol) & ~(np.abs(x - lo) <= tol) & ~fixed] <= tol).all()


@pytest.mark.parametrize("n", [(0, 0, 1), (0, 0, -1), (1, 0, 0), (0.6, 0, 0.8),
                               (0.2, -0.3, -0.9)])
def test_plane_space_is_orthonormal_as_odes(n):
    n = np.array(n) / np.linalg.norm(n)
    p, q = plane_space(n)
    basis = np.array([n, p, q])
    assert basis @ basis.T == pytest.approx(np.eye(3), abs=1e-12)
    if n[2] == 1:  # ODE's dPlaneSpace of +z: p = -y, q = +x
        assert list(p) == pytest.approx([0, -1, 0]) and list(q) == pytest.approx([1, 0, 0])


# --------------------------------------------------------------------- a box on the floor

def box_world(tmp_path: Path, mass: float, z: float, contact: str = "") -> Path:
    """A 10 cm cube of ``mass`` kg, its centre at ``z``, over a floor Plane (and a
    robot apart: a world's config needs a motor)."""
    path = tmp_path / "box.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{ basicTimeStep 16
{contact}}}
Solid {{ name "floor" boundingObject Plane {{ size 10 10 }} }}
Solid {{ translation 0 0 {z!r} name "box" boundingObject Box {{ size 0.1 0.1 0.1 }}
  physics Physics {{ density -1 mass {mass!r} }} }}
Robot {{ translation 5 0 1 children [
  HingeJoint {{ device [ RotationalMotor {{ name "m" }} ] endPoint Solid {{ }} }} ] }}
""")
    return path


def run(model, data, ode: OdeParameters, steps: int) -> None:
    """``steps`` of ODE's step with the world's rows (no motors)."""
    for _ in range(steps):
        mujoco.mj_step1(model, data)
        step(mujoco, model, data, world_rows(mujoco, model, data, ode, H), H)


@pytest.mark.parametrize("mass", [1.0, 2.5])
def test_a_box_rests_where_the_soft_contacts_spring_carries_it(tmp_path, mass):
    """At rest (v = v' = 0) each of the 4 corners' rows gives ``0 = c - softCFM*lambda``,
    ``c = softERP*d/h``: ``lambda = softERP*d/(h*softCFM)``, and the four carry m g:
    ``d = m g h softCFM / (4 softERP)`` (Webots' defaults: 0.2, 0.001)."""
    model = world_model(mujoco, box_world(tmp_path, mass, 0.05))
    data = mujoco.MjData(model)
    ode = OdeParameters.of_model(mujoco, model)
    assert ode == OdeParameters()  # Webots' defaults
    run(model, data, ode, 200)  # 3.2 s
    depth = mass * G * H * 0.001 / (4 * 0.2)
    assert data.ncon == 4
    assert data.qpos[2] == pytest.approx(0.05 - depth, abs=1e-9)
    assert np.abs(data.qvel).max() < 1e-9


SOFT = """  contactProperties [
    ContactProperties {
      softERP 0.4
      softCFM 0.0005
      bounce 0.8
      bounceVelocity 0.5
    }
  ]
"""


@pytest.mark.parametrize("incoming, contact", [
    (-1.0, ""), (-0.005, ""), (0.4, ""), (-1.0, SOFT), (-0.3, SOFT)],
    ids=["bounce", "slow", "leaving", "own-bounce", "own-below-threshold"])
def test_a_box_striking_the_floor_bounces_as_odes_contact(tmp_path, incoming, contact):
    """The step a box 1 mm into the floor moves at ``incoming`` m/s: each corner's row
    ``J v' = c - softCFM*lambda``, ``c`` the larger of ``softERP*d/h`` and the bounce
    ``bounce*|incoming|`` (only above ``bounceVelocity`` inward); the box's momentum
    ``m (v' - v) = h (4 lambda - m g)``: ``v'`` in closed form. Moving out faster than
    ``c``: no force. Webots' defaults (0.2, 0.001, 0.5, 0.01 m/s) and a world's own."""
    mass, d = 1.5, 0.001
    model = world_model(mujoco, box_world(tmp_path, mass, 0.05 - d, contact))
    data = mujoco.MjData(model)
    ode = OdeParameters.of_model(mujoco, model)
    erp, cfm, bounce, threshold = (0.4, 0.0005, 0.8, 0.5) if contact else (0.2, 0.001, 0.5,
                                                                            0.01)
    assert (ode.soft_erp, ode.soft_cfm, ode.bounce, ode.bounce_velocity) == (
        erp, cfm, bounce, threshold)
    data.qvel[2] = incoming
    mujoco.mj_step1(model, data)
    lam = step(mujoco, model, data, world_rows(mujoco, model, data, ode, H), H)
    c = erp * d / H
    if -incoming > threshold:
        c = max(c, -bounce * incoming)
    # v' = c - cfm*(m (v' - v)/h + m g)/4  ->  v' (1 + cfm m/(4h)) = c + cfm m (v/h - g)/4
    expected = (c + cfm * mass * (incoming / H - G) / 4) / (1 + cfm * mass / (4 * H))
    if expected < incoming - H * G:  # would pull: the rows carry nothing
        expected = incoming - H * G
        assert lam[::3] == pytest.approx([0.0] * 4, abs=1e-12)
    assert data.qvel[2] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("push", [2.0, -3.0])
def test_a_box_pushed_below_its_friction_creeps_at_the_worlds_cfm(tmp_path, push):
    """A horizontal force below mu m g: each corner's friction row ``J v' = -CFM*lambda``
    (the world's CFM, 1e-5: not the contact's softCFM), the four carrying the push:
    the box creeps at ``push * CFM / 4``."""
    model = world_model(mujoco, box_world(tmp_path, 1.0, 0.05))
    data = mujoco.MjData(model)
    ode = OdeParameters.of_model(mujoco, model)
    run(model, data, ode, 100)  # at rest
    box = model.body("box").id
    data.xfrc_applied[box, 0] = push
    run(model, data, ode, 100)
    assert data.qvel[0] == pytest.approx(push * 1e-5 / 4, rel=1e-3)


@pytest.mark.parametrize("v0", [1.0, -1.0])
def test_a_sliding_box_stops_after_v_squared_over_two_mu_g(tmp_path, v0):
    """Friction bounded by mu times the normal force (dContactApprox1): a box sliding
    at v0 along x stops after v0**2 / (2 mu g), within a step's travel (|v0| h)."""
    mu = 0.4
    contact = f"""  contactProperties [
    ContactProperties {{
      coulombFriction [
        {mu}
      ]
    }}
  ]
"""
    model = world_model(mujoco, box_world(tmp_path, 1.0, 0.05, contact))
    data = mujoco.MjData(model)
    ode = OdeParameters.of_model(mujoco, model)
    assert ode.mu == mu
    run(model, data, ode, 100)  # at rest on the floor
    x0 = data.qpos[0]
    data.qvel[0] = v0
    steps = 0
    while abs(data.qvel[0]) > 1e-9 and steps < 1000:
        run(model, data, ode, 1)
        steps += 1
    assert abs(data.qvel[0]) < 1e-9
    assert data.qpos[0] - x0 == pytest.approx(math.copysign(v0 ** 2 / (2 * mu * G), v0),
                                             abs=abs(v0) * H)
    assert abs(data.qpos[1]) < 1e-9  # straight on


def test_without_rows_the_step_is_mujocos_euler(tmp_path):
    """A damped double pendulum (no contact, no stop): ODE's step and MuJoCo's own
    Euler step (implicit damping) agree to rounding."""
    xml = """<mujoco><option timestep="0.016"/><worldbody>
      <body><joint type="hinge" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.4"/>
        <body pos="0.3 0 0"><joint type="hinge" axis="0 1 0" damping="0.02"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.25"/></body>
      </body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    ours, theirs = mujoco.MjData(model), mujoco.MjData(model)
    ours.qpos[:] = theirs.qpos[:] = (0.3, -0.7)
    for _ in range(200):
        mujoco.mj_step(model, theirs)
        mujoco.mj_step1(model, ours)
        step(mujoco, model, ours, world_rows(mujoco, model, ours, OdeParameters(), H), H)
    assert ours.qpos == pytest.approx(theirs.qpos, abs=1e-12)
    assert ours.qvel == pytest.approx(theirs.qvel, abs=1e-10)


def test_a_joint_past_its_stop_is_pushed_back_by_erp():
    """ODE's limit row: once past the stop by e, ``J v' = ERP*e/h - CFM*lambda``; a
    joint with no other force has ``lambda = I (v' - v)/h``, so
    ``v' = (ERP e/h + CFM I v/h) / (1 + CFM I/h)``, both stops."""
    xml = """<mujoco><compiler angle="radian"/><option timestep="0.016" gravity="0 0 0"/>
      <worldbody>
      <body><joint type="hinge" axis="0 0 1" range="-0.5 0.5"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.02 0.02 0.02"/></body>
      </worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    for sign in (1, -1):
        data = mujoco.MjData(model)
        data.qpos[0], data.qvel[0] = sign * 0.53, sign * 0.2
        mujoco.mj_step1(model, data)
        ode = OdeParameters()
        step(mujoco, model, data, world_rows(mujoco, model, data, ode, H), H)
        e, inertia, v = -sign * 0.03, 0.02, sign * 0.2
        expected = (ode.erp * e / H + ode.cfm * inertia * v / H) / (1 + ode.cfm * inertia / H)
        assert data.qvel[0] == pytest.approx(expected, rel=1e-12)


def test_a_world_steps_as_ode_and_an_mjcf_or_urdf_model_as_mujoco(tmp_path):
    """The step is chosen by where the model came from: a world's carries its ODE
    parameters (its body steps as ODE), a URDF's none (MuJoCo's own step, unchanged)."""
    from servo_sim.load import load, on_physics
    from servo_sim.model import Simulation
    world = Simulation(on_physics(load(box_world(tmp_path, 1.0, 0.05)), "mujoco"))
    assert world.bank.body.ode == OdeParameters()
    urdf = Simulation.from_config({
        "basic_time_step_ms": 1, "physics": "mujoco", "multibody": {"model": "so101.urdf"},
        "motors": [{"name": "elbow_flex"}]})
    assert urdf.bank.body.ode is None
    world.step(100)  # the box at rest on the floor: ODE's depth, not MuJoCo's
    box = world.bank.body.model.body("box").id
    depth = G * H * 0.001 / (4 * 0.2)
    assert world.bank.body.data.xpos[box][2] == pytest.approx(0.05 - depth, abs=1e-9)


def balancing_world(tmp_path: Path, start: float) -> Path:
    """A two-wheeled robot balancing a pole on a passive hinge (upstream Webots'
    position_sensor example's dimensions, masses and axes' senses: a 5 kg body whose
    bounding cylinder is 4.5 mm over the floor, 0.05 kg wheels of 28 mm, a 1 kg pole),
    its pole leaning ``start`` rad (the hinge's position, the pole's Solid written
    there)."""
    wheels = "\n".join(f"""    HingeJoint {{
      jointParameters HingeJointParameters {{ axis 0 1 0 anchor 0 {y} 0.025 }}
      device [ RotationalMotor {{ name "{name}" maxVelocity 100 }} ]
      endPoint Solid {{ translation 0 {y} 0.025 rotation 1 0 0 1.5707963267948966
        name "{name}" boundingObject Cylinder {{ height 0.01 radius 0.028 }}
        physics Physics {{ density -1 mass 0.05 }} }}
    }}""" for name, y in (("left", 0.045), ("right", -0.045)))
    x, z = -0.0775 * math.sin(start), 0.085 + 0.0775 * math.cos(start)  # about the hinge
    path = tmp_path / "balance.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{ basicTimeStep 16 }}
Solid {{ name "floor" boundingObject Plane {{ size 100 100 }} }}
Robot {{
  translation 0 0 0.003
  children [
{wheels}
    HingeJoint {{
      jointParameters HingeJointParameters {{ axis 0 -1 0 anchor 0 0 0.085 position {start!r}
        minStop -1.5708 maxStop 1.5708 }}
      device [ PositionSensor {{ name "pole" }} ]
      endPoint Solid {{ translation {x!r} 0 {z!r}
        rotation 0 -1 0 {start!r} name "pole"
        boundingObject Capsule {{ height 0.15 radius 0.005 }}
        physics Physics {{ density -1 mass 1 }} }}
    }}
  ]
  boundingObject Pose {{ translation 0 0 0.0415 children [ Cylinder {{ height 0.08
    radius 0.045 }} ] }}
  physics Physics {{ density -1 mass 5 centerOfMass [ 0 0 0 ] }}
}}
""")
    return path


@pytest.mark.parametrize("start", [0.05, -0.15])
def test_a_balancing_robot_keeps_its_pole_up_on_odes_soft_contact(tmp_path, start):
    """Upstream's position_sensor loop (PID 35, 5, 28.9 on the pole's angle, the wheels
    told -speed within 100 rad/s) is unstable on a rigid robot; in Webots (ODE) the body
    striking the floor, its soft contact solved with the motors, holds the pole up (ODE
    itself: 70 s, largest angle 0.28 rad; on MuJoCo's own step it fell after 2.6 s). On
    the world's ODE step: up for 30 s, within 0.4 rad."""
    from servo_sim.load import load, on_physics
    from servo_sim.model import Simulation
    sim = Simulation(on_physics(load(balancing_world(tmp_path, start)), "mujoco"))
    wheels = [sim.motor("left"), sim.motor("right")]
    pole = sim.motor("pole")
    for w in wheels:
        w.set_position(math.inf)
    integral, previous, largest = 0.0, 0.0, 0.0
    for _ in range(round(30 / H)):
        sim.step(1)
        angle = pole.position
        largest = max(largest, abs(angle))
        assert abs(angle) < 0.7, f"the pole fell at {sim.time:.3f} s"
        integral += (angle + previous) * 0.5
        speed = max(-100.0, min(100.0, 35 * angle + 5 * integral + 28.9 * (angle - previous)))
        previous = angle
        for w in wheels:
            w.set_velocity(-speed)
    assert largest < 0.4
