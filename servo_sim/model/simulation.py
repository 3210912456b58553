"""The simulation: a bank of motors, their handles and the simulated clock."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .bank import MotorBank
from .config import SimulationConfig, load_config, parse_config
from .motor import Motor


class Simulation:
    """All motors of one config, stepped together (SPEC §5)."""

    def __init__(self, config: SimulationConfig) -> None:
        self.config = config
        self._build()

    @classmethod
    def from_config(cls, source: str | Path | Mapping[str, Any] | SimulationConfig
                    ) -> Simulation:
        """Build from a YAML file path, a config mapping (either form) or a parsed config."""
        if isinstance(source, (str, Path)):
            return cls(load_config(source))
        return cls(parse_config(source))

    def _build(self) -> None:
        self.bank = MotorBank(self.config)
        groups: dict[str, list[int]] = {}
        for i, m in enumerate(self.config.motors):
            groups.setdefault(m.coupling_base or f"\0{i}", []).append(i)
        group_of = {i: np.array(g) for g in groups.values() for i in g}
        self._motors = {m.name: Motor(self.bank, i, group_of[i])
                        for i, m in enumerate(self.config.motors)}

    def reset(self) -> None:
        """Back to the config's initial state: time 0, positions, commands and sensors."""
        self._build()

    def motor(self, name: str) -> Motor:
        """The motor called ``name``; KeyError naming the known motors if there is none."""
        try:
            return self._motors[name]
        except KeyError:
            raise KeyError(f"no motor {name!r}; known motors: "
                           + ", ".join(repr(n) for n in self._motors)) from None

    @property
    def motors(self) -> list[Motor]:
        """Every motor, in config order."""
        return list(self._motors.values())

    @property
    def motor_names(self) -> list[str]:
        return list(self._motors)

    def __iter__(self) -> Iterator[Motor]:
        return iter(self._motors.values())

    def __len__(self) -> int:
        return len(self._motors)

    def step(self, n: int = 1) -> None:
        """Advance ``n`` basic time steps."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"step count {n!r} rejected: must be an integer >= 0")
        step = self.bank.step
        with np.errstate(all="ignore"):
            for _ in range(n):
                step()

    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self.bank.time_ms / 1000.0

    @property
    def time_ms(self) -> int:
        """Simulated time, ms (exact)."""
        return self.bank.time_ms

    @property
    def basic_time_step_ms(self) -> int:
        return self.config.basic_time_step_ms
