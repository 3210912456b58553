"""Seconds per step of the vectorised bank, side by side with its baselines.

For N motors in dynamic mode (a mix of position, velocity and force control, with
gravity, springs, dampers, friction, stops, acceleration limits and sensors on):

* bank  - ``Simulation.step()``: every motor in one set of numpy operations;
* loop  - the same arithmetic as a plain per-motor Python loop
          (``scalar_reference.py``, checked equal to the bank by the tests);
* floor - one numpy pass over every per-motor array of the bank (a copy
          of each): what merely touching the state costs.

Each figure is the best of several repeats, the three interleaved in one run so they
see the same machine. Run: ``python benchmarks/bench_model.py [--sizes 1 10 ...]``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scalar_reference import ScalarMotor, step_all

from servo_sim.model import Simulation


def make_sim(n: int) -> Simulation:
    """N varied motors, commanded into a mix of modes."""
    rng = np.random.default_rng(1)
    motors = []
    for i in range(n):
        motors.append({
            "name": f"m{i}",
            "type": "rotational" if i % 3 else "linear",
            "max_velocity": 5.0,
            "control_pid": [10.0, float(i % 2), 0.01 * (i % 3)],
            "acceleration": -1.0 if i % 4 else 20.0,
            "min_stop": -2.0, "max_stop": 2.0,
            "spring_constant": 5.0 * (i % 5 == 0),
            "damping_constant": 0.1,
            "static_friction": 0.05,
            "inertia": 0.01 + 0.01 * rng.random(),
            "load": {"gravity_mass": 0.5, "gravity_distance": 0.1, "external": 0.0},
            "position_sensor": {"sampling_period_ms": 16, "noise": 0.001},
            "force_feedback_sampling_period_ms": 32,
        })
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": motors})
    sim.bank.wait_for_compiled_law()  # the law a run steps with once it has loaded
    for i, m in enumerate(sim):
        if i % 10 == 0:
            m.set_position(np.inf)
            m.set_velocity(1.0)
        elif i % 10 == 1:
            m.set_torque(0.2)
        else:
            m.set_position(rng.uniform(-1.5, 1.5))
    sim.step(5)
    return sim


def per_motor_arrays(sim: Simulation) -> list[np.ndarray]:
    n = sim.bank.n
    arrays = [v for v in vars(sim.bank).values() if isinstance(v, np.ndarray) and v.shape == (n,)
              and v.base is None]  # (the bank's own, not views of its tables)
    data = getattr(sim.bank, "data", None)  # the motors' tables (model/tables.py)
    if data is not None:
        arrays += [row for table in vars(data).values() if hasattr(table, "views")
                   for row in table.views] + [data.mode]
    law_tables = getattr(sim.bank, "law_data", None)  # (before: the law's tables only)
    if law_tables is not None:
        arrays += [row for table in law_tables.arguments[:4] for row in table]
    for sensor in (sim.bank.position_sensor, sim.bank.force_sensor):
        arrays += [v for k, v in vars(sensor).items()
                   if isinstance(v, np.ndarray) and k != "refreshed"]  # per motor only
    return arrays


def best_seconds_per_call(fn, calls: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(calls)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def measure(n: int, budget: float, repeats: int) -> dict[str, float]:
    sim = make_sim(n)
    loop_motors = [ScalarMotor(sim.bank, i) for i in range(n)]
    arrays = per_motor_arrays(sim)
    scratch = {a.dtype: np.empty_like(a) for a in arrays}

    def bank(k: int) -> None:
        sim.step(k)

    def loop(k: int) -> None:
        for _ in range(k):
            step_all(loop_motors)

    def floor(k: int) -> None:
        for _ in range(k):
            for a in arrays:
                np.copyto(scratch[a.dtype], a)

    out = {"arrays": len(arrays)}
    for name, fn in (("bank", bank), ("loop", loop), ("floor", floor)):
        t0 = time.perf_counter()
        fn(1)  # warm up and size the run
        once = max(time.perf_counter() - t0, 1e-7)
        out[name] = once  # provisional
        out[f"{name}_calls"] = max(1, int(budget / repeats / once))
    results = {name: float("inf") for name in ("bank", "loop", "floor")}
    for _ in range(repeats):  # interleave so all three see the same machine state
        for name, fn in (("bank", bank), ("loop", loop), ("floor", floor)):
            results[name] = min(results[name],
                                best_seconds_per_call(fn, out[f"{name}_calls"], 1))
    out.update(results)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100, 1000, 10000])
    parser.add_argument("--budget", type=float, default=1.5,
                        help="seconds of measuring per size and variant (default 1.5)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"servo_sim model benchmark: dynamic mode, Python {platform.python_version()}, "
          f"numpy {np.__version__}, {platform.machine()}")
    print(f"{'N':>6} {'bank s/step':>12} {'loop s/step':>12} {'floor s/pass':>13} "
          f"{'loop/bank':>10} {'bank/floor':>11} {'motor-steps/s':>14}")
    for n in args.sizes:
        r = measure(n, args.budget, args.repeats)
        print(f"{n:>6} {r['bank']:>12.3e} {r['loop']:>12.3e} {r['floor']:>13.3e} "
              f"{r['loop'] / r['bank']:>9.1f}x {r['bank'] / r['floor']:>10.2f}x "
              f"{n / r['bank']:>14.3e}", flush=True)
    print(f"(floor: one numpy pass over each of the bank's {r['arrays']} per-motor arrays)")


if __name__ == "__main__":
    main()
