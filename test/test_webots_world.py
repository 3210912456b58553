"""Webots world and PROTO files as servo_sim configs (servo_sim.load.world)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servo_sim.load.world import load_world
from servo_sim.model import ConfigError

WORLD = """\
#VRML_SIM R2023b utf8
# a world with every construct the importer reads
EXTERNPROTO "webots://projects/objects/backgrounds/protos/TexturedBackground.proto"
IMPORTABLE EXTERNPROTO "webots://projects/devices/robotis/protos/RobotisLds01.proto"
EXTERNPROTO "webots://projects/appearances/protos/BrushedSteel.proto"

PROTO Finger [
  field SFString name  "finger"   # the motor's name
  field SFFloat  speed 0.1
  field SFFloat  stop  0.04
  field SFString{"box", "none"} shape "box"
  field SFNode   appearance NULL
]
{
  SliderJoint {
    jointParameters JointParameters {
      maxStop IS stop
    }
    device [
      LinearMotor {
        name IS name
        maxVelocity IS speed
        maxForce 20
        maxPosition IS stop
      }
    ]
    endPoint Solid {
      children [
        Shape {
          appearance IS appearance
          geometry Box { size 0.01, 0.01, 0.05 }
        }
      ]
    }
  }
}

WorldInfo {
  info [
    "a test world, # not a comment"
  ]
  basicTimeStep 4
}
TexturedBackground {
}
DEF ROBOT Robot {
  name "test bot"
  battery [
    80, 100, 5
  ]
  children [
    DEF BODY Pose {
      children [
        Shape {
          appearance BrushedSteel {
          }
          geometry Box {
            size 0.1 0.1 0.1
          }
        }
      ]
    }
    HingeJoint {
      jointParameters HingeJointParameters {
        axis 0 0 1
        position 0.25
        springConstant 2
        dampingConstant 0.5
        staticFriction 0.1
        minStop -1
        maxStop 1
      }
      device [
        Brake {
          name "wrist brake"
        }
        RotationalMotor {
          name "wrist"
          maxVelocity 3.5
          maxTorque 7
          controlPID 15 0.5 0.1
          minPosition -0.9
          maxPosition 0.9
          multiplier 1
          acceleration 20
          consumptionFactor 2
          sound "webots://projects/default/worlds/sounds/rotational_motor.wav"
        }
        PositionSensor {
          name "wrist encoder"
          resolution 0.001
          noise 0.0005
        }
      ]
      endPoint Solid {
        translation 0 0 0.2
        children [
          USE BODY
          Hinge2Joint {
            jointParameters HingeJointParameters {
              axis 1 0 0
            }
            jointParameters2 JointParameters {
              axis 0 1 0
              position -0.1
            }
            device [
              RotationalMotor {
                name "pan"
              }
            ]
            device2 [
              RotationalMotor {
                name "tilt"
                maxTorque 2
              }
              PositionSensor {
                name "tilt sensor"
              }
            ]
            endPoint Solid {
              children [
                Finger {
                  name "grip::a"
                }
                Finger {
                  name "grip::b"
                  appearance BrushedSteel {
                  }
                }
                RobotisLds01 {
                }
              ]
            }
          }
        ]
        physics Physics {
          density -1
          mass 0.5
        }
      }
    }
    DEF SLIDER SliderJoint {
      device [
        LinearMotor {
        }
      ]
    }
  ]
  controller "<extern>"
  hidden position_0_0 0.25
  hidden linearVelocity_0 0 0 0
}
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the ``nth`` line containing ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


def write(tmp_path: Path, text: str, name: str = "world.wbt") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


#: Webots' RobotisLds01, as a Webots installation has it (cut down: a Lidar)
LDS01 = """\
#VRML_SIM R2023b utf8
PROTO RobotisLds01 [
  field SFString name "LDS-01"
]
{
  Lidar {
    name IS name
  }
}
"""


@pytest.fixture
def webots_home(tmp_path: Path) -> Path:
    """A Webots installation with the one library PROTO inside WORLD's robot."""
    home = tmp_path / "webots"
    write(home, LDS01, "projects/devices/robotis/protos/RobotisLds01.proto")
    return home


