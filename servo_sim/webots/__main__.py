"""``python -m servo_sim.webots SCRIPT.py [CONFIG] [options]``: ``servo-sim controller``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
