"""Webots worlds as people have them (issue 20): robot PROTOs from other files, passive
joints, the devices servo_sim does not simulate. Small worlds written for each."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from servo_sim.load.world import load_world
from servo_sim.model import Simulation
from servo_sim.model.config import ConfigError
from servo_sim.model.motor import CommandRefusedError

REPO = Path(__file__).resolve().parents[1]

#: A robot PROTO in the project's protos/ folder, using a PROTO of its own by a path
#: relative to itself (nested), with fields an instance overrides.
ARM_PROTO = """\
#VRML_SIM R2023b utf8
EXTERNPROTO "parts/Finger.proto"
PROTO MyArm [
  field SFString name   "my arm"
  field SFFloat  speed  1.5
  field SFFloat  torque 4
  field MFNode   tool   [ ]
]
{
  Robot {
    name IS name
    children [
      HingeJoint {
        device [
          RotationalMotor {
            name "shoulder"
            maxVelocity IS speed
            maxTorque IS torque
          }
        ]
        endPoint Solid {
          children IS tool
        }
      }
      Finger {
      }
    ]
  }
}
"""
FINGER_PROTO = """\
#VRML_SIM R2023b utf8
PROTO Finger [
  field SFString name "finger"
]
{
  SliderJoint {
    device [
      LinearMotor {
        name IS name
        maxVelocity 0.1
      }
    ]
  }
}
"""
#: The world: the robot is an instance of the PROTO above; its tool slot gets a node
#: written in the world (a PROTO the world itself declares).
WORLD = """\
#VRML_SIM R2023b utf8
EXTERNPROTO "../protos/MyArm.proto"
EXTERNPROTO "../protos/Wrist.proto"
MyArm {
  name "arm 1"
  speed 3
  tool [
    Wrist {
    }
  ]
}
"""
WRIST_PROTO = """\
PROTO Wrist [
]
{
  HingeJoint {
    device [
      RotationalMotor {
        name "wrist"
      }
    ]
  }
}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Webots project: worlds/arm.wbt, protos/MyArm.proto, protos/parts/Finger.proto."""
    write(tmp_path / "protos" / "MyArm.proto", ARM_PROTO)
    write(tmp_path / "protos" / "parts" / "Finger.proto", FINGER_PROTO)
    write(tmp_path / "protos" / "Wrist.proto", WRIST_PROTO)
    return write(tmp_path / "worlds" / "arm.wbt", WORLD)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Reading a world never opens a socket."""
    def refuse(*args, **kwargs):
        raise AssertionError("servo_sim opened a socket")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("WEBOTS_HOME", raising=False)


def test_a_robot_proto_from_a_relative_path_with_the_instance_fields(project):
    world = load_world(project)
    assert world.robot_name == "arm 1"  # the instance's name, not the PROTO's default
    shoulder, wrist, finger = world.config.motors
    assert (shoulder.name, shoulder.max_velocity, shoulder.max_force) == ("shoulder", 3.0, 4.0)
    assert wrist.name == "wrist"  # the world's node in the PROTO's slot, the world's PROTO
    assert (finger.name, finger.type, finger.max_velocity) == ("finger", "linear", 0.1)
    assert world.unexpanded == []


def webots_library(home: Path, proto: str = "MyArm") -> None:
    """Put MyArm (and its Finger) where Webots' library has its robots."""
    library = home / "projects" / "robots" / "acme" / "protos"
    write(library / f"{proto}.proto", ARM_PROTO)
    write(library / "parts" / "Finger.proto", FINGER_PROTO)


LIBRARY_WORLD = """\
EXTERNPROTO "{url}"
MyArm {{
  torque 2.5
}}
"""
URLS = ["webots://projects/robots/acme/protos/MyArm.proto",
        "https://raw.githubusercontent.com/cyberbotics/webots/R2023b/projects/robots/acme/"
        "protos/MyArm.proto"]


