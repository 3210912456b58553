"""scripts/setup-ros-venv refuses a machine it cannot work on, saying what is missing,
before it creates or installs anything (the set-up itself is exercised by CI, whose
test command runs through it)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "setup-ros-venv"
#: What the script runs before its checks: a shell's basics.
BASICS = ("bash", "dirname", "sed", "cat", "cut", "sha256sum", "grep", "nproc", "mkdir")


def bin_dir(tmp_path: Path, *tools: str) -> Path:
    """A PATH directory with only the basics and ``tools``."""
    d = tmp_path / "bin"
    d.mkdir()
    for tool in BASICS + tools:
        found = shutil.which(tool)
        if found:
            (d / tool).symlink_to(found)
    return d


def fake_python(tmp_path: Path, version: str) -> Path:
    """An executable that answers ``--version`` like a Python of ``version`` and fails
    the script's 3.11 check."""
    p = tmp_path / f"python{version}"
    p.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "Python {version}" && exit 0\nexit 1\n')
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


def run(tmp_path: Path, path: Path, **env: str) -> subprocess.CompletedProcess:
    venv = tmp_path / "venv"
    r = subprocess.run(["bash", str(SCRIPT), "--venv", str(venv)], capture_output=True,
                       text=True, env={"PATH": str(path), "HOME": str(tmp_path), **env},
                       timeout=60)
    assert not venv.exists(), "the script created the venv before its checks passed"
    return r


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="needs this Python to be 3.11")
def test_missing_build_tools_are_named_at_once_with_the_apt_line(tmp_path):
    path = bin_dir(tmp_path)
    r = run(tmp_path, path, PYTHON=sys.executable)
    assert r.returncode == 1
    assert "setup-ros-venv: missing: cmake, make, a C compiler, a C++ compiler." in r.stderr
    assert "sudo apt-get install cmake make gcc g++" in r.stderr


def test_a_python_other_than_3_11_is_refused_naming_the_reason(tmp_path):
    path = bin_dir(tmp_path, "cmake", "make", "cc", "c++")
    r = run(tmp_path, path, PYTHON=str(fake_python(tmp_path, "3.12.3")))
    assert r.returncode == 1
    assert "the ROS 2 wheels on PyPI are built for CPython 3.11 only (cp311)" in r.stderr
    assert "found: Python 3.12.3" in r.stderr


def test_an_unknown_argument_is_a_usage_error(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT), "humble"], capture_output=True, text=True,
                       env={**os.environ}, timeout=60)
    assert r.returncode == 2
    assert "unknown argument 'humble'" in r.stderr and "jazzy|kilted" in r.stderr


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="needs this Python to be 3.11")
def test_a_directory_that_is_not_a_venv_is_never_cleared(tmp_path):
    keep = tmp_path / "work"
    keep.mkdir()
    (keep / "precious.txt").write_text("keep me")
    path = bin_dir(tmp_path, "cmake", "make", "cc", "c++")
    r = subprocess.run(["bash", str(SCRIPT), "--venv", str(keep)], capture_output=True,
                       text=True, timeout=60,
                       env={"PATH": str(path), "HOME": str(tmp_path), "PYTHON": sys.executable})
    assert r.returncode == 1
    assert f"{keep} exists and is not a venv" in r.stderr
    assert (keep / "precious.txt").read_text() == "keep me"
