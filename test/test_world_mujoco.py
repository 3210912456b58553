"""A Webots world as a MuJoCo body (``servo_sim.multibody.from_world``): small worlds
written here, run with ``physics: mujoco`` and checked against independent values: a
compound pendulum's closed-form period, the same two-link arm written by hand in MJCF
and stepped with bare MuJoCo, a wheeled robot's distance against wheel radius x angle
(both directions), and one warning for what is not built. Time is the simulation's:
every run is a fixed number of model steps of simulated time."""

from __future__ import annotations

import logging
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_sim.load import load, on_physics
from servo_sim.model import Simulation
from servo_sim.model.physics import rotation_matrix

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed: pip install "
                                              "'servo_sim[mujoco]'")
from servo_sim.multibody.from_world import _quaternion, world_mjcf  # noqa: E402

G = 9.81
#: Webots' default WorldInfo.CFM: every motor row's softness (ODE's dWorldStep)
CFM = 1e-5


def world_sim(path: Path) -> Simulation:
    """The world's robot on MuJoCo, as ``servo-sim run WORLD --physics mujoco``."""
    return Simulation(on_physics(load(path), "mujoco"))


def _num(x: float) -> str:
    return repr(float(x))


# --------------------------------------------------------------------- pendulum

def rod_world(path: Path, release: str, axis: str, anchor: str, at: np.ndarray,
              angle: float, bounding: str, mass: float) -> Path:
    """A rod on a hinge (``axis`` through ``anchor``, a PositionSensor "pivot"), its
    Solid at ``at`` turned ``angle`` about the axis (as Webots saves it at ``angle``)."""
    path.write_text(f"""#VRML_SIM {release} utf8
WorldInfo {{
  basicTimeStep 1
}}
Robot {{
  children [
    HingeJoint {{
      jointParameters HingeJointParameters {{
        axis {axis}
        anchor {anchor}
        position {_num(angle)}
      }}
      device [
        PositionSensor {{
          name "pivot"
        }}
      ]
      endPoint Solid {{
        translation {_num(at[0])} {_num(at[1])} {_num(at[2])}
        rotation {axis} {_num(angle)}
        boundingObject {bounding}
        physics Physics {{
          density -1
          mass {mass}
        }}
      }}
    }}
  ]
  name "pendulum"
}}
""")
    return path


def pendulum_world(tmp_path: Path, length: float, width: float, pivot_to_center: float,
                   mass: float, angle: float) -> Path:
    """A box rod on a hinge about y at (0, 0, 1), its center ``pivot_to_center`` below
    the pivot, written (as Webots saves it) at ``angle``."""
    at = np.array([0, 0, 1.0]) + pivot_to_center * np.array([-math.sin(angle), 0,
                                                             -math.cos(angle)])
    return rod_world(tmp_path / "pendulum.wbt", "R2023b", "0 1 0", "0 0 1", at, angle,
                     f"Box {{ size {width} {width} {length} }}", mass)


def legacy_pendulum_world(tmp_path: Path, length: float, radius: float,
                          pivot_to_center: float, mass: float, angle: float) -> Path:
    """The pendulum in a world before R2022a (y up; a Cylinder rod, along y there) on a
    hinge about z at (0, 1, 0), written at ``angle``."""
    at = np.array([0, 1.0, 0]) + pivot_to_center * np.array([math.sin(angle),
                                                             -math.cos(angle), 0])
    return rod_world(tmp_path / "legacy.wbt", "R2021b", "0 0 1", "0 1 0", at, angle,
                     f"Cylinder {{ height {length} radius {radius} }}", mass)


def test_a_world_before_r2022a_hangs_along_its_own_down(tmp_path):
    """y up (NUE), cylinders along y: the same closed-form period, the rod a cylinder
    about its end's pivot, I = m (3 r^2 + L^2) / 12 + m d^2."""
    length, radius, d, mass, angle = 0.5, 0.02, 0.25, 0.4, 0.05
    sim = world_sim(legacy_pendulum_world(tmp_path, length, radius, d, mass, angle))
    pivot = sim.motor("pivot")
    x = np.empty(5000)
    for k in range(x.size):
        sim.step(1)
        x[k] = pivot.position
    inertia = mass * (3 * radius ** 2 + length ** 2) / 12 + mass * d ** 2
    period = 2 * math.pi * math.sqrt(inertia / (mass * G * d)) * (1 + angle ** 2 / 16)
    periods = np.diff(crossings(x, 0.001, 1.0))
    assert len(periods) >= 3
    np.testing.assert_allclose(periods, period, rtol=2e-5)


