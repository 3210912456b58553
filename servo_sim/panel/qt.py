"""The Qt bindings: rqt's python_qt_binding where rqt is installed, else PyQt5 (PyPI)."""

from __future__ import annotations

try:
    from python_qt_binding import QtCore, QtGui, QtWidgets
except ImportError:
    from PyQt5 import QtCore, QtGui, QtWidgets

__all__ = ["QtCore", "QtGui", "QtWidgets", "Signal"]

Signal = getattr(QtCore, "Signal", None) or QtCore.pyqtSignal
