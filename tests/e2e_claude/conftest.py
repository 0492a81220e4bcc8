"""End-to-end tests with the real Claude Code CLI (the `e2e-claude` tox env).

The CLI comes from the npm registry at a pinned version, into a cache folder
(`LCM_CLAUDE_CODE_CACHE`, which tox sets; else a temporary one). Only a machine without
npm skips these tests, with the reason in the report header; npm present but the
install failing is an error, not a skip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The helpers beside these tests (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

from claude_code import VERSION, Home, install_cli, npm
from fake_anthropic import FakeAnthropic

HERE = Path(__file__).parent
MISSING = None if npm() else "npm is not installed, so the Claude Code CLI cannot be installed"


def pytest_report_header(config: pytest.Config) -> str:
    return f"claude code {VERSION}: " + ("npm found" if not MISSING else f"SKIPPED - {MISSING}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING:
        return
    print(f"\ne2e-claude: skipping the Claude Code tests: {MISSING}", file=sys.stderr)
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.skip(reason=MISSING))


@pytest.fixture(scope="session")
def claude_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pinned CLI, installed once per cache folder."""
    given = os.environ.get("LCM_CLAUDE_CODE_CACHE", "").strip()
    cache = Path(given) if given else tmp_path_factory.mktemp("claude-code")
    return install_cli(cache)


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic().start()
    yield fake
    fake.stop()


@pytest.fixture
def user(tmp_path: Path, claude_exe: Path, model: FakeAnthropic) -> Iterator[Callable[[], Home]]:
    """A new Claude Code user with lcm installed as the docs say: `user()`."""

    made: list[Home] = []

    def make() -> Home:
        home = Home(tmp_path / f"user{len(made)}", claude_exe, model)
        made.append(home)
        done = home.install_lcm()
        assert done.returncode == 0, done.stderr
        return home

    yield make
    for home in made:
        home.stop_servers()
