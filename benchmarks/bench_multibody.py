"""Seconds per step of the SO-101 in MuJoCo driven by servo_sim, side by side in one run.

Per row (one arm, ten arms in one model: 6 and 60 STS3215-7.4V servos at 1 kHz, each
holding a pose under the arm's weight, sensors sampled every 8 ms):

* floor   - the same model stepped by MuJoCo alone with its own ``<position>``
            actuators (MuJoCo Menagerie's SO-101 gains: kp 998.22, kv 2.731, forcerange
            +-2.94), in C (``mujoco.rollout``: no Python between steps);
* mj_step - the same, one ``mujoco.mj_step`` call per step from Python;
* joints  - servo_sim's per-joint integration of the same servos (``physics:
            dynamic``, no MuJoCo): what the servo law costs on its own;
* mujoco  - servo_sim's servos driving MuJoCo's body (``physics: mujoco``);
* ideal   - Webots' ideal motors (no servo profile: P 10, 3 N*m, 5 rad/s) on the same
            body, solved together each step (``servo_sim/multibody/coupled.py``).

With ``--world FILE`` (repeatable; default examples/webots/rover.wbt): a Webots world's
robot, its motors moving (every wheel at 5 rad/s, every other motor told 0.6), stepped
at its basicTimeStep on its per-joint body (``joints``: the world's config as servo-sim
reads it) and on the MuJoCo body built from the world itself (``mujoco``:
``servo_sim/multibody/from_world.py``, Webots' ideal motors solved with the contacts).

Each figure is the best of several repeats, interleaved so that all see the same
machine, in wall-clock time or (``--clock cpu``) in the CPU time of this thread, which
a machine busy with other work disturbs less. Run: ``python
benchmarks/bench_multibody.py [--arms 1 10] [--repeats 5] [--clock cpu]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import mujoco
import mujoco.rollout
import numpy as np

from servo_sim.load import load, on_physics
from servo_sim.model import Simulation
from servo_sim.model.config import load_config, to_dict

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / "config" / "so101.urdf"
#: the pose every arm holds (rad), and MuJoCo Menagerie's robotstudio_so101 actuator
POSE = {"shoulder_pan": 0.3, "shoulder_lift": -0.6, "elbow_flex": 0.9, "wrist_flex": 0.4,
        "wrist_roll": 0.2, "gripper": 0.5}
KP, KV, FORCE = 998.22, 2.731, 2.94


def arms_model(arms: int, directory: Path, actuators: bool) -> Path:
    """``arms`` copies of so101.urdf side by side in one MJCF (joints ``a<k>_<joint>``),
    1 ms; with ``actuators``, Menagerie's position actuator on every joint."""
    world = mujoco.MjSpec()
    world.option.timestep = 0.001
    for k in range(arms):
        frame = world.worldbody.add_frame(pos=[0.5 * k, 0.0, 0.0])
        frame.attach_body(mujoco.MjSpec.from_file(str(URDF)).worldbody.first_body(),
                          f"a{k}_", "")
    if actuators:
        for k in range(arms):
            for joint in POSE:
                actuator = world.add_actuator(name=f"a{k}_{joint}", target=f"a{k}_{joint}",
                                              trntype=mujoco.mjtTrn.mjTRN_JOINT)
                actuator.set_to_position(kp=KP, kv=KV)
                actuator.forcelimited = True
                actuator.forcerange = [-FORCE, FORCE]
    path = directory / f"arms{arms}{'_position' if actuators else ''}.xml"
    path.write_text(world.to_xml())
    return path


def servo_sim(arms: int, model: Path | None, ideal: bool = False) -> Simulation:
    """config/so101.yaml's servos for ``arms`` arms at 1 ms, holding POSE; ``model``:
    in MuJoCo, else each joint on its own; ``ideal``: Webots' ideal motors instead."""
    base = to_dict(load_config(REPO / "config" / "so101.yaml"))["motors"]
    if ideal:
        base = [{"name": m["name"], "control_pid": [10.0, 0.0, 0.0], "max_torque": 3.0,
                 "max_velocity": 5.0} for m in base]
    motors = [{**m, "name": f"a{k}_{m['name']}"} for k in range(arms) for m in base]
    raw = {"basic_time_step_ms": 1, "motors": motors}
    if model is not None:
        raw.update(physics="mujoco", multibody={"model": str(model)})
    sim = Simulation.from_config(raw)
    sim.bank.wait_for_compiled_law()  # the law a run steps with once it has loaded
    for k in range(arms):
        for joint, target in POSE.items():
            sim.motor(f"a{k}_{joint}").set_position(target)
    sim.step(500)  # at rest
    return sim


