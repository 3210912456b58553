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


def pages() -> list:
    """The README and the reference pages it links to."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_every_console_script_the_docs_use_is_declared():
    text = "".join(page.read_text() for page in pages())
    setup = (REPO / "setup.py").read_text()
    used = set(re.findall(r"\.venv-jazzy/bin/([\w-]+)", text)) - {"python", "pip", "ruff", "mutmut"}
    declared = set(re.findall(r'"([\w-]+) = servo_sim[\w.]*:\w+"', setup))
    assert used and used <= declared, used - declared


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_and_anchor_of_the_docs_exists():
    broken = []
    for page in pages():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif fragment:
                headings = re.findall(r"^#+ (.+)$", linked.read_text(), flags=re.M)
                if fragment not in {anchor(h) for h in headings}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_readme_stays_short_and_links_every_reference_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 320
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in readme, page.name
