"""Replays are harmless: the same stream captured twice, in overlapping or reordered batches,
event by event, or after a crash mid-batch, leaves byte-identical tables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_core.config import load_config
from lcm_core.store.models import TABLES
from lcm_store_sqlite import SQLiteMemoryStore

SID = "replay-会话"
CONFIG = load_config()
# Columns that record when a row was written, not what it says.
TIME_COLUMNS = frozenset({"ingested_at", "created_at", "updated_at", "at"})


def session_stream(turns: int = 6) -> list[Any]:
    """A realistic DSH session: markers, EN/ZH messages, tools, chunks, compaction, oddities."""
    events: list[Any] = []
    seq = 0

    def add(event_type: str, data: Any, **envelope: Any) -> None:
        nonlocal seq
        events.append(
            {
                "type": event_type,
                "seq": seq,
                "time": 1796004637000 + seq * 7,
                "data": data,
                **envelope,
            }
        )
        seq += 1

    for turn in range(1, turns + 1):
        add("turn/start", {"turn": turn})
        text = f"第{turn}轮：预算不超过{turn * 1000}元（含税），keep p95 under {turn * 50} ms"
        add(
            "user/message",
            {
                "id": f"u{turn}",
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"},
            },
        )
        add("step/start", {"turn": turn, "step": 0})
        # A packed run of three streamed deltas covers three seqs.
        events.append(
            {
                "type": "text-chunks",
                "seq0": seq,
                "time0": 5000 + seq,
                "data": {
                    "turn": turn,
                    "step": 0,
                    "index": 0,
                    "dt": [3, 4],
                    "texts": ["好的", "，我来", " check"],
                },
            }
        )
        seq += 3
        add(
            "tool/call",
            {
                "turn": turn,
                "step": 0,
                "callId": f"c{turn}",
                "name": "read",
                "arguments": json.dumps({"path": f"src/模块{turn}.py"}),
            },
        )
        result = {
            "id": f"t{turn}",
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": f"c{turn}",
                    "content": [{"type": "text", "text": f"def f{turn}(): return {turn}"}],
                    "isError": False,
                }
            ],
            "source": {"kind": "tool", "callId": f"c{turn}"},
        }
        add("tool/result", {"turn": turn, "step": 0, "message": result})
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"Done with turn {turn}. 已完成。"}],
            "source": {"kind": "model", "provider": "p", "model": "m"},
        }
        add(
            "assistant/message",
            {
                "turn": turn,
                "step": 0,
                "message": answer,
                "usage": {"inputTokens": 10, "outputTokens": 5},
            },
        )
        add("step/end", {"turn": turn, "step": 0})
        add(
            "user/message",
            {
                "id": f"ctx{turn}",
                "role": "user",
                "content": [{"type": "text", "text": f"now is turn {turn}"}],
                "source": {"kind": "time-context"},
            },
        )
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        if turn == 3:
            add("compaction/start", {"compactionId": "k1", "turn": turn})
            add(
                "compaction/summary",
                {
                    "compactionId": "k1",
                    "summary": [{"type": "text", "text": "摘要：预算 3000 元，端口 8080"}],
                    "shadowedRange": {"start": 1, "end": 20},
                },
            )
            add(
                "user/message",
                {
                    "id": "cs",
                    "role": "user",
                    "content": [{"type": "text", "text": "<compacted-summary>…"}],
                    "source": {"kind": "plugin", "plugin": "compact", "compactionId": "k1"},
                },
                surfaceOp={"op": "replace", "start": 1, "end": 20},
            )
            add("compaction/end", {"compactionId": "k1", "turn": None})
        if turn == 4:
            add(
                "user/message",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "长" * 25_000}],
                    "source": {"kind": "user"},
                },
            )
            add("plugin-x/custom", {"anything": ["goes", 1]})
            events.append({"type": "user/message", "seq": -5, "data": {}})  # rejected, counted
            add(
                "user/message",
                {"role": "user", "content": [{"type": "text", "text": "bad\x00\ud800bytes"}]},
            )
    add("session/end-seed", {})
    return events


def snapshot(db: SQLiteMemoryStore) -> dict[str, list[dict[str, Any]]]:
    """Every table's rows without write-time columns (and without migration timestamps)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        rows = []
        for row in db.export_rows(table):
            if table == "meta" and str(row.get("key", "")).startswith("migration"):
                continue
            rows.append({key: value for key, value in row.items() if key not in TIME_COLUMNS})
        tables[table] = rows
    return tables


