"""The library's Python log in the node's ROS log."""

from __future__ import annotations

import logging

from rclpy.node import Node


class RosLogHandler(logging.Handler):
    """Forwards the library's Python log (logger ``servo_sim``, INFO and up) to the node's."""

    def __init__(self, node: Node) -> None:
        super().__init__(logging.INFO)
        self._logger = node.get_logger()
        self._library = logging.getLogger("servo_sim")
        self._level = self._library.level

    def attach(self) -> None:
        """Receive the library's records from INFO up: Python's default (root WARNING)
        would drop INFO (a recovered device, the URDF limits) before any handler."""
        self._library.addHandler(self)
        if self._level == logging.NOTSET or self._level > logging.INFO:
            self._library.setLevel(logging.INFO)

    def detach(self) -> None:
        self._library.removeHandler(self)
        self._library.setLevel(self._level)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self._logger.error(record.getMessage())
        elif record.levelno >= logging.WARNING:
            self._logger.warning(record.getMessage())
        else:
            self._logger.info(record.getMessage())
