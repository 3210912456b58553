"""Clipping warnings reach the application's handlers whatever the logger class."""

import subprocess
import sys

SCRIPT = """
import logging

class NonPropagating(logging.getLoggerClass()):  # what ROS 2's launch.logging installs
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.propagate = False

logging.setLoggerClass(NonPropagating)
logging.basicConfig(level=logging.WARNING, format="ROOT %(name)s %(message)s")
from servo_sim.model import Simulation

sim = Simulation.from_config({"motors": [{"name": "arm", "max_velocity": 1.0}]})
sim.motor("arm").set_velocity(5.0)
"""


def test_warnings_propagate_even_under_a_non_propagating_logger_class():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "ROOT servo_sim motor 'arm': velocity 5 exceeds max_velocity" in r.stderr