def crossings(x: np.ndarray, dt: float, sign: float) -> np.ndarray:
    """The times ``x`` crosses 0 going down (``sign`` +1) or up (-1), interpolated."""
    s = sign * x
    k = np.flatnonzero((s[:-1] > 0) & (s[1:] <= 0))
    return (k + s[k] / (s[k] - s[k + 1]) + 1) * dt


@pytest.mark.parametrize("angle", [0.05, -0.04])
def test_a_pendulum_on_a_hinge_swings_at_the_compound_pendulums_period(tmp_path, angle):
    length, width, d, mass = 0.6, 0.02, 0.3, 0.5
    sim = world_sim(pendulum_world(tmp_path, length, width, d, mass, angle))
    pivot = sim.motor("pivot")
    assert pivot.position == angle  # the joint where the world puts it
    x = np.empty(5000)
    for k in range(x.size):
        sim.step(1)
        x[k] = pivot.position
    # by hand: a box rod about a pivot d from its center, T = 2 pi sqrt(I / (m g d)),
    # with the amplitude's first correction (1 + a^2 / 16)
    inertia = mass * (length ** 2 + width ** 2) / 12 + mass * d ** 2
    period = 2 * math.pi * math.sqrt(inertia / (mass * G * d)) * (1 + angle ** 2 / 16)
    for sign in (1.0, -1.0):
        periods = np.diff(crossings(x, 0.001, sign))
        assert len(periods) >= 3
        np.testing.assert_allclose(periods, period, rtol=2e-5)
    assert abs(x).max() == pytest.approx(abs(angle), rel=1e-4)  # no damping added


# --------------------------------------------------------------------- two-link arm

M1, M2, L1, L2, H = 1.0, 0.5, 0.3, 0.25, 0.04


def box_inertia(mass: float, x: float, y: float, z: float) -> tuple[float, float, float]:
    return (mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12,
            mass * (x * x + y * y) / 12)


def bar(name: str, length: float) -> str:
    """A link's looks: a box ``length`` long along x from its joint, DEF'd ``name``."""
    return (f"Pose {{ translation {length / 2} 0 0 children [ Shape {{ geometry DEF {name} "
            f"Box {{ size {length} {H} {H} }} }} ] }}")


def arm_world(tmp_path: Path, q1: float = 0.0, q2: float = 0.0) -> Path:
    """Two box links along x on hinges about y, passive (position sensors): the second
    link's pose written for the joint angles q1 and q2."""
    path = tmp_path / "arm.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 2
}}
Robot {{
  translation 0 0 1
  children [
    HingeJoint {{
      jointParameters HingeJointParameters {{
        axis 0 1 0
        position {_num(q1)}
      }}
      device [
        PositionSensor {{
          name "shoulder"
        }}
      ]
      endPoint Solid {{
        rotation 0 1 0 {_num(q1)}
        children [
          {bar("LINK1", L1)}
          HingeJoint {{
            jointParameters HingeJointParameters {{
              axis 0 1 0
              anchor {L1} 0 0
              position {_num(q2)}
            }}
            device [
              PositionSensor {{
                name "elbow"
              }}
            ]
            endPoint Solid {{
              translation {L1} 0 0
              rotation 0 1 0 {_num(q2)}
              children [
                {bar("LINK2", L2)}
              ]
              name "forearm"
              boundingObject Pose {{
                translation {L2 / 2} 0 0
                children [
                  USE LINK2
                ]
              }}
              physics Physics {{
                density -1
                mass {M2}
              }}
            }}
          }}
        ]
        name "upper arm"
        boundingObject Pose {{
          translation {L1 / 2} 0 0
          children [
            USE LINK1
          ]
        }}
        physics Physics {{
          density -1
          mass {M1}
        }}
      }}
    }}
  ]
  name "arm"
}}
""")
    return path


#: The same arm by hand: inertias of the boxes computed here, not by the converter.
I1, I2 = (" ".join(map(repr, box_inertia(m, length, H, H))) for m, length in ((M1, L1),
                                                                              (M2, L2)))
ARM_MJCF = f"""<mujoco>
  <option timestep="0.002" gravity="0 0 -{G}"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <inertial pos="{L1 / 2} 0 0" mass="{M1}" diaginertia="{I1}"/>
      <body name="fore" pos="{L1} 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="{L2 / 2} 0 0" mass="{M2}" diaginertia="{I2}"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def bare(xml: str, steps: int, q: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Joint angles after each ``mj_step`` of a model from MJCF text, from ``q``."""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:] = q
    out = np.empty((steps, 2))
    for k in range(steps):
        mujoco.mj_step(model, data)
        out[k] = data.qpos
    return out


