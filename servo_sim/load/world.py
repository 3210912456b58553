"""Motors from a Webots world (``.wbt``) or PROTO (``.proto``) file, as a servo_sim config.

The file is read by :mod:`.vrml` (the syntax); here its nodes are walked as Webots
means them: PROTO instances expanded (their ``IS`` fields bound to the instance's values
or the interface defaults), and a motor field computed by template code is an error.

What is read (Webots name -> servo_sim config field):

* ``WorldInfo.basicTimeStep`` -> ``basic_time_step_ms`` (Webots' default 32 ms);
* every ``RotationalMotor``/``LinearMotor`` in a joint's ``device`` list: ``name``,
  ``maxVelocity``, ``maxTorque``/``maxForce``, ``controlPID``, ``minPosition``,
  ``maxPosition``, ``multiplier``, ``acceleration``, ``consumptionFactor``;
* the joint's ``jointParameters``: ``position``, ``springConstant``,
  ``dampingConstant``, ``staticFriction``, ``minStop``, ``maxStop``;
* the ``PositionSensor`` (``name``, ``resolution``, ``noise``) and ``Brake`` (``name``)
  of the same device list -> ``position_sensor_name`` (``""``: the joint has none),
  ``position_sensor.*``, ``brake_name``;
* ``Robot.name`` and ``Robot.battery`` -> the controller's robot name and ``battery``;
* the ``Physics`` of what a HingeJoint or SliderJoint moves (:mod:`.loads`), with
  ``WorldInfo.gravity`` and ``coordinateSystem`` -> the motor's ``inertia`` and gravity
  ``load`` (:mod:`servo_sim.model.physics`).

Absent fields take Webots' defaults, which are servo_sim's. Joints of ``Hinge2Joint``
and ``BallJoint`` give one motor per axis (``device``/``device2``/``device3`` with
``jointParameters``/``jointParameters2``/``jointParameters3``). A joint with a
``PositionSensor`` or ``Brake`` and no motor is a passive joint (``passive: true``).
PROTOs declared by ``EXTERNPROTO`` are read from where the URL points (:mod:`.protos`),
the instance's fields over the defaults; in a file before R2023a, by name. One that
cannot be read is left out with a warning (inside the robot: one warning for them all,
their devices and joints not simulated; ``strict``: an error), as are motors outside
joints (a ``Propeller``'s or ``Track``'s device: no joint to drive); with no motor left,
it is the error, the robot's own PROTO first. Each reason is said once. The robot's
other devices are listed (:attr:`World.unsimulated`).
A bad value raises :class:`ConfigError` naming the file, the node (type, name, line)
and the field.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..model.config import (
    STANDARD_GRAVITY,
    ConfigError,
    MotorConfig,
    SimulationConfig,
    parse_config,
    parse_field,
)
from ..model.physics import joint_load, rotation_matrix
from .loads import JOINTS, POSES, SOLIDS, LoadReader, counted, numbers
from .protos import NotFound, by_name, locate
from .vrml import IsRef, Node, Parser, Proto, Template

log = logging.getLogger("servo_sim")

#: Webots' default WorldInfo.basicTimeStep, ms.
WEBOTS_BASIC_TIME_STEP = 32

#: Webots' built-in node types (not PROTOs); anything else is a PROTO instance.
BASE_NODES = frozenset("""
    Accelerometer Altimeter Appearance Background BallJoint BallJointParameters Billboard
    Box Brake CadShape Camera Capsule Charger Color Compass Cone Connector ContactProperties
    Coordinate Cylinder Damping DirectionalLight Display DistanceSensor ElevationGrid
    Emitter Fluid Focus Fog GPS Group Gyro Hinge2Joint Hinge2JointParameters HingeJoint
    HingeJointParameters ImageTexture ImmersionProperties IndexedFaceSet IndexedLineSet
    InertialUnit JointParameters LED Lens LensFlare Lidar LightSensor LinearMotor Material
    Mesh Microphone Muscle Normal PBRAppearance Pen Physics Plane PointLight PointSet Pose
    PositionSensor Propeller Radar Radio RangeFinder Receiver Recognition Robot
    RotationalMotor Shape Skin SliderJoint Slot Solid SolidReference Speaker Sphere
    SpotLight TextureCoordinate TextureTransform TouchSensor Track TrackWheel Transform
    VacuumCup VacuumGripper Viewpoint WorldInfo Zoom
