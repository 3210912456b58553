"""The per-motor Webots table, built while the node already runs (issue 18).

Creating a DDS endpoint costs time in proportion to the endpoints its participant already
has (Fast DDS pairs each new endpoint with every local one; rmw publishes the node's
whole entity list on every creation), so a table of thousands of services takes
seconds to minutes to create. The node therefore starts with its node-wide interface
(stepping, ``joint_states``, ``/clock``, the node services, parameters) and creates the
per-motor rows afterwards, a slice at a time between steps, in the order of
:func:`table_rows`: what users call first comes up first.

Nothing here imports ROS: the node turns each planned row into a creation job, and
:class:`TableBuilder` runs the jobs within a time budget per call.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable

from ..interface import (
    MOTOR_ACTIONS,
    MOTOR_SERVICES,
    MOTOR_TRIGGERS,
    MotorAction,
    MotorService,
    MotorTrigger,
    family,
)

#: The feedback topics of the sensors a config enables: a row of the table (publishers
#: created ahead, so that subscribers match before the first sample).
FEEDBACK_TOPICS = "feedback topics"
Row = MotorService | MotorTrigger | MotorAction | str

#: Creation order by family: set_position, then the feedback topics the config enables,
#: the getters, the other commands, the safety triggers, the sensor services, the actions.
_RANK = {"set_position": 0, FEEDBACK_TOPICS: 1, "getters": 2, "commands": 3, "safety": 4,
         "sensors": 5, "actions": 6}


def table_rows(families: Iterable[str]) -> tuple[Row, ...]:
    """The per-motor rows of ``families`` (family names, or rows by their own name) and
    the feedback topics, in creation order (stable within a family: the table's own
    order); the node creates each row for every motor before the next row."""
    wanted = set(families)
    rows: list[Row] = [r for r in (*MOTOR_SERVICES, *MOTOR_TRIGGERS, *MOTOR_ACTIONS)
                       if family(r) in wanted or r.name in wanted]
    rows.append(FEEDBACK_TOPICS)  # whatever the families: the config enabled those sensors

    def rank(row: Row) -> int:
        if row == FEEDBACK_TOPICS or getattr(row, "name", None) == "set_position":
            return _RANK[row if isinstance(row, str) else "set_position"]
        return _RANK[family(row)]

    return tuple(sorted(rows, key=rank))


class TableBuilder:
    """Runs creation jobs in order, a time slice per :meth:`run`, and counts them by kind;
    the jobs, ``(kind, job)`` pairs, are made as they are needed (a generator will do)."""

    def __init__(self, jobs: Iterable[tuple[str, Callable[[], object]]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._jobs = iter(jobs)
        self._next = next(self._jobs, None)  # the job after: done is known as it ends
        self._clock = clock
        self.done = False
        #: Jobs run so far, and by kind.
        self.created = 0
        self.counts: Counter[str] = Counter()
        #: The longest single job so far, s: with the slice, what one run() may stall.
        self.longest_job_s = 0.0

    def run(self, slice_s: float) -> bool:
        """Run jobs until ``slice_s`` has passed (at least one job), then return whether
        every job has run (the call that runs the last one says so). A call takes at most
        ``slice_s`` plus one job."""
        end = self._clock() + slice_s
        while self._next is not None:
            kind, job = self._next
            start = self._clock()
            job()
            now = self._clock()
            self._next = next(self._jobs, None)
            self.created += 1
            self.counts[kind] += 1
            self.longest_job_s = max(self.longest_job_s, now - start)
            if now >= end and self._next is not None:
                return False
        self.done = True
        return True