def test_a_two_link_arm_world_is_the_same_arm_written_by_hand(tmp_path):
    steps = 1500  # 3 s: both links swing through large angles from horizontal
    by_hand = bare(ARM_MJCF, steps)
    assert np.ptp(by_hand[:, 0]) > 2.0 and np.ptp(by_hand[:, 1]) > 1.0
    converted = bare(world_mjcf(arm_world(tmp_path)).xml, steps)
    np.testing.assert_allclose(converted, by_hand, rtol=0, atol=1e-9)
    sim = world_sim(arm_world(tmp_path))  # servo_sim's run of the same world: its
    shoulder, elbow = sim.motor("shoulder"), sim.motor("elbow")  # passive joints
    run = np.empty((steps, 2))
    for k in range(steps):
        sim.step(1)
        run[k] = shoulder.position, elbow.position
    np.testing.assert_allclose(run, by_hand, rtol=0, atol=1e-9)


@pytest.mark.parametrize("turn", [math.pi / 2, -2.0])
def test_a_pose_around_a_joint_turns_its_axis_and_anchor(tmp_path, turn):
    """A joint's axis and anchor are in its parent's frame: the arm inside a Pose turned
    about the vertical is the same arm turned, its joints move as the hand-written one
    (the upstream position_sensor world turns its pole's hinge so)."""
    text = arm_world(tmp_path).read_text()
    head = "  children [\n    HingeJoint {"
    tail = "  ]\n  name \"arm\""
    assert head in text and tail in text
    text = text.replace(head, f"  children [\n    Pose {{\n    translation 0.1 -0.2 0.3\n"
                              f"    rotation 0 0 1 {turn!r}\n"
                              "    children [\n    HingeJoint {")
    text = text.replace(tail, "    ]\n    }\n" + tail)
    path = tmp_path / "turned.wbt"
    path.write_text(text)
    np.testing.assert_allclose(bare(world_mjcf(path).xml, 500), bare(ARM_MJCF, 500),
                               rtol=0, atol=1e-9)


@given(axis=st.tuples(*[st.floats(-1, 1)] * 3).filter(lambda a: np.linalg.norm(a) > 1e-3),
       angle=st.one_of(st.floats(-7, 7), st.sampled_from([math.pi, -math.pi, 0.0])))
@settings(max_examples=300, deadline=None)
def test_property_a_pose_is_the_rotation_mujoco_reads(axis, angle):
    """Each pose is written as a quaternion: MuJoCo's matrix of it is the VRML axis-angle's
    (half turns too, where a quaternion's w vanishes)."""
    rotation = rotation_matrix((*axis, angle))
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, _quaternion(rotation))
    np.testing.assert_allclose(matrix.reshape(3, 3), rotation, rtol=0, atol=1e-12)


@pytest.mark.parametrize("q", [(0.4, -0.7), (-0.3, 0.5)])
def test_an_arm_written_at_its_joint_positions_starts_there(tmp_path, q):
    """The world's endPoints are at ``position`` (Webots saves them so): the joints
    start there and move as the hand-written arm started there."""
    sim = world_sim(arm_world(tmp_path, *q))
    shoulder, elbow = sim.motor("shoulder"), sim.motor("elbow")
    assert (shoulder.position, elbow.position) == q
    by_hand = bare(ARM_MJCF, 400, q)
    converted = bare(world_mjcf(arm_world(tmp_path, *q)).xml, 400, q)
    np.testing.assert_allclose(converted, by_hand, rtol=0, atol=1e-9)


# --------------------------------------------------------------------- wheeled robot

RADIUS = 0.03


