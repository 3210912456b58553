"""The servo panel: one QWidget that tunes and drives one motor of a running node.

It holds a :class:`~servo_sim.ros.link.remote.ServoLink` and polls it from a QTimer (20 Hz), so
it works the same whichever thread spins the link's node (its own, or rqt's). The rqt
plugin (``plugin.py``) and ``servo-sim-panel`` (``main.py``) are thin shells around it.
"""

from __future__ import annotations

import math
from typing import Any

from ..ros.link.remote import TRIGGERS, TUNED_PARAMETERS, Pending, ServoLink
from .arm import ArmView
from .plot import Plot
from .qt import QtCore, QtWidgets, Signal

REFRESH_MS = 50
#: the slider's span when the motor has neither soft limits nor stops (rad)
DEFAULT_SPAN = (-math.pi, math.pi)
SLIDER_STEPS = 1000


class ServoPanel(QtWidgets.QWidget):
    """Choose a node and a motor; watch it; command it; tune it; step it."""

    #: emitted with each finished step: the StepMetrics
    stepped = Signal(object)

    def __init__(self, link: ServoLink, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.link = link
        self.setObjectName("ServoPanel")
        self.setWindowTitle("servo_sim panel")
        self.metrics: Any = None
        self.wanted_motor = ""  # chosen once the node lists it (select before it is up)
        self._loaded: dict[str, Any] = {}  # the motor's parameters as last read
        #: answers to come, each with what to do in the GUI thread once it is there
        self._pending: list[tuple[Pending, Any]] = []
        self._limits = DEFAULT_SPAN
        self._build()
        #: what the target box last showed of the node's target (an edit differs)
        self._target_shown = self.target.value()
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.refresh)
        self.timer.start(REFRESH_MS)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        layout = QtWidgets.QVBoxLayout(self)
        top = QtWidgets.QHBoxLayout()
        self.node_box = QtWidgets.QComboBox(objectName="node")
        self.motor_box = QtWidgets.QComboBox(objectName="motor")
        top.addWidget(QtWidgets.QLabel("node"))
        top.addWidget(self.node_box, 1)
        top.addWidget(QtWidgets.QLabel("motor"))
        top.addWidget(self.motor_box, 1)
        layout.addLayout(top)
        self.node_box.activated.connect(lambda _i: self._connect(self.node_box.currentText()))
        self.motor_box.activated.connect(lambda _i: self._choose(self.motor_box.currentText()))

        self.arm = ArmView(self)  # every joint; a click tunes it
        self.arm.chosen.connect(lambda motor: self.select(motor=motor))
        layout.addWidget(self.arm)

        self.state = QtWidgets.QLabel("no node", objectName="state")
        self.state.setTextInteractionFlags(QtCore.Qt.TextSelectableByMouse)
        layout.addWidget(self.state)

        drive = QtWidgets.QGridLayout()
        self.slider = QtWidgets.QSlider(QtCore.Qt.Horizontal, objectName="target_slider")
        self.slider.setRange(0, SLIDER_STEPS)
        self.target = self._spin("target", -1e6, 1e6, 0.0)
        self.slider.sliderReleased.connect(self._slider_released)
        drive.addWidget(QtWidgets.QLabel("target"), 0, 0)
        drive.addWidget(self.slider, 0, 1)
        drive.addWidget(self.target, 0, 2)
        drive.addWidget(self._button("go", lambda: self._go(self.target.value())), 0, 3)
        self.velocity = self._spin("velocity", -1e6, 1e6, 0.0)
        drive.addWidget(QtWidgets.QLabel("velocity"), 1, 0)
        drive.addWidget(self.velocity, 1, 2)
        drive.addWidget(self._button("set_velocity", lambda: self._velocity()), 1, 3)
        self.torque = self._spin("torque", -1e6, 1e6, 0.0)
        drive.addWidget(QtWidgets.QLabel("torque"), 2, 0)
        drive.addWidget(self.torque, 2, 2)
        drive.addWidget(self._button("set_torque", lambda: self._send(
            self.link.set_float("set_torque", self.torque.value()))), 2, 3)
        layout.addLayout(drive)
        triggers = QtWidgets.QHBoxLayout()
        for name in TRIGGERS:
            triggers.addWidget(self._button(name, lambda _c=False, n=name: self._send(
                self.link.trigger(n))))
        layout.addLayout(triggers)

        tune = QtWidgets.QGridLayout()
        self.gains = [self._spin(f"pid_{k}", 0.0, 1e6, 0.0, decimals=6) for k in "pid"]
        tune.addWidget(QtWidgets.QLabel("P I D"), 0, 0)
        for i, box in enumerate(self.gains):
            tune.addWidget(box, 0, 1 + i)
        self.limit_boxes = {name: self._spin(name, -1e9, 1e9, 0.0, decimals=6)
                            for name in TUNED_PARAMETERS[1:]}
        for i, (name, box) in enumerate(self.limit_boxes.items()):
            tune.addWidget(QtWidgets.QLabel(name), 1 + i // 3 * 2, i % 3 + 1)
            tune.addWidget(box, 2 + i // 3 * 2, i % 3 + 1)
        tune.addWidget(self._button("apply", self.apply_parameters), 0, 4)
        tune.addWidget(self._button("reload", self.load_parameters), 2, 4)
        layout.addLayout(tune)

        self.plot = Plot(self)
        layout.addWidget(self.plot, 1)

        step = QtWidgets.QHBoxLayout()
        self.step_target = self._spin("step_target", -1e6, 1e6, 0.5)
        self.step_duration = self._spin("step_duration", 0.05, 60.0, 2.0, decimals=2)
        step.addWidget(QtWidgets.QLabel("step to"))
        step.addWidget(self.step_target)
        step.addWidget(QtWidgets.QLabel("record s"))
        step.addWidget(self.step_duration)
        step.addWidget(self._button("step", lambda: self.step(self.step_target.value(),
                                                              self.step_duration.value())))
        step.addWidget(self._button("save_step", self._save_step_as))
        layout.addLayout(step)
        self.figures = QtWidgets.QLabel("rise — overshoot — settling —", objectName="figures")
        layout.addWidget(self.figures)
        self.status = QtWidgets.QLabel("", objectName="status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

    def _spin(self, name: str, low: float, high: float, value: float,
              decimals: int = 3) -> QtWidgets.QDoubleSpinBox:
        box = QtWidgets.QDoubleSpinBox(objectName=name)
        box.setRange(low, high)
        box.setDecimals(decimals)
        box.setValue(value)
        box.setKeyboardTracking(False)
        return box

    def _button(self, name: str, action: Any) -> QtWidgets.QPushButton:
        button = QtWidgets.QPushButton(name.replace("_", " "), objectName=name)
        button.clicked.connect(action)
        return button

    # ------------------------------------------------------------------ actions

    def _connect(self, node: str) -> None:
        if node:
            self.link.connect(node)
            self.motor_box.clear()
            self.status.setText(f"following {node}")

    def _choose(self, motor: str) -> None:
        if motor and motor != self.link.motor:
            self.link.choose(motor)
            self.plot.restart()
            self.metrics = None
            self.figures.setText("rise — overshoot — settling —")
            self.load_parameters()

    def select(self, node: str | None = None, motor: str | None = None) -> None:
        """Follow ``node`` (default: the first found) and ``motor`` (default: the first)."""
        if node is not None:
            self._connect(node)
        if motor is not None:
            self.wanted_motor = motor
            if motor in self.link.motors:
                self._choose(motor)
                self.motor_box.setCurrentText(motor)

    def _send(self, pending: Pending, on_done: Any = None) -> Pending:
        """Keep ``pending``; ``on_done(pending)`` runs in the GUI thread once answered
        (the link's answers arrive on the thread that spins its node)."""
        self._pending.append((pending, on_done))
        return pending

    @property
    def busy(self) -> bool:
        """Whether an answer is still to come, or not yet taken in by :meth:`refresh`."""
        return bool(self._pending)

    def _velocity(self) -> None:
        # velocity control as in Webots: position +inf, then the velocity
        def then(answer: Pending) -> None:
            if answer.ok:
                self._send(self.link.set_float("set_velocity", self.velocity.value()))
        self._send(self.link.set_float("set_position", math.inf), then)

    def _slider_released(self) -> None:
        low, high = self._limits
        value = low + (high - low) * self.slider.value() / SLIDER_STEPS
        self.target.setValue(value)
        self._go(value)

    def _go(self, target: float) -> None:
        """Command ``target``; the target box follows the node's target again."""
        self._target_shown = self.target.value()
        self._send(self.link.set_float("set_position", target))

    def load_parameters(self) -> Pending:
        """Read the motor's PID and limits into the boxes (and the slider's span)."""
        def loaded(answer: Pending) -> None:
            if answer.ok:
                self._show_parameters(answer.value, every=True)
        return self._send(self.link.get_parameters(
            [*TUNED_PARAMETERS, "min_stop", "max_stop", "type"]), loaded)

    def _show_parameters(self, values: dict[str, Any], every: bool = False) -> None:
        """The motor's parameter ``values`` into the boxes (``every``: all of them, read
        anew; else what changed), except a box being typed in."""
        for box, gain in zip(self.gains, values.get("control_pid") or [], strict=False):
            if not box.hasFocus():
                box.setValue(gain)
        for name, box in self.limit_boxes.items():
            if every:
                box.setEnabled(isinstance(values.get(name), float))
            if box.isEnabled() and isinstance(values.get(name), float) and not box.hasFocus():
                box.setValue(values[name])
        if "type" in values:
            self.plot.set_linear(values["type"] == "linear")
        self._loaded = dict(values) if every else {**self._loaded, **values}
        self._limits = self._span(self._loaded)

    @staticmethod
    def _span(values: dict) -> tuple[float, float]:
        """The slider's span: the soft limits, else the stops, else ±pi."""
        for low, high in (("min_position", "max_position"), ("min_stop", "max_stop")):
            lo, hi = values.get(low), values.get(high)
            if isinstance(lo, float) and isinstance(hi, float) and (lo, hi) != (0.0, 0.0):
                return lo, hi
        return DEFAULT_SPAN

    def apply_parameters(self) -> list[Pending]:
        """Set every edited value that differs from the node's; refusals show in status."""
        sent = []
        gains = [box.value() for box in self.gains]
        if gains != self._loaded.get("control_pid"):
            sent.append(self._send(self.link.set_parameter("control_pid", gains),
                                   self._applied))
        for name, box in self.limit_boxes.items():
            if box.isEnabled() and box.value() != self._loaded.get(name):
                sent.append(self._send(self.link.set_parameter(name, box.value()),
                                       self._applied))
        if not sent:
            self.status.setText("nothing changed")
        return sent

    def _applied(self, answer: Pending) -> None:
        if answer.ok:  # what the node has now, for the next apply and the slider
            self.load_parameters()

    def step(self, target: float, duration: float) -> Pending:
        """Command a step and record it; the figures show when it is done."""
        self.figures.setText(f"stepping to {target:g} …")

        def done(answer: Pending) -> None:
            if answer.ok:
                self.metrics = answer.value
                m = answer.value
                self.figures.setText(f"rise {m.rise_time:.3f} s   overshoot "
                                     f"{m.overshoot_percent:.1f} %   settling "
                                     f"{m.settling_time:.3f} s   error "
                                     f"{m.steady_state_error:.2g}")
                self.stepped.emit(m)
            else:
                self.figures.setText(f"step failed: {answer.message}")
        return self._send(self.link.step(target, duration), done)

    def save_step(self, path: str) -> bool:
        """Write the last step's samples as a CSV that ``servo-sim identify`` reads (time,
        command, position); False (said in the status line) when there is none."""
        from ..identification.fit import write_recording

        recording = self.link.recording
        if recording is None or not recording.result.done or not recording.samples:
            self.status.setText("save step: no step recorded yet")
            return False
        try:
            write_recording(path, recording.recording())
        except OSError as exc:
            self.status.setText(f"save step: {path}: {exc.strerror or exc}")
            return False
        self.status.setText(f"saved the step ({len(recording.samples)} samples) to {path}")
        return True

    def _save_step_as(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save the step as CSV",
                                                        "step.csv", "CSV (*.csv)")
        if path:
            self.save_step(path)

    # ------------------------------------------------------------------ refresh

    def refresh(self) -> None:
        """Poll the link: nodes, motors, state, plot, answers."""
        nodes = self.link.nodes() if self.node_box.count() == 0 or not self.link.alive() \
            else None
        if nodes is not None and nodes != [self.node_box.itemText(i)
                                          for i in range(self.node_box.count())]:
            current = self.node_box.currentText()
            self.node_box.clear()
            self.node_box.addItems(nodes)
            if current in nodes:
                self.node_box.setCurrentText(current)
            elif nodes and not self.link.target_node:
                self._connect(nodes[0])
        motors = self.link.motors
        if motors and motors != [self.motor_box.itemText(i)
                                 for i in range(self.motor_box.count())]:
            self.motor_box.clear()
            self.motor_box.addItems(motors)
            if self.link.motor in motors:
                self.motor_box.setCurrentText(self.link.motor)
            else:
                self._choose(self.wanted_motor if self.wanted_motor in motors else motors[0])
                self.motor_box.setCurrentText(self.link.motor)
        changed = self.link.take_parameter_changes()
        if changed:  # whoever changed them: ros2 param, rqt_reconfigure, a service
            self._show_parameters(changed)
        samples = self.link.samples()
        if not self.link.target_node:
            self.state.setText("no servo_sim node found")
        elif not self.link.alive():
            self.state.setText(f"{self.link.target_node}: no state (node gone?)")
        elif samples:
            s = samples[-1]
            self.state.setText(
                f"{self.link.motor}: mode {s.mode}, flags {s.flags}\nposition "
                f"{s.position:.4f}  velocity {s.velocity:.4f}  effort {s.effort:.4f}  "
                f"target {s.target:.4f}")
            # the target in force, whoever set it; not over a value typed and not yet sent
            if math.isfinite(s.target) and not self.target.hasFocus() \
                    and self.target.value() == self._target_shown:
                self.target.setValue(s.target)
                self._target_shown = self.target.value()
            if not self.slider.isSliderDown():
                low, high = self._limits
                fraction = (s.position - low) / (high - low) if high > low else 0.5
                self.slider.setValue(round(min(max(fraction, 0.0), 1.0) * SLIDER_STEPS))
        self.arm.show_states(self.link.states(), self.link.motor)
        self.plot.show_samples(samples)
        for entry in [e for e in self._pending if e[0].done]:
            self._pending.remove(entry)
            pending, on_done = entry
            if on_done is not None:
                on_done(pending)
            if pending.value is None or not pending.ok:
                self.status.setText(pending.message if pending.message.startswith(
                    pending.what) else f"{pending.what}: {pending.message}")
