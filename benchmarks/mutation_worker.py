"""A fork server for the mutation runner: import the test tooling once, fork a pytest per mutant.

Started by `mutation_run.py` in the copy of the checkout. It imports pytest and the
third-party libraries the tests need, never the backend under test, then reads one JSON
request a line on stdin (`{"args": [...], "timeout": seconds}`) and answers one JSON
line on stdout (`{"code": n}`, or `{"code": null}` after a timeout). Each request runs in
a forked child, which imports the (mutated) backend afresh. On this machine starting
pytest and its plugins cost more than most mutants' tests.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time

PRELOAD = ("pytest", "_pytest.pytester", "click", "click.testing", "rich", "lcm_core.testing")
OPTIONAL = ("duckdb", "pyarrow")


def preload() -> None:
    """Import the tooling once; a backend module here would defeat the mutation."""
    for name in PRELOAD:
        importlib.import_module(name)
    for name in OPTIONAL:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    backends = [name for name in sys.modules if name.startswith(("lcm_store_", "lcm_adapter"))]
    if backends:
        sys.exit(f"the worker must not import {backends}")


def run(args: list[str], timeout: float) -> int | None:
    """Exit code of `pytest args` in a forked child, or None when it ran out of time."""
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        import pytest

        code = 3
        try:
            code = int(pytest.main(args))
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.02)


def main() -> None:
    """Serve requests until stdin closes."""
    preload()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        code = run(list(request["args"]), float(request["timeout"]))
        print(json.dumps({"code": code}), flush=True)


if __name__ == "__main__":
    main()