def rover_world(tmp_path: Path, friction: str = "", torque: float = 2.0) -> Path:
    """A box on four motored wheels (about y, radius RADIUS, ``torque`` N*m each) on a
    floor Plane."""
    wheels = []
    for k, (x, y) in enumerate([(0.07, 0.08), (0.07, -0.08), (-0.07, 0.08),
                                (-0.07, -0.08)], 1):
        wheels.append(f"""    HingeJoint {{
      jointParameters HingeJointParameters {{
        axis 0 1 0
        anchor {x} {y} 0
      }}
      device [
        RotationalMotor {{
          name "wheel{k}"
          maxVelocity 30
          maxTorque {torque}
        }}
      ]
      endPoint Solid {{
        translation {x} {y} 0
        rotation 1 0 0 1.5707963267948966
        name "wheel{k}"
        boundingObject Cylinder {{
          height 0.02
          radius {RADIUS}
        }}
        physics Physics {{
          density -1
          mass 0.05
        }}
      }}
    }}""")
    path = tmp_path / "rover.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 2
{friction}}}
Solid {{
  children [
    Shape {{
      geometry DEF FLOOR Plane {{
        size 10 10
      }}
    }}
  ]
  name "floor"
  boundingObject USE FLOOR
}}
Robot {{
  translation 0 0 {RADIUS}
  children [
{chr(10).join(wheels)}
  ]
  name "rover"
  boundingObject Box {{
    size 0.2 0.12 0.04
  }}
  physics Physics {{
    density -1
    mass 1
  }}
}}
""")
    return path


@pytest.mark.parametrize("speed", [6.0, -4.0])
def test_a_wheeled_robot_drives_its_wheels_radius_times_their_angle(tmp_path, speed):
    sim = world_sim(rover_world(tmp_path))
    wheels = [sim.motor(f"wheel{k}") for k in range(1, 5)]
    body = sim.bank.body
    chassis = body.model.body("rover").id
    sim.step(250)  # 0.5 s: settled on the floor, wheels free
    start = body.data.xpos[chassis].copy()
    angle0 = np.array([w.position for w in wheels])
    for w in wheels:
        w.set_position(math.inf)
        w.set_velocity(speed)
    sim.step(1000)  # 2 s
    moved = body.data.xpos[chassis] - start
    turned = np.array([w.position for w in wheels]) - angle0
    # each wheel at its commanded speed once up to it (Webots' ideal motor)
    assert [w.velocity for w in wheels] == pytest.approx([speed] * 4, rel=1e-6)
    expected = RADIUS * turned.mean()  # rolling: +y turn drives +x
    assert math.copysign(1, moved[0]) == math.copysign(1, speed)
    assert moved[0] == pytest.approx(expected, rel=0.03)
    assert abs(moved[1]) < 0.01 * abs(moved[0])  # straight on
    assert abs(moved[2]) < 1e-3  # on the floor


def rover_at_rest(tmp_path: Path, torque: float = 2.0) -> tuple[Simulation, list]:
    sim = world_sim(rover_world(tmp_path, torque=torque))
    sim.step(250)  # 0.5 s: settled on the floor, its wheels held where they are
    wheels = [sim.motor(f"wheel{k}") for k in range(1, 5)]
    for w in wheels:
        w.set_position(math.inf)
    return sim, wheels


@pytest.mark.parametrize("speed", [6.0, -6.0])
def test_a_wheel_on_the_floor_reaches_its_speed_in_one_step(tmp_path, speed):
    """Webots' ideal motor is solved with the contacts (ODE: one problem): a wheel on
    the floor with ample torque turns at its commanded speed after the first step (the
    robot slips at first: the floor's friction limits its push) and from then on."""
    sim, wheels = rover_at_rest(tmp_path)
    for w in wheels:
        w.set_velocity(speed)
    sim.step(1)
    forces = np.array([w.motor_force for w in wheels])
    # ODE's row with the world's CFM (Webots' default 1e-5): J v' = target - CFM * force
    assert [w.velocity for w in wheels] == pytest.approx(speed - CFM * forces, abs=1e-9)
    assert (np.sign(forces) == np.sign(speed)).all() and (np.abs(forces) < 2.0).all()
    chassis = sim.bank.body.data.qvel[:3]  # the free joint's linear velocity
    assert 0 < chassis[0] * speed < RADIUS * speed ** 2  # pushed, slipping at first:
    sim.step(250)  # the floor's friction takes the robot up to rolling
    forces = np.array([w.motor_force for w in wheels])
    assert [w.velocity for w in wheels] == pytest.approx(speed - CFM * forces, abs=1e-9)
    assert chassis[0] == pytest.approx(RADIUS * speed, rel=0.02)


@pytest.mark.parametrize("speed", [6.0, -6.0])
def test_a_wheel_short_of_torque_sits_at_its_bound(tmp_path, speed):
    sim, wheels = rover_at_rest(tmp_path, torque=0.01)
    for w in wheels:
        w.set_velocity(speed)
    sim.step(1)
    assert [w.motor_force for w in wheels] == [math.copysign(0.01, speed)] * 4
    assert all(0 < w.velocity * math.copysign(1, speed) < abs(speed) for w in wheels)


def test_a_world_without_friction_slides(tmp_path):
    """WorldInfo's default ContactProperties: coulombFriction 0, the wheels spin and
    the robot stays where it is (the friction is the world's)."""
    contact = """  contactProperties [
    ContactProperties {
      coulombFriction [
        0
      ]
    }
  ]
"""
    sim = world_sim(rover_world(tmp_path, contact))
    body = sim.bank.body
    chassis = body.model.body("rover").id
    sim.step(250)
    start = body.data.xpos[chassis].copy()
    for k in range(1, 5):
        sim.motor(f"wheel{k}").set_position(math.inf)
        sim.motor(f"wheel{k}").set_velocity(6.0)
    sim.step(1000)
    rolled = RADIUS * 6.0 * 2.0  # what the wheels would roll with friction
    assert abs(body.data.xpos[chassis][0] - start[0]) < 0.03 * rolled


# --------------------------------------------------------------------- what is not built

def test_a_bodys_damping_and_start_velocity_are_said_not_built(tmp_path):
    path = tmp_path / "damped.wbt"
    path.write_text("""#VRML_SIM R2023b utf8
WorldInfo {
  defaultDamping Damping {
  }
}
Robot {
  children [
    HingeJoint {
      device [ PositionSensor { name "p" } ]
      endPoint Solid {
        angularVelocity 0 0 1
        physics Physics {
          damping Damping {
            linear 0.3
          }
        }
      }
    }
  ]
}
""")
    assert world_mjcf(path).warnings == [
        f"{path}: WorldInfo (line 2): field 'defaultDamping': not built (MuJoCo damps "
        "joints, not bodies)",
        f"{path}: Physics (line 12): its Damping (a body's linear and angular damping): "
        "not built",
        f"{path}: Solid (line 10): field 'angularVelocity': not built (the body starts at "
        "rest)"]


def cube_stl(path: Path, side: float) -> None:
    """A binary STL cube of ``side`` centred on its origin (12 triangles)."""
    h = side / 2
    corners = [np.array([x, y, z]) for x in (-h, h) for y in (-h, h) for z in (-h, h)]
    triangles = []
    for axis in range(3):
        for sign in (-1, 1):
            face = [c for c in corners if c[axis] == sign * h]
            face = sorted(face, key=lambda c: math.atan2(*(np.delete(c, axis)[::-1])))
            triangles += [(face[0], face[1], face[2]), (face[0], face[2], face[3])]
    data = bytearray(80) + struct.pack("<I", len(triangles))
    for tri in triangles:
        data += struct.pack("<12fH", 0, 0, 0, *np.concatenate(tri), 0)
    path.write_bytes(bytes(data))


def test_a_mesh_bounding_object_collides_as_its_hull(tmp_path):
    """A 10 cm cube given as an STL Mesh, dropped on the floor: it rests on its face,
    its centre 5 cm up (MuJoCo's soft contact sinks it a little)."""
    cube_stl(tmp_path / "cube.stl", 0.1)
    path = tmp_path / "drop.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 2
}}
Solid {{
  name "floor"
  boundingObject Plane {{
    size 2 2
  }}
}}
Robot {{
  translation 0 0 0.3
  children [
    {_hinged_sensor()}
  ]
  boundingObject Mesh {{
    url "cube.stl"
  }}
  physics Physics {{
    density -1
    mass 0.5
  }}
}}
""")
    built = world_mjcf(path)
    assert built.warnings == [
        f"{path}: Robot (line 11): its inertia not computed (a point mass): that of 0.5 "
        "kg at 1 cm from its center each way",
        f"{path}: Mesh (line 16): a Mesh: its convex hull collides (MuJoCo's)"]
    model = mujoco.MjModel.from_xml_string(built.xml)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 1000)  # 2 s
    assert data.qpos[2] == pytest.approx(0.05, abs=2e-3)
    assert abs(data.qvel[:6]).max() < 1e-3


def test_an_arena_not_found_is_a_floor_at_its_translation(tmp_path, caplog):
    """RectangleArena's PROTO not found (here: a file that is not there): its floor a
    plane where the arena is, said once; a box dropped on it rests on it."""
    path = tmp_path / "arena.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8

EXTERNPROTO "protos/RectangleArena.proto"

WorldInfo {{
  basicTimeStep 2
}}
RectangleArena {{
  translation 0 0 -0.2
}}
Robot {{
  translation 0 0 0.3
  children [
    {_hinged_sensor()}
  ]
  boundingObject Box {{
    size 0.1 0.1 0.1
  }}
  physics Physics {{
    density -1
    mass 0.5
  }}
}}
""")
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        sim = world_sim(path)
        sim.step(1000)  # 2 s
    floor = [r.getMessage() for r in caplog.records if "RectangleArena (line 8): its" in
             r.getMessage()]
    assert floor == [f"{path}: RectangleArena (line 8): its PROTO not found: its floor "
                     "built as a plane at its translation (no walls)"]
    assert sim.bank.body.data.qpos[2] == pytest.approx(-0.2 + 0.05, abs=2e-3)


