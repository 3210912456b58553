"""Finding hardware plugins by name (as ros2cli finds its command plugins).

A name is looked up in this order:

1. the built-ins: ``sim`` (the model), ``dynamixel`` and ``feetech``;
2. the entry-point group ``servo_sim.hardware`` of the installed distributions::

       [project.entry-points."servo_sim.hardware"]
       my_servo = "my_package.servo:MyServo"

3. a dotted path ``package.module:Class``.

A plugin must subclass :class:`~servo_sim.hardware.base.HardwareComponent` and be
written for this major ``API_VERSION`` (an API 1 plugin is told what changed).
Discovery never fails because of one plugin: a broken entry point is logged and
skipped; asking for it by name says why it broke.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from ..model.config import ConfigError
from .base import API_1_TO_2, API_VERSION, HardwareComponent

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

log = logging.getLogger("servo_sim")

ENTRY_POINT_GROUP = "servo_sim.hardware"
BUILTINS: dict[str, str] = {
    "sim": "servo_sim.hardware.sim:SimHardware",
    "dynamixel": "servo_sim.hardware.dynamixel:DynamixelHardware",
    "feetech": "servo_sim.hardware.feetech:FeetechHardware",
}


class PluginError(ConfigError):
    """A plugin that cannot be loaded; the message names it and says why."""


def _import(target: str) -> type:
    module_name, _, attr = target.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[return-value]


def check_plugin(name: str, cls: object) -> type[HardwareComponent]:
    """``cls`` if it is a usable plugin class, else :class:`PluginError` saying why."""
    if not (isinstance(cls, type) and issubclass(cls, HardwareComponent)):
        raise PluginError(f"hardware plugin {name!r}: {cls!r} is not a subclass of "
                          "servo_sim.hardware.HardwareComponent")
    version = getattr(cls, "API_VERSION", None)
    if version != API_VERSION:
        changed = f": {API_1_TO_2}" if version == 1 else ""
        raise PluginError(f"hardware plugin {name!r}: written for API_VERSION {version!r}, "
                          f"this servo_sim provides {API_VERSION}{changed}")
    return cls


def _entry_points() -> dict[str, EntryPoint]:
    # imported here: a built-in plugin (the common case) starts without scanning the
    # installed distributions (about 25 ms of every node's start-up)
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load_entry_point(ep: EntryPoint) -> type[HardwareComponent]:
    try:
        cls = ep.load()
    except Exception as exc:
        raise PluginError(f"hardware plugin {ep.name!r} ({ep.value}): cannot load: "
                          f"{type(exc).__name__}: {exc}") from exc
    return check_plugin(ep.name, cls)


def discover() -> dict[str, type[HardwareComponent]]:
    """Every loadable plugin by name: built-ins, then entry points (broken ones skipped)."""
    found: dict[str, type[HardwareComponent]] = {}
    for name, target in BUILTINS.items():
        try:
            found[name] = check_plugin(name, _import(target))
        except ImportError as exc:  # e.g. dynamixel without dynamixel-sdk
            log.warning("hardware plugin %r skipped: %s", name, exc)
    for name, ep in _entry_points().items():
        if name in found:
            log.warning("hardware plugin %r from entry point %s ignored: a built-in has "
                        "that name", name, ep.value)
            continue
        try:
            found[name] = _load_entry_point(ep)
        except PluginError as exc:
            log.warning("%s; skipped", exc)
    return found


def load_plugin(name: str) -> type[HardwareComponent]:
    """The plugin class called ``name`` (built-in, entry point or ``module:Class``)."""
    if name in BUILTINS:
        try:
            return check_plugin(name, _import(BUILTINS[name]))
        except ImportError as exc:
            raise PluginError(f"hardware plugin {name!r}: cannot import: {exc}") from exc
    eps = _entry_points()
    if name in eps:
        return _load_entry_point(eps[name])
    if ":" in name:
        try:
            cls = _import(name)
        except (ImportError, AttributeError) as exc:
            raise PluginError(f"hardware plugin {name!r}: cannot load: "
                              f"{type(exc).__name__}: {exc}") from exc
        return check_plugin(name, cls)
    known = sorted({*BUILTINS, *eps})
    raise PluginError(f"unknown hardware plugin {name!r} (known: {', '.join(known)}; "
                      "or give 'package.module:Class')")