@pytest.mark.parametrize("url", URLS, ids=["webots", "raw-github"])
def test_a_library_proto_from_the_webots_home_given(tmp_path, url):
    home = tmp_path / "webots"
    webots_library(home)
    world = load_world(write(tmp_path / "w.wbt", LIBRARY_WORLD.format(url=url)), home)
    shoulder = world.config.motors[0]
    assert (shoulder.max_velocity, shoulder.max_force) == (1.5, 2.5)  # default, instance


def test_webots_home_from_the_environment_and_the_cli(tmp_path, monkeypatch):
    home = tmp_path / "webots"
    webots_library(home)
    path = write(tmp_path / "w.wbt", LIBRARY_WORLD.format(url=URLS[0]))
    monkeypatch.setenv("WEBOTS_HOME", str(home))
    assert load_world(path).config.motors[0].max_force == 2.5
    monkeypatch.delenv("WEBOTS_HOME")
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "check", str(path),
                        "--webots-home", str(home)], capture_output=True, text=True,
                       timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == ("  shoulder: rotational, max velocity 1.5, max "
                                        "force 2.5, PID (10.0, 0.0, 0.0), no position sensor")


def test_a_robot_proto_not_found_is_one_error_naming_it_the_url_and_where(tmp_path):
    home = tmp_path / "webots"
    home.mkdir()
    path = write(tmp_path / "w.wbt", LIBRARY_WORLD.format(url=URLS[0]))
    with pytest.raises(ConfigError) as e:
        load_world(path, home)
    assert str(e.value) == (
        f"{path}: cannot find the robot's PROTO MyArm (line 2): EXTERNPROTO \"{URLS[0]}\" "
        "(line 1): "
        f"looked in {home}/projects/robots/acme/protos/MyArm.proto (--webots-home): no "
        "such file; give --webots-home DIR or set WEBOTS_HOME to a Webots installation")


@pytest.mark.parametrize("url, why", [
    ("https://example.com/MyArm.proto", "not a Webots library URL, and servo_sim never "
     "downloads; save the file and declare it by its path"),
    ("protos/MyArm.proto", "looked in {dir}/protos/MyArm.proto: no such file"),
])
def test_other_urls_and_missing_files_are_one_error(tmp_path, url, why):
    path = write(tmp_path / "w.wbt", LIBRARY_WORLD.format(url=url))
    with pytest.raises(ConfigError) as e:
        load_world(path)
    assert str(e.value) == (f"{path}: cannot find PROTO MyArm (line 2): EXTERNPROTO "
                            f"\"{url}\" (line 1): " + why.format(dir=tmp_path))


#: A robot with a decorative library PROTO (a screw) among its parts: the motor "m" is
#: the robot's own, "gripper" would be inside the screw's PROTO if it could be read.
DECORATED = """\
EXTERNPROTO "webots://projects/objects/screws/protos/Screw.proto"
Robot {
  children [
    HingeJoint {
      device [
        RotationalMotor {
          name "m"
        }
      ]
    }
    Screw {
    }
  ]
}
"""
SCREW_URL = "webots://projects/objects/screws/protos/Screw.proto"


def test_a_robot_with_an_unreadable_decorative_proto_runs_without_it(tmp_path, caplog):
    """No Webots installation: the screw is left out with one warning naming it, its
    line and what it may hold; the robot's motor runs as in the same robot without it."""
    home = tmp_path / "webots"
    home.mkdir()
    path = write(tmp_path / "w.wbt", DECORATED)
    with caplog.at_level(logging.WARNING, "servo_sim"):
        world = load_world(path, home)
    assert [m.name for m in world.config.motors] == ["m"]
    assert world.unread == {"Screw": "Screw (line 11)"}
    assert [r.getMessage() for r in caplog.records] == [
        f'{path}: left out PROTO Screw (line 11): EXTERNPROTO "{SCREW_URL}" (line 1): '
        f"looked in {home}/projects/objects/screws/protos/Screw.proto (--webots-home): no "
        "such file; give --webots-home DIR or set WEBOTS_HOME to a Webots installation; "
        "the devices and joints it may hold are not simulated",
        f"{path}: 'm' (HingeJoint (line 4)): no mass under its endPoint (no Physics): "
        "inertia 0.01 and no gravity load (servo_sim's defaults)"]
    bare = load_world(write(tmp_path / "bare.wbt", DECORATED.replace(
        "    Screw {\n    }\n", "")))
    assert world.config == replace(bare.config, source=str(path))


