"""The rooms of servo_sim and their floors (issue 32; docs/testing.md, "Layout"), checked
on the source with ``ast``, without importing it (no ROS needed).

Every import counts: at the top of a module, inside a function (a lazy import), under
``if TYPE_CHECKING:``. A room is a subpackage of servo_sim (``model``, ``hardware``...)
or a top-level module (``cli``, ``pacing``...). Within a room anything goes but a
cycle; a room imports only from rooms on lower floors, never from one on its own floor
or above; no two modules import each other, directly or round a circle; and nothing
below the ROS layer imports rclpy, a ROS message package or Qt.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from conftest import REPO

#: The floors, lowest first: the rooms on each. A room imports from lower floors only.
FLOORS: tuple[tuple[str, ...], ...] = (
    # the model, and the helpers that import nothing of servo_sim (plotting: the one
    # import of matplotlib)
    ("model", "resources", "analysis", "pacing", "plotting"),
    # on the model: the hardware plugins and the device emulators (apart: they share
    # only the model); what a run records and what every servo-sim verb shares; where
    # configs come from (YAML, Webots worlds and PROTOs), read by every host above
    ("hardware", "emulators", "record", "command", "load"),
    # the one way into a running system: the hardware system and its pacing; the
    # multibody engines (MuJoCo), which the model loads by name (config.BODY_ENGINES),
    # above load: a Webots world's robot built as a MuJoCo model reads the world
    # (multibody.from_world)
    ("runtime", "multibody"),
    # its hosts without ROS: system identification, Webots controllers, Robot Raconteur
    ("identification", "webots", "rr"),
    # the front ends: the servo-sim command and the ROS 2 layer
    ("cli", "ros"),
    # the servo panel: a client of the ROS layer
    ("panel",),
)
#: The package itself (its __init__ imports nothing of servo_sim).
ROOT = "servo_sim"
#: servo_sim's ROS interface types, generated at build time into the install's copy of
#: the package (not in the source tree): they belong to the ROS layer.
GENERATED = {"msg": "ros", "srv": "ros", "action": "ros"}
#: Who may import ROS 2 (rclpy, message packages) and who Qt.
ROS_ROOMS = {"ros", "panel"}
QT_ROOMS = {"panel"}
#: Robot Raconteur only in its own room.
RR = ("RobotRaconteur", "RobotRaconteurCompanion")
RR_ROOMS = {"rr"}
#: Who may import MuJoCo (the multibody room only: the model never does).
MUJOCO_ROOMS = {"multibody"}
QT = ("PyQt5", "PyQt6", "PySide2", "PySide6", "python_qt_binding", "pyqtgraph",
      "qt_gui", "rqt_gui", "rqt_gui_py")
ROS = ("rclpy", "rosidl_runtime_py", "rosgraph_msgs", "builtin_interfaces",
       "rcl_interfaces", "launch", "launch_ros")
#: ament_index_python (resources.py, in a try: where the package's share directory is
#: in a ROS install) needs no ROS running: allowed everywhere.


def floor_of(room: str) -> int:
    for level, rooms in enumerate(FLOORS):
        if room in rooms:
            return level
    raise KeyError(room)


def module_sources(package: Path = REPO / "servo_sim") -> dict[str, str]:
    """Every module of the package: dotted name -> source."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text()
    return out


def imports(name: str, source: str, modules: Iterable[str]) -> list[tuple[str, int]]:
    """What module ``name`` imports anywhere in ``source`` (lazily too), with the line:
    servo_sim's modules as dotted names (``from X import Y`` is module X.Y if there is
    one, else X), anything else as the top-level name (``rclpy``)."""
    known = set(modules) | {f"{ROOT}.{g}" for g in GENERATED}
    is_package = any(m.startswith(f"{name}.") for m in known)  # its __init__
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            for alias in node.names:
                full = f"{stem}.{alias.name}"
                out.append((full if full in known else stem, node.lineno))
    return list(dict.fromkeys(
        (target if target.split(".")[0] == ROOT else target.split(".")[0], line)
        for target, line in out))


def room_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT
    return GENERATED.get(parts[1], parts[1])


