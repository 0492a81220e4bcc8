"""`lcm serve`: JSON-RPC over stdio, answered in order, notifications never answered."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_adapter.dsh.sample import conversation, sample_turns, user
from lcm_adapter.dsh.sidecar import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Sidecar,
    serve,
)
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.store.models import SCHEMA_VERSION

SID = "会话-sidecar"


def call(ident: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    server = Sidecar(lambda settings: MemoryRuntime.open(str(tmp_path / "m.sqlite"), settings))
    yield server
    server.close()


def test_initialize_reports_the_database(sidecar: Sidecar, tmp_path: Path) -> None:
    """initialize opens the store with the given settings and says where it is."""
    answer = sidecar.handle(call(1, "initialize", settings={"assembly": {"softBudgetTokens": 900}}))
    assert answer is not None
    result = answer["result"]
    assert (
        result["db"].endswith("m.sqlite")
        and result["schema"] == SCHEMA_VERSION
        and result["error"] is None
    )
    runtime = sidecar.runtime()
    assert runtime is not None and runtime.config.get("assembly.softBudgetTokens") == 900


def test_notifications_are_never_answered(sidecar: Sidecar) -> None:
    """event, events and skip return nothing, even when their params are wrong."""
    assert sidecar.handle(note("event", sessionId=SID, event=user(0, "不要用 Redis"))) is None
    assert (
        sidecar.handle(note("events", sessionId=SID, events=conversation(sample_turns()))) is None
    )
    assert sidecar.handle(note("skip", sessionId=SID, turn=2, step=1, reason="deadline")) is None
    assert sidecar.handle(note("event")) is None
    assert sidecar.handle(note("nonsense")) is None
    runtime = sidecar.runtime()
    assert runtime is not None and runtime.store.stats(SID)["events"] == 16
    assert sidecar.protocol_errors == 2


def test_pre_step_returns_the_message_or_null(sidecar: Sidecar) -> None:
    """preStep answers `{message: null}` on an empty session and a message once there is history."""
    empty = sidecar.handle(call(1, "preStep", sessionId=SID, messages=[], turn=1, step=1))
    assert empty == {"jsonrpc": "2.0", "id": 1, "result": {"message": None}}
    sidecar.handle(note("events", sessionId=SID, events=conversation(sample_turns())))
    ask = [{"role": "user", "content": [{"type": "text", "text": "预算多少?"}]}]
    answer = sidecar.handle(
        call(2, "preStep", sessionId=SID, messages=ask, turn=5, step=1, visibleSeqs=[1, 2])
    )
    assert answer is not None
    assert answer["result"]["message"]["source"]["kind"] == "long-conversation-memory"


def test_pre_tool_and_command(sidecar: Sidecar) -> None:
    """preTool allows by default; command takes raw input or argv and returns ok and text."""
    allow = sidecar.handle(call(1, "preTool", sessionId=SID, tool="write", args={"path": "x"}))
    assert allow is not None and allow["result"] == {"kind": "allow"}
    raw = sidecar.handle(call(2, "command", sessionId=SID, input=" status"))
    argv = sidecar.handle(call(3, "command", sessionId=SID, argv=["status"]))
    assert raw is not None and argv is not None
    assert raw["result"]["ok"] and raw["result"]["text"].startswith(
        "long-conversation-memory status"
    )
    bad = sidecar.handle(call(4, "command", sessionId=SID, input="frobnicate"))
    assert bad is not None and bad["result"]["ok"] is False


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (call(1, "nope"), METHOD_NOT_FOUND),
        (call(2, "preStep", messages=[]), INVALID_PARAMS),
        (call(3, "preStep", sessionId=SID, messages="x"), INVALID_PARAMS),
        (call(4, "preStep", sessionId=SID, turn="1"), INVALID_PARAMS),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1]}, INVALID_PARAMS),
        ({"jsonrpc": "2.0", "id": 6}, INVALID_REQUEST),
        ([1, 2], INVALID_REQUEST),
    ],
)
def test_bad_calls_get_json_rpc_errors(sidecar: Sidecar, message: Any, code: int) -> None:
    """Each malformed call is answered with the matching JSON-RPC error code."""
    answer = sidecar.handle(message)
    assert answer is not None and answer["error"]["code"] == code


def test_a_line_that_is_not_json_is_a_parse_error(sidecar: Sidecar) -> None:
    """Garbage gets one parse-error answer and the sidecar keeps going."""
    answer = sidecar.handle_line("{not json\n")
    assert answer is not None and json.loads(answer)["error"]["code"] == PARSE_ERROR
    assert sidecar.handle_line("   \n") is None


def test_an_unopenable_database_keeps_the_sidecar_serving(tmp_path: Path) -> None:
    """If the store cannot open, answers say why and the host is never blocked."""
    bogus = tmp_path / "not-a-db.sqlite"
    bogus.write_text("这不是数据库\n" * 200, encoding="utf-8")
    server = Sidecar(lambda settings: MemoryRuntime.open(str(bogus), settings))
    init = server.handle(call(1, "initialize"))
    assert init is not None and init["result"]["error"]
    step = server.handle(call(2, "preStep", sessionId=SID, messages=[]))
    assert step is not None and step["result"]["message"] is None
    tool = server.handle(call(3, "preTool", sessionId=SID, tool="write"))
    assert tool is not None and tool["result"] == {"kind": "allow"}
    cmd = server.handle(call(4, "command", sessionId=SID, input="status"))
    assert cmd is not None and "database unavailable" in cmd["result"]["text"]
    assert server.handle(note("event", sessionId=SID, event=user(0, "x"))) is None


# --- the real process -------------------------------------------------------------


def spawn(db: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "lcm_adapter.dsh.sidecar", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def send(proc: subprocess.Popen[bytes], *messages: Any) -> None:
    assert proc.stdin is not None
    for message in messages:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        proc.stdin.write(raw)
    proc.stdin.flush()


def read_answer(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    return json.loads(proc.stdout.readline())


def test_process_answers_in_order_and_exits_on_eof(tmp_path: Path) -> None:
    """Calls are answered in the order sent; capture sent before a call is stored before it."""
    proc = spawn(tmp_path / "m.sqlite")
    events = conversation(sample_turns())
    send(proc, call(1, "initialize"), *(note("event", sessionId=SID, event=e) for e in events))
    send(proc, b"garbage\n", call(2, "command", sessionId=SID, input="status"), call(3, "ping"))
    answers = [read_answer(proc) for _ in range(4)]
    assert [a.get("id") for a in answers] == [1, None, 2, 3]
    assert re.search(r"^events +16$", answers[2]["result"]["text"], re.M)
    assert answers[3]["result"]["stats"]["events"] == 16
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stdout is not None and proc.stdout.read() == b""


def test_process_shutdown_and_sigterm(tmp_path: Path) -> None:
    """shutdown answers then exits 0; SIGTERM exits 0 too, leaving a healthy database."""
    proc = spawn(tmp_path / "m.sqlite")
    send(proc, call(1, "shutdown"))
    assert read_answer(proc) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert proc.wait(timeout=30) == 0

    proc = spawn(tmp_path / "m.sqlite")
    send(proc, note("event", sessionId=SID, event=user(0, "保留这条")), call(2, "ping"))
    assert read_answer(proc)["id"] == 2
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    try:
        assert runtime.store.integrity_check() == []
        assert runtime.store.stats(SID)["events"] == 1
    finally:
        runtime.close()


def test_stray_prints_never_reach_the_protocol_stream(tmp_path: Path) -> None:
    """While serving, sys.stdout is stderr, so only JSON-RPC lines appear on stdout."""
    code = (
        "import sys, lcm_adapter.dsh.sidecar as s\n"
        "orig = s.serve\n"
        "def serve(sidecar, stdin, stdout):\n"
        "    print('debug noise')\n"
        "    return orig(sidecar, stdin, stdout)\n"
        "s.serve = serve\n"
        f"sys.exit(s.main({str(tmp_path / 'm.sqlite')!r}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(call(1, "ping")).encode() + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == [1]
    assert b"debug noise" in proc.stderr


def test_waiting_events_are_captured_together_and_in_order(tmp_path: Path) -> None:
    """Events already queued are stored in batches, never past a request or another session."""
    batches: list[tuple[str, list[int]]] = []

    class Spy(Sidecar):
        def capture(self, session_id: str, events: list[Any]) -> None:
            batches.append((session_id, [e["seq"] for e in events]))
            super().capture(session_id, events)

    server = Spy(lambda settings: MemoryRuntime.open(str(tmp_path / "m.sqlite"), settings))
    events = conversation(sample_turns())
    lines = [
        *(note("event", sessionId=SID, event=e) for e in events[:10]),
        call(1, "command", sessionId=SID, input="status"),
        *(note("event", sessionId=SID, event=e) for e in events[10:]),
        note("event", sessionId="另一个会话", event=user(0, "别的会话")),
        call(2, "ping"),
    ]
    stdin = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    stdout = io.BytesIO()
    assert serve(server, stdin, stdout) == 0
    answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert re.search(r"^events +10$", answers[0]["result"]["text"], re.M)
    assert answers[1]["result"]["stats"]["events"] == 17
    mine = [seq for session, seqs in batches if session == SID for seq in seqs]
    assert mine == list(range(16)) and batches[-1] == ("另一个会话", [0])
