"""A Webots world stepped as ODE (servo_sim/multibody/ode_step.py) against ODE itself.

Three cases, each at Webots' 16 ms step with Webots' default parameters (ERP 0.2, CFM
1e-5; contacts softERP 0.2, softCFM 0.001, bounce 0.5 above 0.01 m/s, mu 1,
dContactApprox1):

* ``box``: a 10 cm, 1 kg cube dropped from 0.2 m moving at 1 m/s along x: it strikes,
  bounces, slides and stops;
* ``car``: a 1 kg box on four wheels (0.035 m, 0.05 kg), each an ideal motor told 5
  rad/s within 2 N*m, from rest on the floor;
* ``pole``: upstream Webots' ``position_sensor`` robot with its controller's PID loop
  (the world file given), 60 s.

ODE's side runs in a Python with the ``odepy`` ctypes binding over Debian's libode
(``--ode-python``, e.g. a venv with ``pip install odepy``); servo_sim's side is the
world converted (``from_world``) stepped by ``ode_step``. Not a CI dependency::

    python benchmarks/ode_compare.py --ode-python /tmp/w64b/odevenv/bin/python \\
        --pole-world .../webots/projects/samples/devices/worlds/position_sensor.wbt
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

H = 0.016
RADIUS = 0.035
WHEELS = [(0.07, 0.08), (0.07, -0.08), (-0.07, 0.08), (-0.07, -0.08)]
BOX_SECONDS, CAR_SECONDS, POLE_SECONDS = 2.0, 2.0, 60.0
#: the upstream controller's gains and fall angle
KP, KI, KD, FALLEN = 35.0, 5.0, 28.9, 0.7
#: position_sensor.wbt: the robot's yaw (rotation 0 0 1 1), its pole hinge's axis turned
#: -1.571595 about z from x; a start with the pole turning at NUDGE rad/s (both engines
#: held exactly upright would stay there until round-off, each its own)
YAW, POLE_AXIS, NUDGE = 1.0, -1.571595, 0.05


def control(state: dict, position: float) -> float:
    """The upstream position_sensor controller's wheel speed for the pole's angle."""
    state["integral"] += (position + state["previous"]) * 0.5
    speed = KP * position + KI * state["integral"] + KD * (position - state["previous"])
    state["previous"] = position
    return max(-100.0, min(100.0, speed))


# --------------------------------------------------------------------- ODE itself

def ode_side(case: str) -> list[list[float]]:
    """The case in ODE (dWorldStep): a row per step."""
    import ctypes

    import odepy as o
    o.dInitODE()
    w = o.dWorldCreate()
    o.dWorldSetGravity(w, 0, 0, -9.81)
    o.dWorldSetERP(w, 0.2)
    o.dWorldSetCFM(w, 1e-5)
    space = o.dSimpleSpaceCreate(None)
    floor = o.dCreatePlane(space, 0, 0, 1, 0)
    group = o.dJointGroupCreate(0)
    buffer = (o.dContactGeom * 10)()

    def rotation(ax: float, ay: float, az: float, a: float) -> object:
        r = o.dMatrix3()
        o.dRFromAxisAndAngle(r, ax, ay, az, a)
        return r

    def body(mass_setter: object, position: tuple, geom: object) -> object:
        b = o.dBodyCreate(w)
        m = o.dMass()
        o.dMassSetZero(ctypes.byref(m))
        mass_setter(ctypes.byref(m))
        o.dBodySetMass(b, ctypes.byref(m))
        o.dBodySetPosition(b, *position)
        o.dGeomSetBody(geom, b)
        return b

    def step(geoms: list) -> None:
        for g in geoms:
            n = o.dCollide(g, floor, 10, ctypes.cast(buffer, ctypes.POINTER(o.dContactGeom)),
                           ctypes.sizeof(o.dContactGeom))
            for i in range(n):
                c = o.dContact()
                c.surface.mode = (o.dContactApprox1 | o.dContactSoftERP | o.dContactSoftCFM
                                  | o.dContactBounce)
                c.surface.mu, c.surface.bounce, c.surface.bounce_vel = 1.0, 0.5, 0.01
                c.surface.soft_erp, c.surface.soft_cfm = 0.2, 0.001
                c.geom = buffer[i]
                j = o.dJointCreateContact(w, group, ctypes.byref(c))
                o.dJointAttach(j, o.dGeomGetBody(g), None)
        o.dWorldStep(w, H)
        o.dJointGroupEmpty(group)

    out = []
    if case == "box":
        g = o.dCreateBox(space, 0.1, 0.1, 0.1)
        b = body(lambda m: o.dMassSetBoxTotal(m, 1.0, 0.1, 0.1, 0.1), (0, 0, 0.2), g)
        o.dBodySetLinearVel(b, 1.0, 0, 0)
        for _ in range(round(BOX_SECONDS / H)):
            step([g])
            p, v = o.dBodyGetPosition(b), o.dBodyGetLinearVel(b)
            out.append([p[0], p[2], v[0], v[2]])
    elif case == "car":
        g = o.dCreateBox(space, 0.2, 0.12, 0.04)
        chassis = body(lambda m: o.dMassSetBoxTotal(m, 1.0, 0.2, 0.12, 0.04),
                       (0, 0, RADIUS), g)
        geoms, hinges = [g], []
        for x, y in WHEELS:
            wg = o.dCreateCylinder(space, RADIUS, 0.02)
            wb = body(lambda m: o.dMassSetCylinderTotal(m, 0.05, 3, RADIUS, 0.02),
                      (x, y, RADIUS), wg)
            o.dBodySetRotation(wb, rotation(1, 0, 0, math.pi / 2))
            j = o.dJointCreateHinge(w, None)
            o.dJointAttach(j, wb, chassis)  # as Webots: the endPoint first
            o.dJointSetHingeAnchor(j, x, y, RADIUS)
            o.dJointSetHingeAxis(j, 0, 1, 0)
            o.dJointSetHingeParam(j, o.dParamFMax, 2.0)
            o.dJointSetHingeParam(j, o.dParamVel, 5.0)
            geoms.append(wg)
            hinges.append(j)
        for _ in range(round(CAR_SECONDS / H)):
            step(geoms)
            p, v = o.dBodyGetPosition(chassis), o.dBodyGetLinearVel(chassis)
            out.append([p[0], p[2], v[0], o.dJointGetHingeAngleRate(hinges[0])])
    else:  # the position_sensor robot as the world has it (yawed YAW about z)
        z0 = 0.003
        c, s = math.cos(YAW), math.sin(YAW)

        def at(x: float, y: float, z: float) -> tuple[float, float, float]:
            """A point of the robot's frame in the world."""
            return (c * x - s * y, s * x + c * y, z)

        def turned(r: object) -> object:
            """Rotation ``r`` (a dMatrix3) after the robot's yaw."""
            out = o.dMatrix3()
            for i in range(3):
                row = [c, -s, 0.0] if i == 0 else [s, c, 0.0] if i == 1 else [0.0, 0.0, 1.0]
                for k in range(3):
                    out[4 * i + k] = sum(row[m] * r[4 * m + k] for m in range(3))
            return out

        gb = o.dCreateCylinder(space, 0.045, 0.08)
        chassis = body(lambda m: o.dMassSetCylinderTotal(m, 5.0, 3, 0.045, 0.08),
                       (0, 0, z0), gb)
        o.dBodySetRotation(chassis, turned(rotation(0, 0, 1, 0)))
        o.dGeomSetOffsetPosition(gb, 0, 0, 0.0415)
        geoms, motors = [gb], []
        for side in (1, -1):
            wg = o.dCreateCylinder(space, 0.028, 0.01)
            wb = body(lambda m: o.dMassSetCylinderTotal(m, 0.05, 3, 0.028, 0.01),
                      at(0, side * 0.045, z0 + 0.025), wg)
            o.dBodySetRotation(wb, turned(rotation(1, 0, 0, math.pi / 2)))
            j = o.dJointCreateHinge(w, None)
            o.dJointAttach(j, wb, chassis)  # as Webots: the endPoint first
            o.dJointSetHingeAnchor(j, *at(0, side * 0.045, z0 + 0.025))
            o.dJointSetHingeAxis(j, *at(0, 1, 0))
            o.dJointSetHingeParam(j, o.dParamFMax, 10.0)
            geoms.append(wg)
            motors.append(j)
        gp = o.dCreateCapsule(space, 0.005, 0.15)
        pole = body(lambda m: o.dMassSetCapsuleTotal(m, 1.0, 3, 0.005, 0.15),
                    at(0, 0, z0 + 0.1625), gp)
        hinge = o.dJointCreateHinge(w, None)
        o.dJointAttach(hinge, pole, chassis)
        anchor = at(0, 0, z0 + 0.085)
        axis = at(math.cos(POLE_AXIS), math.sin(POLE_AXIS), 0)
        o.dJointSetHingeAnchor(hinge, *anchor)
        o.dJointSetHingeAxis(hinge, *axis)
        o.dJointSetHingeParam(hinge, o.dParamLoStop, -1.5708)
        o.dJointSetHingeParam(hinge, o.dParamHiStop, 1.5708)
        # the pole turning at NUDGE rad/s about its hinge, the rest at rest
        o.dBodySetAngularVel(pole, *(NUDGE * a for a in axis))
        o.dBodySetLinearVel(pole, *(NUDGE * (axis[1] * 0.0775 - 0.0),
                                    NUDGE * (-axis[0] * 0.0775), 0.0))
        geoms.append(gp)
        state = {"integral": 0.0, "previous": 0.0}
        for _ in range(round(POLE_SECONDS / H)):
            step(geoms)
            angle = o.dJointGetHingeAngle(hinge)
            p = o.dBodyGetPosition(chassis)
            out.append([angle, p[0], p[1]])
            if abs(angle) > FALLEN:
                break
            speed = control(state, angle)
            for j in motors:
                o.dJointSetHingeParam(j, o.dParamVel, -speed)
    return out


