"""A pytest plugin recording which tests run which lines of the files a mutation run targets.

Loaded by `mutation_run.py` as `-p mutation_trace` with two environment variables:
`LCM_TRACE_FILES` (absolute paths, `os.pathsep`-separated) and `LCM_TRACE_OUT` (a JSON
file written at the end: path -> line -> test node ids). It traces only frames of the
target files, so the run costs a little more than a plain one.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import defaultdict
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

_TARGETS = {path for path in os.environ.get("LCM_TRACE_FILES", "").split(os.pathsep) if path}
_LINES: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
_current = ""


def _local(frame: FrameType, event: str, arg: Any) -> Any:
    """Record each line a target frame runs under the current test."""
    if event == "line":
        _LINES[frame.f_code.co_filename][frame.f_lineno].add(_current)
    return _local


def _global(frame: FrameType, event: str, arg: Any) -> Any:
    """Trace a call only when its code lives in a target file."""
    if frame.f_code.co_filename in _TARGETS:
        _LINES[frame.f_code.co_filename][frame.f_lineno].add(_current)
        return _local
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Trace setup, call and teardown of one test under its node id."""
    global _current
    _current = item.nodeid
    sys.settrace(_global)
    threading.settrace(_global)
    try:
        yield
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the line map for the mutation runner."""
    out = os.environ.get("LCM_TRACE_OUT")
    if not out:
        return
    data = {
        path: {str(line): sorted(tests) for line, tests in lines.items()}
        for path, lines in _LINES.items()
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