def _hinged_sensor() -> str:
    """A joint with a sensor (a world needs a device for its config), carrying a 1 g
    bob."""
    return ('HingeJoint { device [ PositionSensor { name "p" } ] endPoint Solid { '
            'translation 0 0 0.2 physics Physics { density -1 mass 0.001 '
            'inertiaMatrix [ 1e-7 1e-7 1e-7 0 0 0 ] } } }')


def test_what_cannot_be_built_is_one_warning_naming_node_and_line(tmp_path, caplog):
    path = pendulum_world(tmp_path, 0.6, 0.02, 0.3, 0.5, 0.0)
    text = path.read_text() + """Solid {
  name "terrain"
  boundingObject ElevationGrid {
    xDimension 2
    yDimension 2
    height [ 0 0 0 0 ]
  }
}
"""
    path.write_text(text)
    line = text.splitlines().index("  boundingObject ElevationGrid {") + 1
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        sim = world_sim(path)
        sim.step(10)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"{path}: ElevationGrid (line {line}): a ElevationGrid as bounding "
                        "object: MuJoCo has no such primitive, not built (give a Box, "
                        "Sphere, Cylinder, Capsule, Plane or an STL/OBJ Mesh)"]


def test_motors_on_a_ball_joint_are_refused_in_one_error_naming_them_and_the_line(tmp_path):
    """A free ball joint would drop the motors' commands: the world is refused on MuJoCo
    in one line naming the node, its line and each motor (devices in their fields'
    order), and runs on the per-joint body as before."""
    path = tmp_path / "ball.wbt"
    text = """#VRML_SIM R2023b utf8
Robot {
  children [
    BallJoint {
      jointParameters BallJointParameters {
      }
      device [
        RotationalMotor {
          name "yaw"
        }
      ]
      device2 [
        RotationalMotor {
          name "pitch"
        }
      ]
      endPoint Solid {
        translation 0 0 0.2
        physics Physics {
          density -1
          mass 0.1
        }
      }
    }
  ]
}
"""
    path.write_text(text)
    line = text.splitlines().index("    BallJoint {") + 1
    r = servo_sim_cli("run", path, "--physics", "mujoco", "--duration", 0.01, "--quiet")
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (
        f"servo-sim: error: {path}: BallJoint (line {line}): its motors 'yaw', 'pitch' "
        "cannot be built on MuJoCo (a ball joint has no axis to drive): run this world on "
        "the per-joint body (without physics mujoco)")
    r = servo_sim_cli("run", path, "--duration", 0.01, "--quiet")
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------- slider, Hinge2Joint

