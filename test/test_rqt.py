"""rqt against the real node (issue 19), where rqt is installed.

- rqt itself, under Xvfb, loads servo_sim's plugin (found through package.xml's export)
  and the panel follows the node: rqt's node subscribes to its ``~/servo_state``.
- rqt_service_caller's own widget resolves every servo_sim service type, and fills, calls
  and shows the answer of one service of each type.
- rqt_reconfigure's own widget shows every parameter with its description, editable
  exactly where the node's descriptor is not read-only and with no slider (no parameter
  has a fixed two-sided range); a change it sends moves the motor; a value the node
  refuses changes nothing, and the reason is on /rosout, which rqt_console shows.

Expected values come from the config and from the node's answers through plain rclpy,
not from the widgets.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from conftest import REPO, TIMEOUT, require_ros

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the in-process widgets
require_ros("rclpy")
require_ros("rqt_gui.main", "rqt_gui_py.plugin", "rqt_console",
            "rqt_service_caller.service_caller_widget",
            "rqt_reconfigure.param_client_widget", need="rqt")
# pytest-qt comes with the test extra: where the ROS of this module is there, a
# missing pytest-qt fails the module (require_ros), it does not skip it
require_ros("pytestqt", need="rqt")

import rclpy  # noqa: E402
from python_qt_binding.QtCore import QCoreApplication, QEvent  # noqa: E402
from python_qt_binding.QtWidgets import QCheckBox, QLineEdit, QSlider  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rqt_reconfigure.param_client_widget import ParamClientWidget  # noqa: E402
from rqt_service_caller.service_caller_widget import ServiceCallerWidget  # noqa: E402

from servo_sim import srv  # noqa: E402

CONFIG = str(REPO / "config" / "servo_sim.yaml")
PLUGIN = "servo_sim.panel.plugin.ServoPanelPlugin"
TABLE = "per-motor table complete"


@pytest.fixture
def rqt_node():
    """A node on rclpy's default context spun by a thread of its own, as rqt gives its
    plugins (rqt_service_caller waits on ``rclpy.ok()`` of the default context)."""
    rclpy.init()
    node = rclpy.create_node("servo_sim_rqt_test")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield node
    executor.shutdown()
    thread.join(TIMEOUT)
    node.destroy_node()
    rclpy.shutdown()


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def call(node, kind, name: str, request):
    """A plain rclpy call from the test thread (the node spins in its own)."""
    client = node.create_client(kind, name)
    try:
        wait_for(client.service_is_ready, name)
        future = client.call_async(request)
        wait_for(future.done, f"the answer of {name}")
        return future.result()
    finally:
        node.destroy_client(client)


# ---------------------------------------------------------------- rqt with our plugin

@pytest.fixture
def xvfb():
    """An X server of the test's own; its display name (":N")."""
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.fail("Xvfb not found (apt-get install xvfb): rqt is installed, so its "
                    "tests must run", pytrace=False)
    read, write = os.pipe()
    server = subprocess.Popen([exe, "-displayfd", str(write), "-screen", "0", "1280x800x24",
                               "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    assert number, "Xvfb did not report its display"
    yield f":{number}"
    server.terminate()
    server.wait(TIMEOUT)


def _perspective(tmp_path, namespace: str):
    """config/servo_sim.perspective for a node in ``namespace``: its panel and plot."""
    data = json.loads((REPO / "config" / "servo_sim.perspective").read_text())
    plugins = data["groups"]["pluginmanager"]["groups"]
    panel = plugins["plugin__servo_sim__ServoPanel__1"]["groups"]["plugin"]["keys"]
    assert ast.literal_eval(panel["node"]["repr"]) == "/servo_sim"
    panel["node"]["repr"] = repr(f"{namespace}/servo_sim")
    plot = plugins["plugin__rqt_plot__Plot__1"]["groups"]["plugin"]["keys"]
    topics = ast.literal_eval(plot["topics"]["repr"])
    assert topics and all(topic.startswith("/joint_states/") for topic in topics)
    plot["topics"]["repr"] = repr([namespace + topic for topic in topics])
    path = tmp_path / "servo_sim.perspective"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("way", ["standalone", "perspective"])
def test_rqt_loads_the_servo_panel_plugin_and_it_follows_the_node(start, rqt_node, xvfb,
                                                                  tmp_path, way):
    """``rqt --standalone`` with the plugin; ``rqt --perspective-file`` with the shipped
    layout: the panel, rqt_plot on /joint_states, rqt_reconfigure and rqt_console, every
    plugin loaded."""
    node = start("rq", "--params-file", CONFIG)
    node.wait_for_output(TABLE)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(DISPLAY=xvfb, HOME=str(tmp_path))  # rqt's settings and plugin cache there
    args = (["--standalone", PLUGIN] if way == "standalone" else
            ["--perspective-file", str(_perspective(tmp_path, "/rq"))])
    # the panel, and with the perspective rqt_console (/rosout). Not rqt_plot: it drops,
    # silently, a restored topic its node has not discovered yet (docs/rqt.md)
    followed = {"/rq/servo_sim/servo_state"} | ({"/rosout"} if way == "perspective" else set())
    log = tmp_path / "rqt.log"
    with log.open("w") as out:
        rqt = subprocess.Popen(
            [sys.executable, "-c", "import sys; from rqt_gui.main import main; "
             "sys.exit(main())", "--force-discover", *args],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        missing = set(followed)

        def rqt_follows() -> bool:
            assert rqt.poll() is None, f"rqt exited {rqt.returncode}:\n{log.read_text()}"
            missing.intersection_update(
                topic for topic in followed
                if not any(info.node_name.startswith("rqt_gui_py_node")
                           for info in rqt_node.get_subscriptions_info_by_topic(topic)))
            return not missing

        try:
            wait_for(rqt_follows, f"rqt's node to subscribe to {sorted(followed)}")
        except AssertionError:
            pytest.fail(f"rqt's node never subscribed to {sorted(missing)}; rqt's log:\n"
                        f"{log.read_text()[-3000:]}")
    finally:
        rqt.kill()
        rqt.wait(TIMEOUT)
    assert "Traceback" not in log.read_text(), log.read_text()
    assert "could not load plugin" not in log.read_text(), log.read_text()


# ------------------------------------------------------------ rqt_service_caller

def _fields(item) -> dict[str, str]:
    return {item.child(i).text(0): item.child(i) for i in range(item.childCount())}


#: One service of each type the node has, a request as a user types it, the answer's
#: fields as the service caller shows them (repr; a pattern), expected from the config
#: (config/servo_sim.yaml: gripper is linear) and the calls before.
CALLS = [
    ("/sc/arm/set_position", {"value": "0.3"}, {"success": "True"}),
    ("/sc/arm/get_target_position", {"ask": "True"}, {"value": "0.3"}),
    ("/sc/arm/position_sensor/enable", {"value": "16"}, {"success": "True"}),
    ("/sc/arm/position_sensor/get_sampling_period", {"ask": "True"}, {"value": "16"}),
    ("/sc/gripper/get_type", {}, {"value": "1"}),
    ("/sc/arm/get_position_sensor_name", {}, {"value": "'arm/position_sensor'"}),
    ("/sc/arm/set_control_pid", {"controlp": "15.0", "controli": "0.0",
                                 "controld": "0.2"}, {"success": "1"}),
    ("/sc/servo_sim/pause", {}, {"success": "True",
                                 "message": r"'paused at t = \d+\.\d{3} s'"}),
]


def test_rqt_service_caller_resolves_fills_and_calls_every_kind_of_servo_sim_service(
        start, rqt_node, qtbot):
    node = start("sc", "--params-file", CONFIG)
    node.wait_for_output(TABLE)
    ours = {}

    def graph_has_them() -> bool:
        ours.update((name, types[0]) for name, types in rqt_node.get_service_names_and_types()
                    if name.startswith("/sc/") and "/srv/" in types[0])
        return {c[0] for c in CALLS} <= set(ours)

    wait_for(graph_has_them, "the node's services in rqt's graph")
    widget = ServiceCallerWidget(rqt_node)
    qtbot.addWidget(widget)
    widget.on_refresh_services_button_clicked()
    # every servo_sim and std_srvs type (and the parameter services') resolves
    assert set(ours) <= set(widget._services), set(ours) - set(widget._services)
    kinds = {ours[name] for name, _, _ in CALLS}
    assert {t for t in ours.values() if t.startswith(("servo_sim/", "std_srvs/"))} == kinds

    for name, request, expected in CALLS:
        widget.service_combo_box.setCurrentIndex(widget.service_combo_box.findText(name))
        top = widget.request_tree_widget.topLevelItem(0)
        assert top is not None and top.text(0) == name
        slots = _fields(top)
        assert set(request) <= set(slots), (name, set(slots))
        for field, expression in request.items():
            slots[field].setText(2, expression)  # the user's typing, column "expression"
        widget.on_call_service_button_clicked()
        answer = widget.response_tree_widget.topLevelItem(0)
        assert answer is not None and answer.text(0) == "/", name
        shown = {field: item.text(2) for field, item in _fields(answer).items()}
        assert shown.keys() == expected.keys(), name
        for field, pattern in expected.items():
            assert re.fullmatch(pattern.replace(".", r"\.") if field != "message"
                                else pattern, shown[field]), (name, field, shown[field])
    # the calls were real: the node's own answer, through plain rclpy
    target = call(rqt_node, srv.GetFloat, "/sc/arm/get_target_position",
                  srv.GetFloat.Request(ask=True))
    assert target.value == 0.3


# ---------------------------------------------------------------- rqt_reconfigure

def _editable(editor) -> bool:
    """Whether a user can type or click a new value into an rqt_reconfigure editor."""
    return any(box.isEnabled() and not box.isReadOnly() for box in editor.findChildren(QLineEdit)) \
        or any(box.isEnabled() for box in editor.findChildren(QCheckBox))


def test_rqt_reconfigure_shows_describes_and_sets_the_nodes_parameters(start, rqt_node,
                                                                       qtbot):
    node = start("rc", "--params-file", CONFIG)
    node.wait_for_output(TABLE)
    logged: list = []
    rqt_node.create_subscription(Log, "/rosout", logged.append, 100)
    names = call(rqt_node, ListParameters, "/rc/servo_sim/list_parameters",
                 ListParameters.Request()).result.names
    described = {d.name: d for d in call(rqt_node, DescribeParameters,
                                         "/rc/servo_sim/describe_parameters",
                                         DescribeParameters.Request(names=names)).descriptors}

    widget = ParamClientWidget(SimpleNamespace(node=rqt_node), "/rc/servo_sim")
    try:
        editors = widget._editor_widgets
        assert set(editors) == set(names)
        for name, editor in editors.items():
            assert editor.toolTip() == described[name].description, name
            assert _editable(editor) == (not described[name].read_only), name
            # no slider a user can drag: rqt_reconfigure draws one for a ranged integer
            # (robot_raconteur_port, read-only: shown disabled) and none for the rest
            sliders = [s for s in editor.findChildren(QSlider) if not s.isHidden()]
            assert all(not s.isEnabled() for s in sliders), name
            assert bool(sliders) == bool(described[name].integer_range), name
        assert described["arm.max_torque"].description.startswith("arm: ")

        def get(name: str):
            return call(rqt_node, GetParameters, "/rc/servo_sim/get_parameters",
                        GetParameters.Request(names=[name])).values[0].double_value

        # a change typed into the editor moves the motor (its limit, as the node reports it)
        editor = editors["arm.max_torque"]
        editor._paramval_lineEdit.setText("4.5")
        editor._paramval_lineEdit.editingFinished.emit()
        assert get("arm.max_torque") == 4.5
        assert call(rqt_node, srv.GetFloat, "/rc/arm/get_max_torque",
                    srv.GetFloat.Request(ask=True)).value == 4.5
        # a refused value changes nothing; the reason goes to /rosout (rqt_console's view)
        editor = editors["arm.max_velocity"]
        editor._paramval_lineEdit.setText("-1")
        editor._paramval_lineEdit.editingFinished.emit()
        assert get("arm.max_velocity") == 2.0
        wait_for(lambda: any(m.name == "rc.servo_sim" and m.level == Log.WARN
                             and "'max_velocity' = -1.0: must be >= 0" in m.msg
                             for m in list(logged)), "the node's WARN on /rosout")
    finally:
        _delete(qtbot, widget)


def _delete(qtbot, widget) -> None:
    """Close and delete an rqt widget now, its queued events processed here: rqt_reconfigure
    1.6.2's TextFilter may signal from one as its widget goes ("'TextFilter' does not have
    a signal with the signature filter_changed_signal()", under PyQt5), which pytest-qt
    otherwise raises in the next test's event loop (test_rr_node failed on it once)."""
    with qtbot.capture_exceptions() as caught:
        widget.close()
        widget.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
        QCoreApplication.processEvents()
    assert all("filter_changed_signal" in str(error) for _, error, _ in caught), caught