def test_every_construct_of_a_world_file(tmp_path, webots_home, caplog, monkeypatch):
    monkeypatch.delenv("WEBOTS_HOME", raising=False)
    path = write(tmp_path, WORLD)
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        world = load_world(path, webots_home)
    cfg = world.config
    assert world.robot_name == "test bot"
    assert cfg.basic_time_step_ms == 4
    assert (cfg.battery.energy, cfg.battery.capacity) == (80.0, 100.0)
    assert [m.name for m in cfg.motors] == ["wrist", "pan", "tilt", "grip::a", "grip::b",
                                           "linear motor"]
    wrist = cfg.motors[0]
    assert (wrist.type, wrist.max_velocity, wrist.max_force, wrist.control_pid) == \
        ("rotational", 3.5, 7.0, (15.0, 0.5, 0.1))
    assert (wrist.min_position, wrist.max_position, wrist.multiplier, wrist.acceleration,
            wrist.consumption_factor) == (-0.9, 0.9, 1.0, 20.0, 2.0)
    assert (wrist.position, wrist.spring_constant, wrist.damping_constant,
            wrist.static_friction, wrist.min_stop, wrist.max_stop) == \
        (0.25, 2.0, 0.5, 0.1, -1.0, 1.0)
    assert (wrist.position_sensor_name, wrist.brake_name) == ("wrist encoder", "wrist brake")
    assert (wrist.position_sensor.resolution, wrist.position_sensor.noise) == (0.001, 0.0005)
    pan, tilt = cfg.motors[1:3]
    assert (pan.position, pan.max_force, pan.position_sensor_name,  # a joint without one
            pan.position_sensor_device) == (0.0, 10.0, "", None)
    assert (tilt.position, tilt.max_force, tilt.position_sensor_name) == (-0.1, 2.0,
                                                                         "tilt sensor")
    for finger in cfg.motors[3:5]:  # the PROTO, expanded with the defaults
        assert (finger.type, finger.max_velocity, finger.max_force, finger.max_position,
                finger.max_stop) == ("linear", 0.1, 20.0, 0.04, 0.04)
    assert cfg.motors[3].coupling_base == "grip"
    unnamed = cfg.motors[5]  # Webots' defaults
    assert (unnamed.name, unnamed.type, unnamed.max_velocity, unnamed.max_force,
            unnamed.control_pid, unnamed.acceleration) == \
        ("linear motor", "linear", 10.0, 10.0, (10.0, 0.0, 0.0), -1.0)
    # the library PROTO in the robot, found in the installation: its device is listed
    assert world.unsimulated == {"LDS-01": "Lidar, RobotisLds01.proto, line 6"}
    # the one outside the robot and not found: one warning (appearances are not worth one)
    why = f"looked in {webots_home}/projects/objects/backgrounds/protos/" \
          "TexturedBackground.proto (--webots-home): no such file; give --webots-home DIR " \
          "or set WEBOTS_HOME to a Webots installation"
    line = line_of(WORLD, "TexturedBackground {")
    assert world.unexpanded == [
        f"TexturedBackground (line {line}): EXTERNPROTO \"webots://projects/objects/"
        f"backgrounds/protos/TexturedBackground.proto\" (line 3): {why}"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == (f"{path}: PROTOs not found, outside the robot, left out: "
                           f"TexturedBackground (line {line}): {why}")
    # loads from Physics (test_webots_loads): then one warning per motor where a fallback
    # is taken; the wrist's 0.5 kg Solid has no boundingObject: Webots' identity inertia,
    # its center on the axis
    loads = messages[1:]
    assert [m.split("'")[1] for m in loads] == [m.name for m in cfg.motors]
    assert "Webots' identity inertia matrix" in loads[0]
    assert (wrist.inertia, wrist.load.gravity_mass, wrist.load.gravity_distance) == \
        (1.0, 0.5, 0.0)


OUTSIDE_JOINTS = """\
Robot {
  children [
    Propeller {
      device RotationalMotor {
        name "prop motor"
      }
    }
    Track {
      device [
        LinearMotor {
          name "belt motor"
        }
      ]
    }
    HingeJoint {
      device [
        RotationalMotor {
          name "arm"
        }
      ]
    }
  ]
}
Gadget {
}
"""


def test_motors_outside_joints_are_named_in_the_one_warning(tmp_path, caplog):
    path = write(tmp_path, OUTSIDE_JOINTS)
    with caplog.at_level(logging.WARNING, logger="servo_sim"):
        world = load_world(path)
    assert [m.name for m in world.config.motors] == ["arm"]
    assert world.outside == ["'prop motor' (Propeller, line 3)", "'belt motor' (Track, line 8)"]
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: PROTOs not found, outside the robot, left out: Gadget (line 24): neither "
        f"a Webots node nor a PROTO declared by an EXTERNPROTO or defined in {path}; motors "
        "outside joints are not imported: 'prop motor' (Propeller, line 3), 'belt motor' "
        "(Track, line 8)",
        f"{path}: 'arm' (HingeJoint (line 15)): no mass under its endPoint (no Physics): "
        "inertia 0.01 and no gravity load (servo_sim's defaults)"]
    assert world.unsimulated == {  # the motors outside joints are the robot's devices
        "prop motor": "RotationalMotor outside a joint (Propeller), line 4",
        "belt motor": "LinearMotor outside a joint (Track), line 10"}