def slider_world(tmp_path: Path, device: str, x0: float, k: float, c: float,
                 mass: float) -> Path:
    """A box on a vertical SliderJoint with a spring ``k`` and damper ``c``, written at
    ``x0``; ``device``: the joint's device list (a sensor makes it the config's passive
    motor, whose spring and damper are servo_sim's; none: MuJoCo's joint's own)."""
    path = tmp_path / "slider.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 1
}}
Robot {{
  translation 0 0 1
  children [
    SliderJoint {{
      jointParameters JointParameters {{
        position {x0}
        springConstant {k}
        dampingConstant {c}
      }}
      device [ {device} ]
      endPoint Solid {{
        translation 0 0 {x0}
        boundingObject Box {{
          size 0.05 0.05 0.05
        }}
        physics Physics {{
          density -1
          mass {mass}
        }}
      }}
    }}
    HingeJoint {{
      device [ PositionSensor {{ name "elsewhere" }} ]
      endPoint Solid {{
        translation 2 0 0
        name "elsewhere"
        physics Physics {{ }}
      }}
    }}
  ]
}}
""")
    return path


@pytest.mark.parametrize("device", ['PositionSensor { name "slide" }', ""])
@pytest.mark.parametrize("c", [0.0, 0.4])
def test_a_slider_on_a_spring_oscillates_as_the_closed_form(tmp_path, device, c):
    """x'' = -(k x + c x')/m - g from x0 at rest: x_eq + e^(-zeta w t)(A cos wd t +
    B sin wd t), the spring resting at 0 (Webots'); the joint's spring and damper are the
    servo's where a device names the joint, MuJoCo's where none does."""
    k, mass, x0 = 50.0, 0.5, 0.05
    path = slider_world(tmp_path, device, x0, k, c, mass)
    xml = world_mjcf(path).xml
    assert ('stiffness="50.0"' in xml) == (device == "")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    steps, dt = 1500, 0.001
    if device:  # the servo's spring and damper, implicit (SPEC): as the per-joint body
        runs = [world_sim(path), Simulation(load(path).config)]
        both = np.empty((2, steps))
        for i in range(steps):
            for r, sim in enumerate(runs):
                sim.step(1)
                both[r, i] = sim.motor("slide").position
        np.testing.assert_allclose(both[0], both[1], rtol=0, atol=1e-12)
        x = both[0]
        # the scalar recurrence of SPEC's step: m (v' - v)/dt = -k (x + dt v') - c v' - m g
        ref, xs, vs = np.empty(steps), x0, 0.0
        for i in range(steps):
            vs = (mass * vs / dt - k * xs - mass * G) / (mass / dt + k * dt + c)
            xs += dt * vs
            ref[i] = xs
        np.testing.assert_allclose(x, ref, rtol=0, atol=1e-9)
    else:
        x = np.empty(steps)
        for i in range(steps):
            mujoco.mj_step(model, data)
            x[i] = data.qpos[0]
    t = dt * np.arange(1, steps + 1)
    w = math.sqrt(k / mass)
    zeta = c / (2 * math.sqrt(k * mass))
    wd = w * math.sqrt(1 - zeta ** 2)
    eq = -mass * G / k
    a = x0 - eq
    exact = eq + np.exp(-zeta * w * t) * (a * np.cos(wd * t) + a * zeta * w / wd
                                          * np.sin(wd * t))
    # 1 ms steps: O(w dt); the implicit spring loses w^2 dt^2 / 2 of the amplitude a
    # step (7.5 % in 1.5 s)
    np.testing.assert_allclose(x, exact, rtol=0, atol=(0.08 if device else 0.01) * a)


def axis_angle(r: np.ndarray) -> str:
    """A rotation matrix (less than a half turn) as VRML's ``x y z angle``."""
    angle = math.acos((np.trace(r) - 1) / 2)
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return " ".join(repr(float(v)) for v in (*axis / np.linalg.norm(axis), angle))


def test_a_hinge2_joint_is_two_hinges_the_second_turning_with_the_first(tmp_path):
    """A Hinge2Joint (axis x and axis2 z, Webots' defaults) written at positions 0.3 and
    0.2 (the endPoint turned by both about the anchor, the second axis turned by the
    first) against the same body at its joints' zero written by hand with two hinges:
    equal under bare mj_step from those positions."""
    q = (0.3, 0.2)
    turn = rotation_matrix((1, 0, 0, q[0])) @ rotation_matrix((0, 0, 1, q[1]))
    at = turn @ np.array([0.0, -0.5, 0.0])
    path = tmp_path / "hinge2.wbt"
    path.write_text(f"""#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 2
}}
Robot {{
  translation 0 0 1
  children [
    Hinge2Joint {{
      jointParameters HingeJointParameters {{
        position {q[0]}
      }}
      jointParameters2 JointParameters {{
        position {q[1]}
      }}
      device [ PositionSensor {{ name "tilt" }} ]
      device2 [ PositionSensor {{ name "pan" }} ]
      endPoint Solid {{
        translation {" ".join(repr(float(v)) for v in at)}
        rotation {axis_angle(turn)}
        boundingObject Box {{ size 0.01 0.01 0.01 }}
        physics Physics {{
          density -1
          mass 1
          centerOfMass [ 0.1 0.05 -0.2 ]
          inertiaMatrix [ 0.02 0.03 0.04 0 0 0 ]
        }}
      }}
    }}
  ]
}}
""")
    hand = f"""<mujoco>
  <option timestep="0.002" gravity="0 0 -{G}"/>
  <worldbody>
    <body pos="0 0 1">
      <body pos="0 -0.5 0">
        <joint type="hinge" pos="0 0.5 0" axis="1 0 0"/>
        <joint type="hinge" pos="0 0.5 0" axis="0 0 1"/>
        <inertial pos="0.1 0.05 -0.2" mass="1" diaginertia="0.02 0.03 0.04"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""
    converted = bare(world_mjcf(path).xml, 500, q)
    assert np.ptp(converted[:, 0]) > 0.5 and np.ptp(converted[:, 1]) > 0.01
    np.testing.assert_allclose(converted, bare(hand, 500, q), rtol=0, atol=1e-9)


# --------------------------------------------------------------------- the verbs

def servo_sim_cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "servo_sim.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def in_process(path: Path, physics: str | None, seconds: float) -> float:
    """The arm's elbow angle ``seconds`` on, in this process (``physics`` None: the
    world's per-joint body)."""
    loaded = load(path)
    sim = Simulation(on_physics(loaded, physics) if physics else loaded.config)
    sim.step(round(seconds * 1000 / sim.basic_time_step_ms))
    return sim.motor("elbow").position


CONTROLLER = """from controller import Robot

robot = Robot()
sensor = robot.getDevice("elbow")
sensor.enable(1)
while robot.step(1) != -1:
    pass
print(repr(sensor.getValue()))
"""


def test_the_verbs_take_a_worlds_own_robot_on_mujoco(tmp_path):
    """``servo-sim run WORLD --physics mujoco`` and ``servo-sim controller SCRIPT WORLD
    --physics mujoco`` step the MuJoCo body built from the world: the two-link arm where
    this process's MuJoCo run has it, not where its per-joint run (no coupling) does."""
    path = arm_world(tmp_path, 0.4, -0.7)
    on_mujoco, per_joint = in_process(path, "mujoco", 0.7), in_process(path, None, 0.7)
    assert abs(on_mujoco - per_joint) > 0.05
    r = servo_sim_cli("run", path, "--physics", "mujoco", "--duration", 0.7, "--quiet",
                      "--csv", tmp_path / "run.csv")
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "run.csv").read_text().splitlines()
    column = rows[0].split(",").index("elbow.position")
    assert float(rows[-1].split(",")[column]) == pytest.approx(on_mujoco, abs=1e-12)
    script = tmp_path / "swing.py"
    script.write_text(CONTROLLER)
    r = servo_sim_cli("controller", script, path, "--physics", "mujoco", "--duration", 0.7)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.split()[-1]) == pytest.approx(on_mujoco, abs=1e-12)


