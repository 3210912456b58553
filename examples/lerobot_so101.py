"""Drive an SO-101 (the virtual one of ``servo-sim-so101``, or a real arm) with LeRobot's
own ``SO101Follower``: connect with a calibration file, follow one action, print what
the arm reports as JSON lines.

Runs in a Python where ``lerobot`` is installed (docs/hardware.md, "A virtual SO-101
for LeRobot"); servo_sim is not needed there::

    python examples/lerobot_so101.py --port /dev/pts/5 --calibration-dir calib \\
        --action shoulder_pan=30 elbow_flex=20 gripper=40

Where the servos' registers do not match the calibration file, LeRobot asks on stdin
whether to write the file's to the servos (ENTER: yes); ``--yes`` answers for you.
"""

from __future__ import annotations

import argparse
import builtins
import json
import sys
import time
from pathlib import Path


def _print(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", required=True, help="the arm's serial port")
    parser.add_argument("--calibration-dir", type=Path, required=True,
                        help="directory of the calibration file <id>.json")
    parser.add_argument("--id", default="virtual", help="the arm's LeRobot id")
    parser.add_argument("--action", nargs="*", default=[], metavar="JOINT=VALUE",
                        help="goals as LeRobot 0.4.4's SO-101 takes them: degrees from "
                             "the calibrated range's middle, the gripper 0..100 %%")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="how long to send the action, s")
    parser.add_argument("--fps", type=float, default=30.0, help="actions per second")
    parser.add_argument("--keep-torque", action="store_true",
                        help="leave the servos holding the last goal when done")
    parser.add_argument("--yes", action="store_true",
                        help="write the calibration file to the servos if they differ")
    args = parser.parse_args(argv)

    from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig

    asked: list[str] = []  # LeRobot's prompts (asked only if the registers differ)
    answer = builtins.input

    def prompt(text: str = "") -> str:
        asked.append(text)
        return "" if args.yes else answer(text)  # ENTER: use the calibration file

    builtins.input = prompt
    robot = SO101Follower(SO101FollowerConfig(
        port=args.port, id=args.id, calibration_dir=args.calibration_dir,
        disable_torque_on_disconnect=not args.keep_torque))
    robot.connect(calibrate=True)
    _print("connected", asked=asked, is_calibrated=robot.is_calibrated,
           observation=robot.get_observation())
    action = {}
    for item in args.action:
        joint, _, value = item.partition("=")
        action[f"{joint}.pos"] = float(value)
    t0 = time.perf_counter()
    period = 1.0 / args.fps
    sent = 0
    while time.perf_counter() - t0 < args.seconds:
        robot.send_action(action)
        sent += 1
        time.sleep(max(0.0, t0 + sent * period - time.perf_counter()))
    _print("followed", actions=sent, observation=robot.get_observation())
    robot.disconnect()
    _print("disconnected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