PROTO_FILE = """\
#VRML_SIM R2023b utf8
# template language: javascript
EXTERNPROTO "webots://projects/appearances/protos/GlossyPaint.proto"

PROTO PanTilt [
  field SFVec3f    translation 0 0 0
  field SFString   name        "pan tilt"
  field SFFloat    panSpeed    2.5
  field SFFloat    tiltLimit   0.8
  field MFNode     extensions  []
]
{
  %< const limit = fields.tiltLimit.value; >%
  Robot {
    translation IS translation
    name IS name
    children [
      HingeJoint {
        device [
          RotationalMotor {
            name "pan"
            maxVelocity IS panSpeed
          }
        ]
        endPoint Solid {
          children [
            HingeJoint {
              jointParameters HingeJointParameters {
                anchor %<= "0 0 " + limit >%
              }
              device [
                RotationalMotor {
                  name "tilt"
                  minPosition -0.8
                  maxPosition 0.8
                }
                PositionSensor {
                  name "tilt encoder"
                }
              ]
            }
            Group {
              children IS extensions
            }
          ]
        }
      }
    ]
  }
}
"""


def test_a_proto_file_with_its_defaults(tmp_path):
    world = load_world(write(tmp_path, PROTO_FILE, "PanTilt.proto"))
    assert world.robot_name == "pan tilt"
    assert world.config.basic_time_step_ms == 32  # no WorldInfo: Webots' default
    pan, tilt = world.config.motors
    assert (pan.name, pan.max_velocity, tilt.name, tilt.position_sensor_name,
            tilt.min_position) == ("pan", 2.5, "tilt", "tilt encoder", -0.8)
    assert world.unexpanded == []


def test_a_template_value_in_a_field_read_is_an_error(tmp_path):
    text = PROTO_FILE.replace('anchor %<= "0 0 " + limit >%', "dampingConstant %<= -limit >%")
    with pytest.raises(ConfigError) as e:
        load_world(write(tmp_path, text, "PanTilt.proto"))
    line = line_of(text, "jointParameters HingeJointParameters")
    assert str(e.value) == (f"{tmp_path / 'PanTilt.proto'}: HingeJointParameters (line "
                            f"{line}): field 'dampingConstant' = %<= -limit >%: computed "
                            "by a template, which servo_sim does not evaluate")


BAD = """\
WorldInfo {
  basicTimeStep 16
}
Robot {
  children [
    HingeJoint {
      jointParameters HingeJointParameters {
        JOINT
      }
      device [
        RotationalMotor {
          name "arm"
          MOTOR
        }
        PositionSensor {
          name "SENSOR"
        }
      ]
    }
  ]
}
"""


