"""The body the motors move: what integrates the joints once the actuators have acted.

The bank's dynamic step (``bank.py``) has two halves. The actuator half computes, from
each joint's state, what its motor does: PID or firmware law on encoder ticks, dead
zone, the torque-speed envelope, backlash, friction. The body half says what the joint
carries and moves it. Between them, one interface (:class:`Body`), two calls a step:

* ``momentum()`` -> ``(p, mass)``: each joint's momentum over the step before its
  motor acts (``inertia/dt * v`` plus the body's loads, N*m or N; the bank adds the
  servo's own: set_torque's force, the spring) and its effective mass
  (``inertia/dt`` plus the implicit spring and damper); the body also keeps
  ``inertia_dt`` (the inertia's share of ``mass``, for the gear's load-dependent
  friction). The actuator half then finds the motor force ``f`` and the velocity the
  joint reaches, ``v' = (p + f - friction) / mass`` (``Actuators.velocity``);
* ``advance(v', f)`` -> ``(x, v, stopped, f)``: the joints' position and velocity
  one step on, which joints a hard stop holds (None: the body does not say) and the
  motor forces (the law's ``f``, or those of a solve of the body's own); ``x`` may be
  the joints' position row itself, written in place (the per-joint body's), which the
  bank then keeps as it is.

Two bodies implement it:

* :class:`JointBodies` (``physics: dynamic``, the default): each joint is a body of its
  own, one degree of freedom with the config's ``inertia`` and ``load`` (URDF loads at a
  pose: ``chain.py``); ``v'`` is the new velocity and ``x' = x + v' dt`` (semi-implicit
  Euler), then the hard stops;
* ``servo_sim.multibody.body.MujocoBody`` (``physics: mujoco``): MuJoCo integrates the
  whole model. ``p`` and ``mass`` come from MuJoCo's state (the mass matrix's diagonal,
  gravity, Coriolis and passive forces at the pose); ``advance`` applies the torque
  that takes the joint to ``v'`` were it alone, ``inertia/dt * (v' - v)`` less MuJoCo's
  own forces, and MuJoCo steps the coupled body (gravity at every pose, one joint's
  acceleration on another, joint limits, contact). Webots' ideal motors it solves
  together instead (``servo_sim.multibody.coupled``): their velocity targets, static
  friction and stops, each within its bound.

A body may also step the joints in a loop of its own, ``run(steps)`` ->
``(x, v, v a step before, the law's results)``: where it has one and the bank's law is
compiled (``MotorBank.use_compiled_law``), the bank's dynamic steps go through it, one at
a time (``Stepper.step``) and as many as come before the next sensor refresh at once
(``Stepper.run``). MuJoCo's joins ``momentum``, the compiled law and ``advance`` in one
compiled call between ``mj_step1`` and ``mj_step2``: the same steps to the bit, without
the Python between them.

A third engine plugs in as MuJoCo does: a class with this interface, constructed from
the config (``cls(config)``: it loads its model and checks the ``multibody`` group,
raising ConfigError), with ``attach(bank)`` (the bank's tables, taken once, and its
state at start and after a reset) and ``configure()`` (the motors' parameters changed
in the tables), named in
``config.BODY_ENGINES`` (the ``physics`` value -> ``package.module:Class``, imported
only when a config asks for it, so the model never imports an engine).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

import numpy as np

from .config import (
    BODY_ENGINES,
    DEFAULT_PLUGIN,
    ConfigError,
    SimulationConfig,
    parse_config,
    to_dict,
)

#: the bank (``bank.py``, which imports this module): its tables, taken at attach
MotorBank = Any


class Body(Protocol):
    """What integrates the bank's joints (see the module docstring)."""

    #: each joint's inertia over the step, inertia/dt (kg*m^2/s or kg/s)
    inertia_dt: np.ndarray

    def attach(self, bank: MotorBank) -> None:
        """Take the bank's tables (``bank.data``: its parameters and the joints' state,
        rows written in place, so taken once) and its state (start, reset)."""

    def configure(self) -> None:
        """Take the parameters again (changed at run time, in the tables), keeping the
        state."""

    def momentum(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p, mass)`` of the step, before the motors act."""

    def advance(self, velocity: np.ndarray, force: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """``(position, velocity, stopped, force)`` one step on: the joints reaching
        ``velocity`` (each as if alone) under the law's motor ``force``, or, where the
        body solves its motors together (a coupled body's Webots motors), at the
        velocities and with the motor forces of that solve."""


def apply_stops(x_new: np.ndarray, v_new: np.ndarray, low: np.ndarray, high: np.ndarray
                ) -> np.ndarray:
    """Hard stops at ``low`` and ``high`` (-inf/inf: none): clamp the position, remove
    the velocity into the stop (both in place); the joints a stop holds."""
    clamped = np.minimum(x_new, high)
    np.maximum(clamped, low, out=clamped)
    free = clamped == x_new
    v_new *= free
    x_new[...] = clamped
    return ~free


class JointBodies:
    """Each joint a body of its own: the config's inertia and loads (the default)."""

    def __init__(self, config: SimulationConfig | None = None) -> None:
        self.inertia_dt = np.zeros(0)

    def attach(self, bank: MotorBank) -> None:
        if not bank.kinematic:  # the compiled law where numba is installed, once loaded
            bank.compile_law()
        self.dt = bank.dt
        # the rows the step reads and writes, views taken once (written in place)
        self.position = bank.data.joints.position
        rows = bank.data.joint_parameters
        self.inertia_dt, self.mass = rows.joint_inertia_dt, rows.joint_mass
        self.constant_load, self.gravity_torque = rows.constant_load, rows.gravity_torque
        self.gravity_phase = rows.gravity_phase
        self.stop_low, self.stop_high = rows.stop_low, rows.stop_high
        self.stops = bank.data.joint_masks.stops
        self.velocity = bank.data.joints.velocity
        self.configure()

    def configure(self) -> None:
        self.any_gravity = bool(self.gravity_torque.any())
        self.any_phase = bool(self.gravity_phase.any())  # (else SPEC §2.2's 0 for all)
        self.any_stops = bool(self.stops.any())

    def momentum(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.inertia_dt * self.velocity
        p += self.constant_load
        if self.any_gravity:
            x = self.position
            lever = x - self.gravity_phase if self.any_phase else x
            p -= self.gravity_torque * np.cos(lever)
        return p, self.mass

    def advance(self, velocity: np.ndarray, force: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        if not self.any_stops:  # the joints' row, written in place (x + v dt)
            x_new = self.position
            x_new += velocity * self.dt
            return x_new, velocity, None, force
        # past a stop: a new array, clamped before the bank writes it (the row never
        # holds a position past a stop, not even within a step)
        x_new = velocity * self.dt
        x_new += self.position
        stopped = apply_stops(x_new, velocity, self.stop_low, self.stop_high)
        return x_new, velocity, stopped, force


def make_body(config: SimulationConfig) -> Any:
    """The body of ``config``'s ``physics``: :class:`JointBodies`, or the engine's
    (``BODY_ENGINES``) built from the config; ConfigError where it cannot be."""
    target = BODY_ENGINES.get(config.physics)
    if target is None:
        return JointBodies(config)
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)  # the engine's own import errors say
    return getattr(module, name)(config)          # which extra installs it


def with_physics(config: SimulationConfig, physics: str, model: str | None = None,
                 webots_home: str | None = None) -> SimulationConfig:
    """``config`` on another body: ``physics`` (``dynamic``, ``kinematic`` or an engine)
    and, for an engine, its ``model`` file (else the config's ``multibody.model``) and
    the model as hardware (an engine's body is simulated: the hardware plugin ``sim``,
    the real servos' settings dropped); the motors as they are; a Webots model's
    ``webots://`` PROTOs from ``webots_home`` where given. ConfigError as the config's
    own checks say it."""
    raw = to_dict(config)
    raw["physics"] = physics
    group = dict(raw.pop("multibody", None) or {})
    if physics in BODY_ENGINES:
        if model is not None:
            group["model"] = model
        if webots_home is not None:
            group["webots_home"] = webots_home
        raw["multibody"] = group
        raw["hardware"] = {"plugin": DEFAULT_PLUGIN}
    elif model is not None:
        raise ConfigError(f"{config.source}: a model ({model!r}) is for a multibody engine "
                          f"(physics {' or '.join(BODY_ENGINES)}), not physics {physics!r}")
    return parse_config(raw, config.source)