""".split())

#: Fields whose nodes cannot hold a device (looks, shapes, physics): not walked, and a
#: PROTO there (an appearance...) is not worth a warning.
_NO_DEVICES = frozenset({"appearance", "geometry", "boundingObject", "physics",
                         "material", "texture", "textureTransform", "coord", "normal",
                         "texCoord", "color"})
_MOTORS = {"RotationalMotor": "rotational", "LinearMotor": "linear"}
_DEFAULT_NAMES = {"RotationalMotor": "rotational motor", "LinearMotor": "linear motor",
                  "PositionSensor": "position sensor", "Brake": "brake", "Robot": "robot"}
#: Webots' devices -> their default names. servo_sim simulates a joint's motor, position
#: sensor and brake; these, and those three outside a joint, are found and not simulated.
_DEVICES = {
    "Accelerometer": "accelerometer", "Altimeter": "altimeter", "Camera": "camera",
    "Compass": "compass", "Connector": "connector", "Display": "display",
    "DistanceSensor": "distance sensor", "Emitter": "emitter", "GPS": "gps", "Gyro": "gyro",
    "InertialUnit": "inertial unit", "LED": "led", "Lidar": "lidar",
    "LightSensor": "light sensor", "Microphone": "microphone", "Pen": "pen",
    "Radar": "radar", "Radio": "radio", "RangeFinder": "range-finder",
    "Receiver": "receiver", "Skin": "skin", "Speaker": "speaker",
    "TouchSensor": "touch sensor", "VacuumCup": "vacuum cup",
    "VacuumGripper": "vacuum gripper", **{k: v for k, v in _DEFAULT_NAMES.items()
                                           if k != "Robot"},
}

#: Webots field -> config field, and how many numbers it takes (0: a string).
_MOTOR_FIELDS: dict[str, tuple[str, int]] = {
    "maxVelocity": ("max_velocity", 1), "maxTorque": ("max_torque", 1),
    "maxForce": ("max_force", 1), "controlPID": ("control_pid", 3),
    "minPosition": ("min_position", 1), "maxPosition": ("max_position", 1),
    "multiplier": ("multiplier", 1), "acceleration": ("acceleration", 1),
    "consumptionFactor": ("consumption_factor", 1),
}
_JOINT_FIELDS: dict[str, tuple[str, int]] = {
    "position": ("position", 1), "springConstant": ("spring_constant", 1),
    "dampingConstant": ("damping_constant", 1), "staticFriction": ("static_friction", 1),
    "minStop": ("min_stop", 1), "maxStop": ("max_stop", 1),
}
_SENSOR_FIELDS: dict[str, tuple[str, int]] = {
    "resolution": ("position_sensor.resolution", 1), "noise": ("position_sensor.noise", 1),
}
#: Webots fields of those nodes with no counterpart here (read and left alone).
_IGNORED = frozenset({"name", "sound", "muscles"})
#: Config field names in the reasons of the config's checks -> Webots field names.
_WEBOTS_NAMES = {config: webots for webots, (config, _) in
                 {**_MOTOR_FIELDS, **_JOINT_FIELDS}.items() if config != webots}
_CONFIG_NAME = re.compile(r"\b(" + "|".join(_WEBOTS_NAMES) + r")\b")
#: servo_sim's inertia where a joint moves no Physics.
DEFAULT_INERTIA = MotorConfig("m").inertia
#: kg*m^2: below this, what a joint moves is on its axis (rounding in the file's poses).
MIN_INERTIA = 1e-12
#: A field absent from the file (its value is Webots' default).
_ABSENT = object()


@dataclass
class World:
    """What a Webots file gives a controller run: the config and the robot's name."""

    config: SimulationConfig
    robot_name: str = "robot"
    path: str = ""
    #: instances whose PROTO cannot be read, and why: left out
    unexpanded: list[str] = field(default_factory=list)
    #: PROTOs inside the robot that cannot be read (its devices may be in them): name ->
    #: the first instance ("Gear (line 121)")
    unread: dict[str, str] = field(default_factory=dict)
    #: motors outside joints (in a Propeller's or Track's device list...), not imported
    outside: list[str] = field(default_factory=list)
    #: the robot's devices servo_sim does not simulate: name -> Webots type, where
    unsimulated: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Unresolved:
    """A PROTO instance whose PROTO cannot be found, and why."""

    label: str  #: the first instance (outside a template branch, if there is one)
    declared: str  #: its EXTERNPROTO line ("" if none)
    why: NotFound  #: where it was looked for, and what to do
    in_robot: bool  #: inside a Robot: it may hold the robot's devices
    #: in a template branch (which Webots may not take): another instance outside one
    #: takes its place
    in_branch: bool = False
    #: outside any Robot, and its URL (Webots' robots library) or its fields (a
    #: controller) say it is a robot: the robot, when the file has no other
    robot: bool = False

    @property
    def text(self) -> str:
        return f"{self.head}: {self.why}"

    @property
    def head(self) -> str:
        """The instance and its EXTERNPROTO line."""
        return f"{self.label}{': ' + self.declared if self.declared else ''}"