@pytest.mark.parametrize("replace, message", [
    (("MOTOR", "maxVelocity -1"),
     "RotationalMotor 'arm' (line 11): field 'maxVelocity' = -1: must be >= 0"),
    (("MOTOR", "controlPID 0 1 1"),
     "RotationalMotor 'arm' (line 11): field 'controlPID' = 0 1 1: needs P > 0, I >= 0 "
     "and D >= 0"),
    (("MOTOR", "controlPID 10 0"),
     "RotationalMotor 'arm' (line 11): field 'controlPID' = 10 0: must be 3 numbers"),
    (("MOTOR", 'maxTorque "strong"'),
     "RotationalMotor 'arm' (line 11): field 'maxTorque' = 'strong': must be a number"),
    (("MOTOR", "maxForce 5"),
     "RotationalMotor 'arm' (line 11): field 'maxForce' = 5: not a field of "
     "RotationalMotor"),
    (("MOTOR", "multiplier 0"),
     "RotationalMotor 'arm' (line 11): field 'multiplier' = 0: must be non-zero"),
    (("MOTOR", "acceleration -2"),
     "RotationalMotor 'arm' (line 11): field 'acceleration' = -2: must be -1 (unlimited) "
     "or >= 0"),
    (('name "arm"', 'name ""'),
     "RotationalMotor (line 11): field 'name' = '': must be a non-empty string"),
    (("JOINT", "dampingConstant -0.5"),
     "HingeJointParameters (line 7): field 'dampingConstant' = -0.5: must be >= 0"),
    (("basicTimeStep 16", "basicTimeStep 0.5"),
     "WorldInfo (line 1): field 'basicTimeStep' = 0.5: must be a whole number of ms >= 1 "
     "(servo_sim steps in whole milliseconds)"),
    (("SENSOR", "arm"), "PositionSensor 'arm' (line 15): field 'name' = 'arm': device name "
                        "already used by motor 'arm'"),
    (("JOINT", "minStop -1 maxStop 1 position 2"),
     "HingeJointParameters (line 7): field 'position' = 2: must lie within the hard stops "
     "[-1.0, 1.0]"),
    (("MOTOR", "minPosition 1 maxPosition 0.5"),
     "RotationalMotor 'arm' (line 11): field 'minPosition' = 1: must be <= maxPosition "
     "(0.5)"),
    (("JOINT", "springConstant 1 2"),
     "HingeJointParameters (line 7): field 'springConstant' = 1 2: must be a number"),
])
def test_bad_values_name_file_node_and_field(tmp_path, replace, message):
    text = BAD.replace(*replace).replace("MOTOR", "").replace("JOINT", "")
    path = write(tmp_path, text, "bad.wbt")
    with pytest.raises(ConfigError) as e:
        load_world(path)
    assert str(e.value) == f"{path}: {message}"


@pytest.mark.parametrize("replace, message", [
    ({"MOTOR": "minPosition 1 maxPosition 2"},  # the joint's position: Webots' default 0
     "HingeJointParameters (line 7): field 'position' = 0 (Webots' default): must lie within "
     "the soft limits [1.0, 2.0]"),
    ({"JOINT": "minStop -1 maxStop 1", "MOTOR": "minPosition -0.5 maxPosition 1.5"},
     "RotationalMotor 'arm' (line 11): field 'maxPosition' = 1.5: soft limit above the hard "
     "stop maxStop (1.0)"),
    ({"JOINT": "minStop 0.5 maxStop 0.2 position 0.3"},
     "HingeJointParameters (line 7): field 'minStop' = 0.5: must be <= maxStop (0.2)"),
    ({"jointParameters HingeJointParameters {": "extra Group {",
      "MOTOR": "minPosition 1 maxPosition 2"},  # no jointParameters at all
     "HingeJoint (line 6): jointParameters: field 'position' = 0 (Webots' default): must lie "
     "within the soft limits [1.0, 2.0]"),
    ({"SENSOR": "arm brake", "MOTOR": "} Brake { name \"arm brake\""},
     "Brake 'arm brake' (line 13): field 'name' = 'arm brake': device name already used by "
     "the position sensor of motor 'arm'"),
    ({"Robot {": "Robot { battery [ 11, 10, 0 ]"},
     "Robot 'robot' (line 4): field 'battery' = [11 10 0]: the energy 11 J exceeds the "
     "capacity 10 J"),
])
def test_errors_between_fields_name_the_webots_node_and_field(tmp_path, replace, message):
    """The config's checks of one field against another, said of the world's node (line)
    and Webots field, not of servo_sim's config fields."""
    text = BAD
    for old, new in replace.items():
        text = text.replace(old, new)
    path = write(tmp_path, text.replace("MOTOR", "").replace("JOINT", ""), "bad.wbt")
    with pytest.raises(ConfigError) as e:
        load_world(path)
    assert str(e.value) == f"{path}: {message}"


