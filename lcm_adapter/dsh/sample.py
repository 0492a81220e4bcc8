"""DSH session events and log files shaped like the ones DSH 0.2.1 writes (tests, benchmarks, demos)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

T0 = 1796004637671


def user(seq: int, text: str, *, kind: str = "user") -> dict[str, Any]:
    return {
        "type": "user/message",
        "seq": seq,
        "time": T0 + seq,
        "data": {
            "content": [{"type": "text", "text": text}],
            "source": {"kind": kind},
            "role": "user",
            "id": f"u-{seq}",
        },
        "surfaceOp": "append",
    }


def assistant(seq: int, text: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    return {
        "type": "assistant/message",
        "seq": seq,
        "time": T0 + seq,
        "data": {
            "turn": turn,
            "step": step,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": "deepseek-official"},
                "id": f"a-{seq}",
            },
        },
        "surfaceOp": "append",
    }


def marker(seq: int, kind: str, turn: int = 1) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": T0 + seq, "data": {"turn": turn}}


def conversation(turns: Iterable[tuple[str, str]], start_seq: int = 0) -> list[dict[str, Any]]:
    """Events of whole turns: start, user message, assistant reply, end."""
    events: list[dict[str, Any]] = []
    seq = start_seq
    for turn, (question, answer) in enumerate(turns, start=1):
        events.append(marker(seq, "turn/start", turn))
        events.append(user(seq + 1, question))
        events.append(assistant(seq + 2, answer, turn))
        events.append(marker(seq + 3, "turn/end", turn))
        seq += 4
    return events


def header(session_id: str) -> dict[str, Any]:
    return {"type": "session", "version": 4, "id": session_id, "createdAt": T0, "cwd": "/work"}


def lines_of(session_id: str, events: Iterable[dict[str, Any]]) -> list[bytes]:
    """The log's lines: the header, then one JSON object per event."""
    rows = [header(session_id), *events]
    return [json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in rows]


def write_plain(path: Path, session_id: str, events: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines_of(session_id, events)))
    return path


def write_zstd(
    path: Path, session_id: str, events: Iterable[dict[str, Any]], per_frame: int = 3
) -> Path:
    """One frame for the header, then one frame per `per_frame` events, as DSH appends."""
    import zstandard

    compressor = zstandard.ZstdCompressor()
    lines = lines_of(session_id, events)
    frames = [compressor.compress(lines[0])]
    body = lines[1:]
    for start in range(0, len(body), per_frame):
        frames.append(compressor.compress(b"".join(body[start : start + per_frame])))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(frames))
    return path


def sample_turns() -> list[tuple[str, str]]:
    """A short mixed-language conversation with a constraint, a number and a correction."""
    return [
        ("约束：不要使用 Redis。预算上限是每月 500 美元（不含税）。", "好的，记下了。"),
        ("Let's talk about the deploy window: Friday 18:00 UTC.", "Noted."),
        ("更正：预算改为每月 650 美元（不含税）。", "已更新。"),
        ("What is the budget again?", "It is 650 USD per month."),
    ]
