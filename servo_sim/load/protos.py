"""Where a Webots file's ``EXTERNPROTO`` declarations are: local files and Webots' own
library, never the network.

* A relative path is relative to the file that declares it (a world, or a PROTO file
  declaring the PROTOs it uses); an absolute path is itself.
* ``webots://projects/...`` is ``<Webots home>/projects/...``, and so is the raw URL of
  the cyberbotics/webots repository at any tag
  (``https://raw.githubusercontent.com/cyberbotics/webots/R2023b/projects/...``): the
  local installation stands for the tag. The home is ``--webots-home``, else
  ``WEBOTS_HOME``, else the first of Webots' usual install places that exists.
* Any other URL is not fetched: servo_sim never uses the network.

Files written before Webots R2023a declare nothing: Webots found a PROTO by its name.
:func:`by_name` does the same, in the file's own folder, its project's ``protos`` folder
(both from the file's absolute path, whatever the working directory) and the Webots
installation's ``projects`` tree.

A PROTO not found is a :class:`NotFound`: where it was looked for, and what to do, kept
apart so that a message about many PROTOs says the hint once.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

WEBOTS_SCHEME = "webots://"
_RAW = re.compile(r"https?://raw\.githubusercontent\.com/cyberbotics/webots/[^/]+/(.+)$")
#: Where Webots installs itself: Linux (tarball, .deb), snap, macOS, Windows.
DEFAULT_HOMES = ("/usr/local/webots", "/snap/webots/current/usr/share/webots",
                 "/Applications/Webots.app/Contents", "C:/Program Files/Webots")


def webots_homes(webots_home: str | Path | None = None) -> tuple[list[Path], str]:
    """The Webots installations to look in, and how they were chosen (for messages)."""
    if webots_home is not None:
        return [Path(webots_home)], "--webots-home"
    env = os.environ.get("WEBOTS_HOME")
    if env:
        return [Path(env)], "WEBOTS_HOME"
    found = [Path(h) for h in DEFAULT_HOMES if Path(h).is_dir()]
    return found, "no --webots-home or WEBOTS_HOME; Webots' usual places"


@dataclass(frozen=True)
class NotFound:
    """Why a PROTO file is not there."""

    #: what was looked at for this PROTO, e.g. ``looked in /x/A.proto (--webots-home): no
    #: such file``
    detail: str
    #: what to do about it (said once in a message naming several PROTOs)
    hint: str = ""
    #: what PROTOs not found for the same reason share, e.g. ``not in /x (--webots-home)``
    #: ("": the detail, which is then this PROTO's own)
    common: str = ""

    @property
    def shared(self) -> str:
        """The reason, said once for every PROTO not found for it."""
        return self.common or self.detail

    def __str__(self) -> str:
        return self.detail + (f"; {self.hint}" if self.hint else "")


def locate(url: str, declared_in: Path, webots_home: str | Path | None = None
           ) -> Path | NotFound:
    """The PROTO file ``url`` (declared in ``declared_in``) names, or why there is none:
    where it looked, and what to do."""
    raw = _RAW.match(url)
    library = url[len(WEBOTS_SCHEME):] if url.startswith(WEBOTS_SCHEME) \
        else raw.group(1) if raw else None
    if library is not None:
        homes, how = webots_homes(webots_home)
        for home in homes:
            if (home / library).is_file():
                return home / library
        if not homes:
            return _no_home()
        return NotFound(f"looked in {', '.join(str(h / library) for h in homes)} ({how}): "
                        "no such file",
                        "give --webots-home DIR or set WEBOTS_HOME to a Webots installation",
                        f"not in {', '.join(str(h) for h in homes)} ({how})")
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", url):
        return NotFound("not a Webots library URL, and servo_sim never downloads",
                        "save the file and declare it by its path")
    path = Path(url) if Path(url).is_absolute() else declared_in.parent / url
    return path if path.is_file() else NotFound(f"looked in {path}: no such file")


def _no_home() -> NotFound:
    """No Webots installation to look in (the usual places named: they change with the
    platform's)."""
    return NotFound("no Webots installation found",
                    "give --webots-home DIR or set WEBOTS_HOME (looked in "
                    f"{', '.join(DEFAULT_HOMES)})")


@functools.lru_cache(maxsize=8)
def _library(home: Path) -> dict[str, Path]:
    """Every PROTO of a Webots installation's ``projects`` tree, by name (the first in
    path order where two share one)."""
    found: dict[str, Path] = {}
    for path in sorted((home / "projects").rglob("*.proto")):
        found.setdefault(path.stem, path)
    return found


def by_name(name: str, declared_in: Path, webots_home: str | Path | None = None
            ) -> Path | NotFound:
    """The PROTO file of ``name`` for a file written before R2023a (``declared_in``),
    found by name as Webots then did, or why there is none: the file's folder and its
    project's ``protos`` folder are those of its absolute path (``w.wbt`` given in the
    project's ``worlds`` folder has its project one level up, not in ``worlds``)."""
    where = Path(os.path.abspath(declared_in)).parent
    local = list(dict.fromkeys(p.resolve() for p in (where, where.parent / "protos")))
    for folder in local:
        if (folder / f"{name}.proto").is_file():
            return folder / f"{name}.proto"
    homes, how = webots_homes(webots_home)
    for home in homes:
        if name in _library(home):
            return _library(home)[name]
    looked = " or ".join(str(f) for f in local)
    old = "a file before Webots R2023a names its PROTOs without EXTERNPROTO: not in "
    if not homes:
        return NotFound(f"{old}{looked}, and no Webots installation found to look in",
                        _no_home().hint)
    return NotFound(f"{old}{looked} or {', '.join(str(h / 'projects') for h in homes)} "
                    f"({how})")
