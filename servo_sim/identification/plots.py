"""Plots of replays: simulated against measured position, one panel per recording
(``servo-sim replay --plot``, ``identify --plot``). matplotlib, imported when asked."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ..plotting import pyplot
from .replay import MRAD, Replay


def plot_replays(path: str | Path, replays: Sequence[Replay], title: str) -> None:
    """One panel per replay: the goal, the measured and the simulated position (PNG)."""
    plt = pyplot()
    columns = 2 if len(replays) > 1 else 1
    rows = math.ceil(len(replays) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 2.6 * rows), squeeze=False)
    for ax, r in zip(axes.flat, replays, strict=False):
        rec = r.recording
        ax.step(rec.time, rec.command, where="post", color="grey", linestyle="--",
                linewidth=0.8, label="goal")
        ax.plot(rec.time, rec.position, label="measured", linewidth=1.6)
        ax.plot(rec.time, r.simulated, label="simulated", linewidth=1.0)
        if rec.torque is not None:
            off = ~rec.torque
            ax.fill_between(rec.time, 0, 1, where=off, transform=ax.get_xaxis_transform(),
                            color="red", alpha=0.08, label="torque off")
        ax.set_title(f"{rec.name}: MAE {MRAD * r.mae:.1f} mrad", fontsize=9)
        ax.set_ylabel("position [rad]")
    for ax in list(axes.flat)[len(replays):]:
        ax.set_visible(False)
    axes.flat[0].legend(loc="best", fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
