"""The XL330's Position P Gain as measured: the Present PWM the real servo reports
against ``kp x`` its position error, on Rhoban/bam's bench recordings (still, torque
on, unsaturated samples), and the divisor a least-squares line through the origin gives
(the e-Manual says 128; servo_sim's XL330 profile takes what this finds: docs/sim-to-real.md).

    python benchmarks/xl330_gain_scale.py [RECORDING.json ...]   (default: the shared eight)
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: the shared recordings (../shared/data/real-servos/xl330, README there)
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-servos" / "xl330"
TICKS_PER_RAD = 4096 / (2 * math.pi)
#: Present PWM: 885 = 100 % (PWM Limit); the register is signed 16-bit
PWM_FULL = 885


def still_samples(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(kp * error in ticks, Present PWM)`` of the samples where the servo stands
    (Present Velocity 0) with the torque on and the PWM below its limit."""
    log = json.loads(path.read_text())
    x, y = [], []
    for e in log["entries"]:
        pwm = e["load"] - 65536 if e["load"] > 32767 else e["load"]
        if e["torque_enable"] and e["speed"] == 0 and abs(pwm) < PWM_FULL:
            x.append(log["kp"] * (e["goal_position"] - e["position"]) * TICKS_PER_RAD)
            y.append(pwm)
    return np.array(x), np.array(y)


def gain_divisor(paths: Sequence[Path]) -> tuple[int, float, float]:
    """``(samples, divisor, r)``: PWM = kp * e / divisor fitted through the origin over
    the still samples of ``paths``, and the correlation."""
    pairs = [still_samples(p) for p in paths]
    x = np.concatenate([p[0] for p in pairs])
    y = np.concatenate([p[1] for p in pairs])
    slope = float(x @ y / (x @ x))
    return len(x), 1.0 / slope, float(np.corrcoef(x, y)[0, 1])


def main(argv: Sequence[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(SHARED.glob("*.json"))
    by_kp: dict[float, list[Path]] = {}
    for p in paths:
        by_kp.setdefault(json.loads(p.read_text())["kp"], []).append(p)
    print(f"{'kp':>5} {'samples':>8} {'divisor':>8} {'r':>9}")
    for kp, group in sorted(by_kp.items()):
        n, divisor, r = gain_divisor(group)
        print(f"{kp:>5g} {n:>8} {divisor:>8.1f} {r:>9.6f}")
    n, divisor, r = gain_divisor(paths)
    print(f"{'all':>5} {n:>8} {divisor:>8.1f} {r:>9.6f}   (e-Manual: 128)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
