"""MuJoCo as the body of servo_sim's motors: ``physics: mujoco``.

A config names a model and which of its joints each motor drives::

    physics: mujoco
    multibody:
      model: so101.urdf          # MJCF or URDF; relative: to the config's directory,
                                 # then the working directory, then the package's config/
      joints: {gripper: jaw}     # motor -> joint; a motor not listed drives its namesake

Each step (``servo_sim.model.body``): ``mj_step1`` (the model's state at the pose:
mass matrix, gravity, Coriolis, passive forces) -> each joint's ``p`` and ``mass`` (the
mass matrix's diagonal, armature included, over the step) -> servo_sim's actuator (the
whole law as on its own: PID or firmware law on ticks, dead zone, backlash, envelope,
friction) -> the torque that would take the joint alone to the velocity the actuator
found, into ``qfrc_applied`` -> ``mj_step2`` (the coupled body, joint limits, contact).
Webots' ideal motors (no servo profile: :func:`coupled_rows`) are not torques but
velocity rows within their bounds: their joints' forces, static friction and stops are
solved together over the whole mass matrix (:mod:`.coupled`), the others' torques as
known forces. A model converted from a Webots world steps as ODE's ``dWorldStep``
instead of ``mj_step2`` (:mod:`.ode_step`: contacts, motors and stops in one LCP).

What servo_sim overrides in the model, each logged in one line at start:

* the timestep: the config's ``basic_time_step_ms``;
* the model's actuators on a driven joint (``<position>``, ``<motor>``... acting on it
  through the joint): switched off (gain and bias 0);
* a driven joint's damping, frictionloss and stiffness: 0, and its armature: the
  servo's (``actuator.armature``); the servo's friction, viscous friction and damper,
  spring and rotor inertia are counted once, in servo_sim's actuator;
* a driven joint's range: the motor's hard stops where the config sets them
  (``min_stop``/``max_stop``), else the model's own limits;
* an RK4 model: stepped with ``implicitfast`` (``mj_step1``/``mj_step2`` need a
  single-step integrator).

The config's ``inertia`` and ``load.gravity_*`` of a motor are not used (the model's
bodies carry the mass); ``load.external`` is. A ``passive`` motor reads its joint and
leaves the model's damping and friction on it. Joints no motor names stay the model's
own (passive, or moved by the model's actuators at ``ctrl`` 0).
"""

from __future__ import annotations

import hashlib
import logging
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..model import law, tables
from ..model.config import ConfigError, SimulationConfig, ros_name
from ..model.law import numba_jit
from ..model.tables import ACTIVE_GAIN, ANY_FORCE_CONTROL, ANY_SPRING, APPLIED_FORCE, FORCE, V_NEW
from ..resources import share_candidates
from .contacts import with_contacts
from .coupled import solve_box
from .from_world import WORLD_SUFFIXES, world_model
from .ode_step import OdeParameters, world_step

log = logging.getLogger("servo_sim")

#: One line saying which extra installs MuJoCo.
MISSING = ("physics: mujoco needs MuJoCo, which is not installed: pip install "
           "'servo_sim[mujoco]' (the mujoco extra: mujoco-core)")
#: The settings of the ``multibody`` group (``webots_home``: where a Webots model's
#: ``webots://`` PROTOs are read, as ``--webots-home``)
SETTINGS = ("model", "joints", "webots_home")


def import_mujoco() -> Any:
    """The ``mujoco`` module, or ConfigError saying which extra installs it."""
    try:
        import mujoco
    except ImportError:
        raise ConfigError(MISSING) from None
    return mujoco