COUPLED = """\
Robot { children [
  HingeJoint { device [ RotationalMotor { name "a" } ] }
  SliderJoint { device [ LinearMotor { name "g::left" maxVelocity 0.1 } ] }
  SliderJoint { device [ LinearMotor { name "g::right" maxVelocity 0.3 } ] }
  HingeJoint { device [ RotationalMotor { name "a" } ] }
] }
"""


@pytest.mark.parametrize("text, message", [
    # errors between motors, said of the Webots node
    (COUPLED.replace('"a" } ] }\n] }', '"b" } ] }\n] }'),
     "LinearMotor 'g::right' (line 4): field 'maxVelocity' = 0.3: inconsistent with coupled "
     "motor 'g::left': expected 0.1 (= 0.1 * |1 / 1|)"),
    (COUPLED.replace("0.3", "0.1"),
     "RotationalMotor 'a' (line 5): field 'name' = 'a': duplicate motor name"),
    (BAD.replace("MOTOR", "").replace("JOINT", "")[:-3],
     "syntax error: Robot (line 4): unexpected end of file (expected a field or '}')"),
    ("Robot { children [ USE ARM ] }", "syntax error (line 1): USE ARM: no DEF ARM before it"),
    ("Robot { children [ 1 2 ] }\n", "no RotationalMotor or LinearMotor in a joint's device "
                                     "list"),
    ("Robot { children [ Propeller { device RotationalMotor { name \"p\" } } ] }",
     "no RotationalMotor or LinearMotor in a joint's device list (motors outside joints are "
     "not imported: 'p' (Propeller, line 1))"),
    ("WorldInfo { } Robot { ] }", "syntax error (line 1): Robot: expected a field name, "
                                  "found ']'"),
    ("Robot { battery [ 1 ] children [ SliderJoint { device [ LinearMotor { } ] } ] }",
     "Robot 'robot' (line 1): field 'battery' = [1]: must be [energy, capacity, recharge] "
     "in J, J, W"),
    ("Robot { name \"a\" children [ SliderJoint { device [ LinearMotor { name \"x\" } ] } ] }"
     "\nRobot { name \"b\" children [ SliderJoint { device [ LinearMotor { name \"y\" } ] } ] }",
     "several robots have motors ('a', 'b'); a controller runs one robot: keep one in the "
     "file"),
    ("HingeJoint { device [ RotationalMotor { name \"a\" } RotationalMotor { name \"b\" } ] }",
     "HingeJoint (line 1): field 'device' holds more than one motor"),
    ("HingeJoint { device NULL }\nSliderJoint { device 3 }",
     "SliderJoint (line 2): field 'device' = 3: must be a list of device nodes"),
])
def test_bad_files(tmp_path, text, message):
    path = write(tmp_path, text, "bad.wbt")
    with pytest.raises(ConfigError) as e:
        load_world(path)
    assert str(e.value) == f"{path}: {message}"


def test_a_joint_without_a_position_sensor_has_none(tmp_path):
    """Webots gives a joint's devices only those in its device list: no invented sensor
    (whose default name could even be another joint's sensor's)."""
    from servo_sim.webots import api
    from servo_sim.webots.session import Session

    path = write(tmp_path, textwrap.dedent("""\
        Robot { children [
          HingeJoint { device [ RotationalMotor { name "a" } ] }
          HingeJoint { device [ RotationalMotor { name "b" } Brake { name "b brake" }
                                PositionSensor { name "a sensor" } ] }
          SliderJoint { device [ Brake { name "c brake" } LinearMotor { name "c" } ] }
        ] }
    """))
    config = load_world(path).config
    assert [(m.name, m.position_sensor_name) for m in config.motors] == \
        [("a", ""), ("b", "a sensor"), ("c", "")]
    session = Session(config)
    api.activate(session)
    try:
        robot = api.Robot()
        assert [robot.getDeviceByIndex(i).getName() for i in
                range(robot.getNumberOfDevices())] == ["a", "b", "a sensor", "b brake", "c",
                                                        "c brake"]
        a, sensor, c_brake = (robot.getDevice(n) for n in ("a", "a sensor", "c brake"))
        assert a.getPositionSensor() is None and a.position_sensor is None
        assert sensor.getMotor() is robot.getDevice("b")
        assert c_brake.getPositionSensor() is None and c_brake.getMotor().getName() == "c"
    finally:
        api.activate(None)
        session.close()


