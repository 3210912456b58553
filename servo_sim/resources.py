"""Where the package's data files are: source tree, pip data files or ROS share directory."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = "servo_sim"
CONFIG_NAME = "servo_sim.yaml"


def share_candidates(*parts: str) -> list[Path]:
    """Places a data file may be, most specific first (a checkout wins)."""
    here = Path(__file__).resolve().parent
    candidates = [here.parent.joinpath(*parts),
                  Path(sys.prefix, "share", PACKAGE, *parts)]
    try:
        from ament_index_python.packages import get_package_share_directory  # ROS install

        candidates.append(Path(get_package_share_directory(PACKAGE), *parts))
    except Exception:  # noqa: BLE001 - no ROS, or the package is not in the ament index
        pass
    return candidates


def data_file(*parts: str) -> Path:
    """A packaged data file; FileNotFoundError listing where it looked."""
    candidates = share_candidates(*parts)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"no {'/'.join(parts)} found (looked in "
                            + ", ".join(map(str, candidates)) + ")")


def default_config_path() -> Path:
    """The packaged default config; FileNotFoundError listing where it looked."""
    return data_file("config", CONFIG_NAME)
