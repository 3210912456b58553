"""The README's documented commands stay what CI runs."""

import re

from conftest import REPO


def fenced_commands(text: str) -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    setup_and_run, run_tests = fenced_commands(readme)[:2]
    assert "servo-sim run" in setup_and_run
    assert "pytest" in run_tests
    assert f"  {run_tests}\n" in ci
