"""The warm hook server answers exactly as the hook's own process does, and goes away."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.claude import client as warm
from lcm_adapter.claude.server import _changed
from lcm_adapter.cli.main import cli

DEMO_SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"
ENTRY = "from lcm_adapter.entry import main\nmain()\n"
WAIT_SECONDS = 60  # an upper bound for a slow machine, never a measured expectation


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    db = tmp_path / "demo" / "demo.sqlite"
    db.parent.mkdir()
    result = CliRunner().invoke(cli, ["--db", str(db), "demo"])
    assert result.exit_code == 0, result.output
    return db


def hook(db: Path, payload: bytes, event: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "--db", str(db), "hook", event],
        input=payload,
        capture_output=True,
        check=False,
        timeout=WAIT_SECONDS,
        env={**os.environ, **env},
    )


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def served(path: str, db: Path, payload: bytes, event: str) -> tuple[str | None, list[str]] | None:
    return warm.ask(path, warm.request(event, str(db), None, payload, True))


def test_the_server_answers_byte_for_byte_as_the_hook_itself(demo: Path, tmp_path: Path) -> None:
    prompt = {"session_id": DEMO_SESSION, "prompt": "端口定了哪个？and the budget?"}
    payload = json.dumps(prompt, ensure_ascii=False).encode("utf-8")
    twin = tmp_path / "twin" / "demo.sqlite"
    twin.parent.mkdir()
    shutil.copyfile(demo, twin)
    path = warm.socket_path(str(demo), None)
    assert path is not None and Path(path).parent == demo.parent
    first = hook(demo, b"not json", "stop")  # no server yet: answered here, one started
    assert first.returncode == 0 and b"bad hook input" in first.stderr
    wait_for(lambda: served(path, demo, b"{}", "stop") is not None, "no warm server started")
    answer = served(path, demo, payload, "user-prompt-submit")
    alone = hook(twin, payload, "user-prompt-submit", LCM_HOOK_SERVER="0")
    assert answer is not None and answer[0] is not None
    assert (answer[0] + "\n").encode("utf-8") == alone.stdout
    assert "additionalContext" in json.loads(answer[0])["hookSpecificOutput"]
    # Through the `lcm` entry, the same bytes again come back from the server.
    again = hook(demo, b"not json", "stop")
    assert again.stderr.decode().startswith("20") and b"bad hook input" in again.stderr
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert not unlocked(path)
    os.unlink(path)  # a removed socket sends its server away
    wait_for(lambda: unlocked(path), "the server outlived its socket")


def unlocked(path: str) -> bool:
    """Whether no server holds the socket's lock any more."""
    with open(path + ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
        return True


def test_switched_off_no_server_is_started(demo: Path) -> None:
    payload = json.dumps({"session_id": DEMO_SESSION}).encode("utf-8")
    assert hook(demo, payload, "stop", LCM_HOOK_SERVER="0").returncode == 0
    time.sleep(0.5)
    assert not list(demo.parent.glob(".lcm-hooks-*"))


def test_no_socket_for_a_server_url_or_memory() -> None:
    assert warm.socket_path("postgresql://db.internal/lcm", None) is None
    assert warm.socket_path(":memory:", None) is None
    assert warm.socket_path("/" + "长" * 60 + "/m.sqlite", None) is None  # too long for a socket


def test_a_changed_source_file_makes_the_server_out_of_date(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("x = 1\n", encoding="utf-8")
    seen = {str(source): source.stat().st_mtime_ns}
    assert not _changed(seen)
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 1_000_000))
    assert _changed(seen)
    source.unlink()
    assert _changed(seen)
