"""The reference pages say what is: docs/testing.md's source map names every module of
the tree, and nothing that is not there."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

#: where the source map names modules, and the modules every map must name
MAPPED = ("servo_sim", "benchmarks")


def source_map(text: str) -> dict[str, str]:
    """The map's entries (the fenced block under "## Development"): path -> its text.
    An entry starts at a line's first column; indented lines go on with it."""
    block = re.search(r"## Development\n\n```\n(.+?)\n```", text, flags=re.S).group(1)
    entries: dict[str, str] = {}
    path = ""
    for line in block.splitlines():
        if line and not line[0].isspace():
            path, _, rest = line.partition(" ")
            entries[path] = rest
        else:
            entries[path] += " " + line.strip()
    return entries


def named_modules(entries: dict[str, str]) -> set[str]:
    """The module files the map names: an entry that is a file, and each ``x.py`` in an
    entry's text, in the entry's folder (a folder entry's own, a file entry's parent)."""
    named = set()
    for path, text in entries.items():
        if not path.startswith(tuple(f"{room}/" for room in MAPPED)):
            continue
        folder = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
        if path.endswith(".py"):
            named.add(path)
        named.update(folder + name for name in re.findall(r"(?<![\w/.])(\w+\.py)\b", text))
    return named


def modules() -> set[str]:
    return {str(p.relative_to(REPO)) for room in MAPPED for p in (REPO / room).rglob("*.py")
            if p.name != "__init__.py" and "__pycache__" not in p.parts}


def test_the_source_map_names_every_module_and_only_those():
    named = named_modules(source_map((REPO / "docs" / "testing.md").read_text()))
    assert sorted(modules() - named) == [], "in the tree, not in docs/testing.md's map"
    assert sorted(named - modules()) == [], "in docs/testing.md's map, not in the tree"


def test_the_map_check_sees_a_module_left_out_and_one_that_is_gone():
    text = ("## Development\n\n```\nservo_sim/ros/       node.py (the node), gone.py\n"
            "                     client.py\nservo_sim/cli.py     the command; command.py\n```")
    assert named_modules(source_map(text)) == {
        "servo_sim/ros/node.py", "servo_sim/ros/gone.py", "servo_sim/ros/client.py",
        "servo_sim/cli.py", "servo_sim/command.py"}


def model_figures(benchmarks: str) -> tuple[float, float]:
    """bench_model.py's row of 1,000 motors in docs/benchmarks.md: (bank µs a step,
    loop / bank)."""
    row = re.search(r"^\s+1000\s+(\S+)\s+\S+\s+\S+\s+(\S+)x\s", benchmarks, flags=re.M)
    return float(row.group(1)) * 1e6, float(row.group(2))


def node_cpu(benchmarks: str) -> str:
    """The node's CPU on the EventsExecutor in its newest runs (issue 32's table of
    ``bench_node.py table --motors 10 100``: the "after" column), % of a core."""
    return re.search(r"^\| node CPU \| [^|]+ \| ([^|]+?) % \|", benchmarks,
                     flags=re.M).group(1)


def test_the_readmes_figures_are_docs_benchmarks():
    """README's Figures quote docs/benchmarks.md's tables, not figures of their own."""
    benchmarks = (REPO / "docs" / "benchmarks.md").read_text()
    readme = " ".join((REPO / "README.md").read_text().split())
    step_us, ratio = model_figures(benchmarks)
    assert (f"steps 1,000 motors in {step_us:.1f} µs ({ratio:.1f}× a plain Python loop)"
            in readme)
    assert f"with 10 to 100 motors on {node_cpu(benchmarks)} % of a core" in readme


def test_the_figures_check_reads_the_tables_rows():
    text = ("     N  bank s/step  loop s/step  floor s/pass  loop/bank  bank/floor  x\n"
            "   100    2.114e-05    1.068e-04     2.007e-05       5.1x       1.05x  y\n"
            "  1000    4.160e-05    1.079e-03     3.054e-05      25.9x       1.36x  z\n"
            "| figure | before (59d421a) | after (1a13b48's code) |\n"
            "| lateness p50 | 0.14–0.21 ms | 0.14–0.19 ms |\n"
            "| node CPU | 14–21 % | 14–20 % |\n| node CPU, paced | 15 % | 17 % |\n")
    assert model_figures(text) == (pytest.approx(41.6), 25.9)
    assert node_cpu(text) == "14–20"
