"""Reliability tests: the `reliability` marker, the `--full` switch, and the figures file.

Every test in this folder is marked `reliability`. The default counts keep the folder
quick; `--full` (or `LCM_RELIABILITY_FULL=1`) runs the large counts docs/measurements.md quotes.
When `LCM_RELIABILITY_FIGURES` names a file, the figures the tests measured are written
there as JSON at the end of the run (`report.py` reads it).

pytest runs with `--import-mode=importlib`, so sibling helper modules are not importable
by default: this folder is put on `sys.path` here, and the helpers carry a `rel_` prefix
so they cannot shadow anything else.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import rel_support  # noqa: E402  (needs the path set above)


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--full`: run the large reliability counts."""
    with contextlib.suppress(ValueError):  # another plugin may already define it
        parser.addoption(
            "--full",
            action="store_true",
            default=False,
            help="reliability tests: run the large counts (same as LCM_RELIABILITY_FULL=1)",
        )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and pass `--full` on to the helpers (and child processes)."""
    config.addinivalue_line("markers", "reliability: crash, concurrency, hostile-input tests")
    if config.getoption("--full", default=False):
        os.environ[rel_support.FULL_ENV] = "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this folder `reliability`."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.reliability)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep each reliability test's outcome for the figures file."""
    if HERE.as_posix() not in Path(report.fspath).resolve().as_posix():
        return
    if report.when == "call" or report.outcome != "passed":
        rel_support.record_outcome(report.nodeid, report.outcome, hasattr(report, "wasxfail"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the measured figures where `LCM_RELIABILITY_FIGURES` says."""
    target = os.environ.get(rel_support.FIGURES_ENV)
    if target:
        Path(target).write_text(
            json.dumps(rel_support.snapshot(), ensure_ascii=False, indent=2, sort_keys=True),
            encoding="utf-8",
        )