def _missing(unresolved: list[_Unresolved], same_as: _Unresolved | None = None) -> str:
    """PROTO instances not found, each reason said once and what to do at the end, once:
    ``A (line 3), B (line 9): not in /x (--webots-home); C (line 12): looked in
    /p/C.proto: no such file; give ...``; the only one of the message with its EXTERNPROTO
    line. Those not found for the reason of ``same_as`` (named before them): "for the
    same reason"."""
    groups: dict[str, list[_Unresolved]] = {}
    for u in unresolved:
        groups.setdefault(u.why.shared, []).append(u)
    parts = []
    for shared, group in groups.items():
        labels = ", ".join(u.label for u in group)
        if same_as is not None and shared == same_as.why.shared:
            parts.append(f"{labels}, for the same reason")
        elif same_as is None and len(unresolved) == 1:
            parts.append(f"{group[0].head}: {group[0].why.detail}")
        else:
            parts.append(f"{labels}: {group[0].why.detail if len(group) == 1 else shared}")
    hints = [u.why.hint for u in ([same_as] if same_as else []) + unresolved if u.why.hint]
    return "; ".join(parts + list(dict.fromkeys(hints)))


def _a_robot(node: Node, url: str) -> bool:
    """Whether a PROTO instance that cannot be read looks like a robot: its PROTO is in
    Webots' robots library, or the instance sets a robot's controller fields (a
    ``controller`` other than ``"<none>"``, ``supervisor``, ``synchronization``)."""
    controller = node.fields.get("controller")
    return "/robots/" in url or (isinstance(controller, str) and controller != "<none>") \
        or "supervisor" in node.fields or "synchronization" in node.fields