def test_a_device_in_an_unreadable_proto_is_reported_with_the_protos_name(tmp_path):
    write(tmp_path / "w.wbt", DECORATED)
    write(tmp_path / "c.py", """\
from controller import Robot
robot = Robot()
robot.getDevice("m").setPosition(0.5)
print(robot.getDevice("gripper"))
robot.step(32)
""")
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "controller", "c.py", "w.wbt",
                        "--webots-home", str(tmp_path), "--duration", "0.1"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["None"]
    assert 'servo-sim: warning: w.wbt: left out PROTO Screw (line 11)' in r.stderr
    assert ('Device "gripper" was not found on robot "robot" (it may be inside a PROTO '
            "that could not be read and was left out: Screw (line 11))") \
        in r.stderr.splitlines()


def test_strict_protos_keeps_the_refusal(tmp_path):
    home = tmp_path / "webots"
    home.mkdir()
    path = write(tmp_path / "w.wbt", DECORATED)
    expected = (f'{path}: cannot find PROTO Screw (line 11): EXTERNPROTO "{SCREW_URL}" '
                f"(line 1): looked in {home}/projects/objects/screws/protos/Screw.proto "
                "(--webots-home): no such file; give --webots-home DIR or set WEBOTS_HOME "
                "to a Webots installation (--strict-protos: a robot's PROTOs may hold its "
                "devices and joints, none is left out)")
    with pytest.raises(ConfigError) as e:
        load_world(path, home, strict=True)
    assert str(e.value) == expected
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "check", str(path),
                        "--webots-home", str(home), "--strict-protos"],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr.strip()) == (2, f"servo-sim: error: {expected}")


#: A robot written for Webots R2022b: its PROTOs named without EXTERNPROTO, one in its
#: project's protos folder (the robot), one in the Webots library (a screw that holds a
#: joint, so that reading it shows).
R2022B_WORLD = """\
#VRML_SIM R2022b utf8
WorldInfo {
  basicTimeStep 8
}
Scara {
}
"""
R2022B_ROBOT = """\
#VRML_SIM R2022b utf8
PROTO Scara [
]
{
  Robot {
    name "scara"
    children [
      HingeJoint {
        device [
          RotationalMotor {
            name "joint 1"
          }
        ]
      }
      CapScrew {
      }
    ]
  }
}
"""
CAP_SCREW = """\
#VRML_SIM R2022b utf8
PROTO CapScrew [
]
{
  SliderJoint {
    device [
      LinearMotor {
        name "screw"
        maxVelocity 0.05
      }
    ]
  }
}
"""


def test_an_r2022b_world_finds_its_protos_by_name_in_the_installation_given(tmp_path, caplog):
    write(tmp_path / "protos" / "Scara.proto", R2022B_ROBOT)
    path = write(tmp_path / "worlds" / "scara.wbt", R2022B_WORLD)
    home = tmp_path / "webots"
    write(home / "projects" / "objects" / "screws" / "protos" / "CapScrew.proto", CAP_SCREW)
    world = load_world(path, home)
    assert world.robot_name == "scara"
    joint, screw = world.config.motors
    assert (joint.name, screw.name, screw.type, screw.max_velocity) \
        == ("joint 1", "screw", "linear", 0.05)
    assert world.unread == {}
    # without the installation the screw is left out, the robot found in its project
    empty = tmp_path / "no-webots"
    empty.mkdir()
    caplog.clear()
    with caplog.at_level(logging.WARNING, "servo_sim"):
        world = load_world(path, empty)
    assert [m.name for m in world.config.motors] == ["joint 1"]
    assert world.unread == {"CapScrew": "CapScrew (Scara.proto, line 15)"}
    assert caplog.records[0].getMessage() == (
        f"{path}: left out PROTO CapScrew (Scara.proto, line 15): a file before Webots "
        f"R2023a names its PROTOs without EXTERNPROTO: not in {tmp_path}/protos or "
        f"{empty}/projects (--webots-home); the devices and "
        "joints it may hold are not simulated")