def test_an_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.wbt: cannot read: No such file"):
        load_world(tmp_path / "missing.wbt")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(velocity=st.floats(0, 1e3), torque=st.floats(0, 1e3),
       pid=st.tuples(st.floats(1e-6, 1e3), st.floats(0, 1e3), st.floats(0, 1e3)),
       limits=st.tuples(st.floats(-10, 10), st.floats(-10, 10)).map(sorted),
       multiplier=st.floats(0.01, 100) | st.floats(-100, -0.01),
       damping=st.floats(0, 1e3), name=st.text(st.characters(
           whitelist_categories=("L", "N"), whitelist_characters=" _-:#"), min_size=1,
           max_size=12).filter(lambda n: "::" not in n and n[0].isalpha()))
def test_imported_values_are_the_files_to_the_last_bit(tmp_path, velocity, torque, pid,
                                                         limits, multiplier, damping, name):
    """Property: any valid field values written by repr come back exactly."""
    low, high = limits
    text = textwrap.dedent(f"""\
        Robot {{ children [ HingeJoint {{
          jointParameters HingeJointParameters {{ dampingConstant {damping!r} }}
          device [ RotationalMotor {{
            name "{name}" maxVelocity {velocity!r} maxTorque {torque!r}
            controlPID {pid[0]!r} {pid[1]!r} {pid[2]!r}
            minPosition {low!r} maxPosition {high!r} multiplier {multiplier!r}
          }} ]
        }} ] }}
    """)
    if low < 0.0 < high or low == high:  # the initial position 0 within soft limits
        m = load_world(write(tmp_path, text)).config.motors[0]
        assert (m.name, m.max_velocity, m.max_force, m.control_pid, m.min_position,
                m.max_position, m.multiplier, m.damping_constant) == \
            (name, velocity, torque, pid, low, high, multiplier, damping)


# --------------------------------------------------------------------------- the CLI


