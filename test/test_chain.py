"""A URDF's joint loads at a pose (servo_sim.model.chain) against the closed forms of
point masses on one and two horizontal-axis links, and the model holding them."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from servo_sim.model import ConfigError, Simulation, parse_config
from servo_sim.model.chain import KinematicTree, rpy_matrix
from servo_sim.model.config import STANDARD_GRAVITY as G
from servo_sim.resources import share_candidates

M1, R1, L1, M2, R2 = 0.4, 0.05, 0.12, 0.25, 0.07


def point(link: str, mass: float, x: float) -> str:
    return (f'<link name="{link}"><inertial><origin xyz="{x} 0 0"/><mass value="{mass}"/>'
            '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>')


def joint(name: str, parent: str, child: str, x: float = 0.0, kind: str = "revolute") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{x} 0 0"/><axis xyz="0 1 0"/></joint>')


#: two links in a vertical plane: joints about y (horizontal), gravity along -z; at 0
#: both links point along +x (horizontal)
TWO_LINKS = ('<robot name="r"><link name="base"/>' + point("l1", M1, R1) + point("l2", M2, R2)
             + joint("j1", "base", "l1") + joint("j2", "l1", "l2", L1) + "</robot>")


def gravity_torque(fields: dict, x: float) -> float:
    """The weight's torque the model applies at ``x`` (config.LoadConfig's formula)."""
    load = fields["load"]
    return -load["gravity_mass"] * G * load["gravity_distance"] * math.cos(
        x - load["gravity_angle"])


angles = st.floats(-math.pi, math.pi)


@given(q1=angles, q2=angles)
def test_two_links_gravity_and_inertia_as_the_closed_forms(q1, q2):
    """Rotating about +y takes +x towards -z: the weight turns each joint towards +q,
    tau2 = m2 g r2 cos(q1+q2), tau1 = m1 g r1 cos q1 + m2 g (l1 cos q1 + r2 cos(q1+q2));
    inertia: I2 = m2 r2^2, I1 = m1 r1^2 + m2 (l1^2 + r2^2 + 2 l1 r2 cos q2)."""
    loads = KinematicTree(TWO_LINKS).loads({"j1": q1, "j2": q2})
    tau2 = M2 * G * R2 * math.cos(q1 + q2)
    tau1 = M1 * G * R1 * math.cos(q1) + M2 * G * (L1 * math.cos(q1) + R2 * math.cos(q1 + q2))
    assert gravity_torque(loads["j2"], q2) == pytest.approx(tau2, abs=1e-12)
    assert gravity_torque(loads["j1"], q1) == pytest.approx(tau1, abs=1e-12)
    assert loads["j2"]["inertia"] == pytest.approx(M2 * R2 ** 2)
    assert loads["j1"]["inertia"] == pytest.approx(
        M1 * R1 ** 2 + M2 * (L1 ** 2 + R2 ** 2 + 2 * L1 * R2 * math.cos(q2)))


@given(q1=angles, q2=angles, dx=st.floats(-0.5, 0.5))
def test_the_loads_are_exact_for_the_joints_own_motion(q1, q2, dx):
    """Computed at one pose, a joint's load stays right as that joint alone moves."""
    at = KinematicTree(TWO_LINKS).loads({"j1": q1, "j2": q2})
    moved = KinematicTree(TWO_LINKS).loads({"j1": q1 + dx, "j2": q2})
    assert gravity_torque(at["j1"], q1 + dx) == pytest.approx(
        gravity_torque(moved["j1"], q1 + dx), abs=1e-12)


def test_a_vertical_axis_carries_no_gravity_and_a_massless_tail_nothing():
    urdf = ('<robot name="r"><link name="base"/>' + point("a", 1.0, 0.1) + '<link name="tip"/>'
            '<joint name="pan" type="continuous"><parent link="base"/><child link="a"/>'
            '<axis xyz="0 0 1"/></joint>' + joint("tip_joint", "a", "tip", 0.2) + "</robot>")
    loads = KinematicTree(urdf).loads()
    assert loads["pan"]["load"]["gravity_distance"] == 0.0
    assert loads["pan"]["inertia"] == pytest.approx(1.0 * 0.1 ** 2)
    assert loads["tip_joint"] == {"inertia": 0.0, "load": {"gravity_mass": 0.0}}


def test_rpy_is_urdfs_fixed_axis_roll_pitch_yaw():
    """yaw pi/2 takes x to y; roll pi/2 takes y to z; rpy(r, p, y) = Rz Ry Rx."""
    assert rpy_matrix(0, 0, math.pi / 2) @ [1, 0, 0] == pytest.approx([0, 1, 0])
    assert rpy_matrix(math.pi / 2, 0, 0) @ [0, 1, 0] == pytest.approx([0, 0, 1])
    assert rpy_matrix(math.pi / 2, 0, math.pi / 2) @ [0, 1, 0] == pytest.approx([0, 0, 1])
    assert rpy_matrix(math.pi / 2, 0, math.pi / 2) @ [0, 0, 1] == pytest.approx([1, 0, 0])


def test_the_model_holds_the_two_links_with_the_closed_form_torque():
    """Each joint's motor, holding its position with the loads of that pose, pushes back
    the weight's torque: motor force = -tau (the closed forms above)."""
    q = {"j1": 0.3, "j2": -0.8}
    loads = KinematicTree(TWO_LINKS).loads(q)
    sim = Simulation(parse_config({"basic_time_step_ms": 1, "motors": [
        {"name": n, "max_torque": 20.0, "position": q[n], "control_pid": [50.0, 0.0, 0.0],
         **loads[n]} for n in ("j1", "j2")]}))
    for n in q:
        sim.motor(n).set_position(q[n])
    sim.step(3000)
    tau2 = M2 * G * R2 * math.cos(-0.5)
    tau1 = M1 * G * R1 * math.cos(0.3) + M2 * G * (L1 * math.cos(0.3) + R2 * math.cos(-0.5))
    assert np.array([sim.motor("j1").motor_force, sim.motor("j2").motor_force]) == \
        pytest.approx([-tau1, -tau2], rel=1e-3)


def test_the_so101_urdf_carries_its_links_mass():
    """config/so101.urdf: the shoulder pan carries every link after the base (0.100 +
    0.103 + 0.104 + 0.079 + 0.087 + 0.012 kg + the 1e-9 kg gripper frame), the gripper its
    jaw (0.012 kg)."""
    path = next(p for p in share_candidates("config", "so101.urdf") if p.is_file())
    loads = KinematicTree(path.read_text()).loads()
    assert loads["shoulder_pan"]["load"]["gravity_mass"] == pytest.approx(0.485006, abs=1e-6)
    assert loads["gripper"]["load"]["gravity_mass"] == pytest.approx(0.012)
    assert list(loads) == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex",
                           "wrist_roll", "gripper"]


@pytest.mark.parametrize("urdf, message", [
    ("<robot name='r'><link name='a'/><link name='b'/></robot>",
     "expected one root link, found ['a', 'b']"),
    ("<robot name='r'><link name='a'/>" + joint("j", "a", "b") + "</robot>",
     "joint 'j': no link 'b'"),
    ("<robot name='r'><link name='a'><inertial><mass value='-1'/></inertial></link></robot>",
     "link 'a' <inertial>: <mass value> must be a number >= 0"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/><axis xyz='0 0 0'/></joint></robot>",
     "joint 'j' <axis>: xyz='0 0 0' is not a non-zero vector"),
])
def test_a_bad_urdf_says_where(urdf, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        KinematicTree(urdf, "arm.urdf")