@pytest.mark.parametrize("release", ["R2023a", "R2023b"])
def test_an_r2023_file_does_not_look_up_undeclared_names(tmp_path, release):
    """From R2023a on, Webots needs the EXTERNPROTO: a name found only in the library is
    not a PROTO of the file (the robot is the unreadable part: the error)."""
    home = tmp_path / "webots"
    write(home / "projects" / "robots" / "acme" / "protos" / "Scara.proto", R2022B_ROBOT)
    path = write(tmp_path / "w.wbt", R2022B_WORLD.replace("R2022b", release))
    with pytest.raises(ConfigError, match=r"cannot find PROTO Scara \(line 5\): neither a "
                                          r"Webots node nor a PROTO declared"):
        load_world(path, home)


PASSIVE = """\
Robot {
  children [
    HingeJoint {
      device [
        RotationalMotor {
          name "m"
        }
      ]
    }
    HingeJoint {
      jointParameters HingeJointParameters {
        position 0.5
        springConstant 2
        dampingConstant 0.1
      }
      device [
        PositionSensor {
          name "s"
        }
      ]
    }
  ]
}
"""


def passive_reference(steps: int) -> list[float]:
    """PASSIVE's joint 's' by the SPEC §2.2 step of a joint with no motor force
    (semi-implicit Euler, implicit spring 2 and damper 0.1, inertia 0.01, Webots' 32 ms
    step, from 0.5 at rest), in scalars: its position after each step."""
    dt, inertia, k, b = 0.032, 0.01, 2.0, 0.1
    x, v, positions = 0.5, 0.0, []
    for _ in range(steps):
        v = (inertia / dt * v - k * x) / (inertia / dt + k * dt + b)
        x += v * dt
        positions.append(x)
    return positions


def test_a_joint_with_a_sensor_and_no_motor_is_a_passive_joint(tmp_path):
    """The issue's minimal world: 's' is simulated, moved only by its spring and damper
    (the scalar reference above)."""
    world = load_world(write(tmp_path / "p.wbt", PASSIVE))
    m, s = world.config.motors
    assert (s.name, s.passive, s.position_sensor_name, m.passive) == ("s", True, "s", False)
    sim = Simulation(world.config)
    joint = sim.motor("s")
    with pytest.raises(CommandRefusedError, match=r"^motor 's': set_position refused: a "
                                                  r"passive joint \(no motor\)$"):
        joint.set_position(1.0)
    for x in passive_reference(50):
        sim.step()
        assert joint.position == pytest.approx(x, rel=1e-12, abs=1e-15)


