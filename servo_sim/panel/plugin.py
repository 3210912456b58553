"""The rqt face of the servo panel (Plugins > Robot Tools > Servo panel): a thin shell
that gives :class:`ServoPanel` rqt's node, as rqt_reconfigure and rqt_plot do."""

from __future__ import annotations

from typing import Any

from rqt_gui_py.plugin import Plugin

from ..ros.link.remote import ServoLink
from .widget import ServoPanel


class ServoPanelPlugin(Plugin):
    """rqt plugin: one ServoPanel per instance, on the node rqt spins."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.setObjectName("ServoPanelPlugin")
        self._link = ServoLink(node=context.node)
        self._widget = ServoPanel(self._link)
        if context.serial_number() > 1:
            self._widget.setWindowTitle(
                f"{self._widget.windowTitle()} ({context.serial_number()})")
        context.add_widget(self._widget)

    def save_settings(self, _plugin_settings: Any, instance_settings: Any) -> None:
        instance_settings.set_value("node", self._link.target_node)
        instance_settings.set_value("motor", self._link.motor)

    def restore_settings(self, _plugin_settings: Any, instance_settings: Any) -> None:
        node, motor = instance_settings.value("node"), instance_settings.value("motor")
        if node:
            self._widget.select(node, motor or None)

    def shutdown_plugin(self) -> None:
        self._widget.timer.stop()
        self._link.close()
