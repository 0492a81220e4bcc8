"""Shared helpers of the reliability tests: counts, figures, and DSH event builders.

Imported by the tests, by the child processes they start, and by `report.py`, so it
depends on nothing but the standard library and `lcm_core`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

FULL_ENV: Final = "LCM_RELIABILITY_FULL"
FIGURES_ENV: Final = "LCM_RELIABILITY_FIGURES"
HERE: Final = Path(__file__).resolve().parent
BASE_TIME: Final = 1796004637000

_FIGURES: dict[str, Any] = {}
_OUTCOMES: dict[str, str] = {}


def full_mode() -> bool:
    """True when the large counts were asked for (`--full` or `LCM_RELIABILITY_FULL=1`)."""
    return os.environ.get(FULL_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def scaled(default: int, full: int) -> int:
    """The count for this run: `full` in full mode, else `default`."""
    return full if full_mode() else default


# --- figures -----------------------------------------------------------------------------


def record(name: str, value: Any) -> None:
    """Set one figure (a number, or a small JSON-ready structure)."""
    _FIGURES[name] = value


def bump(name: str, amount: int = 1) -> None:
    """Add to a counting figure."""
    _FIGURES[name] = int(_FIGURES.get(name, 0)) + amount


def record_outcome(nodeid: str, outcome: str, xfail: bool) -> None:
    """Remember how a test ended (an xfail is kept apart from a plain skip)."""
    _OUTCOMES[nodeid] = "xfailed" if xfail and outcome == "skipped" else outcome


def snapshot() -> dict[str, Any]:
    """Everything measured so far, JSON-ready."""
    return {"full": full_mode(), "figures": dict(_FIGURES), "outcomes": dict(_OUTCOMES)}


# --- child processes ---------------------------------------------------------------------


def child_command(script: str, *args: object) -> list[str]:
    """The argv that runs a helper script of this folder with the current interpreter."""
    return [sys.executable, str(HERE / script), *(str(arg) for arg in args)]


def child_env() -> dict[str, str]:
    """The environment for a child: the parent's, with this folder importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH")) if p)
    return env


# --- DSH events --------------------------------------------------------------------------


def envelope(event_type: str, seq: int, data: Any) -> dict[str, Any]:
    """One session event as DSH writes it."""
    return {"type": event_type, "seq": seq, "time": BASE_TIME + seq * 7, "data": data}


def user_message(seq: int, text: str, kind: str | None = "user", **source: Any) -> dict[str, Any]:
    """A `user/message`; `kind=None` leaves the source out, extra keys go into it."""
    data: dict[str, Any] = {
        "id": f"u{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
    }
    if kind is not None:
        data["source"] = {"kind": kind, **source}
    return envelope("user/message", seq, data)


def assistant_message(seq: int, text: str, turn: int = 1, step: int = 1) -> dict[str, Any]:
    """An `assistant/message` from the model."""
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "test", "model": "test-model"},
        "id": f"a{seq}",
    }
    return envelope("assistant/message", seq, {"turn": turn, "step": step, "message": message})


def tool_call(seq: int, name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    """A `tool/call`."""
    data = {"turn": 1, "step": 1, "callId": call_id, "name": name, "arguments": arguments}
    return envelope("tool/call", seq, data)


def tool_result(seq: int, text: str, call_id: str, name: str = "shell") -> dict[str, Any]:
    """A `tool/result` as DSH writes it: a user-role message holding a tool-result block."""
    block = {"type": "tool-result", "toolCallId": call_id, "content": text, "isError": False}
    message = {"role": "user", "content": [block], "source": {"kind": "tool"}, "id": f"t{seq}"}
    return envelope(
        "tool/result", seq, {"turn": 1, "step": 1, "callId": call_id, "name": name, **message}
    )


# A long stream for the crash and concurrency scenarios: every event says its seq, so a
# stored row can be checked against the stream, and the same seq always has the same text.
STREAM_TYPES: Final = (
    "turn/start",
    "user/message",
    "assistant/message",
    "tool/call",
    "tool/result",
)
BIG_EVERY: Final = 97  # every so often a tool result too long for the events table (archived)


def marker(session_hint: str, seq: int) -> str:
    """The text every stream event carries, unique per (stream, seq)."""
    return f"({session_hint}#{seq})"


def stream_event(seq: int, hint: str = "s") -> dict[str, Any]:
    """The event at `seq` of the standard stream (a pure function of its arguments)."""
    kind = STREAM_TYPES[seq % len(STREAM_TYPES)]
    tag = marker(hint, seq)
    if kind == "turn/start":
        return envelope(kind, seq, {"turn": seq // len(STREAM_TYPES)})
    if kind == "user/message":
        texts = (
            f"{tag} 预算不超过{seq % 9000 + 100}元（含税），周五前交付",
            f"{tag} keep p95 latency under {seq % 400 + 50} ms when the cache is warm",
            f"{tag} 以后都用 PostgreSQL 16，不要用 MySQL",
        )
        return user_message(seq, texts[seq % len(texts)])
    if kind == "assistant/message":
        return assistant_message(seq, f"{tag} I propose caching the report for {seq % 60} min.")
    if kind == "tool/call":
        return tool_call(seq, "shell", {"cmd": f"echo {tag}"}, f"call-{hint}-{seq}")
    body = f"{tag} output line {seq}\n"
    if seq % BIG_EVERY == 4:
        body = body * (25_000 // len(body) + 1)  # longer than MAX_EVENT_TEXT: archived
    return tool_result(seq, body, f"call-{hint}-{seq - 1}")


def matches_stream(event: Any, seq: int, hint: str = "s") -> bool:
    """True when a stored event is the stream's event at `seq` (type and, if any, text)."""
    kind = STREAM_TYPES[seq % len(STREAM_TYPES)]
    if event is None or event.seq != seq or event.type != kind:
        return False
    return kind == "turn/start" or marker(hint, seq) in event.text


def stream(start: int, stop: int, hint: str = "s") -> Iterator[dict[str, Any]]:
    """Events `start <= seq < stop` of the standard stream."""
    for seq in range(start, stop):
        yield stream_event(seq, hint)


def archived_in(start: int, stop: int) -> int:
    """How many events of `start <= seq < stop` the stream makes too long to keep inline."""
    return sum(
        1
        for seq in range(start, stop)
        if STREAM_TYPES[seq % len(STREAM_TYPES)] == "tool/result" and seq % BIG_EVERY == 4
    )
