"""Loads from Physics (issue 20, item 5): a joint's inertia about its axis and its gravity
load from the Physics of what it moves, each figure computed here by hand (box,
cylinder, sphere and capsule formulas, the parallel-axis rule, the torque of a weight
about an axis), then the motion checked against closed-form physics."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from servo_sim.load.world import load_world
from servo_sim.model import ConfigError, Simulation
from servo_sim.model.physics import primitive, rotation_matrix

G = 9.81


def world(tmp_path: Path, joints: str, info: str = "", robot: str = "") -> Path:
    path = tmp_path / "w.wbt"
    path.write_text(f"""\
#VRML_SIM R2023b utf8
WorldInfo {{
  basicTimeStep 1
  {info}
}}
Robot {{
  {robot}
  children [
{joints}
  ]
}}
""")
    return path


def hinge(name: str, end_point: str, parameters: str = "", sensor_only: bool = False) -> str:
    device = f'PositionSensor {{ name "{name}" }}' if sensor_only else \
        f'RotationalMotor {{ name "{name}" maxTorque 0.5 }}'
    return f"""\
    HingeJoint {{
      jointParameters HingeJointParameters {{ {parameters} }}
      device [ {device} ]
      endPoint {end_point}
    }}
"""


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line of ``path`` containing ``needle``."""
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def motor(path: Path, name: str):
    return next(m for m in load_world(path).config.motors if m.name == name)


BOX = """Solid {
        translation 0 0 -0.3
        boundingObject Box { size 0.04 0.06 0.2 }
        physics Physics { }
      }"""


def test_a_box_hanging_below_a_horizontal_axis(tmp_path):
    """Density 1000 (Webots' default) x 0.04 x 0.06 x 0.2 m = 0.48 kg, 0.3 m below a
    hinge along y: I = m (a^2 + c^2) / 12 + m d^2, and it hangs at 0 (gravity_angle
    pi/2: the lever is horizontal at +-pi/2)."""
    m = motor(world(tmp_path, hinge("pendulum", BOX, "axis 0 1 0")), "pendulum")
    mass = 1000 * 0.04 * 0.06 * 0.2
    assert mass == pytest.approx(0.48)
    assert m.inertia == pytest.approx(0.48 * (0.04 ** 2 + 0.2 ** 2) / 12 + 0.48 * 0.3 ** 2)
    assert m.inertia == pytest.approx(0.044864)
    assert (m.load.gravity_mass, m.load.gravity_distance, m.load.gravity, m.load.gravity_angle) \
        == pytest.approx((0.48, 0.3, G, math.pi / 2))


def test_the_box_swings_with_the_period_of_a_physical_pendulum(tmp_path):
    """A passive joint (sensor, no motor) started at 0.05 rad, where the file places the
    box (as Webots saves a world): it still hangs at 0, and swings with the period
    2 pi sqrt(I / (m g d)) = 1.1197 s of small oscillations, to 0.5 %."""
    # turning (0, 0, -0.3) by +0.05 about y: (-0.3 sin 0.05, 0, -0.3 cos 0.05)
    placed = f"translation {-0.3 * math.sin(0.05)!r} 0 {-0.3 * math.cos(0.05)!r}"
    path = world(tmp_path, hinge("s", BOX, "axis 0 1 0 position 0.05", sensor_only=True)
                 .replace("translation 0 0 -0.3", placed))
    assert motor(path, "s").load.gravity_angle == pytest.approx(math.pi / 2)
    sim = Simulation(load_world(path).config)
    joint = sim.motor("s")
    crossings, previous = [], joint.position
    for k in range(1, 4000):
        sim.step()
        if previous > 0 >= joint.position:
            crossings.append(k * 0.001)
        previous = joint.position
    period = 2 * math.pi * math.sqrt(0.044864 / (0.48 * G * 0.3))
    assert period == pytest.approx(1.1197, abs=1e-4)
    assert crossings[2] - crossings[1] == pytest.approx(period, rel=5e-3)


def test_a_wheel_its_cylinder_turned_onto_the_axis_spins_up_by_its_inertia(tmp_path):
    """A 2 kg wheel, radius 0.15 m: I = m r^2 / 2 = 0.0225 about its own axis, turned
    from z onto the hinge's y; its center on the axis: no gravity torque. Full torque
    (0.5 N*m) from rest: v = 0.5 / 0.0225 t until max velocity."""
    wheel = """Solid {
        rotation 1 0 0 1.5707963267948966
        boundingObject Cylinder { radius 0.15 height 0.05 }
        physics Physics { density -1 mass 2 }
      }"""
    path = world(tmp_path, hinge("wheel", wheel, "axis 0 1 0"))
    m = motor(path, "wheel")
    assert m.inertia == pytest.approx(2 * 0.15 ** 2 / 2)
    assert m.load.gravity_distance == pytest.approx(0.0, abs=1e-12)
    sim = Simulation(load_world(path).config)
    w = sim.motor("wheel")
    w.set_position(math.inf)
    w.set_velocity(10.0)
    sim.step(100)
    assert w.velocity == pytest.approx(0.5 / 0.0225 * 0.1, rel=1e-9)


