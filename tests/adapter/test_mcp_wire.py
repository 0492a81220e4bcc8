"""`lcm mcp` on the raw wire: bad lines get a JSON-RPC error, and EOF waits for running calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("mcp")

from lcm_adapter.cli.main import cli

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "wire-test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wire") / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(path), "demo"]).exit_code == 0
    return path


def converse(db: Path, lines: list[str]) -> list[dict]:
    """Send all lines at once, close stdin, and read every reply until the server exits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LCM_", "DSH_"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lcm_adapter.cli.main import main; main()",
            "mcp",
            "--db",
            str(db),
        ],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_garbage_before_initialize_is_a_parse_error_and_the_session_goes_on(db: Path) -> None:
    replies = converse(db, ["not json at all", "{broken", "[1, 2]", "  ", json.dumps(INITIALIZE)])
    assert [r.get("error", {}).get("code") for r in replies[:3]] == [-32700, -32700, -32600]
    assert all(r["id"] is None and r["jsonrpc"] == "2.0" for r in replies[:3])
    assert replies[3]["id"] == 1 and "serverInfo" in replies[3]["result"]
    assert len(replies) == 4


def test_a_call_sent_just_before_eof_is_answered(db: Path) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": "调用-2",
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "批大小 batch"}},
    }
    replies = converse(db, [json.dumps(INITIALIZE), json.dumps(INITIALIZED), json.dumps(call)])
    assert [r["id"] for r in replies] == [1, "调用-2"]
    answer = json.loads(replies[1]["result"]["content"][0]["text"])
    assert answer["query"] == "批大小 batch" and answer["items"]
