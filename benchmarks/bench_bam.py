"""servo_sim beside Rhoban/bam's own code, in one run, on the XL330 bench recordings
(docs/sim-to-real.md, "Side by side with bam").

Both with the parameters each ships (bam's params/xl330/m1 ... m6; servo_sim's
XL330-M288-T profile, whose gear was fitted on all eight: its P 400 column is not held
out), then both fitted on the same four recordings (Position P Gain 100) and replayed on
the other four (P 400); servo_sim's fit starts from bam's published m1 gear. Every MAE
is at the same samples: bam's ``bam.process`` grid (5 ms) of each raw log, the one
``bam.mae`` scores on.

    scripts/setup-bam-venv                      # once: bam in .venv-bam (Python 3.12)
    python benchmarks/bench_bam.py [--bam-trials N] [--out DIR]

bam runs in its own venv (``SERVO_SIM_BAM_PYTHON``, default ``.venv-bam/bin/python``); where
it is missing, its rows are skipped with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "real-servos" / "xl330"
BAM_PYTHON = Path(os.environ.get("SERVO_SIM_BAM_PYTHON", REPO / ".venv-bam" / "bin" / "python"))
#: bam's MAE of a parameter file on each processed log in a folder, as bam.mae computes it
BAM_MAE = """
import json, sys
import numpy as np
from bam.logs import Logs
from bam.model import load_model
from bam import simulate
logs = Logs(sys.argv[2])
out = {}
for path in sys.argv[3:]:
    model = load_model(path)
    maes = []
    for log in logs.logs:
        positions, _, _ = simulate.Simulator(model).rollout_log(log, simulate_control=True)
        measured = np.array([e["position"] for e in log["entries"]])
        maes.append(float(np.mean(np.abs(np.array(positions) - measured))))
    out[path] = maes