def servo_sim(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "servo_sim.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_check_prints_the_motors_found(tmp_path, webots_home):
    path = write(tmp_path, WORLD)
    r = servo_sim("check", path, "--webots-home", webots_home)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"{path}: OK, robot 'test bot', 6 motor(s), dynamic physics, dt = " \
                       "4 ms, battery 80/100 J"
    assert lines[1] == ("  wrist: rotational, max velocity 3.5, max force 7, PID (15.0, 0.5, "
                        "0.1), position sensor 'wrist encoder', brake 'wrist brake'")
    assert lines[2] == "  pan: rotational, max velocity 10, max force 10, PID (10.0, 0.0, " \
                       "0.0), no position sensor"
    assert lines[4].startswith("  grip::a: linear, max velocity 0.1, max force 20, ")
    assert lines[4].endswith("coupled with grip::a, grip::b, no position sensor")
    assert lines[7] == "  not simulated (a handle that raises when used): 'LDS-01' (Lidar, " \
                       "RobotisLds01.proto, line 6)"
    assert "PROTOs not found, outside the robot, left out: TexturedBackground" in r.stderr


def test_run_takes_a_world_file(tmp_path):
    r = servo_sim("run", REPO / "examples" / "webots" / "arm.wbt", "--duration", "0.5",
                  "--command", "shoulder.position=0.5", "--quiet", "--csv", tmp_path / "r.csv")
    assert r.returncode == 0, r.stderr
    last = (tmp_path / "r.csv").read_text().splitlines()[-1].split(",")
    assert float(last[0]) == 0.496  # 62 steps of 8 ms (WorldInfo.basicTimeStep)
    assert float(last[1]) == pytest.approx(0.5, abs=0.02)


def test_a_bad_world_is_one_line_exit_2(tmp_path):
    path = write(tmp_path, BAD.replace("MOTOR", "maxVelocity -1").replace("JOINT", ""))
    r = servo_sim("check", path)
    assert r.returncode == 2
    assert r.stderr == (f"servo-sim: error: {path}: RotationalMotor 'arm' (line 11): field "
                        "'maxVelocity' = -1: must be >= 0\n")


def test_the_ros_get_brake_name_answers_the_configured_brake():
    from servo_sim.model import MotorView, Simulation
    from servo_sim.ros.interface import MOTOR_SERVICES  # the ROS-free table

    row = next(r for r in MOTOR_SERVICES if r.name == "get_brake_name")
    sim = Simulation.from_config(load_world(REPO / "examples" / "webots" / "arm.wbt").config)
    assert row.read(MotorView(sim.motor("shoulder"))) == "shoulder brake"
    assert row.read(MotorView(sim.motor("gripper::left"))) == ""


# --------------------------------------------------------------------------- the config


@pytest.mark.parametrize("battery, expected", [
    (12, (12.0, 12.0)), ([5, 10], (5.0, 10.0)), ([5.0, 10.0, 2.0], (5.0, 10.0)),
])
def test_the_config_battery(battery, expected):
    from servo_sim.model import parse_config

    cfg = parse_config({"battery": battery, "motors": [{"name": "a"}]})
    assert (cfg.battery.energy, cfg.battery.capacity) == expected


@pytest.mark.parametrize("raw, message", [
    ({"battery": [11, 10]}, "field 'battery' = [11, 10]: the energy 11 J exceeds the "
                            "capacity 10 J"),
    ({"battery": -1}, "field 'battery' = -1: must be >= 0"),
    ({"battery": [1]}, "field 'battery' = [1]: must be a capacity in J or [energy, "
                       "capacity(, recharge)]"),
    ({"motors": [{"name": "a", "brake_name": ""}]},
     "motor 'a': field 'brake_name' = '': must be a non-empty device name"),
    ({"motors": [{"name": "a", "position_sensor_name": 3}]},
     "motor 'a': field 'position_sensor_name' = 3: must be a device name, or \"\" for no "
     "PositionSensor"),
    ({"motors": [{"name": "a", "brake_name": "x"}, {"name": "b", "brake_name": "x"}]},
     "motor 'b': field 'brake_name' = 'x': device name already used by the brake of motor "
     "'a'"),
    ({"motors": [{"name": "a", "brake_name": "b sensor"}, {"name": "b"}]},
     "motor 'b': its position sensor's default name 'b sensor' (set 'position_sensor_name'): "
     "device name already used by the brake of motor 'a'"),
    ({"motors": [{"name": "a", "position_sensor_name": "a"}]},
     "motor 'a': field 'position_sensor_name' = 'a': device name already used by motor 'a'"),
])
def test_bad_device_names_and_battery_in_the_config(raw, message):
    from servo_sim.model import parse_config

    with pytest.raises(ConfigError) as e:
        parse_config({"motors": [{"name": "m"}], **raw})
    assert str(e.value) == f"<dict>: {message}"


def test_an_empty_position_sensor_name_is_no_sensor():
    from servo_sim.model import parse_config
    from servo_sim.model.config import to_dict
    from servo_sim.webots.session import device_specs

    cfg = parse_config({"motors": [{"name": "a", "position_sensor_name": ""},
                                   {"name": "b", "brake_name": "a sensor"}]})
    assert [m.position_sensor_device for m in cfg.motors] == [None, "b sensor"]
    assert [(s.name, s.kind) for s in device_specs(cfg)] == [
        ("a", "motor"), ("b", "motor"), ("b sensor", "position sensor"),
        ("a sensor", "brake")]
    assert parse_config(to_dict(cfg)) == cfg


def test_device_names_and_battery_survive_the_dict_form_and_run_time_changes():
    from servo_sim.model import Simulation, parse_config
    from servo_sim.model.config import to_dict

    cfg = load_world(REPO / "examples" / "webots" / "arm.wbt").config
    assert parse_config(to_dict(cfg)) == cfg.__class__(**{**cfg.__dict__,
                                                          "source": "<dict>"})
    sim = Simulation(cfg)
    sim.set_parameter("shoulder", "damping_constant", 1.0)  # what a Brake does
    shoulder = sim.config.motors[0]
    assert (shoulder.brake_name, shoulder.position_sensor_name, sim.config.battery) == \
        ("shoulder brake", "shoulder sensor", cfg.battery)
    assert "brake_name" not in to_dict(parse_config({"motors": [{"name": "a"}]}))["motors"][0]



_SCALARS = st.sampled_from(['"x"', '""', "1", "-1", "0.5", "1 2 3", "10 0 0", "NULL", "TRUE",
                            "%<= v >%", "IS f", "USE A"])
_TYPES = st.sampled_from(["Robot", "HingeJoint", "SliderJoint", "Hinge2Joint", "RotationalMotor",
                          "LinearMotor", "PositionSensor", "Brake", "WorldInfo", "Solid", "Foo",
                          "HingeJointParameters"])
_FIELDS = st.sampled_from(["name", "device", "device2", "children", "endPoint", "jointParameters",
                           "jointParameters2", "maxVelocity", "controlPID", "position",
                           "minStop", "battery", "basicTimeStep", "maxForce", "resolution"])
_NODES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.builds(lambda t, fs: t + " { " + " ".join(f"{f} {v}" for f, v in fs) + " }", _TYPES,
              st.lists(st.tuples(_FIELDS, inner), max_size=5)),
    st.builds(lambda items: "[ " + " ".join(items) + " ]", st.lists(inner, max_size=4)),
    st.builds(lambda v: "DEF A " + v, inner)), max_leaves=25)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_NODES, max_size=4) | st.lists(_SCALARS | _TYPES | _FIELDS | st.sampled_from(
    ["{", "}", "[", "]", "PROTO", "EXTERNPROTO", "DEF", "field", "hidden"]), max_size=30))
