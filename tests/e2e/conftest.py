"""End-to-end tests against the real DSH runtime (the `e2e` tox env).

They need the pinned `deepseek-harness-sdk` and `deepseek-harness-runtime-bin` wheels
(the `e2e` extra). Where the runtime wheel cannot be installed or run, every test here
is skipped with the reason, which the report header also prints.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The helpers beside these tests (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

from dsh_session import DshSession, env_ready
from fake_model import FakeModel

HERE = Path(__file__).parent
PROBLEMS = list(env_ready())


def pytest_report_header(config: pytest.Config) -> str:
    return "dsh runtime: " + ("ready" if not PROBLEMS else "SKIPPED - " + "; ".join(PROBLEMS))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not PROBLEMS:
        return
    reason = "; ".join(PROBLEMS)
    print(f"\ne2e: skipping the DSH tests: {reason}", file=sys.stderr)
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def native_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the runtime's ~80 MB native unpack, reused by every test."""
    given = os.environ.get("PKG_NATIVE_CACHE_PATH", "").strip()
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        return Path(given)
    return tmp_path_factory.mktemp("pkg-native-cache")


@pytest.fixture
def model() -> Iterator[FakeModel]:
    fake = FakeModel().start()
    yield fake
    fake.stop()


@pytest.fixture
def dsh(
    tmp_path: Path, model: FakeModel, native_cache: Path
) -> Iterator[Callable[..., DshSession]]:
    """Start a DSH runtime with our plugin: `dsh(settings=..., extra_rows=...)`; `memory=False`
    starts one without it."""
    started: list[DshSession] = []

    def start(
        settings: dict[str, Any] | None = None, extra_rows: str = "", memory: bool = True
    ) -> DshSession:
        session = DshSession(tmp_path / f"run{len(started)}", model, settings, extra_rows, memory)
        started.append(session)
        return session.start(native_cache)

    yield start
    for session in started:
        session.close()
