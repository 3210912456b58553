"""Seconds per step of profiled motors (a real servo's actuator) against plain ones.

For N motors following moving position goals:

* plain    - Webots' ideal motor (the servo's max torque and speed, no actuator);
* profiled - the same motors with servo profiles: half ``XM430-W350-T`` (Dynamixel
             firmware law), half ``STS3215-7.4V`` (Feetech), every one with the
             torque-speed envelope and 4096-tick encoder, and gear friction and backlash.

Each figure is the best of several repeats, the two interleaved in one run so they see
the same machine. Run: ``python benchmarks/bench_profiles.py [--sizes 1 100 1000]``.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from servo_sim.model import Simulation

SERVOS = ("XM430-W350-T", "STS3215-7.4V")


def make_sim(n: int, profiled: bool) -> Simulation:
    """N motors with moving goals (set before the clock starts)."""
    motors = []
    for i in range(n):
        if profiled:
            motors.append({"name": f"m{i}", "servo": SERVOS[i % 2],
                           "actuator": {"friction": 0.02, "backlash": 0.002}})
        else:
            motors.append({"name": f"m{i}", "max_torque": 4.1, "max_velocity": 4.8})
    sim = Simulation.from_config({"basic_time_step_ms": 1, "motors": motors})
    sim.bank.wait_for_compiled_law()  # the law a run steps with once it has loaded
    for i, m in enumerate(sim):
        m.set_position(0.5 * np.sin(i))
    return sim


def seconds_per_step(sim: Simulation, steps: int) -> float:
    start = time.perf_counter()
    sim.step(steps)
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; best of {args.repeats} x {args.steps} steps")
    print(f"{'N':>6} {'plain us/step':>14} {'profiled us/step':>17} {'ratio':>6} "
          f"{'profiled us/motor':>18}")
    for n in args.sizes:
        sims = {kind: make_sim(n, kind == "profiled") for kind in ("plain", "profiled")}
        best = {kind: float("inf") for kind in sims}
        for _ in range(args.repeats):
            for kind, sim in sims.items():
                best[kind] = min(best[kind], seconds_per_step(sim, args.steps))
        plain, profiled = best["plain"] * 1e6, best["profiled"] * 1e6
        print(f"{n:>6} {plain:>14.1f} {profiled:>17.1f} {profiled / plain:>6.2f} "
              f"{profiled / n:>18.3f}")


if __name__ == "__main__":
    main()