def test_any_text_is_a_world_or_one_config_error(tmp_path, pieces):
    """Property: the reader never fails but with a ConfigError naming the file."""
    path = write(tmp_path, "\n".join(pieces))
    try:
        load_world(path)
    except ConfigError as exc:
        assert str(exc).startswith(f"{path}: ")


def test_a_pathologically_deep_file_is_a_config_error(tmp_path):
    path = write(tmp_path, "Robot { children " + "[ " * 5000 + "] " * 5000 + "}")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_world(path)


VRML = """\
#VRML_SIM R2022b utf8
EXTERNPROTO "../protos/Arm.proto"
PROTO Part [ field SFFloat k 2 ] { Gadget { mass IS k } }
DEF A Foo { x 1 2.5 -3e-1 s "a\\"b" on TRUE n NULL l [ 1, 2 ] }
USE A
%< if (fields.k.value > 1) { >%
Bar { t %<= 1 >% }
%< } >%
"""


def test_the_vrml_parser_reads_the_syntax_and_knows_no_node_type():
    """servo_sim.load.vrml apart from the importer: nodes of any type (Foo is none of
    Webots'), values, DEF/USE, PROTO and EXTERNPROTO, the header's release, template code
    kept as text with the branch a node is written in."""
    from servo_sim.load.vrml import IsRef, Node, Parser, Template

    parser = Parser(VRML, "t.wbt")
    foo, use, bar = parser.parse_file()
    fields = {"x": (1.0, 2.5, -0.3), "s": 'a"b', "on": True, "n": None, "l": [(1.0, 2.0)]}
    assert (foo.type, foo.fields, foo.line, foo.use) == ("Foo", fields, 4, False)
    assert (use.type, use.fields, use.line, use.use) == ("Foo", fields, 5, True)
    assert parser.defs == {"A": foo}
    assert (bar.type, bar.fields, bar.branch) == ("Bar", {"t": Template("%<= 1 >%")}, 6)
    assert foo.branch is None
    assert parser.release == (2022, "b")
    assert parser.externs == {"Arm": ("../protos/Arm.proto", 2)}
    part = parser.protos["Part"]
    assert (part.defaults, part.body) == ({"k": 2.0}, [Node("Gadget", {"mass": IsRef("k")}, 3)])
    assert Parser("Foo { }", "t.wbt").release is None
    with pytest.raises(ConfigError, match=r"^t\.wbt: syntax error \(line 2\): USE B: no DEF B "
                                          r"before it$"):
        Parser("Foo { }\nUSE B\n", "t.wbt").parse_file()
