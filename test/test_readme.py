"""The README's documented commands stay what CI runs."""

import re

from conftest import REPO


def fenced_commands(text: str) -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)


def test_readme_opens_with_the_node_and_the_test_command_ci_runs_verbatim():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    setup_and_run, run_tests = fenced_commands(readme)[:2]
    assert setup_and_run.startswith("scripts/setup-ros-venv")
    assert setup_and_run.endswith("/bin/servo_sim_node")
    assert run_tests.startswith("scripts/setup-ros-venv")
    assert "pytest" in run_tests
    assert f"  {run_tests}\n" in ci


def test_every_console_script_the_readme_uses_is_declared():
    readme = (REPO / "README.md").read_text()
    setup = (REPO / "setup.py").read_text()
    used = set(re.findall(r"\.venv-jazzy/bin/([\w-]+)", readme)) - {"python", "pip", "ruff"}
    declared = set(re.findall(r'"([\w-]+) = servo_sim[\w.]*:\w+"', setup))
    assert used and used <= declared, used - declared