# --------------------------------------------------------------------- servo_sim's step

def world_text(case: str) -> str:
    """The case's Webots world (R2023b, z up, 16 ms)."""
    floor = 'Solid { name "floor" boundingObject Plane { size 100 100 } }'
    if case == "box":
        return f"""#VRML_SIM R2023b utf8
WorldInfo {{ basicTimeStep 16 }}
{floor}
Solid {{ translation 0 0 0.2 name "box" boundingObject Box {{ size 0.1 0.1 0.1 }}
  physics Physics {{ density -1 mass 1 }} }}
Robot {{ translation 5 0 1 children [ HingeJoint {{ device [ RotationalMotor {{ name "m" }} ]
  endPoint Solid {{ }} }} ] }}
"""
    wheels = "\n".join(f"""HingeJoint {{ jointParameters HingeJointParameters {{ axis 0 1 0
  anchor {x} {y} 0 }} device [ RotationalMotor {{ name "wheel{k}" maxTorque 2 }} ]
  endPoint Solid {{ translation {x} {y} 0 rotation 1 0 0 1.5707963267948966 name "w{k}"
  boundingObject Cylinder {{ height 0.02 radius {RADIUS} }}
  physics Physics {{ density -1 mass 0.05 }} }} }}""" for k, (x, y) in enumerate(WHEELS, 1))
    return f"""#VRML_SIM R2023b utf8
WorldInfo {{ basicTimeStep 16 }}
{floor}
Robot {{ translation 0 0 {RADIUS} children [ {wheels} ] name "car"
  boundingObject Box {{ size 0.2 0.12 0.04 }} physics Physics {{ density -1 mass 1 }} }}
"""