def graph(sources: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
    return {name: imports(name, source, sources) for name, source in sources.items()}


def upward(sources: Mapping[str, str]) -> list[str]:
    """Imports of a room on the importer's floor or above (another room)."""
    found = []
    for name, targets in graph(sources).items():
        room = room_of(name)
        for target, line in targets:
            if target.split(".")[0] != ROOT or room_of(target) in (room, ROOT):
                continue
            if not any(r in floor for floor in FLOORS for r in (room, room_of(target))):
                continue  # a room without a floor: test_every_room_has_a_floor says so
            if floor_of(room_of(target)) >= floor_of(room):
                found.append(f"{name}:{line} imports {target} "
                             f"(floor {floor_of(room_of(target))}, {name} is on "
                             f"{floor_of(room)})")
    return found


def cycles(sources: Mapping[str, str]) -> list[list[str]]:
    """The import circles between servo_sim's modules (Tarjan's strongly connected
    components of more than one module, and modules importing themselves)."""
    edges = {name: {t for t, _ in targets if t in sources and t != name}
             for name, targets in graph(sources).items()}
    selfloops = [[n] for n, targets in graph(sources).items() if any(t == n for t, _ in targets)]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found + selfloops


def foreign(sources: Mapping[str, str]) -> list[str]:
    """ROS or Qt imports outside the rooms allowed them."""
    found = []
    for name, targets in graph(sources).items():
        room = room_of(name)
        for target, line in targets:
            top = target.split(".")[0]
            ros = top in ROS or top.endswith(("_msgs", "_srvs", "_interfaces")) or (
                top == ROOT and room_of(target) == "ros" and target.split(".")[1] in GENERATED)
            if ros and room not in ROS_ROOMS:
                found.append(f"{name}:{line} imports {target} (ROS)")
            if top in QT and room not in QT_ROOMS:
                found.append(f"{name}:{line} imports {target} (Qt)")
            if top in RR and room not in RR_ROOMS:
                found.append(f"{name}:{line} imports {target} (Robot Raconteur)")
            if top == "mujoco" and room not in MUJOCO_ROOMS:
                found.append(f"{name}:{line} imports {target} (MuJoCo)")
    return found


SOURCES = module_sources()


def test_every_room_has_a_floor():
    rooms = {room_of(name) for name in SOURCES} - {ROOT}
    unplaced = sorted(r for r in rooms if not any(r in floor for floor in FLOORS))
    assert not unplaced, f"rooms without a floor (add them to FLOORS here and to the " \
                         f"Layout of docs/testing.md): {unplaced}"
    placed = [r for floor in FLOORS for r in floor]
    assert len(placed) == len(set(placed)), "a room on two floors"


def test_no_import_from_the_same_floor_or_above():
    assert upward(SOURCES) == []


def test_no_import_circles():
    assert cycles(SOURCES) == []


def test_nothing_below_the_ros_layer_imports_ros_or_qt():
    """(nor anything outside the multibody room MuJoCo)"""
    assert foreign(SOURCES) == []


def test_emulators_identification_and_the_webots_verb_live_in_their_own_rooms():
    """The emulators apart from the plugins, identification above the hardware, the
    controller verb in the Webots room; no shims left at their former paths."""
    for old in ("servo_sim.hardware.emulator", "servo_sim.hardware.dxl_emulator",
                "servo_sim.hardware.sts_emulator", "servo_sim.hardware.virtual_arm",
                "servo_sim.hardware.recorder", "servo_sim.identify", "servo_sim.sim2real"):
        assert old not in SOURCES
    for new in ("servo_sim.emulators.dxl_emulator", "servo_sim.emulators.sts_emulator",
                "servo_sim.emulators.virtual_arm", "servo_sim.identification.fit",
                "servo_sim.identification.recorder", "servo_sim.identification.cli",
                "servo_sim.webots.cli"):
        assert new in SOURCES


def test_the_webots_world_importer_lives_in_the_load_room_below_the_hosts():
    """The Webots world importer in the load room, below the hosts, its VRML parser apart;
    no shims left in the Webots room."""
    for old in ("servo_sim.webots.world", "servo_sim.webots.loads", "servo_sim.webots.protos"):
        assert old not in SOURCES
    for new in ("servo_sim.load.loader", "servo_sim.load.vrml", "servo_sim.load.world",
                "servo_sim.load.loads", "servo_sim.load.protos"):
        assert new in SOURCES


# ------------------------------------------------------------------ the checker itself


@pytest.mark.parametrize(("module", "source", "expected"), [
    # an upward import, lazy inside a function
    ("servo_sim.hardware.x", "def f():\n    from ..identification import fit\n",
     ["servo_sim.hardware.x:2 imports servo_sim.identification.fit (floor 3, "
      "servo_sim.hardware.x is on 1)"]),
    # a room on the same floor
    ("servo_sim.hardware.x", "from servo_sim.emulators import emulator\n",
     ["servo_sim.hardware.x:1 imports servo_sim.emulators.emulator (floor 1, "
      "servo_sim.hardware.x is on 1)"]),
    # the webots package's __main__ up to cli.py
    ("servo_sim.webots.__main__", "from ..cli import main\n",
     ["servo_sim.webots.__main__:1 imports servo_sim.cli (floor 4, "
      "servo_sim.webots.__main__ is on 3)"]),
    # the loader up to a host, and the model up to the loader
    ("servo_sim.load.x", "from ..webots import x\n",
     ["servo_sim.load.x:1 imports servo_sim.webots.x (floor 3, servo_sim.load.x is on 1)"]),
    ("servo_sim.model.x", "from servo_sim.load import load\n",
     ["servo_sim.model.x:1 imports servo_sim.load (floor 1, servo_sim.model.x is on 0)"]),
    # down, and within the room: fine
    ("servo_sim.webots.y", "from ..hardware import HardwareSystem\nfrom . import x\n", []),
    ("servo_sim.webots.y", "from ..load import load\n", []),
])
def test_the_floor_check_sees_an_import_from_above(module, source, expected):
    sources = {"servo_sim.cli": "", "servo_sim.identification": "",
               "servo_sim.identification.fit": "", "servo_sim.emulators": "",
               "servo_sim.emulators.emulator": "", "servo_sim.hardware": "",
               "servo_sim.webots": "", "servo_sim.webots.x": "", "servo_sim.load": "",
               "servo_sim.model": "", module: source}
    assert upward(sources) == expected


def test_the_cycle_check_sees_a_circle_through_a_type_checking_import():
    sources = {
        "servo_sim.model": "",
        "servo_sim.model.bank": "from .safety import Supervisor\n",
        "servo_sim.model.safety": "from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from .bank import MotorBank\n",
        "servo_sim.model.motor": "from . import bank, safety\n",
    }
    assert cycles(sources) == [["servo_sim.model.bank", "servo_sim.model.safety"]]


def test_the_foreign_check_sees_rclpy_and_qt_below_the_ros_layer():
    sources = {"servo_sim.webots": "", "servo_sim.ros": "", "servo_sim.panel": "",
               "servo_sim.webots.x": "def f():\n    import rclpy.node\n",
               "servo_sim.cli": "from servo_sim import msg\nfrom PyQt5 import QtCore\n",
               "servo_sim.ros.node": "import rclpy\nfrom std_srvs.srv import Trigger\n",
               "servo_sim.panel.qt": "from python_qt_binding import QtCore\n",
               "servo_sim.model.x": "def f():\n    import mujoco\n",
               "servo_sim.multibody.body": "import mujoco\n",
               "servo_sim.webots.y": "import RobotRaconteur as RR\n",
               "servo_sim.rr.door": "import RobotRaconteur as RR\n"}
    assert foreign(sources) == ["servo_sim.webots.x:2 imports rclpy (ROS)",
                                "servo_sim.cli:1 imports servo_sim.msg (ROS)",
                                "servo_sim.cli:2 imports PyQt5 (Qt)",
                                "servo_sim.model.x:2 imports mujoco (MuJoCo)",
                                "servo_sim.webots.y:1 imports RobotRaconteur (Robot Raconteur)"]
