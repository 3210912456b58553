"""``servo-sim-panel``: the servo panel without rqt, on the PyPI venv.

    servo-sim-panel [--node /servo_sim] [--motor arm]
    servo-sim-panel --motor arm --step 0.5 --screenshot docs/panel.png

With ``--screenshot`` it runs offscreen (no display needed): it connects to the running
node, commands the step through the panel, waits for the response, writes a PNG of the
panel with its figures, prints them and exits 0; 1 with one line when there is no node,
no such motor or no answer.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable


class PanelError(Exception):
    """One line on stderr, exit status 1."""


def _wait(app, condition: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise PanelError(what)
        app.processEvents()
        time.sleep(0.01)


def screenshot(app, panel, args: argparse.Namespace) -> int:
    """The --screenshot run (see the module doc)."""
    link = panel.link
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    _wait(app, lambda: bool(link.target_node) and link.alive(), args.timeout,
          f"no servo_sim node found in the graph within {args.timeout:g} s "
          f"(ROS_DOMAIN_ID={domain})" + (f", none named {args.node}" if args.node else ""))
    if args.motor:
        if args.motor not in link.motors:
            raise PanelError(f"no motor {args.motor!r} on {link.target_node} "
                             f"(motors: {', '.join(link.motors)})")
        panel.select(motor=args.motor)
    _wait(app, lambda: len(link.samples()) > 2, args.timeout,
          f"no state of motor {link.motor!r} from {link.target_node}")
    if args.step is not None:
        _wait(app, lambda: not panel.busy, args.timeout,
              "the node did not answer the parameter request")
        answer = panel.step(args.step, args.duration)
        _wait(app, lambda: answer.done and not panel.busy, args.duration + args.timeout,
              f"no answer to the step of {link.motor!r} to {args.step:g}")
        if not answer.ok:
            raise PanelError(f"step of {link.motor!r} to {args.step:g}: {answer.message}")
        for _ in range(5):  # let the figures and the plot be drawn
            app.processEvents()
            panel.refresh()
    panel.resize(720, 640)
    panel.grab().save(args.screenshot)
    print(f"{args.screenshot}: {link.target_node} {link.motor}: {panel.figures.text()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servo-sim-panel", description=__doc__.split("\n")[0])
    parser.add_argument("--node", help="the node to follow, e.g. /servo_sim (default: the "
                        "first found)")
    parser.add_argument("--motor", help="the motor to show (default: the node's first)")
    parser.add_argument("--step", type=float, metavar="TARGET",
                        help="command a step to TARGET through the panel")
    parser.add_argument("--duration", type=float, default=2.0,
                        help="seconds of the step response to record (2)")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="offscreen: write a PNG of the panel and exit")
    parser.add_argument("--timeout", type=float, default=15.0,
                        help="longest wait for the node, s (15)")
    args = parser.parse_args(argv)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        import pyqtgraph  # noqa: F401 - the plot

        from .qt import QtWidgets
    except ImportError as exc:
        print(f"servo-sim-panel: {exc}: pip install PyQt5 pyqtgraph (servo_sim's extra "
              "'panel'), or run it where rqt and python3-pyqtgraph are installed",
              file=sys.stderr)
        return 1
    from ..ros.link.remote import ServoLink
    from .widget import ServoPanel

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    link = ServoLink()
    panel = ServoPanel(link)
    if args.node:
        panel.select(args.node)
    try:
        if args.screenshot:
            return screenshot(app, panel, args)
        if args.motor:
            panel.select(motor=args.motor)
        signal.signal(signal.SIGINT, lambda *_: app.quit())
        panel.show()
        return app.exec_()
    except PanelError as exc:
        print(f"servo-sim-panel: {exc}", file=sys.stderr)
        return 1
    finally:
        panel.timer.stop()
        link.close()


if __name__ == "__main__":
    sys.exit(main())