@pytest.fixture(scope="module")
def stream() -> list[Any]:
    return session_stream()


@pytest.fixture(scope="module")
def reference(
    stream: list[Any], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict[str, Any]]]:
    """The tables after one clean capture of the whole stream."""
    with SQLiteMemoryStore(tmp_path_factory.mktemp("ref") / "ref.sqlite") as db:
        report = capture_batch(db, SID, stream, CONFIG)
        assert report.error_count == 1 and report.inserted >= 75
        return snapshot(db)


def test_reference_stream_fills_the_tables_it_should(
    reference: dict[str, list[dict[str, Any]]],
) -> None:
    """Guard against a vacuous comparison: events, archive, session and checkpoint rows exist."""
    assert len(reference["events"]) >= 75
    assert len(reference["archive"]) == 2  # the compaction summary and the 25 000-char message
    assert len(reference["sessions"]) == 1 and len(reference["checkpoints"]) == 1


def test_replaying_the_same_stream_twice_changes_nothing(
    stream: list[Any], reference: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """A second full replay inserts nothing and leaves identical tables."""
    with SQLiteMemoryStore(tmp_path / "m.sqlite") as db:
        capture_batch(db, SID, stream, CONFIG)
        again = capture_batch(db, SID, stream, CONFIG)
        assert again.inserted == 0 and again.duplicates == again.rows
        assert snapshot(db) == reference


@pytest.mark.parametrize(("first", "second"), [((0, 40), (25, None)), ((50, None), (0, 60))])
def test_overlapping_or_reordered_batches_give_the_same_tables(
    stream: list[Any],
    reference: dict[str, list[dict[str, Any]]],
    tmp_path: Path,
    first: tuple[int, int | None],
    second: tuple[int, int | None],
) -> None:
    """Two overlapping batches, in either order, end where one clean capture ends."""
    with SQLiteMemoryStore(tmp_path / "m.sqlite") as db:
        capture_batch(db, SID, stream[first[0] : first[1]], CONFIG)
        report = capture_batch(db, SID, stream[second[0] : second[1]], CONFIG)
        assert report.duplicates > 0
        assert snapshot(db) == reference


def test_live_event_by_event_matches_a_batch(
    stream: list[Any], reference: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """The live path (one event per call) writes exactly what a batch replay writes."""
    with SQLiteMemoryStore(tmp_path / "m.sqlite") as db:
        for event in stream:
            capture_event(db, SID, event, CONFIG)
        assert snapshot(db) == reference


CHILD = r"""
import json, sys, time
from lcm_adapter.envelope.capture import capture_batch
from lcm_core.config import load_config
from lcm_store_sqlite import SQLiteMemoryStore

db_path, stream_path, marker, split = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with open(stream_path, encoding="utf-8") as handle:
    events = json.load(handle)
store = SQLiteMemoryStore(db_path)
first = capture_batch(store, sys.argv[5], events[:split], load_config())
assert first.inserted > 0, first


class StallAfterInsert:
    # Writes the batch's rows inside the open transaction, then waits to be killed.
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def insert_events(self, rows):
        count = self.inner.insert_events(rows)
        open(marker, "w").close()
        time.sleep(600)
        return count


capture_batch(StallAfterInsert(store), sys.argv[5], events[split:], load_config())
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_crash_mid_batch_then_replay_gives_the_same_tables(
    stream: list[Any], reference: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """A process killed inside its second batch commits none of it; replaying repairs all."""
    db_path, stream_path, marker = (
        tmp_path / "m.sqlite",
        tmp_path / "stream.json",
        tmp_path / "inserted",
    )
    stream_path.write_text(json.dumps(stream), encoding="utf-8")
    split = 40
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db_path), str(stream_path), str(marker), str(split), SID],
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail(
                    f"child exited early: {child.stderr.read().decode() if child.stderr else ''}"
                )
            assert time.monotonic() < deadline, "child never reached the second batch"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    with SQLiteMemoryStore(":memory:") as scratch:
        first_batch_rows = capture_batch(scratch, SID, stream[:split], CONFIG).inserted
    with SQLiteMemoryStore(db_path) as db:
        assert db.stats(SID)["events"] == first_batch_rows, "the killed batch must leave no rows"
        assert db.integrity_check() == []
        capture_batch(db, SID, stream, CONFIG)
        assert snapshot(db) == reference