#: the clocks of --clock: wall-clock time, or this thread's CPU time
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
clock = CLOCKS["wall"]


def best(fn, steps: int) -> float:
    t0 = clock()
    fn(steps)
    return (clock() - t0) / steps


def measure(arms: int, steps: int, repeats: int, directory: Path) -> dict[str, float]:
    floor_path = arms_model(arms, directory, actuators=True)
    model = mujoco.MjModel.from_xml_path(str(floor_path))
    data = mujoco.MjData(model)
    data.ctrl[:] = [POSE[j] for _ in range(arms) for j in POSE]
    mujoco.mj_step(model, data, 500)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty((1, mujoco.mj_stateSize(model, spec)))
    mujoco.mj_getState(model, data, state[0], spec)
    control = np.tile(data.ctrl, (1, steps, 1))

    def floor(n: int) -> None:
        mujoco.rollout.rollout(model, data, state, control[:, :n])

    def mj_step(n: int) -> None:
        for _ in range(n):
            mujoco.mj_step(model, data)

    joints = servo_sim(arms, None)
    body = arms_model(arms, directory, actuators=False)
    ours = servo_sim(arms, body)
    ideal = servo_sim(arms, body, ideal=True)
    runs = {"floor": floor, "mj_step": mj_step, "joints": joints.step, "mujoco": ours.step,
            "ideal": ideal.step}
    out = {name: float("inf") for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            out[name] = min(out[name], best(fn, steps))
    return out


def world_sim(world: Path, physics: str | None) -> Simulation:
    """The robot of ``world`` on its per-joint body (``physics`` None) or on the engine
    ``physics`` built from the world, its motors moving, after 250 steps."""
    loaded = load(world)
    sim = Simulation(on_physics(loaded, physics) if physics else loaded.config)
    sim.bank.wait_for_compiled_law()
    for motor in sim:
        if "wheel" in motor.name:
            motor.set_position(float("inf"))
            motor.set_velocity(5.0)
        elif not motor.config.passive:
            motor.set_position(0.6)
    sim.step(250)
    return sim


def measure_world(world: Path, steps: int, repeats: int) -> dict[str, float]:
    runs = {"joints": world_sim(world, None).step, "mujoco": world_sim(world, "mujoco").step}
    out = {name: float("inf") for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            out[name] = min(out[name], best(fn, steps))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--steps", type=int, default=2000, help="steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="wall-clock time, or this thread's CPU time")
    parser.add_argument("--world", type=Path, action="append",
                        help="a Webots world whose robot is measured on its per-joint "
                             "body and as a MuJoCo body built from the world (repeatable; "
                             "with --arms 0, only the worlds)")
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    for world in args.world or []:
        step = load(world).config.basic_time_step_ms / 1000.0
        r = measure_world(world, args.steps, args.repeats)
        print(f"{world.name}: {len(load(world).config.motors)} motors at {step * 1000:g} ms"
              f", {args.clock} time; joints {r['joints']:.3e} s/step ({1 / r['joints']:.0f} "
              f"steps/s, {step / r['joints']:.1f}x real time); mujoco {r['mujoco']:.3e} "
              f"s/step ({1 / r['mujoco']:.0f} steps/s, {step / r['mujoco']:.1f}x real time)")
    args.arms = [a for a in args.arms if a > 0]
    if not args.arms:
        return 0
    print(f"servo_sim multibody benchmark: SO-101 arms at 1 kHz, Python "
          f"{platform.python_version()}, MuJoCo {mujoco.__version__}, numpy "
          f"{np.__version__}, {platform.machine()}; {args.clock} time")
    print(f"{'arms':>5} {'servos':>6}  {'floor s/step':>12} {'mj_step':>10} {'joints':>10} "
          f"{'mujoco':>10}  {'x real time':>11}  {'mujoco/floor':>12}  {'mujoco/joints':>13}"
          f"  {'ideal':>10} {'x real time':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for arms in args.arms:
            r = measure(arms, args.steps, args.repeats, Path(tmp))
            print(f"{arms:>5} {6 * arms:>6}  {r['floor']:>12.3e} {r['mj_step']:>10.3e} "
                  f"{r['joints']:>10.3e} {r['mujoco']:>10.3e}  {0.001 / r['mujoco']:>10.1f}x"
                  f"  {r['mujoco'] / r['floor']:>11.1f}x  {r['mujoco'] / r['joints']:>12.2f}x"
                  f"  {r['ideal']:>10.3e} {0.001 / r['ideal']:>10.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
