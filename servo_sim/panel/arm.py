"""The arm view: every joint of the followed node at a glance (position, target, effort,
mode and flags from its ``~/servo_state``); a click on a row tunes that joint."""

from __future__ import annotations

import math

from ..ros.link.remote import Sample
from .qt import QtCore, QtWidgets, Signal

COLUMNS = ("joint", "position", "target", "effort", "mode", "flags")
#: rows shown without scrolling (a robot with more motors scrolls)
MAX_ROWS_SHOWN = 8


class ArmView(QtWidgets.QTableWidget):
    """One row per motor; :meth:`show_states` fills it, ``chosen`` says which was clicked."""

    #: emitted with a motor's name when its row is clicked
    chosen = Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("arm")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QtWidgets.QAbstractItemView.NoEditTriggers)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectRows)
        self.setSelectionMode(QtWidgets.QAbstractItemView.SingleSelection)
        self.horizontalHeader().setStretchLastSection(True)
        self.cellClicked.connect(lambda row, _column: self.chosen.emit(self.item(row, 0).text()))

    def joints(self) -> list[str]:
        """The motors listed, in the node's order."""
        return [self.item(row, 0).text() for row in range(self.rowCount())]

    def show_states(self, states: dict[str, Sample], current: str = "") -> None:
        """The rows for ``states`` (motor -> its last sample); ``current`` selected."""
        if list(states) != self.joints():
            self.setRowCount(len(states))
            for row, name in enumerate(states):
                self.setItem(row, 0, QtWidgets.QTableWidgetItem(name))
                for column in range(1, len(COLUMNS)):
                    self.setItem(row, column, QtWidgets.QTableWidgetItem(""))
            shown = min(len(states), MAX_ROWS_SHOWN)  # every row of an arm, no scrolling
            self.setFixedHeight(self.horizontalHeader().height() + 2 * self.frameWidth()
                                + sum(self.rowHeight(r) for r in range(shown)))
        for row, s in enumerate(states.values()):
            target = f"{s.target:.4f}" if math.isfinite(s.target) else "—"
            for column, text in enumerate((f"{s.position:.4f}", target, f"{s.effort:.4f}",
                                           s.mode, s.flags), start=1):
                item = self.item(row, column)
                if item.text() != text:
                    item.setText(text)
                if column in (1, 2, 3):
                    item.setTextAlignment(QtCore.Qt.AlignRight | QtCore.Qt.AlignVCenter)
        if current in states and self.currentRow() != list(states).index(current):
            self.selectRow(list(states).index(current))
