"""A servo's mode and state flags (seed 004's ``ServoMode`` and ``ServoStateFlags``): the
values the bank's per-motor arrays hold and every layer reports.

Below both the bank (``bank.py``, whose ``mode`` array holds them) and the safety rules
(``safety.py``, which switch and report them; the names are also importable from there).
"""

from __future__ import annotations

import enum


class ServoMode(enum.IntEnum):
    """What a motor is doing (seed 004 ``ServoMode``, same values)."""

    ERROR = -2  # the device reports an error or does not answer
    DISABLED = -1  # torque off: the passive joint of SPEC §2.2 (also while e-stopped)
    HALT = 0  # holding the position it had when halted
    POSITION = 1
    VELOCITY = 2
    EFFORT = 3
    TRAPEZOIDAL = 4


class StateFlags(enum.IntFlag):
    """Per-motor state flags (seed 004 ``ServoStateFlags``, same bits)."""

    UNKNOWN = 0
    READY = 0x1
    STREAMING = 0x2
    WARNING = 0x4
    ERROR = 0x8
    FATAL_ERROR = 0x10
    E_STOP = 0x20
    HOMED = 0x40
    HOMING_REQUIRED = 0x80
    COMMUNICATION_FAILURE = 0x100
    VALID_COMMAND = 0x200
    ENABLED = 0x400
