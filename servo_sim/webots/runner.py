"""Run a Webots Python controller script unchanged against servo_sim.

The script runs as ``__main__`` (``runpy``) with what Webots gives a controller: the
working directory and ``sys.path[0]`` are the script's directory, ``sys.argv`` is the
script and its arguments, stdout is line-buffered. ``controller`` is importable for the
duration of the run only: a module object put in ``sys.modules`` (with the submodules
``controller.robot``, ``controller.motor``...), so no directory is added that could
shadow anything else, and an ``import controller`` outside the run is not served.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import traceback
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from . import api
from .session import ControllerEnded, Session

HERE = Path(__file__).resolve().parent

#: The Webots submodules a controller may import names from, and what each provides.
SUBMODULES: dict[str, tuple[str, ...]] = {
    "robot": ("Robot",),
    "device": ("Device",),
    "motor": ("Motor",),
    "position_sensor": ("PositionSensor",),
    "brake": ("Brake",),
    "node": ("Node",),
    "ansi_codes": ("AnsiCodes",),
}


def controller_module() -> types.ModuleType:
    """A fresh ``controller`` package re-exporting the API (see :mod:`.api`)."""
    package = types.ModuleType("controller", "servo_sim's Webots controller API "
                               "(servo_sim.webots.api)")
    package.__path__ = []  # a package: ``from controller.motor import Motor`` works
    for name in api.__all__:
        setattr(package, name, getattr(api, name))
    package.__all__ = list(api.__all__)
    package.__getattr__ = _not_provided  # type: ignore[attr-defined]
    for sub, names in SUBMODULES.items():
        module = types.ModuleType(f"controller.{sub}")
        for name in names:
            setattr(module, name, getattr(api, name))
        setattr(package, sub, module)
    return package


def _not_provided(name: str) -> Any:
    """``from controller import Camera``: an ImportError that says why."""
    if name in api.NOT_PROVIDED:
        raise ImportError(api.not_provided(name), name="controller")
    raise AttributeError(f"module 'controller' has no attribute {name!r}")


@contextmanager
def _controller_importable() -> Iterator[None]:
    package = controller_module()
    modules = {"controller": package, **{f"controller.{sub}": getattr(package, sub)
                                         for sub in SUBMODULES}}
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@contextmanager
def _as_webots_runs(script: Path, args: Sequence[str]) -> Iterator[None]:
    """argv, sys.path[0] and the working directory of a Webots controller process."""
    saved_argv, saved_path, saved_cwd = sys.argv, list(sys.path), os.getcwd()
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.parent))
    os.chdir(script.parent)
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)


@contextmanager
def _quit_on_signals(session: Session) -> Iterator[None]:
    """Ctrl-C / SIGTERM as Webots' quit: the next ``step`` returns -1; a second one
    interrupts at once (KeyboardInterrupt: the run still closes, torque off)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def quit_later(signum: int, frame: Any) -> None:
        session.end(f"{signal.Signals(signum).name} received")
        for sig in saved:
            signal.signal(sig, signal.default_int_handler)

    for sig in saved:
        signal.signal(sig, quit_later)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _script_traceback(exc: BaseException, script: Path) -> TracebackType | None:
    """The traceback from the script's first frame on: runpy's frames and ours (this
    package's: the runner, the API raising a refusal) are left out."""
    def ours(tb: TracebackType) -> bool:
        return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(HERE)

    tb = exc.__traceback__
    while tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() != script:
        tb = tb.tb_next
    last = tb
    while last is not None and last.tb_next is not None:
        if ours(last.tb_next):
            last.tb_next = None
        else:
            last = last.tb_next
    return tb


def run_controller(script: str | Path, session: Session, args: Sequence[str] = ()) -> int:
    """Run ``script`` against ``session`` (closed at the end: torque off, CSV written);
    the exit status: 0 when it returns or is ended after -1, its ``sys.exit`` status,
    1 after an exception (traceback on stderr), 130 after a second Ctrl-C."""
    script = Path(script).resolve()
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # Webots line-buffers controllers
    api.activate(session)
    try:
        with _controller_importable(), _as_webots_runs(script, args), \
                _quit_on_signals(session):
            runpy.run_path(str(script), run_name="__main__")
        return 0
    except ControllerEnded:
        print(f"servo-sim: the controller stepped again after step() returned -1 "
              f"({session.end_reason}): it is ended, as Webots ends it", file=sys.stderr)
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("servo-sim: controller interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:  # noqa: BLE001 - the controller's error, reported
        sys.stdout.flush()
        traceback.print_exception(type(exc), exc, _script_traceback(exc, script))
        return 1
    finally:
        api.activate(None)
        session.close()
