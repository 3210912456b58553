"""Where configs come from (ROS-free; on the model, below every host): one call,
:func:`load`, reads a config file of any kind by its suffix.

* :mod:`.loader`: :func:`load` and :class:`Loaded`; the CONFIG argument of the
  ``servo-sim`` verbs (:func:`config_argument`, :func:`load_arguments`);
* :mod:`.vrml`: Webots' VRML97-style syntax read into nodes (nothing of what they mean);
* :mod:`.world`: a Webots ``.wbt`` world or ``.proto`` file's motors as a config;
* :mod:`.loads`: what a world's joint carries (its inertia and gravity load);
* :mod:`.protos`: where a Webots file's ``EXTERNPROTO`` declarations are.

A YAML config is read by :func:`servo_sim.model.load_config`, a URDF's limits applied
over a config by :func:`servo_sim.model.urdf.apply_urdf`: both stay in the model, whose
URDF reader the kinematic chain (``model/chain.py``) shares.
"""

from .loader import (
    Loaded,
    config_argument,
    is_webots_file,
    load,
    load_arguments,
    on_physics,
    physics_options,
    webots_options,
)

__all__ = ["Loaded", "config_argument", "is_webots_file", "load", "load_arguments",
           "on_physics", "physics_options", "webots_options"]