class _Importer:
    def __init__(self, parser: Parser, source: str,
                 webots_home: str | Path | None = None, legacy: bool = False,
                 strict: bool = False) -> None:
        self.parser = parser
        #: a PROTO inside the robot that cannot be read stops the load (else: left out)
        self.strict = strict
        #: a world before Webots R2022a: y up by default (NUE), cylinders along y
        self.legacy = legacy
        self.source = source
        self.webots_home = webots_home
        self.files: dict[Path, Parser | NotFound] = {}  # PROTO files read (or why not)
        self.unresolved: dict[str, _Unresolved] = {}  # by PROTO name, the first instance
        self.in_robot = 0  # depth of Robot nodes around the node being visited
        #: the template branches around the node being visited (where each begins): a
        #: PROTO instance in one, and what it expands to, may not be there
        self.branches: list[str] = []
        self.motors: list[dict[str, Any]] = []
        #: per motor (as self.motors): its joint and which of the joint's axes ("", "2",
        #: "3"), for a reader that builds the joints (servo_sim.multibody.from_world)
        self.axes: list[tuple[Node, str]] = []
        self.basic_time_step: int | None = None
        #: (name, battery, motors before it, its node)
        self.robots: list[tuple[str, Any, int, Node]] = []
        #: per motor (as self.motors): config field -> (node label, Webots field, value
        #: in the file or _ABSENT), to say the config checks' errors in Webots' terms
        self.origins: list[dict[str, tuple[str, str, Any]]] = []
        self.outside: list[str] = []  # motors not in a joint: name (holder, line)
        #: devices of the robot not simulated: name -> Webots type and where
        self.unsimulated: dict[str, str] = {}
        #: world <- the frame of the node being visited (rotation), and the rotations
        #: above it that could not be read
        self.frame: tuple[np.ndarray, tuple[str, ...]] = (np.eye(3), ())
        self.gravity = STANDARD_GRAVITY  # WorldInfo's
        self.up = _up("NUE" if legacy else "ENU")
        #: per joint motor, what its load needs: (motor, joint, env, axis, anchor, frame);
        #: an axis or anchor a template computes is why it is not read
        self.joints: list[tuple[dict[str, Any], Node, dict[str, Any], tuple[float, ...] | str,
                                tuple[float, ...] | str, tuple[np.ndarray, tuple[str, ...]]]] \
            = []

    def error(self, node: Node, name: str | None, field_name: str, value: Any,
              reason: str) -> ConfigError:
        return ConfigError(f"{self.source}: {node.label(name)}: field {field_name!r} = "
                           f"{_show(value)}: {reason}")

    def resolve(self, value: Any, env: dict[str, Any]) -> Any:
        while isinstance(value, IsRef):
            if value.name not in env:
                raise ConfigError(f"{self.source}: IS {value.name}: no such PROTO field")
            value = env[value.name]
        return value

    def field(self, node: Node, key: str, env: dict[str, Any], default: Any = None) -> Any:
        return self.resolve(node.fields.get(key, default), env)

    def bind(self, value: Any, env: dict[str, Any]) -> Any:
        """``value`` with every ``IS`` in it (nested nodes too) replaced by ``env``'s
        value: a PROTO instance's field, fixed where the instance is written."""
        value = self.resolve(value, env)
        if isinstance(value, list):
            return [self.bind(v, env) for v in value]
        if isinstance(value, Node) and env:  # no env (a world's top): no IS to replace
            return replace(value, fields={k: self.bind(v, env)
                                          for k, v in value.fields.items()})
        return value

    # ---------------------------------------------------------------- PROTOs

    def proto(self, node: Node) -> Proto | None:
        """The PROTO ``node`` is an instance of (None: a base node, or not found, which
        is recorded): defined in the file that wrote it, or declared there by an
        EXTERNPROTO and read from where that points."""
        scope = node.scope or self.parser
        if node.type in scope.protos:
            return scope.protos[node.type]
        if node.type in BASE_NODES:
            return None
        declared = scope.externs.get(node.type)
        where, url = "", ""
        if declared is None and _before(scope.release, (2023, "a")):
            found = by_name(node.type, Path(scope.source), self.webots_home)
            if isinstance(found, Path):
                found = self.read_proto(found)
            if isinstance(found, Parser) and node.type in found.protos:
                return found.protos[node.type]
            why = found if isinstance(found, NotFound) else \
                NotFound(f"{found.source} defines no PROTO {node.type}")
        elif declared is None:
            why = NotFound("neither a Webots node nor a PROTO declared by an EXTERNPROTO or "
                           f"defined in {scope.origin or scope.source}")
        else:
            url, line = declared
            found = self.proto_file(url, Path(scope.source))
            if isinstance(found, Parser) and node.type in found.protos:
                return found.protos[node.type]
            where = f'EXTERNPROTO "{url}" ({scope.origin + ", " if scope.origin else ""}' \
                    f"line {line})"
            why = found if isinstance(found, NotFound) else \
                NotFound(f"{found.source} defines no PROTO {node.type}")
        self.not_found(node, where, why, url)
        return None

    def not_found(self, node: Node, where: str, why: NotFound, url: str) -> None:
        """Record ``node``, an instance of a PROTO not found: the first of its PROTO's,
        unless that one is in a template branch and this one is not."""
        branch = f"line {node.branch}" if node.branch is not None else \
            self.branches[-1] if self.branches else None  # its own is in its file
        first = self.unresolved.get(node.type)
        if first is not None and (branch is not None or not first.in_branch):
            return
        label = node.label() if branch is None else \
            f"{node.type} ({node.where}, in the template branch of {branch}, which may not " \
            "be taken)"
        self.unresolved[node.type] = _Unresolved(
            label, where, why, self.in_robot > 0, branch is not None,
            self.in_robot == 0 and _a_robot(node, url))

    def proto_file(self, url: str, declared_in: Path) -> Parser | NotFound:
        """The PROTO file ``url`` names, read (once), or why it cannot be."""
        found = locate(url, declared_in, self.webots_home)
        return found if isinstance(found, NotFound) else self.read_proto(found)

    def read_proto(self, found: Path) -> Parser | NotFound:
        """The PROTO file ``found``, read (once), or why it cannot be."""
        key = found.resolve()
        if key not in self.files:
            try:
                text = found.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.files[key] = NotFound(_cannot_read(found, exc))
            else:
                parser = Parser(text, str(found), found.name)
                self.files[key] = parser  # before parsing: a file naming itself is found
                nodes = parser.parse_file()
                if nodes:
                    raise ConfigError(f"{found}: a PROTO file holds PROTO definitions, "
                                      f"found {nodes[0].label()}")
        return self.files[key]

    def base(self, node: Node, env: dict[str, Any]) -> tuple[Node, dict[str, Any]] | None:
        """``node`` with PROTO instances expanded to their base node (and that node's
        field values); None when a PROTO cannot be found or has no node."""
        while (proto := self.proto(node)) is not None:
            env = {**proto.defaults, **{k: self.bind(v, env) for k, v in node.fields.items()}}
            body = [item for item in proto.body if isinstance(item, Node)]
            if not body:
                return None
            node = body[0]
        if node.type not in BASE_NODES:
            return None
        return node, env

    # ---------------------------------------------------------------- walk

    def walk(self, value: Any, env: dict[str, Any], holder: Node | None = None) -> None:
        """Visit the nodes of ``value``, a field of ``holder`` (None: the file's top)."""
        value = self.resolve(value, env)
        if isinstance(value, list):
            for item in value:
                self.walk(item, env, holder)
        elif isinstance(value, Node) and not value.use:
            self.visit(value, env, holder)

    def visit(self, node: Node, env: dict[str, Any], holder: Node | None = None) -> None:
        expanded = self.base(node, env)  # a PROTO instance: the instance's values, else
        if expanded is None:             # the PROTO's defaults
            return
        if expanded[0] is not node:
            holder = holder or node
        branches = [n.at(n.branch) for n in (node, expanded[0])[:1 + (expanded[0] is not node)]
                    if n.branch is not None]  # the instance's, and its PROTO body's
        self.branches.extend(branches)
        node, env = expanded
        if node.type in _MOTORS:  # a joint's motors are read by joint(), not visited
            where = holder or node
            name = self.field(node, "name", env, _DEFAULT_NAMES[node.type])
            self.outside.append(f"{_show(name)} ({where.type if holder else 'top level'}, "
                                f"line {where.line})")
        if node.type in _DEVICES and self.in_robot:  # a joint's are read by joint()
            name = self.field(node, "name", env, _DEVICES[node.type])
            if isinstance(name, str):
                outside = f" outside a joint ({holder.type})" \
                    if node.type in _DEFAULT_NAMES and holder is not None else ""
                self.unsimulated.setdefault(name, f"{node.type}{outside}, {node.where}")
        if node.type == "WorldInfo":
            self.world_info(node, env)
        elif node.type == "Robot":
            name = self.field(node, "name", env, _DEFAULT_NAMES["Robot"])
            self.robots.append((name, self.field(node, "battery", env, []),
                                len(self.motors), node))
        elif node.type in JOINTS:
            self.joint(node, env)
        self.in_robot += node.type == "Robot"
        parent = self.frame
        if (node.type in SOLIDS or node.type in POSES) and "rotation" in node.fields:
            rotation = counted(self.field(node, "rotation", env), 4)
            self.frame = (parent[0] @ rotation_matrix(rotation), parent[1]) \
                if rotation is not None else \
                (parent[0], (*parent[1], f"{node.label()}: field 'rotation' not read (not "
                                         "4 numbers): taken as none"))
        for key, value in node.fields.items():
            if node.type in JOINTS and re.fullmatch(r"device\d?", key):
                continue  # read by joint()
            if key in _NO_DEVICES or key.endswith("Appearance"):
                continue
            self.walk(value, env, node)
        self.frame = parent
        self.in_robot -= node.type == "Robot"
        del self.branches[len(self.branches) - len(branches):]

    def world_info(self, node: Node, env: dict[str, Any]) -> None:
        value = self.field(node, "basicTimeStep", env, float(WEBOTS_BASIC_TIME_STEP))
        if isinstance(value, Template):
            raise self.error(node, None, "basicTimeStep", value, "computed by a template, "
                             "which servo_sim does not evaluate")
        if not isinstance(value, float) or value < 1 or value != int(value):
            raise self.error(node, None, "basicTimeStep", value, "must be a whole number of "
                             "ms >= 1 (servo_sim steps in whole milliseconds)")
        self.basic_time_step = int(value)
        system = self.field(node, "coordinateSystem", env, "NUE" if self.legacy else "ENU")
        if system not in ("ENU", "NUE", "EUN"):
            raise self.error(node, None, "coordinateSystem", system,
                             "must be ENU, NUE or EUN")
        self.up = _up(system)
        gravity = self.field(node, "gravity", env, STANDARD_GRAVITY)
        if isinstance(gravity, tuple) and len(gravity) == 3:  # before R2020b: a vector
            vector = np.array(gravity)
            self.gravity = float(np.linalg.norm(vector))
            self.up = -vector / self.gravity if self.gravity > 0 else self.up
        elif isinstance(gravity, float) and gravity >= 0:
            self.gravity = gravity
        else:
            raise self.error(node, None, "gravity", gravity, "must be a number >= 0")

    def joint(self, node: Node, env: dict[str, Any]) -> None:
        for suffix in ("", "2", "3"):
            listed = self.field(node, "device" + suffix, env, [])
            if listed is None or isinstance(listed, Node):
                listed = [] if listed is None else [listed]
            elif not isinstance(listed, list):
                raise self.error(node, None, "device" + suffix, listed,
                                 "must be a list of device nodes")
            devices = [expanded for item in listed
                       if isinstance(d := self.resolve(item, env), Node)
                       and (expanded := self.base(d, env)) is not None]
            motors = [d for d in devices if d[0].type in _MOTORS]
            if len(motors) > 1:
                raise ConfigError(f"{self.source}: {node.label()}: field 'device{suffix}' "
                                  "holds more than one motor")
            others = [d for d in devices if d[0].type in ("PositionSensor", "Brake")]
            if motors:
                motor = self.motor(*motors[0])
            elif others:  # a sensor or brake and no motor: a passive joint
                motor = self.passive(node, *others[0])
            else:
                continue
            motor["position_sensor_name"] = ""  # none, unless the device list has one
            params = self.field(node, "jointParameters" + suffix, env)
            if isinstance(params, Node):
                self.copy(params, env, _JOINT_FIELDS, motor)
            self.note(params if isinstance(params, Node) else None, env, _JOINT_FIELDS,
                      label=params.label() if isinstance(params, Node) else
                      f"{node.label()}: jointParameters{suffix}")
            for d, d_env in devices:
                if d.type == "PositionSensor":
                    motor["position_sensor_name"] = self.name(d, d_env)
                    self.copy(d, d_env, _SENSOR_FIELDS, motor)
                    self.note(d, d_env, {"name": ("position_sensor_name", 0),
                                         **_SENSOR_FIELDS})
                elif d.type == "Brake":
                    motor["brake_name"] = self.name(d, d_env)
                    self.note(d, d_env, {"name": ("brake_name", 0)})
            self.motors.append(motor)
            self.axes.append((node, suffix))
            linear = node.type == "SliderJoint"
            axis = self.vector(params, env, "axis", motor["name"], (0.0, 0.0, 1.0) if linear
                               else (1.0, 0.0, 0.0), nonzero=True)
            anchor = self.vector(params, env, "anchor", motor["name"], (0.0, 0.0, 0.0))
            self.joints.append((motor, node, env, axis, anchor, self.frame))

    def passive(self, joint: Node, device: Node, env: dict[str, Any]) -> dict[str, Any]:
        """A joint without a motor: named by its sensor (else its brake), moved only by
        its load, spring, damping and stops."""
        name = self.name(device, env)
        self.origins.append({})
        self.note(device, env, {"name": ("name", 0)}, name)
        return {"name": name, "passive": True,
                "type": "linear" if joint.type == "SliderJoint" else "rotational"}

    def name(self, node: Node, env: dict[str, Any]) -> str:
        value = self.field(node, "name", env, _DEFAULT_NAMES[node.type])
        if not isinstance(value, str) or not value:
            raise self.error(node, None, "name", value, "must be a non-empty string")
        return value

    def motor(self, node: Node, env: dict[str, Any]) -> dict[str, Any]:
        name = self.name(node, env)
        motor: dict[str, Any] = {"name": name, "type": _MOTORS[node.type]}
        known = {k: v for k, v in _MOTOR_FIELDS.items()
                 if k != ("maxForce" if node.type == "RotationalMotor" else "maxTorque")}
        for key in node.fields:
            if key not in known and key not in _IGNORED:
                raise self.error(node, name, key, self.field(node, key, env),
                                 f"not a field of {node.type}")
        self.copy(node, env, known, motor, name)
        self.origins.append({})
        self.note(node, env, {"name": ("name", 0), **known}, name)
        return motor

    def note(self, node: Node | None, env: dict[str, Any], table: dict[str, tuple[str, int]],
             name: str | None = None, label: str | None = None) -> None:
        """Where the last motor's fields of ``table`` come from (``node``; None: absent)."""
        if label is None and node is not None:
            label = node.label(name if name is not None else self.field(node, "name", env))
        for key, (target, _) in table.items():
            value = self.field(node, key, env) if node is not None and key in node.fields \
                else _ABSENT
            self.origins[-1][target] = (label or "", key, value)

    def copy(self, node: Node, env: dict[str, Any], table: dict[str, tuple[str, int]],
             motor: dict[str, Any], name: str | None = None) -> None:
        """The fields of ``table`` present in ``node``, checked, into ``motor``."""
        label = name if name is not None else node.fields.get("name")
        label = label if isinstance(label, str) else None
        for key, (target, count) in table.items():
            if key not in node.fields:
                continue
            value = self.field(node, key, env)
            if isinstance(value, Template):
                raise self.error(node, label, key, value, "computed by a template, which "
                                 "servo_sim does not evaluate")
            numbers = value if isinstance(value, tuple) else (value,)
            if len(numbers) != count or not all(isinstance(v, float) for v in numbers):
                raise self.error(node, label, key, value,
                                 "must be a number" if count == 1 else
                                 f"must be {count} numbers")
            parsed = list(numbers) if count > 1 else numbers[0]
            try:
                parsed = parse_field(target, parsed)
            except ValueError as exc:
                raise self.error(node, label, key, value, str(exc)) from None
            group, _, leaf = target.rpartition(".")
            (motor.setdefault(group, {}) if group else motor)[leaf] = \
                list(parsed) if isinstance(parsed, tuple) else parsed

    # ---------------------------------------------------------------- result

    def world(self, path: Path, nodes: list[Any]) -> World:
        for node in nodes:
            self.walk(node, {})
        if path.suffix == ".proto":  # the file's own PROTO, with its defaults
            for proto in self.parser.protos.values():
                for item in proto.body:
                    self.walk(item, dict(proto.defaults))
        blocking = [u for u in self.unresolved.values()
                    if not self.motors or (self.strict and u.in_robot)]
        if blocking:
            raise ConfigError(f"{self.source}: {self.cannot_find(blocking)}"
                              + (" (--strict-protos: a robot's PROTOs may hold its devices "
                                 "and joints, none is left out)" if self.motors else ""))
        unread = {name: u.label for name, u in self.unresolved.items() if u.in_robot}
        if unread:
            several = len(unread) > 1
            log.warning("%s: left out PROTO%s %s; the devices and joints %s may hold are "
                        "not simulated", self.source, "s" if several else "",
                        _missing([u for u in self.unresolved.values() if u.in_robot]),
                        "they" if several else "it")
        left_out = self.left_out()
        if not self.motors:
            raise ConfigError(f"{self.source}: no RotationalMotor or LinearMotor in a joint's "
                              "device list" + (f" ({left_out})" if left_out else ""))
        robots = [r for i, r in enumerate(self.robots)
                  if (self.robots[i + 1][2] if i + 1 < len(self.robots)
                      else len(self.motors)) > r[2]]
        if len(robots) > 1:
            raise ConfigError(f"{self.source}: several robots have motors ("
                              + ", ".join(repr(r[0]) for r in robots)
                              + "); a controller runs one robot: keep one in the file")
        raw: dict[str, Any] = {"motors": self.motors,
                               "basic_time_step_ms": self.basic_time_step
                               or WEBOTS_BASIC_TIME_STEP}
        robot_name = robots[0][0] if robots and isinstance(robots[0][0], str) else "robot"
        battery = robots[0][1] if robots else []
        top: dict[str, tuple[str, str, Any]] = {}
        if battery != []:
            top["battery"] = (robots[0][3].label(robot_name), "battery", battery)
            raw["battery"] = self.battery(battery, top["battery"][0])
        if left_out:
            log.warning("%s: %s", self.source, left_out)
        self.loads()
        try:
            config = parse_config(raw, self.source)
        except ConfigError as exc:
            raise self.in_webots_terms(exc, top) from None
        return World(config, robot_name, str(path),
                     [u.text for u in self.unresolved.values()], unread, self.outside,
                     self.unsimulated)

    def cannot_find(self, blocking: list[_Unresolved]) -> str:
        """The error of PROTOs not found that stop the load: with no motor, the robot's
        own PROTO first (if one looks like a robot: :func:`_a_robot`), then the others;
        each reason, and what to do, said once."""
        robot = None if self.motors else next((u for u in blocking if u.robot), None)
        if robot is None:
            return f"cannot find PROTO{'s' if len(blocking) > 1 else ''} {_missing(blocking)}"
        others = [u for u in blocking if u is not robot]
        text = f"cannot find the robot's PROTO {robot.head}: {robot.why.detail}"
        if others:
            text += "; not found either: " + _missing(others, same_as=robot)
        elif robot.why.hint:
            text += f"; {robot.why.hint}"
        return text

    def loads(self) -> None:
        """Each joint motor's ``inertia`` and gravity ``load`` from the Physics of what
        its HingeJoint or SliderJoint moves; where there is none, servo_sim's defaults,
        said once per motor."""
        for motor, joint, env, axis, anchor, frame in self.joints:
            why = self.load(motor, joint, env, axis, anchor, frame)
            if why:
                log.warning("%s: %r (%s): %s: inertia %g and no gravity load (servo_sim's "
                            "defaults)", self.source, motor["name"], joint.label(), why,
                            DEFAULT_INERTIA)

    def load(self, motor: dict[str, Any], joint: Node, env: dict[str, Any],
             axis: tuple[float, ...] | str, anchor: tuple[float, ...] | str,
             frame: tuple[np.ndarray, tuple[str, ...]]) -> str:
        """One motor's load into ``motor`` (what was assumed or left out said in one
        warning); why not ("") where the defaults stay."""
        if joint.type not in ("HingeJoint", "SliderJoint"):
            return "loads from Physics are read for HingeJoint and SliderJoint only"
        unknown = [v for v in (axis, anchor) if isinstance(v, str)]
        if unknown:
            return "; ".join(unknown)
        linear = joint.type == "SliderJoint"
        reader = LoadReader(self, linear, along=1 if self.legacy else 2)
        carried = reader.carried(joint.fields.get("endPoint"), env)
        if carried is None:
            return "no mass under its endPoint (no Physics)"
        rotation, unread = frame
        fields = joint_load(carried, linear, axis, anchor, motor.get("position", 0.0),
                            rotation.T @ self.up, self.gravity)
        notes = [*unread, *reader.notes]
        if fields["inertia"] < MIN_INERTIA:  # a point mass on the axis
            notes.append(f"the mass it moves is on its axis: inertia {DEFAULT_INERTIA:g} "
                         "(servo_sim's default)")
            del fields["inertia"]
        if notes:
            log.warning("%s: %r (%s): its load from Physics: %s", self.source,
                        motor["name"], joint.label(), "; ".join(dict.fromkeys(notes)))
        motor.update(fields)
        return ""

    def vector(self, node: Any, env: dict[str, Any], key: str, motor: str,
               default: tuple[float, ...], nonzero: bool = False) -> tuple[float, ...] | str:
        """A 3-vector field of a joint's jointParameters (its default when absent); why
        not where a template computes it."""
        if not isinstance(node, Node) or key not in node.fields:
            return default
        value = self.field(node, key, env)
        if isinstance(value, Template):
            return f"{node.label()}: field {key!r} computed by a template, not read"
        numbers3 = counted(value, 3)
        if numbers3 is None or (nonzero and not any(numbers3)):
            raise ConfigError(f"{self.source}: {node.label()} (motor {motor!r}): field "
                              f"{key!r} = {_show(value)}: must be 3 numbers"
                              + (", not all 0" if nonzero else ""))
        return numbers3

    def left_out(self) -> str:
        """What the import leaves out, said once: PROTO instances outside the robot
        whose PROTO cannot be found, and motors outside joints ("" when nothing)."""
        parts = []
        found = [u for u in self.unresolved.values() if not u.in_robot]
        if found:
            parts.append("PROTOs not found, outside the robot, left out: "
                         + _missing([replace(u, declared="") for u in found]))
        if self.outside:
            parts.append("motors outside joints are not imported: " + ", ".join(self.outside))
        return "; ".join(parts)

    def in_webots_terms(self, exc: ConfigError, top: dict[str, tuple[str, str, Any]]
                        ) -> ConfigError:
        """An error of the config's checks (limits against each other, device names,
        coupled motors, the battery's values) said of the Webots node, line and field."""
        if exc.motor is None:
            origin = top.get(exc.field or "")
        else:
            # the later of two namesakes: the one the config's check names
            pairs = zip(reversed(self.motors), reversed(self.origins), strict=True)
            fields = next((o for m, o in pairs if m["name"] == exc.motor), {})
            origin = fields.get(exc.field or "name")
        if origin is None or exc.reason is None:
            return exc
        label, key, value = origin
        shown = f"{_show(exc.value)} (Webots' default)" if value is _ABSENT else _show(value)
        reason = _CONFIG_NAME.sub(lambda m: _WEBOTS_NAMES[m.group()], exc.reason)
        return ConfigError(f"{self.source}: {label}: field {key!r} = {shown}: {reason}")

    def battery(self, value: Any, label: str) -> list[float]:
        """Webots' ``[energy, capacity, recharge]``, flattened: its shape is checked here,
        its values by the config (the battery's rules are the config's)."""
        values = numbers(value)
        if not all(isinstance(v, float) for v in values) or not 2 <= len(values) <= 3:
            raise ConfigError(f"{self.source}: {label}: field 'battery' = {_show(value)}: "
                              "must be [energy, capacity, recharge] in J, J, W")
        return values


