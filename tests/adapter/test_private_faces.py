"""A `<private>` span never reaches storage, whichever face captured it.

Each face (the DSH sidecar process, `lcm ingest`, a Claude Code hook's transcript) gets
a conversation whose user marks a span private (Chinese inside, one span unclosed),
then the span is looked for in the database file's bytes, `lcm search`, a JSONL
export and an assembled block.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.sample import assistant, user, write_plain

SID = "会话-private"
# Words only the private spans hold: none may be stored anywhere.
SECRETS = ("zebra-quartz-981", "蓝色大象", "unclosed-tail-777", "尾巴里的秘密", "ACME-4821")
TURNS = (
    "The staging port is 8080. My vault phrase is <private>zebra-quartz-981 蓝色大象</private>, keep it safe.",
    "预算不超过3000元（含税）。<private>unclosed-tail-777 尾巴里的秘密",
    "Customer ticket ACME-4821 is about the staging port.",
)


def invoke(db: Path, config: Path, *args: str, input: str | None = None) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), "--config", str(config), *args], input=input)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "lcm.json"
    path.write_text(json.dumps({"capture": {"privatePatterns": ["ACME-\\d{4}"]}}), "utf-8")
    return path


def dsh_events() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, text in enumerate(TURNS):
        out.append(user(2 * index, text))
        out.append(assistant(2 * index + 1, "Noted."))
    return out


def assert_private(db: Path, config: Path, tmp_path: Path, session: str) -> None:
    """No secret in the file's bytes, search, export or block; the placeholder is stored."""
    for file in db.parent.glob(db.name + "*"):
        data = file.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, (file.name, secret)
    for secret in SECRETS:
        found = json.loads(invoke(db, config, "search", secret, "--scope", "all", "--json").stdout)
        assert not found.get("items") and not found.get("events"), (secret, found)
    out = tmp_path / "export"
    invoke(db, config, "export", "--format", "jsonl", "--out", str(out))
    dumped = "".join(p.read_text("utf-8") for p in sorted(out.glob("*.jsonl")))
    assert "[private]" in dumped and "8080" in dumped
    for secret in SECRETS:
        assert secret not in dumped, secret
    block = invoke(
        db, config, "assemble", "--session", session, "--query", "vault phrase staging port 8080"
    ).stdout
    assert "8080" in block
    for secret in SECRETS:
        assert secret not in block, secret


def test_live_capture_through_the_sidecar_process(tmp_path: Path) -> None:
    """Events and a pre-step sent to `lcm serve`'s process store no private text, not even in the log."""
    db, config = tmp_path / "m.sqlite", write_config(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "lcm_adapter.dsh.sidecar", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ask = [
        {
            "role": "user",
            "content": [{"type": "text", "text": TURNS[0]}],
            "source": {"kind": "user"},
        }
    ]
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"settings": json.loads(config.read_text())},
        },
        *(
            {"jsonrpc": "2.0", "method": "event", "params": {"sessionId": SID, "event": e}}
            for e in dsh_events()
        ),
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "preStep",
            "params": {"sessionId": SID, "messages": ask, "turn": 9, "step": 1},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": {}},
    ]
    stdout, stderr = proc.communicate(
        "".join(json.dumps(m) + "\n" for m in messages).encode(), timeout=120
    )
    assert proc.returncode == 0, stderr
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, 3]
    for secret in SECRETS:
        assert secret not in stdout.decode(), secret
    assert_private(db, config, tmp_path, SID)


def test_lcm_ingest_of_a_session_log(tmp_path: Path) -> None:
    """`lcm ingest` of a DSH log stores the placeholder, never the span."""
    db, config = tmp_path / "m.sqlite", write_config(tmp_path)
    log = write_plain(tmp_path / "sessions" / SID / "session.v4.jsonl", SID, dsh_events())
    invoke(db, config, "ingest", str(log))
    assert_private(db, config, tmp_path, SID)


def test_a_claude_code_hook_transcript_and_prompt(tmp_path: Path) -> None:
    """A hook's transcript and its prompt (used as the query, logged) store no private text."""
    db, config = tmp_path / "m.sqlite", write_config(tmp_path)
    session = "9a1b2c3d-private"
    transcript = tmp_path / "transcript.jsonl"
    lines = []
    for index, text in enumerate(TURNS):
        stamp = f"2026-03-02T10:0{index}:00Z"
        lines.append(
            {"type": "user", "timestamp": stamp, "message": {"role": "user", "content": text}}
        )
        reply = [{"type": "text", "text": "Noted."}]
        lines.append(
            {
                "type": "assistant",
                "timestamp": stamp,
                "message": {"role": "assistant", "content": reply},
            }
        )
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    body = {
        "session_id": session,
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "transcript_path": str(transcript),
        "prompt": "which port? <private>zebra-quartz-981 蓝色大象</private>",
    }
    reply = invoke(db, config, "hook", "user-prompt-submit", input=json.dumps(body)).stdout
    for secret in SECRETS:
        assert secret not in reply, secret
    assert_private(db, config, tmp_path, session)


def test_capture_redact_keeps_secrets_out_only_when_on(tmp_path: Path) -> None:
    """With `capture.redact` a key in a message is stored as a marker; off (the default) it is kept."""
    key = "sk-proj-" + "Q7w8E9r0" * 4
    events = [user(0, f"部署用的密钥是 {key}，端口 8080。"), assistant(1, "Noted.")]
    log = write_plain(tmp_path / "sessions" / SID / "session.v4.jsonl", SID, events)
    plain, redacting = tmp_path / "plain.sqlite", tmp_path / "redacted.sqlite"
    config = tmp_path / "redact.json"
    config.write_text(json.dumps({"capture": {"redact": True}}), "utf-8")
    invoke(plain, write_config(tmp_path), "ingest", str(log))
    invoke(redacting, config, "ingest", str(log))
    assert key.encode() in plain.read_bytes()
    for file in tmp_path.glob("redacted.sqlite*"):
        assert key.encode() not in file.read_bytes(), file.name
    found = json.loads(invoke(redacting, config, "search", "8080", "--json").stdout)
    texts = " ".join(e["text"] for e in found["events"])
    assert "[REDACTED:" in texts and key not in texts
