"""Webots motors on a coupled MuJoCo body (``servo_sim/multibody/coupled.py``): the
velocity targets, a stopped motor's static friction and the hard stops of every ideal
motor solved together, each within its bound, against independent values: SciPy's
bounded least squares on the same problem, and the double pendulum's step in closed
form from MuJoCo's own mass matrix and bias forces. Time is the simulation's: every run
is a number of model steps."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.model import Simulation
from servo_sim.multibody.coupled import solve_box

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed: pip install "
                                              "'servo_sim[mujoco]'")
optimize = pytest.importorskip("scipy.optimize", reason="SciPy is not installed: pip "
                                                        "install scipy (the test extra)")

DT = 0.001
#: two links, 0.4 and 0.25 kg, hinges about y, no friction or damping (the issue's)
PENDULUM = """<mujoco>
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="upper">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.3" mass="0.4" diaginertia="1e-4 1e-4 1e-4"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.25" mass="0.25" diaginertia="1e-4 1e-4 1e-4"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def pendulum(tmp_path: Path) -> Path:
    path = tmp_path / "pendulum.xml"
    path.write_text(PENDULUM)
    return path


def simulation(model: Path, *motors: dict) -> Simulation:
    return Simulation.from_config({"basic_time_step_ms": 1, "physics": "mujoco",
                                   "multibody": {"model": str(model)}, "motors": list(motors)})


def bare_step_terms(model: Path, qpos: list[float], qvel: list[float]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo alone at a state: the mass matrix and the forces on the joints (passive
    less bias: gravity, Coriolis)."""
    m = mujoco.MjModel.from_xml_path(str(model))
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    return full, d.qfrc_passive - d.qfrc_bias


def velocity_control(sim: Simulation, velocities: dict[str, float]) -> None:
    for name, velocity in velocities.items():
        motor = sim.motor(name)
        motor.set_position(math.inf)
        motor.set_velocity(velocity)


# --------------------------------------------------------------------- the solver


def kkt_violation(w: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  f: np.ndarray) -> float:
    """How far ``f`` is from the box complementarity conditions (0: it meets them)."""
    residual = w @ f - c
    out = max(float(np.max(lo - f, initial=0.0)), float(np.max(f - hi, initial=0.0)))
    at_lo, at_hi = np.isclose(f, lo, rtol=0, atol=1e-9), np.isclose(f, hi, rtol=0, atol=1e-9)
    free = ~(at_lo | at_hi)
    out = max(out, float(np.max(np.abs(residual[free]), initial=0.0)))
    out = max(out, float(np.max(-residual[at_lo & ~at_hi], initial=0.0)))
    return max(out, float(np.max(residual[at_hi & ~at_lo], initial=0.0)))


def problems(max_n: int = 6):
    """A symmetric positive definite W, c and bounds lo <= 0 <= hi (some infinite)."""
    def build(draw: st.DrawFn) -> tuple:
        n = draw(st.integers(1, max_n))
        floats = st.floats(-1.0, 1.0, allow_nan=False)
        root = np.array(draw(st.lists(floats, min_size=n * n, max_size=n * n))).reshape(n, n)
        w = root @ root.T + np.eye(n) * draw(st.floats(1e-3, 1.0))
        c = np.array(draw(st.lists(st.floats(-10.0, 10.0), min_size=n, max_size=n)))
        bound = st.one_of(st.just(math.inf), st.floats(1e-3, 5.0))
        lo = -np.array(draw(st.lists(bound, min_size=n, max_size=n)))
        hi = np.array(draw(st.lists(bound, min_size=n, max_size=n)))
        return w, c, lo, hi
    return st.composite(build)()


@settings(max_examples=300, deadline=None)
@given(problems())
def test_the_solve_is_scipys_bounded_least_squares_on_the_same_problem(problem):
    """min 1/2 f'Wf - c'f within the box is ||L'f - L^-1 c||^2 / 2 + const for W = LL':
    SciPy's bounded least squares (BVLS) on it gives the unique solution."""
    w, c, lo, hi = problem
    f = solve_box(w, c, lo, hi)
    root = np.linalg.cholesky(w)
    reference = optimize.lsq_linear(root.T, np.linalg.solve(root, c), bounds=(lo, hi),
                                    method="bvls", tol=1e-14).x
    assert np.all(f >= lo) and np.all(f <= hi)
    assert np.allclose(f, reference, rtol=1e-7, atol=1e-7 * max(1.0, np.abs(reference).max()))
    assert kkt_violation(w, c, lo, hi, f) < 1e-8 * max(1.0, float(np.abs(c).max()))


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-3, 10.0), st.floats(-100.0, 100.0), st.floats(0.0, 50.0),
       st.floats(0.0, 50.0))