def test_a_cylinder_across_the_axis(tmp_path):
    """The same cylinder unturned (along z) on a hinge along x: I = m (3 r^2 + h^2) / 12."""
    rod = """Solid {
        boundingObject Cylinder { radius 0.15 height 0.05 }
        physics Physics { density -1 mass 2 }
      }"""
    m = motor(world(tmp_path, hinge("rod", rod)), "rod")  # HingeJoint's default axis x
    assert m.inertia == pytest.approx(2 * (3 * 0.15 ** 2 + 0.05 ** 2) / 12)


OFFSET = """Solid {
        physics Physics {
          density -1
          mass 1
          centerOfMass [ 0.1 0 0 ]
          inertiaMatrix [ 0.001 0.002 0.003, 0 0 0 ]
        }
      }"""


def test_an_offset_mass_with_its_inertia_matrix(tmp_path):
    """1 kg at 0.1 m along x, I = diag(0.001, 0.002, 0.003) about it. About z (vertical):
    0.003 + 1 x 0.1^2, and no gravity torque; about y: 0.002 + 0.01, and the weight
    pulls with m g 0.1 at 0 (the lever horizontal, towards +x: gravity_angle pi, the
    torque -m g d cos(x - pi) = +0.981 N*m at 0)."""
    vertical = motor(world(tmp_path, hinge("yaw", OFFSET, "axis 0 0 1")), "yaw")
    assert vertical.inertia == pytest.approx(0.013)
    assert vertical.load.gravity_distance == 0.0
    pitch = motor(world(tmp_path, hinge("pitch", OFFSET, "axis 0 1 0")), "pitch")
    assert pitch.inertia == pytest.approx(0.012)
    assert (pitch.load.gravity_mass, pitch.load.gravity_distance, abs(pitch.load.gravity_angle)) \
        == pytest.approx((1.0, 0.1, math.pi))
    # r x F about y for r = (0.1, 0, 0), F = (0, 0, -m g): -(0.1)(-9.81) = +0.981
    sim = Simulation(load_world(tmp_path / "w.wbt").config)
    sim.motor("pitch").set_available_force(0.0)
    sim.step()
    assert sim.motor("pitch").velocity == pytest.approx(0.981 / 0.012 * 0.001)


def test_an_anchor_off_the_origin_and_a_tilted_axis(tmp_path):
    """The offset mass about an axis through (0.1, 0, 0.2) along y: its center is 0.2 m
    below the anchor (I = 0.002 + 0.04, hanging: gravity_angle pi/2). The axis tilted
    60 degrees from vertical (in the x-z plane, through the center): the lever across it
    is 0.1 sin(60 deg) ... checked as m g |r_perp| sin(tilt)."""
    m = motor(world(tmp_path, hinge("a", OFFSET, "axis 0 1 0 anchor 0.1 0 0.2")), "a")
    assert m.inertia == pytest.approx(0.002 + 0.04)
    assert (m.load.gravity_distance, m.load.gravity_angle) == pytest.approx((0.2,
                                                                             math.pi / 2))
    # axis (sin 60, 0, cos 60) through the origin; the center (0.1, 0, 0)
    s, c = math.sin(math.pi / 3), math.cos(math.pi / 3)
    tilted = motor(world(tmp_path, hinge("t", OFFSET, f"axis {s} 0 {c}")), "t")
    along = 0.1 * s  # the center's part along the axis
    lever = math.sqrt(0.1 ** 2 - along ** 2)  # 0.1 cos 60 = 0.05
    assert lever == pytest.approx(0.05)
    inertia_along = 0.001 * s * s + 0.003 * c * c  # a^T I a for a diagonal I
    assert tilted.inertia == pytest.approx(inertia_along + 1.0 * lever ** 2)
    assert tilted.load.gravity_distance == pytest.approx(lever * s)
    # the lever across the axis, 0.1 c (c, 0, -s), and the downward direction across
    # it, s (c, 0, -s), point the same way: the mass hangs at 0 (gravity_angle pi/2)
    assert tilted.load.gravity_angle == pytest.approx(math.pi / 2)


