"""README's promises: CI runs exactly the test command README shows."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    match = re.search(r"^(\S*tox -e [\w,-]+)\s*$", ci, flags=re.MULTILINE)
    assert match, "CI must run tox"
    assert match.group(1) in readme