def test_one_row_is_its_target_force_clipped_to_its_bound(w, c, low, high):
    """One joint alone: Webots' motor, clip(c / w, -low, high), both signs."""
    f = solve_box(np.array([[w]]), np.array([c]), np.array([-low]), np.array([high]))
    assert f[0] == pytest.approx(min(max(c / w, -low), high), rel=1e-12, abs=1e-12)


def test_two_rows_on_one_joint_a_motor_and_its_stop_meet_the_conditions():
    """A motor row and a stop row on one joint: W is singular (both columns equal);
    the solve still meets the conditions (the stop takes what the motor cannot)."""
    w = np.array([[2.0, 2.0], [2.0, 2.0]])
    c = np.array([10.0, 4.0])  # the motor wants 5 units of force, the stop allows 2
    lo, hi = np.array([-3.0, -np.inf]), np.array([3.0, 0.0])
    f = solve_box(w, c, lo, hi)
    assert kkt_violation(w, c, lo, hi, f) < 1e-9
    assert (w @ f)[1] == pytest.approx(4.0, abs=1e-9)  # the joint sits on the stop


# --------------------------------------------------------------------- the body


@pytest.mark.parametrize("velocities", [(1.0, -2.0), (-1.0, 2.0)])
def test_two_coupled_links_in_velocity_control_turn_at_their_speeds_from_the_first_step(
        pendulum, velocities):
    """Webots: each motor is a velocity row bounded by 50 N*m, solved with the body: both
    joints at their commanded speeds from the first step, the torques well within the
    bound (per joint alone, they chattered between +-50 N*m)."""
    sim = simulation(pendulum, {"name": "j1", "max_torque": 50.0},
                     {"name": "j2", "max_torque": 50.0})
    velocity_control(sim, {"j1": velocities[0], "j2": velocities[1]})
    forces = []
    for _ in range(1000):
        sim.step(1)
        assert sim.motor("j1").velocity == pytest.approx(velocities[0], abs=1e-9)
        assert sim.motor("j2").velocity == pytest.approx(velocities[1], abs=1e-9)
        forces.append([sim.motor("j1").motor_force, sim.motor("j2").motor_force])
    assert np.abs(forces).max() < 50.0 - 1e-6
    assert sim.motor("j1").position == pytest.approx(velocities[0], abs=1e-9)  # 1 s


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_link_whose_force_does_not_suffice_sits_at_its_bound_short_of_its_speed(
        pendulum, sign):
    """Both links told 0.5 rad/s (either way) from rest: reaching it in 1 ms takes more
    than j1's 50 N*m, so j1 pushes at its bound and falls short while j2 reaches its
    speed; the step after, both are there."""
    sim = simulation(pendulum, {"name": "j1", "max_torque": 50.0},
                     {"name": "j2", "max_torque": 50.0})
    velocity_control(sim, {"j1": 0.5 * sign, "j2": 0.5 * sign})
    sim.step(1)
    assert sim.motor("j1").motor_force == pytest.approx(50.0 * sign, abs=1e-12)
    assert 0.0 < sign * sim.motor("j1").velocity < 0.5
    assert sim.motor("j2").velocity == pytest.approx(0.5 * sign, abs=1e-9)
    assert abs(sim.motor("j2").motor_force) < 50.0
    sim.step(1)
    for name in ("j1", "j2"):
        assert sim.motor(name).velocity == pytest.approx(0.5 * sign, abs=1e-9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_first_step_is_the_closed_form_with_the_saturated_link_at_its_bound(
        pendulum, sign):
    """From rest, j1 told 10 rad/s with 0.5 N*m available (it saturates) under an
    external load of 0.2 N*m, j2 told -2 rad/s with 50 N*m (it does not) through a
    damper of 0.5 N*m*s/rad (either way). Closed form from MuJoCo's own mass matrix M
    and gravity g at the pose: f1 = 0.5; f2 such that j2 reaches -2 against its damper:
    v' = dt M^-1 (g + (0.2, 0) + f - (0, 0.5 v2'))."""
    sim = simulation(pendulum, {"name": "j1", "max_torque": 0.5, "position": 0.3 * sign,
                                "load": {"external": 0.2 * sign}},
                     {"name": "j2", "max_torque": 50.0, "position": -0.4 * sign,
                      "damping_constant": 0.5})
    velocity_control(sim, {"j1": 10.0 * sign, "j2": -2.0 * sign})
    sim.step(1)
    full, own = bare_step_terms(pendulum, [0.3 * sign, -0.4 * sign], [0.0, 0.0])
    inverse = np.linalg.inv(full) * DT
    loads = own + np.array([0.2 * sign, 0.5 * 2.0 * sign])  # the damper's torque at v2' = -2 sign
    f1 = 0.5 * sign
    f2 = (-2.0 * sign - inverse[1] @ loads - inverse[1, 0] * f1) / inverse[1, 1]
    v1 = inverse[0] @ (loads + np.array([f1, f2]))
    assert 0.0 < sign * v1 < 10.0  # saturated indeed
    assert sim.motor("j1").motor_force == pytest.approx(f1, abs=1e-12)
    assert sim.motor("j2").motor_force == pytest.approx(f2, rel=1e-9)
    assert sim.motor("j1").velocity == pytest.approx(v1, rel=1e-9)
    assert sim.motor("j2").velocity == pytest.approx(-2.0 * sign, abs=1e-9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_set_torque_and_a_spring_on_coupled_joints_are_loads_of_the_first_step(
        pendulum, sign):
    """The servos' own loads in the solve (the law's ``servo_loads``, given to the body
    with the bank's arrays): from rest, j1 under set_torque 0.3 N*m (no static friction:
    its motor off, force 0), j2 told -2 rad/s with 50 N*m through a spring of 4 N*m/rad
    at -0.4 rad (either way). Closed form from MuJoCo's M and gravity g at the pose: the
    spring's torque -k (x2 + dt v2') with v2' = -2 (implicit), f2 such that j2 reaches
    it, v1 = dt (M^-1 (g + (0.3, spring) + (0, f2)))_1."""
    sim = simulation(pendulum, {"name": "j1", "max_torque": 1.0, "static_friction": 0.0,
                                "position": 0.3 * sign},
                     {"name": "j2", "max_torque": 50.0, "position": -0.4 * sign,
                      "spring_constant": 4.0})
    sim.motor("j1").set_torque(0.3 * sign)
    velocity_control(sim, {"j2": -2.0 * sign})
    sim.step(1)
    full, own = bare_step_terms(pendulum, [0.3 * sign, -0.4 * sign], [0.0, 0.0])
    inverse = np.linalg.inv(full) * DT
    spring = -4.0 * (-0.4 * sign + DT * -2.0 * sign)
    loads = own + np.array([0.3 * sign, spring])
    f2 = (-2.0 * sign - inverse[1] @ loads) / inverse[1, 1]
    v1 = inverse[0] @ (loads + np.array([0.0, f2]))
    assert sim.motor("j2").velocity == pytest.approx(-2.0 * sign, abs=1e-9)
    assert sim.motor("j2").motor_force == pytest.approx(f2, rel=1e-9)
    assert sim.motor("j1").velocity == pytest.approx(v1, rel=1e-9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_stopped_joint_holds_under_its_static_friction_while_its_neighbour_moves(
        pendulum, sign):
    """j1 switched off (available torque 0: held by its static friction, 2 N*m) while j2
    speeds up to 3 rad/s at 10 rad/s^2: j1 stays put, the torque that holds it (in
    closed form, -(passive - bias) once j2 turns steadily) within its friction; with a
    friction of 1e-3 N*m, the same motion drags it along."""
    sim = simulation(pendulum, {"name": "j1", "max_torque": 50.0, "static_friction": 2.0},
                     {"name": "j2", "max_torque": 50.0, "acceleration": 10.0})
    sim.motor("j1").set_available_torque(0.0)
    velocity_control(sim, {"j2": 3.0 * sign})
    for _ in range(500):
        sim.step(1)
        assert sim.motor("j1").velocity == pytest.approx(0.0, abs=1e-9)
    assert sim.motor("j2").velocity == pytest.approx(3.0 * sign, abs=1e-9)
    assert sim.motor("j1").position == pytest.approx(0.0, abs=1e-9)
    # the last step began at (0, x2 - 3 dt) moving at (0, 3) and ended moving at the
    # same: the torque that held j1 was -(passive - bias) there, within the friction
    x2 = sim.motor("j2").position
    _, own = bare_step_terms(pendulum, [0.0, x2 - 3.0 * sign * DT], [0.0, 3.0 * sign])
    assert 1e-2 < abs(own[0]) < 2.0
    weak = simulation(pendulum, {"name": "j1", "max_torque": 50.0, "static_friction": 1e-3},
                      {"name": "j2", "max_torque": 50.0, "acceleration": 10.0})
    weak.motor("j1").set_available_torque(0.0)
    velocity_control(weak, {"j2": 3.0 * sign})
    weak.step(500)
    assert abs(weak.motor("j1").velocity) > 1e-3


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_hard_stop_holds_the_joint_on_it_and_pushes_only_outward(pendulum, sign):
    """j2 driven at 0.5 rad/s into its stop at 0.3 rad (either way): it ends exactly on
    the stop, its motor pushing at its bound (it cannot reach its speed) while j1 keeps
    its own speed; told back, it leaves at once, the motor pulling at its bound (the stop
    does not hold it), and reaches its speed."""
    stop = {"max_stop": 0.3} if sign > 0 else {"min_stop": -0.3}
    sim = simulation(pendulum, {"name": "j1", "max_torque": 50.0},
                     {"name": "j2", "max_torque": 5.0, **stop})
    velocity_control(sim, {"j1": 0.2, "j2": 0.5 * sign})
    for _ in range(1000):
        sim.step(1)
        assert sign * sim.motor("j2").position <= 0.3 + 1e-12
        assert sim.motor("j1").velocity == pytest.approx(0.2, abs=1e-9)
    assert sim.motor("j2").position == pytest.approx(0.3 * sign, abs=1e-12)
    assert sim.motor("j2").velocity == pytest.approx(0.0, abs=1e-9)
    assert sim.motor("j2").motor_force == pytest.approx(5.0 * sign, abs=1e-12)
    velocity_control(sim, {"j2": -0.5 * sign})
    sim.step(1)
    assert sim.motor("j2").motor_force == pytest.approx(-5.0 * sign, abs=1e-12)
    assert sign * sim.motor("j2").velocity < 0.0
    sim.step(20)
    assert sim.motor("j2").velocity == pytest.approx(-0.5 * sign, abs=1e-9)


def so101_ideal() -> Simulation:
    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll",
             "gripper"]
    return Simulation.from_config({
        "basic_time_step_ms": 1, "physics": "mujoco", "multibody": {"model": "so101.urdf"},
        "motors": [{"name": n, "control_pid": [10.0, 0.0, 0.0], "max_torque": 3.0,
                    "max_velocity": 5.0} for n in names]})


def test_a_coupled_arm_settles_on_its_pid_goals_without_chatter():
    """The SO-101 on six ideal motors (P 10, 3 N*m, 5 rad/s) told shoulder_lift -0.5,
    elbow_flex 0.8, wrist_flex 0.6: after 2 s on its goals, at rest; each joint's torque
    changes sign a handful of times, not every step."""
    sim = so101_ideal()
    goals = {"shoulder_lift": -0.5, "elbow_flex": 0.8, "wrist_flex": 0.6}
    motors = sim.motors
    for m in motors:
        m.set_position(goals.get(m.name, 0.0))
    forces = np.empty((2000, len(motors)))
    for k in range(2000):
        sim.step(1)
        forces[k] = [m.motor_force for m in motors]
    for m in motors:
        assert m.position == pytest.approx(goals.get(m.name, 0.0), abs=1e-6), m.name
        assert abs(m.velocity) < 1e-6, m.name
    changes = (np.diff(np.sign(forces), axis=0) != 0).sum(axis=0)
    assert changes.max() <= 10, dict(zip([m.name for m in motors], changes, strict=True))


def test_torque_output_servos_keep_their_compiled_path_and_ideal_motors_join_the_solve():
    """A bank of servo profiles (their law outputs a torque) steps through MuJoCo's
    compiled run as before; beside an ideal motor, only the ideal one is a row."""
    from servo_sim.multibody.body import coupled_rows
    servos = Simulation.from_config({
        "basic_time_step_ms": 1, "physics": "mujoco", "multibody": {"model": "so101.urdf"},
        "motors": [{"name": "elbow_flex", "servo": "STS3215-7.4V"},
                   {"name": "wrist_flex", "servo": "STS3215-7.4V"}]})
    assert servos.bank._body_loop is not None
    assert not servos.bank.body.coupled.any()
    mixed = Simulation.from_config({
        "basic_time_step_ms": 1, "physics": "mujoco", "multibody": {"model": "so101.urdf"},
        "motors": [{"name": "elbow_flex", "servo": "STS3215-7.4V"},
                   {"name": "wrist_flex", "max_torque": 3.0}]})
    assert coupled_rows(mixed.bank).tolist() == [False, True]
    assert mixed.bank.body.coupled.tolist() == [False, True]


def test_a_motor_reaches_its_speed_beside_a_joint_the_model_damps_and_actuates(tmp_path):
    """j1 an ideal motor; j2 no motor's: the model's own joint, damped (MuJoCo
    integrates its damping implicitly) and pulled by the model's position actuator at
    ctrl 0. j1 still turns at its speed from the first step: the solve counts both."""
    model = tmp_path / "damped.xml"
    model.write_text(PENDULUM.replace(
        '<joint name="j2" type="hinge" axis="0 1 0"/>',
        '<joint name="j2" type="hinge" axis="0 1 0" damping="0.05"/>').replace(
        "</worldbody>", '</worldbody><actuator><position joint="j2" kp="2"/></actuator>'))
    sim = simulation(model, {"name": "j1", "max_torque": 500.0})
    velocity_control(sim, {"j1": 1.5})
    for _ in range(500):
        sim.step(1)
        assert sim.motor("j1").velocity == pytest.approx(1.5, abs=1e-9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_ideal_motor_reaches_its_speed_beside_a_servo_whose_law_outputs_a_torque(
        pendulum, sign):
    """j1 an STS3215 (its firmware law gives a torque: the law's path) told to swing to
    1 rad, j2 an ideal motor at 2 rad/s: j2 turns at its speed every step, the servo's
    torque counted in the solve; the servo moves under its own law."""
    sim = simulation(pendulum, {"name": "j1", "servo": "STS3215-7.4V"},
                     {"name": "j2", "max_torque": 50.0})
    sim.motor("j1").set_position(1.0 * sign)
    velocity_control(sim, {"j2": 2.0 * sign})
    for _ in range(500):
        sim.step(1)
        assert sim.motor("j2").velocity == pytest.approx(2.0 * sign, abs=1e-9)
    assert sign * sim.motor("j1").position > 0.5