def test_what_the_joint_carries_further_joints_included(tmp_path):
    """An upper arm (a 1 kg sphere, r 0.05, 0.2 m up) carrying a forearm joint whose
    endPoint is a 0.5 kg capsule 0.4 m further up (r 0.02, h 0.1, along z): both
    count, the forearm where the file puts it. About the shoulder (y): each body's own
    inertia about y plus m d^2; the 1.5 kg at (0.2 + 0.5 x 0.6) / 1.5 m straight up:
    an inverted pendulum (gravity_angle -pi/2)."""
    arm = """Solid {
        translation 0 0 0.2
        boundingObject Sphere { radius 0.05 }
        physics Physics { density -1 mass 1 }
        children [
          HingeJoint {
            jointParameters HingeJointParameters { axis 0 1 0 anchor 0 0 0.2 }
            device [ RotationalMotor { name "elbow" } ]
            endPoint Solid {
              translation 0 0 0.4
              boundingObject Capsule { radius 0.02 height 0.1 }
              physics Physics { density -1 mass 0.5 }
            }
          }
        ]
      }"""
    m = motor(world(tmp_path, hinge("shoulder", arm, "axis 0 1 0")), "shoulder")
    sphere = 0.4 * 1 * 0.05 ** 2 + 1 * 0.2 ** 2
    r, h = 0.02, 0.1  # a capsule across its axis: ODE's dMassSetCapsule, by hand
    v_cyl, v_sph = math.pi * r * r * h, 4 / 3 * math.pi * r ** 3
    m_cyl, m_sph = 0.5 * v_cyl / (v_cyl + v_sph), 0.5 * v_sph / (v_cyl + v_sph)
    across = m_cyl * (r * r / 4 + h * h / 12) + m_sph * (0.4 * r * r + 0.375 * r * h
                                                          + 0.25 * h * h)
    capsule = across + 0.5 * 0.6 ** 2
    assert m.inertia == pytest.approx(sphere + capsule)
    assert (m.load.gravity_mass, m.load.gravity_distance, m.load.gravity_angle) == \
        pytest.approx((1.5, (0.2 + 0.5 * 0.6) / 1.5, -math.pi / 2))


def test_the_capsule_formula_is_the_cylinder_and_two_half_spheres():
    """ODE's capsule, against its parts done separately: a cylinder (r, h) and a whole
    sphere split into halves whose centers are 3r/8 from their flat faces."""
    r, h, density = 0.02, 0.1, 1000.0
    cap = primitive("Capsule", (r, h), rotation_matrix((0, 0, 1, 0)), (0, 0, 0))
    m_cyl, m_half = density * math.pi * r * r * h, density * 2 / 3 * math.pi * r ** 3
    half_own = (2 / 5 - (3 / 8) ** 2) * m_half * r * r  # about its own center, across
    across = m_cyl * (3 * r * r + h * h) / 12 + 2 * (half_own + m_half * (h / 2 + 3 * r / 8) ** 2)
    along = m_cyl * r * r / 2 + 2 * m_half * 2 / 5 * r * r
    total = m_cyl + 2 * m_half
    assert cap.volume * density == pytest.approx(total)
    assert cap.unit_inertia[0, 0] * total == pytest.approx(across)
    assert cap.unit_inertia[2, 2] * total == pytest.approx(along)


def test_a_slider_carries_its_mass_and_feels_the_weight_along_its_axis(tmp_path):
    """3 kg on a vertical slider: inertia 3 (kg), the weight along it; on a slider 45
    degrees from vertical, g cos 45 along it; the Moon's gravity from WorldInfo."""
    def slider(axis: str) -> str:
        return f"""\
    SliderJoint {{
      jointParameters JointParameters {{ axis {axis} }}
      device [ LinearMotor {{ name "lift" maxForce 0 }} ]
      endPoint Solid {{
        boundingObject Box {{ size 0.1 0.1 0.1 }}
        physics Physics {{ density -1 mass 3 }}
      }}
    }}
"""
    m = motor(world(tmp_path, slider("0 0 1")), "lift")
    assert (m.inertia, m.load.gravity_mass, m.load.gravity_angle) == (3.0, 3.0, 0.0)
    tilted = motor(world(tmp_path, slider("1 0 1"), info="gravity 1.62"), "lift")
    assert (tilted.load.gravity, tilted.load.gravity_angle) == pytest.approx((1.62,
                                                                              math.pi / 4))
    sim = Simulation(load_world(tmp_path / "w.wbt").config)
    sim.step(10)
    assert sim.motor("lift").velocity == pytest.approx(-1.62 * math.cos(math.pi / 4) * 0.01)