def ours(case: str, pole_world: str | None) -> list[list[float]]:
    """The case converted from its world and stepped by ode_step: a row per step."""
    import mujoco
    import numpy as np

    from servo_sim.multibody.from_world import world_model
    from servo_sim.multibody.ode_step import OdeParameters, step, world_rows
    if case == "pole":
        path = Path(pole_world)
    else:
        path = Path(tempfile.mkdtemp()) / f"{case}.wbt"
        path.write_text(world_text(case))
    model = world_model(mujoco, path)
    data = mujoco.MjData(model)
    ode = OdeParameters.of_model(mujoco, model)

    def joint(name: str) -> tuple[int, int]:
        j = model.joint(name).id
        return int(model.jnt_dofadr[j]), int(model.jnt_qposadr[j])

    def advance(dofs: list[int], target: list[float], force: list[float]) -> None:
        mujoco.mj_step1(model, data)
        step(mujoco, model, data, world_rows(mujoco, model, data, ode, H, np.array(dofs),
                                             np.array(target), np.array(force)), H)

    out = []
    if case == "box":
        free = model.body("box").jntadr[0]
        qv = int(model.jnt_dofadr[free])
        qp = int(model.jnt_qposadr[free])
        data.qvel[qv] = 1.0
        for _ in range(round(BOX_SECONDS / H)):
            advance([], [], [])
            out.append([data.qpos[qp], data.qpos[qp + 2], data.qvel[qv], data.qvel[qv + 2]])
    elif case == "car":
        wheels = [joint(f"wheel{k}")[0] for k in range(1, 5)]
        qp = int(model.jnt_qposadr[model.body("car").jntadr[0]])
        qv = int(model.jnt_dofadr[model.body("car").jntadr[0]])
        for _ in range(round(CAR_SECONDS / H)):
            advance(wheels, [5.0] * 4, [2.0] * 4)
            out.append([data.qpos[qp], data.qpos[qp + 2], data.qvel[qv], data.qvel[wheels[0]]])
    else:
        wheels = [joint("left wheel motor")[0], joint("right wheel motor")[0]]
        _, sensor = joint("position sensor")
        qp = int(model.jnt_qposadr[model.body("MyBot").jntadr[0]])
        state = {"integral": 0.0, "previous": 0.0}
        speed = 0.0
        data.qvel[joint("position sensor")[0]] = NUDGE
        for _ in range(round(POLE_SECONDS / H)):
            advance(wheels, [-speed] * 2, [10.0] * 2)
            angle = float(data.qpos[sensor])
            out.append([angle, data.qpos[qp], data.qpos[qp + 1]])
            if abs(angle) > FALLEN:
                break
            speed = control(state, angle)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ode", choices=["box", "car", "pole"],
                        help="(internal) run a case in ODE, print its rows as JSON")
    parser.add_argument("--ode-python", default="/tmp/w64b/odevenv/bin/python",
                        help="a Python with odepy (ODE's ctypes binding)")
    parser.add_argument("--pole-world", help="upstream position_sensor.wbt (the pole case)")
    args = parser.parse_args()
    if args.ode:
        json.dump(ode_side(args.ode), sys.stdout)
        return
    cases = ["box", "car"] + (["pole"] if args.pole_world else [])
    for case in cases:
        theirs = json.loads(subprocess.run([args.ode_python, __file__, "--ode", case],
                                           check=True, capture_output=True,
                                           text=True).stdout)
        mine = ours(case, args.pole_world)
        report(case, theirs, mine)