def _show(value: Any) -> str:
    if isinstance(value, Template):
        return value.text
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return " ".join(f"{v:g}" if isinstance(v, float) else repr(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Node):
        return f"{value.type} {{...}}"
    return repr(value)


def _up(system: str) -> np.ndarray:
    """The up axis of a WorldInfo.coordinateSystem (its letter U)."""
    return np.eye(3)[system.index("U")]


def _before(written: tuple[int, str] | None, release: tuple[int, str]) -> bool:
    """True for a file written (:attr:`Parser.release`) before Webots ``release``: before
    R2023a, PROTOs are found by name (no EXTERNPROTO); before R2022a, y is up and
    cylinders are along y."""
    return written is not None and written < release


def _cannot_read(path: Path, exc: OSError | UnicodeDecodeError) -> str:
    return f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"


def load_world(path: str | Path, webots_home: str | Path | None = None,
               strict: bool = False) -> World:
    """Read a ``.wbt`` or ``.proto`` file into a :class:`World` (ConfigError if bad);
    ``webots_home`` is where ``webots://`` PROTOs are (see :mod:`.protos`). A PROTO
    inside the robot that cannot be read is left out with a warning, unless ``strict``."""
    return read_world(path, webots_home, strict)[0]


def read_world(path: str | Path, webots_home: str | Path | None = None,
               strict: bool = False) -> tuple[World, Any, list[Any]]:
    """:func:`load_world`'s reading, with what a reader of more than the motors needs
    (``servo_sim.multibody.from_world``): the importer (its PROTO expansion ``base``
    and ``resolve``, ``gravity``, ``up``, ``legacy``, ``axes``) and the file's nodes."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(_cannot_read(path, exc)) from None
    parser = Parser(text, str(path))
    try:
        nodes = parser.parse_file()
        legacy = _before(parser.release, (2022, "a"))
        importer = _Importer(parser, str(path), webots_home, legacy, strict)
        return importer.world(path, nodes), importer, nodes
    except RecursionError:
        raise ConfigError(f"{path}: nodes nested too deeply to read") from None
