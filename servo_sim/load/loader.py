"""One call reads a config from a file of any kind, by its suffix (:func:`load`), and
the CONFIG argument every ``servo-sim`` verb that reads a config takes
(:func:`config_argument`, :func:`load_arguments`).

* ``.wbt``, ``.proto``: a Webots world or PROTO, its robot's motors imported
  (:mod:`.world`);
* ``.urdf``: refused. A URDF gives joint limits, not motors: its limits go over a
  config (the node's ``robot_description``, :func:`servo_sim.model.urdf.apply_urdf`);
* anything else (``.yaml``, ``.yml``): a ROS 2 parameters file or the model form
  (:func:`servo_sim.model.load_config`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from .. import resources
from ..model import ConfigError, SimulationConfig, load_config
from ..model.body import with_physics
from ..model.config import BODY_ENGINES

#: Suffixes read as Webots files (a world or a PROTO).
WEBOTS_SUFFIXES = (".wbt", ".proto")
#: Suffixes of a URDF: not a config of its own.
URDF_SUFFIXES = (".urdf",)


@dataclass(frozen=True)
class Loaded:
    """A config file read: the config, and the robot's name and world file when it is a
    Webots file."""

    config: SimulationConfig
    robot_name: str = "robot"
    world_path: str = ""
    #: the world's devices servo_sim does not simulate: name -> Webots type, where
    unsimulated: dict[str, str] = field(default_factory=dict)
    #: PROTOs inside the robot that could not be read: name -> first instance
    unread: dict[str, str] = field(default_factory=dict)
    #: the Webots installation its ``webots://`` PROTOs were read from ("": none given)
    webots_home: str = ""


def is_webots_file(path: str | Path) -> bool:
    """True for the files read as a Webots world or PROTO (by suffix, any case)."""
    return Path(path).suffix.lower() in WEBOTS_SUFFIXES


def load(path: str | Path | None = None, *, webots_home: str | Path | None = None,
         strict_protos: bool = False) -> Loaded:
    """Read the config file ``path`` (None: the packaged one), its kind by its suffix;
    ConfigError naming the file if it cannot be read or is bad. A Webots file's
    ``webots://`` PROTOs are read from ``webots_home`` (see :mod:`.protos`); a PROTO
    inside its robot that cannot be read is left out with a warning, unless
    ``strict_protos``."""
    if path is None:
        try:
            path = resources.default_config_path()
        except FileNotFoundError as exc:
            raise ConfigError(f"{exc}; pass a CONFIG file") from None
    if Path(path).suffix.lower() in URDF_SUFFIXES:
        raise ConfigError(f"{path}: a URDF gives joint limits, not motors: give a YAML "
                          "config or a Webots .wbt/.proto file (the node applies a URDF's "
                          "limits over its config: parameter robot_description)")
    if is_webots_file(path):
        from .world import load_world  # the importer: imported for a Webots file only

        world = load_world(path, webots_home, strict_protos)
        return Loaded(world.config, world.robot_name, world.path, world.unsimulated,
                      world.unread, str(webots_home or ""))
    return Loaded(load_config(path))


def on_physics(loaded: Loaded, physics: str | None, model: str | None = None
               ) -> SimulationConfig:
    """The config of ``loaded`` on the body ``physics`` (None: the config's) with the
    model file ``model`` (``--physics``, ``--model``): a Webots world's own robot is the
    model of an engine where none is given (``servo_sim.multibody.from_world`` builds
    it), a YAML config's ``multibody.model`` otherwise; as it is with neither."""
    config = loaded.config
    if physics is None and model is None:
        return config
    physics = physics or config.physics
    if model is None and physics in BODY_ENGINES and loaded.world_path:
        model = str(Path(loaded.world_path).resolve())
        # the world's PROTOs from the installation it was read with
        return with_physics(config, physics, model, loaded.webots_home or None)
    return with_physics(config, physics, model)


def physics_options(parser: argparse.ArgumentParser) -> None:
    """--physics and --model: the config on another body (:func:`on_physics`)."""
    parser.add_argument("--physics", choices=("dynamic", "kinematic", *BODY_ENGINES),
                        help="the config's physics instead: mujoco drives the joints of "
                             "--model (MJCF or URDF; a Webots world's own robot where "
                             "CONFIG is a world) in MuJoCo (the mujoco extra)")
    parser.add_argument("--model", metavar="FILE",
                        help="the multibody model of --physics mujoco (else the config's "
                             "multibody.model, or the world CONFIG), e.g. so101.urdf")


def webots_options(parser: argparse.ArgumentParser) -> None:
    """--webots-home and --strict-protos: how a Webots file is read."""
    parser.add_argument("--webots-home", metavar="DIR",
                        help="the Webots installation a world's webots:// PROTOs are read "
                             "from (default: $WEBOTS_HOME, else Webots' usual places); "
                             "never downloaded")
    parser.add_argument("--strict-protos", action="store_true",
                        help="refuse a Webots file in which a PROTO inside the robot cannot "
                             "be read (default: that part is left out with a warning)")


def config_argument(parser: argparse.ArgumentParser, *, required: bool = False,
                    help: str = "config file, YAML, .wbt or .proto (default: the packaged "
                                "one)") -> None:
    """CONFIG (optional unless ``required``) and the :func:`webots_options`, as every
    command that reads a config takes them."""
    parser.add_argument("config", nargs=None if required else "?", help=help)
    webots_options(parser)


def load_arguments(args: argparse.Namespace) -> Loaded:
    """:func:`load` of the arguments :func:`config_argument` added."""
    return load(args.config or None, webots_home=args.webots_home,
                strict_protos=args.strict_protos)