def resolve_model(name: str, source: str) -> Path:
    """The model file ``name``: as given if absolute, else beside the config file
    ``source``, in the working directory, in the package's config/."""
    path = Path(name).expanduser()
    if path.is_absolute():
        candidates = [path]
    else:
        candidates = ([Path(source).parent / path] if Path(source).is_file() else []) \
            + [Path.cwd() / path] + share_candidates("config", name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(f"{source}: field 'multibody.model' = {name!r}: no such file (looked "
                      f"in {', '.join(str(c) for c in candidates)})", field="multibody.model",
                      value=name)


def _joint_names(config: SimulationConfig, joints: Any) -> list[str]:
    """Each motor's joint name (``joints``: motor name or ROS name -> joint name)."""
    source = config.source
    if not isinstance(joints, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in joints.items()):
        raise ConfigError(f"{source}: field 'multibody.joints' = {joints!r}: must map motor "
                          "names to joint names", field="multibody.joints", value=joints)
    known = {m.name: m.name for m in config.motors} | {ros_name(m.name): m.name
                                                         for m in config.motors}
    for key, joint in joints.items():
        if key not in known:
            raise ConfigError(f"{source}: field 'multibody.joints.{key}' = {joint!r}: no "
                              f"motor {key!r} (motors: {', '.join(known)})",
                              field=f"multibody.joints.{key}", value=joint)
    return [joints.get(m.name, joints.get(ros_name(m.name), m.name)) for m in config.motors]


class MujocoBody:
    """The motors' joints in one MuJoCo model (see the module docstring); built from a
    config, ConfigError naming file, motor, joint and value where it does not fit."""

    def __init__(self, config: SimulationConfig) -> None:
        mj = self.mj = import_mujoco()
        source, spec = config.source, dict(config.multibody or {})
        for key in spec:
            if key not in SETTINGS:
                raise ConfigError(f"{source}: field 'multibody.{key}' = {spec[key]!r}: "
                                  f"unknown; the group takes {', '.join(SETTINGS)}",
                                  field=f"multibody.{key}", value=spec[key])
        names = _joint_names(config, spec.get("joints") or {})
        path = self.path = resolve_model(spec["model"], source)
        try:
            model = world_model(mj, path, spec.get("webots_home")) \
                if path.suffix.lower() in WORLD_SUFFIXES \
                else mj.MjModel.from_xml_path(str(path))
        except ConfigError:  # the world's own reason, said whole
            raise
        except ValueError as exc:  # MuJoCo's own reason (XML Error ...)
            reason = " ".join(str(exc).split())
            raise ConfigError(f"{source}: field 'multibody.model' = {spec['model']!r}: MuJoCo "
                              f"cannot load {path}: {reason}", field="multibody.model",
                              value=spec["model"]) from None
        self.model = model
        #: a converted Webots world's ODE parameters: it steps as ODE (.ode_step)
        self.ode = OdeParameters.of_model(mj, model)
        kinds = {int(mj.mjtJoint.mjJNT_HINGE): "rotational", int(mj.mjtJoint.mjJNT_SLIDE): "linear"}
        ids, owner = [], {}
        for m, joint in zip(config.motors, names, strict=True):
            where = f"{source}: motor {m.name!r}: field 'multibody.joints.{ros_name(m.name)}' = "
            jid = mj.mj_name2id(model, mj.mjtObj.mjOBJ_JOINT, joint)
            if jid < 0:
                known = [model.joint(i).name for i in range(model.njnt)]
                raise ConfigError(f"{where}{joint!r}: {path.name} has no joint {joint!r} (its "
                                  f"joints: {', '.join(known)})", motor=m.name,
                                  field="multibody.joints", value=joint)
            kind = kinds.get(int(model.jnt_type[jid]))
            if kind is None:
                what = mj.mjtJoint(int(model.jnt_type[jid])).name.removeprefix("mjJNT_")
                raise ConfigError(f"{where}{joint!r}: a {what.lower()} joint in {path.name}; a "
                                  "motor drives a hinge or a slide", motor=m.name,
                                  field="multibody.joints", value=joint)
            if kind != m.type:
                what = "hinge" if kind == "rotational" else "slide"
                raise ConfigError(f"{where}{joint!r}: a {what} joint in {path.name}, the "
                                  f"motor is {m.type}", motor=m.name,
                                  field="multibody.joints", value=joint)
            if jid in owner:
                raise ConfigError(f"{where}{joint!r}: motor {owner[jid]!r} drives it already "
                                  f"(two motors on one joint of {path.name})", motor=m.name,
                                  field="multibody.joints", value=joint)
            owner[jid] = m.name
            ids.append(jid)
        self.joints = np.array(ids, dtype=int)
        self.joint_names = names
        dadr = model.jnt_dofadr[self.joints]
        #: the driven joints' addresses, rows of one array: each dof's diagonal element in
        #: MjData.M (compressed rows, diagonal last), its dof and its qpos address
        self.addresses = np.array([model.M_rowadr[dadr] + model.M_rownnz[dadr] - 1, dadr,
                                   model.jnt_qposadr[self.joints]])
        self.diag, self.dadr, self.qadr = self.addresses
        passive = np.array([m.passive for m in config.motors], dtype=bool)
        self.driven = ~passive
        self.notes = self._override(config, model)
        for note in self.notes:
            log.info("%s: %s", path.name, note)
        self.data = data = mj.MjData(model)
        #: the MjData arrays the step reads and writes, as numpy views made once (each
        #: read of MjData's attribute makes a new one): MuJoCo keeps its buffers
        self._views = (data.M, data.qfrc_passive, data.qfrc_bias, data.qfrc_applied,
                       data.qpos, data.qvel)
        self.dt = config.basic_time_step_ms / 1000.0
        self.inertia_dt = np.zeros(len(ids))
        self._own = np.zeros(len(ids))
        #: the work between MuJoCo's two halves compiled (use_compiled), else None:
        #: numpy's momentum and advance; and the read that ends a run (compiled with it)
        self._drive_joints: Any = None
        self._read = joint_state
        self.servo_mass = np.zeros(len(ids))
        self.external = np.zeros(len(ids))
        #: the motors solved together (coupled_rows): their joints' limits are rows of
        #: that solve, not MuJoCo's; None until attach
        self.coupled: np.ndarray | None = None
        self._limited = model.jnt_limited.copy()

    def _override(self, config: SimulationConfig, model: Any) -> list[str]:
        """Set what servo_sim models instead of the model; one line each saying what."""
        mj = self.mj
        notes = []
        step = config.basic_time_step_ms / 1000.0
        notes.append(f"timestep {model.opt.timestep:g} s -> {step:g} s (the config's step)")
        model.opt.timestep = step
        if model.opt.integrator == mj.mjtIntegrator.mjINT_RK4:
            model.opt.integrator = mj.mjtIntegrator.mjINT_IMPLICITFAST
            notes.append("integrator RK4 -> implicitfast (servo_sim steps between "
                         "mj_step1 and mj_step2)")
        driven = {int(j) for j, d in zip(self.joints, self.driven, strict=True) if d}
        joint_trn = (int(mj.mjtTrn.mjTRN_JOINT), int(mj.mjtTrn.mjTRN_JOINTINPARENT))
        off = []
        for a in range(model.nu):
            if int(model.actuator_trntype[a]) in joint_trn and int(model.actuator_trnid[a, 0]) \
                    in driven:
                model.actuator_gainprm[a, :] = 0.0
                model.actuator_biasprm[a, :] = 0.0
                off.append(model.actuator(a).name or f"#{a}")
        if off:
            notes.append(f"actuators {', '.join(off)} switched off (servo_sim drives their "
                         "joints)")
        dofs = self.dadr[self.driven]
        for field in ("dof_damping", "dof_frictionloss"):
            values = getattr(model, field)[dofs]
            if values.any():
                notes.append(f"{field.removeprefix('dof_')} {_listed(values)} of the driven "
                             "joints -> 0 (servo_sim's actuator models it)")
            getattr(model, field)[dofs] = 0.0
        stiffness = model.jnt_stiffness[self.joints[self.driven]]
        if stiffness.any():
            notes.append(f"stiffness {_listed(stiffness)} of the driven joints -> 0 (the "
                         "motors' spring_constant)")
        model.jnt_stiffness[self.joints[self.driven]] = 0.0
        armature = model.dof_armature[dofs]
        notes.append(f"armature {_listed(armature)} of the driven joints -> the servos' "
                     "(actuator.armature)")
        return notes

    # ------------------------------------------------------------------ the Body interface

    def use_compiled(self, bank: Any) -> bool:
        """The step's array work and the servo law compiled by numba into one call
        (:func:`drive_joints`, which :meth:`run` steps with), where numba is installed
        (``law.compiled``: the same source); whether they are: numpy's calls would cost
        many times MuJoCo's own step."""
        global _COMPILED
        if self._drive_joints is not None:
            return True
        if self.ode is not None or (self.coupled is not None and self.coupled.any()):
            # the law compiled; the solve of coupled rows in numpy, step by step
            bank.use_compiled_law()
            return False
        started = time.perf_counter()
        if not bank.use_compiled_law():
            return False
        first = _COMPILED is None
        if first:
            _COMPILED = _compile()
        self._read, self._drive_joints = _COMPILED
        # compiled now (cached on disk after the first time), not in the first step
        self._drive_joints(*self._drive_joints_arguments(copies=True))
        if first:
            log.info("the servo law compiled by numba for MuJoCo's step in %.1f s "
                     "(SERVO_SIM_JIT=0: numpy's)", time.perf_counter() - started)
        return True

    @property
    def run(self) -> Any:
        """:meth:`run_steps` where the step is compiled in one call (``use_compiled``),
        else None: the bank steps with ``momentum`` and ``advance``."""
        return self.run_steps if self._drive_joints is not None else None

    def run_steps(self, steps: int) -> tuple:
        """``steps`` dynamic steps (with the compiled law: ``use_compiled``), each as
        ``MotorBank._step_dynamic`` makes it with this body, the work between MuJoCo's
        two halves in one compiled call (:func:`drive_joints`); not the clock or the sensors.
        ``(position, velocity, velocity a step before, the law's results)`` after them,
        for the bank to keep (``MotorBank._keep_body_loop_state``)."""
        step1, step2, model, data = self.mj.mj_step1, self.mj.mj_step2, self.model, self.data
        *_, qpos, qvel = self._views
        drive_joints, dadr = self._drive_joints, self.dadr
        arguments = self._drive_joints_arguments()
        for left in range(steps, 0, -1):
            if left == 1:  # the velocity the last step starts from
                previous = qvel[dadr]
            step1(model, data)
            results = drive_joints(*arguments)
            step2(model, data)
        x, v = self._read(qpos, self.qadr, qvel, dadr)  # (compiled with drive_joints)
        return x, v, previous, results

    def _drive_joints_arguments(self, copies: bool = False) -> tuple:
        """:func:`drive_joints`'s arguments now (``copies``: of the arrays it writes, to
        compile it without a step)."""
        motors = self.motors
        tables = motors.arguments
        servo = (self.external, self.servo_mass, motors.joint_parameters.spring_constant,
                 motors.joints.energy, motors.joint_parameters.energy_per_force)
        mujoco, servo = self._views, servo
        if copies:
            mujoco, servo = (tuple(a.copy() for a in group) for group in (mujoco, servo))
            tables = tuple(a.copy() for a in tables)
        return (self.dt, mujoco, self.addresses, servo, *tables)

    def attach(self, bank: Any) -> None:
        """The model at its reference pose, the motors' joints at the bank's state; the
        bank's tables (``bank.data``) taken: the step reads and writes their rows."""
        mj, model, data = self.mj, self.model, self.data
        #: the motors' tables (``model/tables.py``: parameters, commands, state)
        self.motors = motors = bank.data
        self.coupled = coupled_rows(bank) & self.driven
        self.use_compiled(bank)
        mj.mj_resetData(model, data)
        data.qpos[self.qadr] = motors.joints.position
        data.qvel[self.dadr] = motors.joints.velocity
        self.configure()
        mj.mj_forward(model, data)

    def configure(self) -> None:
        """The servos' parameters into the model: armature, hard stops."""
        model, driven = self.model, self.driven
        parameters = self.motors.joint_parameters
        model.dof_armature[self.dadr[driven]] = parameters.armature[driven]
        stops = self.motors.joint_masks.stops
        if stops.any():
            joints = self.joints[stops]
            model.jnt_range[joints, 0] = parameters.min_stop[stops]
            model.jnt_range[joints, 1] = parameters.max_stop[stops]
            self._limited[joints] = 1
        model.jnt_limited[:] = self._limited
        coupled = self.coupled if self.coupled is not None else np.zeros(len(self.joints), bool)
        limited = coupled & (self._limited[self.joints] > 0)
        #: the coupled joints' stops, rows of the solve (MuJoCo's limit off there)
        self.stop_low = np.where(limited, model.jnt_range[self.joints, 0], -np.inf)
        self.stop_high = np.where(limited, model.jnt_range[self.joints, 1], np.inf)
        model.jnt_limited[self.joints[limited]] = 0
        self._any_stop = bool(limited.any())
        self._row_dofs = self.dadr[coupled]
        #: the right-hand sides of the solve with MuJoCo's factor of M: b, then a unit
        #: force on each coupled joint
        self._unit_rows = np.zeros((1 + self._row_dofs.size, model.nv))
        self._unit_rows[1 + np.arange(self._row_dofs.size), self._row_dofs] = 1.0
        self._diagonal = np.diag_indices(model.nv)
        self._damped = bool(model.dof_damping.any())
        data = self.data  # mj_setConst computes at qpos0 in data: the state is kept
        state = [data.qpos.copy(), data.qvel.copy(), data.act.copy(), data.time]
        self.mj.mj_setConst(model, data)
        data.qpos[:], data.qvel[:], data.act[:], data.time = state
        self.servo_mass = parameters.servo_mass
        self.external = parameters.external_load

    def momentum(self) -> tuple[np.ndarray, np.ndarray]:
        self.mj.mj_step1(self.model, self.data)
        mass_matrix, passive, bias = self._views[:3]
        p, self.inertia_dt, self._own, mass = joint_momentum(
            mass_matrix, self.diag, passive, bias, self.dadr, self.motors.joints.velocity,
            self.external,
            self.servo_mass, self.dt)
        return p, mass

    def advance(self, velocity: np.ndarray, force: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, None, np.ndarray]:
        _, _, _, applied, qpos, qvel = self._views
        apply_joint_torques(velocity, self.motors.joints.velocity, self.inertia_dt, self._own,
                            self.dadr, applied)
        if self.ode is not None:  # a Webots world: stepped as ODE (.ode_step)
            force = world_step(self, self.motors, force, self._own_loads())
            return *joint_state(qpos, self.qadr, qvel, self.dadr), None, force
        if self.coupled is not None and self.coupled.any():
            force = self._solve(force)
            if self.data.ncon:  # the rows with MuJoCo's contact solve (.contacts)
                force = with_contacts(self, self.motors, force)
        self.mj.mj_step2(self.model, self.data)
        x, v = joint_state(qpos, self.qadr, qvel, self.dadr)
        return x, v, None, force

    def _own_loads(self) -> np.ndarray:
        """The servos' own loads of their joints: external, set_torque, the spring's
        explicit part."""
        loads = self.external.copy()
        law.add_servo_loads(loads, self.motors)
        return loads

    def _solve(self, force: np.ndarray) -> np.ndarray:
        """The coupled motors' and stops' forces of the step, solved together
        (:mod:`.coupled`), into ``qfrc_applied`` with the other joints' torques; the
        motor forces, the law's for the motors outside the solve."""
        mj, model, data = self.mj, self.model, self.data
        _, passive, bias, applied, _, qvel = self._views
        rows, dofs, dt = self.coupled, self._row_dofs, self.dt
        n = dofs.size
        own_loads = self._own_loads()[rows]
        if model.nu:
            mj.mj_fwdActuation(model, data)  # the model's own actuators on other joints
        # A v' = b + S f: A = M/dt + MuJoCo's implicit damping (+ the servo's implicit
        # spring and damper on the coupled joints), b = (M/dt + damping) v + its forces
        # (passive: -damping v too) + the torques of the joints outside the solve
        b = np.empty(model.nv)
        mj.mj_mulM(model, data, b, qvel)
        b /= dt
        b += passive
        b += data.qfrc_actuator
        b -= bias
        b += applied
        b[dofs] += own_loads - applied[dofs]
        servo_mass = self.servo_mass[rows]
        if not self._damped and not servo_mass.any():  # A = M/dt: MuJoCo's factor of M
            rhs = self._unit_rows.copy()
            rhs[0] = b
            solved = np.empty_like(rhs)
            mj.mj_solveM(model, data, solved, rhs)
            solved *= dt
            v_free, response = solved[0], solved[1:].T
        else:
            a = np.zeros((model.nv, model.nv))
            mj.mj_fullM(model, data, a)
            a /= dt
            a[self._diagonal] += model.dof_damping
            b += model.dof_damping * qvel
            a[dofs, dofs] += servo_mass
            solved = np.linalg.solve(a, np.column_stack([b, self._unit_rows[1:].T]))
            v_free, response = solved[:, 0], solved[:, 1:]
        # response: the velocity per unit force of each row; rows: each coupled motor,
        # then the stops its joint would cross without them (added until none is
        # crossed), each pushing outward only
        w_motors = response[dofs]
        target = self.motors.state.command_velocity[rows]
        limit = self.motors.commands.force_limit[rows]
        f = solve_box(w_motors, target - v_free[dofs], -limit, limit)
        joint_force = f
        if self._any_stop:
            x = self.motors.joints.position[rows]
            low, high = self.stop_low[rows], self.stop_high[rows]
            at_low = np.zeros(n, dtype=bool)
            at_high = np.zeros(n, dtype=bool)
            while True:
                v_new = v_free[dofs] + w_motors @ joint_force
                x_new = x + dt * v_new
                crossing_low = ~at_low & (x_new < low)
                crossing_high = ~at_high & (x_new > high)
                if not (crossing_low.any() or crossing_high.any()):
                    break
                at_low |= crossing_low
                at_high |= crossing_high
                lower, upper = np.flatnonzero(at_low), np.flatnonzero(at_high)
                which = np.concatenate([np.arange(n), lower, upper])
                f = solve_box(
                    w_motors[np.ix_(which, which)],
                    np.concatenate([target, (low[lower] - x[lower]) / dt,
                                    (high[upper] - x[upper]) / dt]) - v_free[dofs][which],
                    np.concatenate([-limit, np.zeros(lower.size),
                                    np.full(upper.size, -np.inf)]),
                    np.concatenate([limit, np.full(lower.size, np.inf),
                                    np.zeros(upper.size)]))
                joint_force = np.zeros(n)
                np.add.at(joint_force, which, f)
        v_new = v_free[dofs] + w_motors @ joint_force
        applied[dofs] = joint_force + own_loads - servo_mass * v_new
        force = force.copy()
        force[rows] = f[:n]
        return force


def coupled_rows(bank: Any) -> np.ndarray:
    """The motors whose law is Webots' ideal motor (a velocity target within +-a force:
    no firmware law, torque-speed envelope, backlash or gear friction): on a coupled
    body they are solved together (:mod:`.coupled`); the others' law outputs a torque."""
    act = bank.actuators
    if act is None:
        return np.ones(bank.n, dtype=bool)
    return (~act.firmware & np.isinf(act.drive) & (act.parameters.half_gap == 0.0)
            & (act.parameters.friction == 0.0) & ~act.load_friction.any(axis=0))


def compile_ahead() -> float | None:
    """Compile (or load from numba's cache) what a MuJoCo body steps with, on a one-joint
    model: the seconds it took, or None where numba or MuJoCo is missing. For a process
    about to start others that step MuJoCo (a test session), so that none of them waits
    for the first compilation."""
    from ..model import Simulation  # the model above the body: not at import time
    try:
        import_mujoco()
    except ConfigError:
        return None
    if numba_jit() is None:
        return None
    started = time.perf_counter()
    Simulation.from_config({
        "basic_time_step_ms": 1, "physics": "mujoco", "multibody": {"model": "so101.urdf"},
        "motors": [{"name": "elbow_flex", "servo": "STS3215-7.4V"}]})
    return time.perf_counter() - started


#: joint_state and drive_joints compiled by numba (MujocoBody.use_compiled), made once
_COMPILED: tuple[Any, Any] | None = None


def _compile() -> tuple[Any, Any]:
    """joint_state and drive_joints compiled by numba, drive_joints with joint_momentum,
    apply_joint_torques, joint_state, the law's loop and keep_motor_force. drive_joints
    calls the law's compiled code (law.py,
    tables.py): its cache is named for the sources of the three files."""
    jit = numba_jit()
    compiled_read = jit(joint_state)
    namespace = dict(globals(), joint_momentum=jit(joint_momentum),
                     apply_joint_torques=jit(apply_joint_torques), joint_state=compiled_read,
                     each_motor=law.compiled(), keep_motor_force=law.compiled_keep_motor_force(),
                     servo_loads=jit(law.servo_loads))
    sources = hashlib.sha256(b"".join(Path(module.__file__).read_bytes()
                                      for module in (law, tables, sys.modules[__name__])))
    return compiled_read, jit(law.clone(drive_joints, namespace, sources.hexdigest()[:16]))


#: what drive_joints calls: _compile gives it the compiled ones (the law's loop,
#: each_motor, has no numpy form of one motor)
keep_motor_force, servo_loads, each_motor = law.keep_motor_force, law.servo_loads, None


def drive_joints(dt: float, mujoco: tuple, indices: np.ndarray, servo: tuple,
                 parameters: np.ndarray, commands: np.ndarray, state: np.ndarray,
                 masks: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """A step's work between ``mj_step1`` and ``mj_step2``, compiled only (``run``): as
    ``MotorBank._step_dynamic`` joins it with this body's ``momentum`` and
    ``advance`` (:func:`joint_momentum`, the servo's own loads, the law,
    :func:`apply_joint_torques`, :func:`law.keep_motor_force`), in one call; the
    law's results (rows: ``tables.V_NEW`` ...). ``mujoco``: MjData's mass matrix,
    passive, bias and applied forces, qpos and qvel; ``indices``: the driven joints'
    diagonal in the mass matrix, dofs and qpos addresses (rows); ``servo``: the servos'
    external loads, implicit mass, spring constants, energy and energy per force;
    then the law's tables. The joints' state is MuJoCo's (``qpos``, ``qvel``): the
    bank's after each step (``joint_state``)."""
    mass_matrix, passive, bias, applied, qpos, qvel = mujoco
    diag, dofs, qadr = indices[0], indices[1], indices[2]
    external, servo_mass, spring_constant, energy, energy_per_force = servo
    x, v = joint_state(qpos, qadr, qvel, dofs)
    p, inertia_dt, own, mass = joint_momentum(mass_matrix, diag, passive, bias, dofs, v,
                                              external, servo_mass, dt)
    servo_loads(p, flags[ANY_FORCE_CONTROL], commands[APPLIED_FORCE], flags[ANY_SPRING],
                spring_constant, x)
    results = each_motor(x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags)
    apply_joint_torques(results[V_NEW], v, inertia_dt, own, dofs, applied)
    keep_motor_force(results[FORCE], commands[ACTIVE_GAIN], energy, energy_per_force)
    return results


def joint_momentum(mass_matrix: np.ndarray, diag: np.ndarray, passive: np.ndarray,
                   bias: np.ndarray, dofs: np.ndarray, velocity: np.ndarray,
                   external: np.ndarray, servo_mass: np.ndarray, dt: float) -> np.ndarray:
    """``p, inertia_dt, own, mass``, the rows of one array, of the driven joints after
    ``mj_step1``: each one's inertia over the step (the mass matrix's diagonal),
    MuJoCo's own forces on it (passive less bias: gravity, Coriolis), its momentum with
    the external load and its mass over the step with the servo's (spring, damper)."""
    out = np.empty((4, dofs.shape[0]))
    p, inertia_dt, own, mass = out
    inertia_dt[:] = mass_matrix[diag] / dt
    own[:] = passive[dofs] - bias[dofs]
    p[:] = inertia_dt * velocity + own + external
    mass[:] = inertia_dt + servo_mass
    return out


def apply_joint_torques(velocity_new: np.ndarray, velocity: np.ndarray,
                        inertia_dt: np.ndarray, own: np.ndarray, dofs: np.ndarray,
                        applied: np.ndarray) -> None:
    """The torque that takes each driven joint alone to ``velocity_new``, less MuJoCo's
    own forces, into ``applied`` (``qfrc_applied``)."""
    torque = velocity_new - velocity
    torque *= inertia_dt
    torque -= own
    applied[dofs] = torque


def joint_state(qpos: np.ndarray, qadr: np.ndarray, qvel: np.ndarray, dofs: np.ndarray
         ) -> np.ndarray:
    """The driven joints' position and velocity, the rows of an array of their own."""
    out = np.empty((2, dofs.shape[0]))
    out[0] = qpos[qadr]
    out[1] = qvel[dofs]
    return out


def _listed(values: np.ndarray) -> str:
    """``values`` in a short form: one number if all equal, else the list."""
    values = np.asarray(values, dtype=float)
    if values.size and np.all(values == values[0]):
        return f"{values[0]:g}"
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"
