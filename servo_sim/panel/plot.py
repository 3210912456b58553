"""The panel's plot: one motor's servo state over time, drawn with pyqtgraph.

Three rows share the time axis (s, from the first sample since the motor was chosen),
each with its own unit: the angle row (position and target, rad or m), velocity (rad/s
or m/s) and effort (N·m or N). A row shows while one of its series is ticked. pyqtgraph
gives the grid, zoom and pan with the mouse (wheel, drag; right-drag zooms one axis) and,
in its context menu, export (CSV, PNG, SVG); "A" in a corner returns to auto range.
While paused the plot keeps what it shows, so a trace can be looked at closely.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg

from ..ros.link.remote import Sample
from .qt import QtWidgets

#: series -> (row, colour)
SERIES = {"position": ("angle", "#1f77b4"), "target": ("angle", "#d62728"),
          "velocity": ("velocity", "#2ca02c"), "effort": ("effort", "#9467bd")}
ROWS = ("angle", "velocity", "effort")
#: row -> (axis label, unit of a rotational motor, unit of a linear one)
UNITS = {"angle": ("position", "rad", "m"), "velocity": ("velocity", "rad/s", "m/s"),
         "effort": ("effort", "N·m", "N")}
SHOWN_AT_START = ("position", "target")
#: the smallest value span a row zooms to (auto range on a joint at rest would otherwise
#: scale float noise of 1e-9 to the full height)
MIN_SPAN = 1e-3


class Plot(QtWidgets.QWidget):
    """Position, target, velocity and effort of one motor; :meth:`show_samples` feeds it."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("plot")
        self.setMinimumSize(360, 220)
        self.linear = False
        self.t0: float | None = None  # the stamp time 0 stands for
        self.paused = False
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.boxes: dict[str, QtWidgets.QCheckBox] = {}
        for name in SERIES:
            box = QtWidgets.QCheckBox(name, objectName=f"show_{name}")
            box.setChecked(name in SHOWN_AT_START)
            box.toggled.connect(self._arrange)
            bar.addWidget(box)
            self.boxes[name] = box
        bar.addStretch(1)
        self.pause_button = QtWidgets.QPushButton("pause", objectName="pause")
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self.pause)
        bar.addWidget(self.pause_button)
        layout.addLayout(bar)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        layout.addWidget(self.canvas, 1)
        self.rows: dict[str, pg.PlotItem] = {}
        for row in ROWS:
            item = pg.PlotItem()
            item.showGrid(x=True, y=True, alpha=0.3)
            item.setLimits(minYRange=MIN_SPAN)
            item.addLegend(offset=(5, 5))
            item.setLabel("bottom", "time", units="s")
            item.getAxis("bottom").enableAutoSIPrefix(False)
            item.getAxis("left").enableAutoSIPrefix(False)
            self.rows[row] = item
        for item in list(self.rows.values())[1:]:
            item.setXLink(self.rows["angle"])
        self.curves = {name: self.rows[row].plot(name=name, pen=pg.mkPen(colour, width=1.5))
                       for name, (row, colour) in SERIES.items()}
        self.set_linear(False)
        self._arrange()

    # ------------------------------------------------------------------ what shows

    def set_linear(self, linear: bool) -> None:
        """Units of a linear motor (m, m/s, N) or of a rotational one (rad, rad/s, N·m)."""
        self.linear = linear
        for row, (label, _rotational, _lengthwise) in UNITS.items():
            self.rows[row].setLabel("left", label, units=self.units(row))

    def units(self, row: str) -> str:
        """The unit the ``row``'s value axis is labelled in."""
        _label, rotational, lengthwise = UNITS[row]
        return lengthwise if self.linear else rotational

    def shown(self) -> list[str]:
        """The ticked series."""
        return [name for name, box in self.boxes.items() if box.isChecked()]

    def shown_rows(self) -> list[str]:
        """The rows on screen: those with a ticked series."""
        ticked = self.shown()
        return [row for row in ROWS if any(SERIES[name][0] == row for name in ticked)]

    def _arrange(self) -> None:
        self.canvas.clear()
        rows = self.shown_rows()
        for i, row in enumerate(rows):
            self.canvas.addItem(self.rows[row], row=i, col=0)
            # the time axis once, under the last row
            self.rows[row].getAxis("bottom").setStyle(showValues=i == len(rows) - 1)
            self.rows[row].showLabel("bottom", i == len(rows) - 1)
        for name, curve in self.curves.items():
            curve.setVisible(self.boxes[name].isChecked())

    def pause(self, paused: bool = True) -> None:
        """Keep (``paused``) or follow again what the link receives."""
        self.paused = paused
        self.pause_button.setChecked(paused)
        self.pause_button.setText("resume" if paused else "pause")

    # ------------------------------------------------------------------ data

    def restart(self) -> None:
        """Time 0 at the next sample (another motor chosen): the old trace is dropped."""
        self.t0 = None
        for curve in self.curves.values():
            curve.setData([], [])

    def show_samples(self, samples: Sequence[Sample]) -> None:
        """Draw ``samples`` (the link's history), unless paused."""
        if self.paused or not samples:
            return
        if self.t0 is None:
            self.t0 = samples[0].t
        t = np.array([s.t for s in samples]) - self.t0
        for name, curve in self.curves.items():
            values = np.array([getattr(s, name) for s in samples], dtype=float)
            # no target (velocity or torque control: NaN) leaves a gap, not a line to 0
            curve.setData(t, values, connect="finite")

    def data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What the ``name`` series draws now: time (s) and values."""
        x, y = self.curves[name].getData()
        if x is None:
            return np.array([]), np.array([])
        return np.asarray(x), np.asarray(y)

    def time_span(self) -> float:
        """Seconds the drawn trace spans (0 with fewer than two samples)."""
        x, _ = self.data("position")
        return float(x[-1] - x[0]) if len(x) > 1 and math.isfinite(x[-1] - x[0]) else 0.0