def test_a_controller_reads_the_passive_joint_and_is_told_of_unsimulated_devices(tmp_path):
    world = PASSIVE.replace("  ]\n}\n", "    DistanceSensor {\n      name \"ds0\"\n    }\n"
                                         "    LED {\n    }\n  ]\n}\n")
    write(tmp_path / "p.wbt", world)
    write(tmp_path / "c.py", """\
from controller import Robot
robot = Robot()
sensor = robot.getDevice("s")
sensor.enable(32)
print("motor of s:", sensor.getMotor(), robot.getDevice("m").getPositionSensor())
robot.step(32)
robot.step(32)
print(f"s = {sensor.getValue():.6f}")
print(robot.getDevice("d0"))  # a typo: Webots' message, None
robot.getDevice("ds0").enable(32)
""")
    r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "controller", "c.py", "p.wbt",
                        "--duration", "1"], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    x = passive_reference(2)[-1]
    assert r.stdout.splitlines() == ["motor of s: None None", f"s = {x:.6f}", "None"]
    assert 'Device "d0" was not found on robot "robot"' in r.stderr
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "servo_sim.webots.api.NotSimulatedError: servo-sim controller: device \"ds0\" "
        "(DistanceSensor, line 22) is in the world but not simulated, so its enable cannot "
        "run: servo_sim simulates the motors of joints, their position sensors and brakes, "
        "and passive joints' sensors and brakes")
    check = subprocess.run([sys.executable, "-m", "servo_sim.cli", "check", "p.wbt"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert check.stdout.splitlines() == [
        "p.wbt: OK, robot 'robot', 1 motor(s), 1 passive joint(s), dynamic physics, "
        "dt = 32 ms",
        "  m: rotational, max velocity 10, max force 10, PID (10.0, 0.0, 0.0), no "
        "position sensor",
        "  s: rotational, passive joint (no motor), position sensor 's'",
        "  not simulated (a handle that raises when used): 'ds0' (DistanceSensor, line 22), 'led' "
        "(LED, line 25)"]


# --------------------------------------------------------------------------- issue 52


def test_an_old_world_finds_its_projects_protos_from_any_working_directory(tmp_path,
                                                                           monkeypatch):
    """Issue 52: ``cd worlds && servo-sim check scara.wbt`` looked for the project's
    protos in worlds/protos (the parent of the relative path before resolving it)."""
    write(tmp_path / "protos" / "Scara.proto", R2022B_ROBOT)
    write(tmp_path / "worlds" / "scara.wbt", R2022B_WORLD)
    home = tmp_path / "webots"
    write(home / "projects" / "objects" / "screws" / "protos" / "CapScrew.proto", CAP_SCREW)
    for cwd, given in ((tmp_path / "worlds", "scara.wbt"), (tmp_path, "worlds/scara.wbt"),
                       (tmp_path / "protos", "../worlds/scara.wbt")):
        monkeypatch.chdir(cwd)
        world = load_world(given, home)
        assert [m.name for m in world.config.motors] == ["joint 1", "screw"], given
        r = subprocess.run([sys.executable, "-m", "servo_sim.cli", "check", given,
                            "--webots-home", str(home)], capture_output=True, text=True,
                           timeout=120, cwd=cwd)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == (f"{given}: OK, robot 'scara', 2 motor(s), "
                                            "dynamic physics, dt = 8 ms")
    # not there: the folders it looked in are the project's, said in full
    (tmp_path / "protos" / "Scara.proto").unlink()
    monkeypatch.chdir(tmp_path / "worlds")
    with pytest.raises(ConfigError) as e:
        load_world("scara.wbt", home)
    assert str(e.value) == (
        "scara.wbt: cannot find PROTO Scara (line 5): a file before Webots R2023a names its "
        f"PROTOs without EXTERNPROTO: not in {tmp_path}/worlds or {tmp_path}/protos or "
        f"{home}/projects (--webots-home)")


#: A world as jetbot.wbt: the background and objects from Webots' library, a Laptop
#: (a Robot PROTO with no controller) and the robot, last, from the robots library.
LIBRARY_ROBOT_WORLD = """\
#VRML_SIM R2023b utf8
EXTERNPROTO "webots://projects/objects/backgrounds/protos/TexturedBackground.proto"
EXTERNPROTO "webots://projects/objects/floors/protos/RectangleArena.proto"
EXTERNPROTO "webots://projects/objects/computers/protos/Laptop.proto"
EXTERNPROTO "webots://projects/robots/acme/protos/MyArm.proto"
EXTERNPROTO "../protos/Crate.proto"
TexturedBackground {
}
RectangleArena {
}
Crate {
}
Laptop {
  controller "<none>"
}
DEF ARM MyArm {
  supervisor TRUE
}
"""


def test_a_world_whose_robot_proto_is_missing_says_what_is_missing_once(tmp_path,
                                                                         monkeypatch):
    """Issue 52, jetbot_wbt: one line, the robot's PROTO first with where it was looked
    for, then the others, grouped by reason, and what to do once."""
    from servo_sim.load import protos

    nowhere = tmp_path / "no-webots"
    monkeypatch.setattr(protos, "DEFAULT_HOMES", (str(nowhere),))
    path = write(tmp_path / "worlds" / "w.wbt", LIBRARY_ROBOT_WORLD)
    robot_url = "webots://projects/robots/acme/protos/MyArm.proto"
    crate = f"Crate (line 11): looked in {tmp_path}/worlds/../protos/Crate.proto: no such file"
    with pytest.raises(ConfigError) as e:
        load_world(path)
    assert str(e.value) == (
        f"{path}: cannot find the robot's PROTO MyArm (line 16): EXTERNPROTO \"{robot_url}\" "
        "(line 5): no Webots installation found; not found either: TexturedBackground "
        "(line 7), RectangleArena (line 9), Laptop (line 13), for the same reason; "
        f"{crate}; give --webots-home DIR or set WEBOTS_HOME (looked in {nowhere})")
    # an installation without them: each file looked for is the installation's
    home = tmp_path / "webots"
    home.mkdir()
    with pytest.raises(ConfigError) as e:
        load_world(path, home)
    assert str(e.value) == (
        f"{path}: cannot find the robot's PROTO MyArm (line 16): EXTERNPROTO \"{robot_url}\" "
        f"(line 5): looked in {home}/projects/robots/acme/protos/MyArm.proto "
        "(--webots-home): no such file; not found either: TexturedBackground (line 7), "
        f"RectangleArena (line 9), Laptop (line 13), for the same reason; {crate}; give "
        "--webots-home DIR or set WEBOTS_HOME to a Webots installation")
    # the robot's reason alone has a hint: said, at the end
    pair = (f'EXTERNPROTO "{robot_url}"\nEXTERNPROTO "../protos/Crate.proto"\n'
            "Crate {\n}\nMyArm {\n}\n")
    with pytest.raises(ConfigError) as e:
        load_world(write(path, pair), home)
    assert str(e.value) == (
        f"{path}: cannot find the robot's PROTO MyArm (line 5): EXTERNPROTO \"{robot_url}\" "
        f"(line 1): looked in {home}/projects/robots/acme/protos/MyArm.proto "
        f"(--webots-home): no such file; not found either: {crate.replace('11', '3')}; "
        "give --webots-home DIR or set WEBOTS_HOME to a Webots installation")
    # a robot PROTO of the project's own, known as the robot by its controller field
    own = LIBRARY_ROBOT_WORLD.replace(robot_url, "../protos/MyArm.proto").replace(
        "supervisor TRUE", 'controller "arm"')
    with pytest.raises(ConfigError) as e:
        load_world(write(path, own))
    assert str(e.value).startswith(
        f"{path}: cannot find the robot's PROTO MyArm (line 16): EXTERNPROTO "
        f"\"../protos/MyArm.proto\" (line 5): looked in {tmp_path}/worlds/../protos/"
        "MyArm.proto: no such file; not found either: TexturedBackground (line 7), "
        "RectangleArena (line 9), Laptop (line 13): no Webots installation found; "
        f"{crate}; give --webots-home")
    # nothing that says which is the robot: in the file's order, each reason once
    anonymous = own.replace('  controller "arm"\n', "")
    with pytest.raises(ConfigError) as e:
        load_world(write(path, anonymous))
    assert str(e.value) == (
        f"{path}: cannot find PROTOs TexturedBackground (line 7), RectangleArena (line 9), "
        f"Laptop (line 13): no Webots installation found; {crate}; MyArm (line 16): "
        f"looked in {tmp_path}/worlds/../protos/MyArm.proto: no such file; give "
        f"--webots-home DIR or set WEBOTS_HOME (looked in {nowhere})")


#: A robot PROTO as JetBot's: a chassis drawn by a template branch on a field, the
#: other branch (not taken with the default) holding a library PROTO and a PROTO of its
#: own that holds another; a library PROTO outside any branch; a loop, which is no
#: branch. In JavaScript and in Lua (before R2022b) templates.
TEMPLATED = {
    "javascript": ("%< if (fields.chassis.value) { >%", "%< } else { >%", "%< } >%",
                   "%< for (let i = 0; i < 2; ++i) { >%", "%< } >%"),
    "lua": ("%{ if fields.chassis.value then }%", "%{ else }%", "%{ end }%",
            "%{ for i = 0, 1 do }%", "%{ end }%"),
}
TEMPLATED_PROTO = """\
#VRML_SIM R2023b utf8
# template language: LANGUAGE
EXTERNPROTO "Part.proto"
EXTERNPROTO "webots://projects/devices/nvidia/protos/JetsonNano.proto"
EXTERNPROTO "webots://projects/objects/solids/protos/SolidRoundedBox.proto"
EXTERNPROTO "webots://projects/objects/factory/fasteners/protos/Screw.proto"
PROTO Bot [
  field SFBool chassis TRUE
]
{
  Robot {
    children [
      IF
      Transform {
      }
      ELSE
      SolidRoundedBox {
        name "chassis plate"
      }
      Part {
      }
      END
      LOOP
      Screw {
      }
      LOOP_END
      JetsonNano {
      }
      HingeJoint {
        device [
          RotationalMotor {
            name "wheel"
          }
        ]
      }
    ]
  }
}
"""
PART_PROTO = """\
#VRML_SIM R2023b utf8
EXTERNPROTO "webots://projects/objects/gears/protos/Gear.proto"
PROTO Part [
]
{
  Solid {
    children [
      Gear {
      }
    ]
  }
}
"""


@pytest.mark.parametrize("language", TEMPLATED)
def test_a_proto_left_out_in_a_template_branch_is_said_to_be_in_one(tmp_path, caplog,
                                                                     language):
    """Issue 52: JetBot.proto's SolidRoundedBox sits in the branch Webots does not take
    by default; servo_sim does not evaluate templates, so it says so, and says each
    reason once in its one warning."""
    from servo_sim.load import protos

    nowhere = tmp_path / "no-webots"
    text = TEMPLATED_PROTO.replace("LANGUAGE", language)
    for mark, statement in zip(("IF", "ELSE", "END", "LOOP", "LOOP_END"),
                               TEMPLATED[language], strict=True):
        text = text.replace(f"      {mark}\n", f"      {statement}\n", 1)
    path = write(tmp_path / "Bot.proto", text)
    write(tmp_path / "Part.proto", PART_PROTO)
    with pytest.MonkeyPatch.context() as m, caplog.at_level(logging.WARNING, "servo_sim"):
        m.setattr(protos, "DEFAULT_HOMES", (str(nowhere),))
        world = load_world(path)
    assert [m.name for m in world.config.motors] == ["wheel"]
    branch = "in the template branch of line 16, which may not be taken"
    assert world.unread == {  # the Gear in the Part in the branch: in the branch too
        "SolidRoundedBox": f"SolidRoundedBox (line 17, {branch})",
        "Gear": f"Gear (Part.proto, line 8, {branch})",
        "Screw": "Screw (line 24)", "JetsonNano": "JetsonNano (line 27)"}
    assert caplog.records[0].getMessage() == (
        f"{path}: left out PROTOs SolidRoundedBox (line 17, {branch}), Gear (Part.proto, "
        f"line 8, {branch}), Screw (line 24), JetsonNano (line 27): no Webots installation "
        f"found; give --webots-home DIR or set WEBOTS_HOME (looked in {nowhere}); the "
        "devices and joints they may hold are not simulated")
    # the same PROTO outside a branch too: it is there, whichever branch is taken
    caplog.clear()
    write(path, text.replace("      Screw {", "      SolidRoundedBox {\n      }\n"
                                             "      Screw {"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(protos, "DEFAULT_HOMES", (str(nowhere),))
        world = load_world(path)
    assert world.unread["SolidRoundedBox"] == "SolidRoundedBox (line 24)"