def test_the_frames_above_the_joint_and_the_worlds_up(tmp_path):
    """The robot turned 90 degrees about x: its y is the world's z, so a hinge along its
    y is vertical and the weight has no torque about it. In an NUE world (up = y) the
    unturned robot's y hinge is vertical too, and its z hinge is not: the lever
    (0.1 cos x, 0.1 sin x, 0) under (0, -m g, 0) gives -0.1 m g cos x (gravity_angle 0)."""
    turned = world(tmp_path, hinge("h", OFFSET, "axis 0 1 0"),
                   robot="rotation 1 0 0 1.5707963267948966")
    assert motor(turned, "h").load.gravity_distance == pytest.approx(0.0, abs=1e-12)
    nue = world(tmp_path, hinge("h", OFFSET, "axis 0 1 0"), info='coordinateSystem "NUE"')
    assert motor(nue, "h").load.gravity_distance == pytest.approx(0.0, abs=1e-12)
    nue_z = world(tmp_path, hinge("h", OFFSET, "axis 0 0 1"), info='coordinateSystem "NUE"')
    assert (motor(nue_z, "h").load.gravity_distance, motor(nue_z, "h").load.gravity_angle) \
        == pytest.approx((0.1, 0.0), abs=1e-12)


def test_a_robot_turned_about_the_axis_and_a_joint_saved_at_a_position(tmp_path):
    """The robot turned 0.3 rad about y (the hinge's axis), the joint saved at 0.2 with
    the mass written at +x: at joint position x the lever is R_y(0.3 + x - 0.2) (0.1, 0,
    0), whose torque about y under (0, 0, -m g) is m g 0.1 cos(0.1 + x) = -m g 0.1
    cos(x - (pi - 0.1)): gravity_angle pi - 0.1."""
    path = world(tmp_path, hinge("h", OFFSET, "axis 0 1 0 position 0.2"),
                 robot="rotation 0 1 0 0.3")
    load = motor(path, "h").load
    assert (load.gravity_distance, load.gravity_angle) == pytest.approx((0.1, math.pi - 0.1))


def test_a_world_before_r2022a_is_y_up_with_cylinders_along_y(tmp_path):
    """R2021b: no coordinateSystem means NUE (y up), and a Cylinder stands along y. An
    unturned 2 kg cylinder (r 0.15) on a hinge along y: I = m r^2 / 2; the offset mass
    about that vertical hinge: no gravity torque."""
    wheel = """Solid {
        boundingObject Cylinder { radius 0.15 height 0.05 }
        physics Physics { density -1 mass 2 }
      }"""
    path = world(tmp_path, hinge("wheel", wheel, "axis 0 1 0") + hinge("h", OFFSET,
                                                                       "axis 0 1 0"))
    path.write_text(path.read_text().replace("R2023b", "R2021b"))
    assert motor(path, "wheel").inertia == pytest.approx(2 * 0.15 ** 2 / 2)
    assert motor(path, "h").load.gravity_distance == pytest.approx(0.0, abs=1e-12)
    # R2022a on: the cylinder along z, across the hinge: I = m (3 r^2 + h^2) / 12
    path.write_text(path.read_text().replace("R2021b", "R2022a"))
    assert motor(path, "wheel").inertia == pytest.approx(2 * (3 * 0.15 ** 2 + 0.05 ** 2) / 12)


def test_a_joint_that_moves_no_physics_keeps_the_defaults_with_one_warning(tmp_path, caplog):
    kinematic = "Solid { boundingObject Box { size 0.1 0.1 0.1 } }"
    mesh = """Solid {
        boundingObject Mesh { url "arm.stl" }
        physics Physics { density -1 mass 1 centerOfMass [ 0 0 0.2 ] }
      }"""
    path = world(tmp_path, hinge("still", kinematic) + hinge("meshed", mesh))
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        config = load_world(path).config
    still, meshed = config.motors
    assert (still.inertia, still.load.gravity_mass) == (0.01, 0.0)
    # the mesh's volume is not computed: its mass is a point at its center of mass
    assert (meshed.inertia, meshed.load.gravity_mass) == pytest.approx((1 * 0.2 ** 2, 1.0))
    lines = path.read_text().splitlines()
    still_line, meshed_line = (i for i, t in enumerate(lines, 1) if "HingeJoint {" in t)
    solid_line, mesh_line = (next(i for i, t in enumerate(lines, 1) if i > meshed_line
                                  and needle in t) for needle in ("Solid {", "Mesh {"))
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: 'still' (HingeJoint (line {still_line})): no mass under its endPoint (no "
        "Physics): inertia 0.01 and no gravity load (servo_sim's defaults)",
        f"{path}: 'meshed' (HingeJoint (line {meshed_line})): its load from Physics: Mesh "
        f"(line {mesh_line}): a bounding object whose volume is not computed; Solid (line "
        f"{solid_line}): its mass taken as a point at its center of mass"]


