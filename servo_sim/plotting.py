"""Plots written to files (matplotlib, an optional extra): the one place that imports it,
and the step-response figure that ``servo-sim step-response --plot`` writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: What installs matplotlib.
PLOT_EXTRA = "pip install 'servo_sim[plot]'"


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files, no display); ImportError saying
    which extra installs it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(f"matplotlib is not installed ({PLOT_EXTRA})") from None
    return plt


def save_step_response(path: str | Path, name: str, target: float, t: np.ndarray,
                       y: np.ndarray, v: np.ndarray, f: np.ndarray, unit: str,
                       force_unit: str) -> None:
    """Position (with the target), velocity and motor force over time, one above the
    other, as a PNG (or what ``path``'s suffix says)."""
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 7))
    axes[0].plot(t, y, label="position")
    axes[0].axhline(target, color="grey", linestyle="--", label="target")
    axes[0].set_ylabel(f"position [{unit}]")
    axes[0].legend(loc="lower right")
    axes[1].plot(t, v)
    axes[1].set_ylabel(f"velocity [{unit}/s]")
    axes[2].plot(t, f)
    axes[2].set_ylabel(f"motor force [{force_unit}]")
    axes[2].set_xlabel("time [s]")
    axes[0].set_title(f"servo_sim step response: {name}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