json.dump(out, open(sys.argv[1], "w"))
"""


#: the fit starts from bam's published XL330 m1 gear (the profile's before issue 63), not
#: from the profile's, which was fitted on all eight recordings (the held-out four too)
START = ["--set", "actuator.friction=0.020562", "--set", "actuator.viscous_friction=0.0078249",
         "--set", "actuator.armature=0.0017253", "--set", "actuator.load_friction_motor=0"]


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, text=True, capture_output=True, **kwargs)


def bam_missing() -> str | None:
    """Why bam cannot run here, or None."""
    if not BAM_PYTHON.exists():
        return f"no {BAM_PYTHON} (scripts/setup-bam-venv; bam needs Python 3.12)"
    try:
        run([str(BAM_PYTHON), "-c", "import bam, optuna, wandb"])  # bam.fit imports them
    except subprocess.CalledProcessError as exc:
        return f"bam does not import: {exc.stderr.strip().splitlines()[-1]}"
    return None


def bam_maes(work: Path, logdir: Path, params: list[Path]) -> dict[str, list[float]]:
    out = work / "bam_mae.json"
    run([str(BAM_PYTHON), "-c", BAM_MAE, str(out), str(logdir), *map(str, params)])
    return json.loads(out.read_text())


def servo_sim_maes(logdir: Path, config: Path | None, step_ms: int) -> list[float]:
    from servo_sim.identification.recordings import read_recording
    from servo_sim.identification.replay import replay
    from servo_sim.model import load_config
    from servo_sim.model.config import motor_to_dict

    if config is None:
        fields: dict = {"servo": "XL330-M288-T"}
    else:
        fields = motor_to_dict(load_config(config).motors[0])
    return [replay(read_recording(p), fields, {}, step_ms).mae
            for p in sorted(logdir.glob("*.json"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bam-trials", type=int, default=1000,
                        help="bam's fit: its CMA-ES trials (1000; its default is 100000)")
    parser.add_argument("--pattern-runs", type=int, default=20,
                        help="servo-sim identify's pattern search runs (20)")
    parser.add_argument("--iterations", type=int, default=8,
                        help="servo-sim identify's Levenberg-Marquardt iterations (8)")
    parser.add_argument("--step-ms", type=int, default=2, help="servo_sim's step, ms (2)")
    parser.add_argument("--out", type=Path, default=Path("bench_bam_out"),
                        help="work folder: processed logs, fitted parameters, plots")
    args = parser.parse_args()
    work = args.out.resolve()
    logs = {name: work / name for name in ("raw", "all", "train", "validate")}
    for d in logs.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    raw = sorted(SHARED.glob("*.json"))
    for p in raw:
        shutil.copy(p, logs["raw"])
    missing = bam_missing()
    rows: list[tuple[str, str, float, float]] = []  # (who, what, train MAE, valid MAE)

    if missing:
        print(f"bam skipped: {missing}")
        # servo_sim still scores on the raw samples
        for p in raw:
            shutil.copy(p, logs["all"])
    else:
        run([str(BAM_PYTHON), "-m", "bam.process", "--raw", str(logs["raw"]), "--logdir",
             str(logs["all"])])
    for p in sorted(logs["all"].glob("*.json")):
        kp = json.loads(p.read_text())["kp"]
        shutil.copy(p, logs["train" if kp == 100 else "validate"])

    def mean(values: list[float]) -> float:
        return 1000.0 * sum(values) / len(values)

    if not missing:
        params = sorted((Path(run([str(BAM_PYTHON), "-c", "import bam,os;print(os.path."
                                   "dirname(bam.__file__))"]).stdout.strip()) / "params"
                         / "xl330").glob("m*.json"))
        for split in ("train", "validate"):
            for path, maes in bam_maes(work, logs[split], params).items():
                rows.append(("bam", f"shipped {Path(path).stem}", split, mean(maes)))
    for split in ("train", "validate"):
        rows.append(("servo_sim", "shipped XL330-M288-T", split,
                     mean(servo_sim_maes(logs[split], None, args.step_ms))))

    # fitted on the P 100 four, validated on the P 400 four
    fitted = work / "servo_sim_fitted.yaml"
    start = time.monotonic()
    run([sys.executable, "-m", "servo_sim.cli", "identify", *map(str, sorted(
        logs["train"].glob("*.json"))), "--servo", "XL330-M288-T", "--step-ms",
        str(args.step_ms), "--pattern-runs", str(args.pattern_runs), "--iterations",
        str(args.iterations), *START, "--fit", "actuator.armature", "actuator.friction",
        "actuator.viscous_friction", "actuator.load_friction_motor", "max_torque",
        "--out", str(fitted), "--plot", str(work / "servo_sim_fit.png")])
    servo_fit_s = time.monotonic() - start
    run([sys.executable, "-m", "servo_sim.cli", "replay", *map(str, sorted(
        logs["validate"].glob("*.json"))), "--config", str(fitted), "--step-ms",
        str(args.step_ms), "--plot", str(work / "servo_sim_held_out.png")])
    for split in ("train", "validate"):
        rows.append(("servo_sim", "fitted on P 100", split,
                     mean(servo_sim_maes(logs[split], fitted, args.step_ms))))
    if not missing:
        bam_fitted = work / "bam_m6_fitted.json"
        start = time.monotonic()
        run([str(BAM_PYTHON), "-m", "bam.fit", "--logdir", str(logs["train"]), "--actuator",
             "xl330", "--model", "m6", "--method", "cmaes", "--trials", str(args.bam_trials),
             "--output", str(bam_fitted)], cwd=work)
        bam_fit_s = time.monotonic() - start
        for split in ("train", "validate"):
            maes = bam_maes(work, logs[split], [bam_fitted])[str(bam_fitted)]
            rows.append(("bam", "m6 fitted on P 100", split, mean(maes)))
    print(f"{'who':<10} {'parameters':<22} {'P 100 (train)':>14} {'P 400 (held out)':>17}")
    table = {}
    for who, what, split, value in rows:
        table.setdefault((who, what), {})[split] = value
    for (who, what), v in table.items():
        print(f"{who:<10} {what:<22} {v.get('train', float('nan')):>14.1f} "
              f"{v.get('validate', float('nan')):>17.1f}")
    print(f"mean MAE, mrad, on bam's 5 ms grid; servo_sim step {args.step_ms} ms; fits: "
          f"servo_sim {servo_fit_s:.0f} s"
          + ("" if missing else f", bam {bam_fit_s:.0f} s ({args.bam_trials} trials)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