def test_webots_fallbacks_no_bounding_object_and_a_given_center(tmp_path, caplog):
    """A mass with neither boundingObject nor inertiaMatrix: Webots' identity matrix
    (1 kg*m^2 about every axis through its center), said. A box whose centerOfMass is
    given: the box's own inertia about its centroid, moved to that center (Webots
    translates the mass distribution; it does not recompute about the point)."""
    bare = """Solid {
        translation 0 0 -0.5
        physics Physics { density -1 mass 0.5 }
      }"""
    shifted = """Solid {
        boundingObject Box { size 0.1 0.1 0.4 }
        physics Physics { density -1 mass 2 centerOfMass [ 0 0 -0.3 ] }
      }"""
    path = world(tmp_path, hinge("bare", bare, "axis 0 1 0") + hinge("shifted", shifted,
                                                                     "axis 0 1 0"))
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        bare_m, shifted_m = load_world(path).config.motors
    assert bare_m.inertia == pytest.approx(1.0 + 0.5 * 0.5 ** 2)
    assert shifted_m.inertia == pytest.approx(2 * (0.1 ** 2 + 0.4 ** 2) / 12 + 2 * 0.3 ** 2)
    assert (shifted_m.load.gravity_distance, shifted_m.load.gravity_angle) == \
        pytest.approx((0.3, math.pi / 2))
    assert [r.getMessage().split(": its load from Physics: ")[1] for r in caplog.records] \
        == [f"Solid (line {line_of(path, 'endPoint Solid {')}): no boundingObject and no "
            "inertiaMatrix: Webots' identity inertia matrix"]


def test_solids_without_physics_and_what_they_hold_carry_nothing(tmp_path):
    """A camera (a Solid, no Physics) on the link counts for nothing, nor does a Solid
    with Physics under a Solid without (Webots fixes that one to the static world);
    a Solid with Physics placed by a Pose counts, at its place."""
    link = """Solid {
        boundingObject Box { size 0.1 0.1 0.1 }
        physics Physics { density -1 mass 1 }
        children [
          Camera { translation 0 0 1 children [
            Solid { physics Physics { density -1 mass 5 inertiaMatrix [1 1 1 0 0 0] } } ] }
          Pose { translation 0 0 0.5 children [
            Solid { boundingObject Sphere { radius 0.1 } physics Physics { } } ] }
        ]
      }"""
    m = motor(world(tmp_path, hinge("link", link, "axis 0 1 0")), "link")
    sphere = 1000 * 4 / 3 * math.pi * 0.1 ** 3  # Webots' default density
    assert m.load.gravity_mass == pytest.approx(1 + sphere)
    assert m.inertia == pytest.approx(1 * (0.1 ** 2 + 0.1 ** 2) / 12
                                      + sphere * (0.4 * 0.1 ** 2 + 0.5 ** 2))


def test_what_cannot_be_read_is_said_and_a_bad_axis_names_the_motor(tmp_path, caplog):
    """A rotation above the joint that a template computes is taken as none, said; an
    axis of zeros is an error naming the motor even where nothing is carried; a slider
    is not warned about the inertia matrix it does not use."""
    path = world(tmp_path, hinge("h", OFFSET, "axis 0 1 0"),
                 robot='rotation %<= "0 1 0 " + 0.3 >%')
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        load_world(path)
    robot = line_of(path, "Robot {")
    assert [r.getMessage().split(": its load from Physics: ")[1] for r in caplog.records] \
        == [f"Robot (line {robot}): field 'rotation' not read (not 4 numbers): taken as none"]
    bad = world(tmp_path, hinge("h", "Solid { }", "axis 0 0 0"))
    with pytest.raises(ConfigError, match=r"HingeJointParameters \(line \d+\) \(motor 'h'\): "
                                          r"field 'axis' = 0 0 0: must be 3 numbers, not all "
                                          r"0$"):
        load_world(bad)
    slider = world(tmp_path, """\
    SliderJoint {
      device [ LinearMotor { name "lift" } ]
      endPoint Solid { physics Physics { density -1 mass 3 } }
    }
""")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        assert motor(slider, "lift").inertia == 3.0
    assert caplog.records == []