def report(case: str, theirs: list, mine: list) -> None:
    """The case's figures, ODE beside ode_step."""
    import numpy as np
    a, b = np.array(theirs), np.array(mine)
    if case in ("box", "car"):
        n = min(len(a), len(b))
        diff = np.abs(a[:n] - b[:n]).max(axis=0)
        print(f"{case}: {n} steps; end x {a[-1, 0]:+.5f} (ODE) {b[-1, 0]:+.5f} (ode_step), "
              f"z {a[-1, 1]:.6f} {b[-1, 1]:.6f}; largest difference x {diff[0]:.2e} m, "
              f"z {diff[1]:.2e} m, vx {diff[2]:.2e} m/s, {'vz' if case == 'box' else 'wheel'} "
              f"{diff[3]:.2e}")
        return
    for name, rows in (("ODE", a), ("ode_step", b)):
        seconds = len(rows) * H
        fell = abs(rows[-1, 0]) > FALLEN
        travel = np.hypot(rows[:, 1] - rows[0, 1], rows[:, 2] - rows[0, 2]).max()
        print(f"pole, {name}: {'fell after' if fell else 'up for'} {seconds:.2f} s, largest "
              f"angle {np.abs(rows[:, 0]).max():.3f} rad, cart x {rows[:, 1].min():+.3f}.."
              f"{rows[:, 1].max():+.3f} m, farthest {travel:.3f} m from its start")
    for seconds in (0.16, 0.32, 2.0):  # the loop is unstable: they part, as two ODEs would
        n = min(len(a), len(b), round(seconds / H))
        print(f"pole: first {n * H:.2f} s, largest angle difference "
              f"{np.abs(a[:n, 0] - b[:n, 0]).max():.2e} rad (largest angle "
              f"{np.abs(a[:n, 0]).max():.3f} rad)")


if __name__ == "__main__":
    main()