def test_a_robot_proto_from_the_webots_home_given_is_the_mujoco_model(tmp_path):
    """A world whose robot is a library PROTO read from ``--webots-home`` (no
    WEBOTS_HOME in the environment) builds the same MuJoCo model as the robot written
    in the world: the installation given reaches the converter, not only the loader."""
    inline = arm_world(tmp_path, 0.4, -0.7)
    text = inline.read_text()
    robot = text[text.index("Robot {"):]
    proto = tmp_path / "webots" / "projects" / "robots" / "acme" / "protos" / "Arm.proto"
    proto.parent.mkdir(parents=True)
    proto.write_text(f"#VRML_SIM R2023b utf8\nPROTO Arm [\n]\n{{\n{robot}}}\n")
    world = tmp_path / "library.wbt"
    world.write_text('#VRML_SIM R2023b utf8\nEXTERNPROTO "webots://projects/robots/acme/'
                     'protos/Arm.proto"\nWorldInfo {\n  basicTimeStep 2\n}\nArm {\n}\n')
    home = tmp_path / "webots"
    expected = in_process(inline, "mujoco", 0.7)
    sim = Simulation(on_physics(load(world, webots_home=home), "mujoco"))
    sim.step(350)
    assert sim.motor("elbow").position == pytest.approx(expected, abs=1e-12)
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "run", str(world),
                        "--webots-home", str(home), "--physics", "mujoco", "--duration",
                        "0.7", "--quiet", "--csv", str(tmp_path / "run.csv")],
                       capture_output=True, text=True, cwd=REPO, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "run.csv").read_text().splitlines()
    column = rows[0].split(",").index("elbow.position")
    assert float(rows[-1].split(",")[column]) == pytest.approx(expected, abs=1e-12)
