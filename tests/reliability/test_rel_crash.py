"""Crash: SIGKILL a capturing child at random moments; nothing it acknowledged is lost.

The child acknowledges a seq only after the capture call that stored it returned, so
every acknowledged row was committed. After each kill the parent reopens the file (which
runs WAL recovery), checks integrity and looks for every acknowledged row. At the end a
full replay of the stream must insert exactly the missing rows, a second replay none,
and the tables must equal those of a clean capture of the same stream.
"""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rel_support as rs

from lcm_adapter.envelope.capture import capture_batch
from lcm_core.config import load_config
from lcm_core.store.models import ITEM_STATUSES
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "crash-会话"
KILLS = rs.scaled(12, 60)
STREAM = rs.scaled(6_000, 30_000)
SEGMENT = STREAM // (KILLS + 2)
SEED = 20261130
# Columns that say when a row was written, not what it holds.
TIME_COLUMNS = frozenset({"ingested_at", "created_at", "updated_at", "at"})


@dataclass
class ChildRun:
    """What one child said before it died."""

    acked: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    extraction_errors: list[str] = field(default_factory=list)
    done: bool = False
    ready: bool = False
    stderr: str = ""


def _read(proc: subprocess.Popen[bytes], run: ChildRun, ready: threading.Event) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line == "READY":
            run.ready = True
            ready.set()
        elif line.startswith("ACK "):
            run.acked.extend(int(part) for part in line[4:].split())
        elif line.startswith("ERR "):
            run.errors.append(line[4:])
        elif line.startswith("XERR "):
            run.extraction_errors.append(line[5:])
        elif line == "DONE":
            run.done = True
    ready.set()  # EOF: the child died before (or after) saying READY


def run_child(path: Path, start: int, stop: int, delay: float, seed: int) -> tuple[ChildRun, bool]:
    """Start a child on `start..stop`, SIGKILL it `delay` s after it is ready; (run, killed)."""
    proc = subprocess.Popen(
        rs.child_command("rel_crash_child.py", path, SESSION, start, stop, seed),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=rs.child_env(),
    )
    run = ChildRun()
    ready = threading.Event()
    reader = threading.Thread(target=_read, args=(proc, run, ready), daemon=True)
    reader.start()
    ready.wait(timeout=120)
    killed = False
    if run.ready and proc.poll() is None:
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed = True
    proc.wait(timeout=120)
    reader.join(timeout=120)
    assert proc.stderr is not None
    run.stderr = proc.stderr.read().decode("utf-8", "replace")[-2000:]
    return run, killed


def stored_rows(store: SQLiteMemoryStore, table: str) -> list[dict[str, Any]]:
    """A table's rows without the columns that record write times."""
    return [
        {key: value for key, value in row.items() if key not in TIME_COLUMNS}
        for row in store.export_rows(table, session_id=SESSION)
    ]


def check_after_kill(path: Path, acked: set[int]) -> tuple[list[int], list[str], set[int]]:
    """Reopen the file: (acknowledged seqs missing, integrity problems, stored seqs)."""
    store = SQLiteMemoryStore(path)
    try:
        problems = store.integrity_check()
        events = {event.seq: event for event in store.list_events(SESSION)}
        lost = sorted(seq for seq in acked if not rs.matches_stream(events.get(seq), seq))
        return lost, problems, set(events)
    finally:
        store.close()


def replay(store: SQLiteMemoryStore, chunk: int = 500) -> tuple[int, int]:
    """Capture the whole stream again in batches; (rows inserted, errors reported)."""
    config = load_config()
    inserted = errors = 0
    for start in range(0, STREAM, chunk):
        events = list(rs.stream(start, min(start + chunk, STREAM)))
        report = capture_batch(store, SESSION, events, config)
        inserted += report.inserted
        errors += report.error_count
    return inserted, errors


def derived(store: SQLiteMemoryStore) -> tuple[tuple[list[Any], list[Any]], list[str]]:
    """Finish extraction, then (items, lifecycle rows) without ids or times; and its errors."""
    errors: list[str] = []
    try:
        from lcm_core.extraction.run import run_extraction
    except ImportError:  # extraction not in this build: nothing derived to compare
        return ([], []), errors
    errors.extend(run_extraction(store, SESSION, load_config()).errors)
    items = sorted(
        (i.id, i.kind, i.content_hash, i.status, i.superseded_by, i.evidence_type, i.source_refs)
        for i in store.list_items(SESSION, statuses=ITEM_STATUSES)
    )
    lifecycle = sorted((e.memory_id, e.event) for e in store.list_memory_events(session_id=SESSION))
    return (items, lifecycle), errors


def test_sigkill_at_random_moments_loses_no_acknowledged_event(tmp_path: Path) -> None:
    """Acknowledged events survive every kill, integrity holds, a replay restores exact counts."""
    path = tmp_path / "data" / "memory.sqlite"
    rng = random.Random(SEED)
    acked: set[int] = set()
    stored: set[int] = set()
    kills = attempts = mid_segment = 0
    lost_total: list[int] = []
    integrity_failures: list[str] = []
    capture_errors: list[str] = []
    extraction_errors: list[str] = []
    child_failures: list[str] = []
    while kills < KILLS and attempts < KILLS * 3:
        attempts += 1
        contiguous = next((s for s in range(STREAM) if s not in stored), STREAM)
        start = max(0, contiguous - rng.randint(0, 40))  # overlap: replays are part of it
        # Each child gets a share of the stream, so the final replay still has work.
        stop = min(STREAM, contiguous + SEGMENT)
        delay = rng.uniform(0.0, 0.06) if rng.random() < 0.5 else rng.uniform(0.06, 0.35)
        run, killed = run_child(path, start, stop, delay, rng.randrange(2**31))
        kills += killed
        mid_segment += killed and not run.done
        if not run.ready:
            child_failures.append(run.stderr)
        acked.update(run.acked)
        capture_errors.extend(run.errors)
        extraction_errors.extend(run.extraction_errors)
        lost, problems, stored = check_after_kill(path, acked)
        lost_total.extend(lost)
        integrity_failures.extend(problems)

    store = SQLiteMemoryStore(path)
    try:
        before = store.stats(SESSION)["events"]
        inserted, replay_errors = replay(store)
        again, again_errors = replay(store)
        counts = store.stats(SESSION)
        checkpoint = store.get_checkpoint(SESSION)
        rows = {table: stored_rows(store, table) for table in ("events", "archive")}
        memory, extraction_left = derived(store)
        final_problems = store.integrity_check()
    finally:
        store.close()
    clean = SQLiteMemoryStore(tmp_path / "clean.sqlite")
    try:
        replay(clean)
        clean_rows = {table: stored_rows(clean, table) for table in ("events", "archive")}
        clean_memory, _ = derived(clean)
    finally:
        clean.close()

    rs.record(
        "crash",
        {
            "kills": kills,
            "kills_before_segment_end": mid_segment,
            "children": attempts,
            "stream_events": STREAM,
            "acknowledged": len(acked),
            "acknowledged_lost": len(lost_total),
            "integrity_failures": len(integrity_failures) + len(final_problems),
            "capture_errors_in_children": len(capture_errors),
            "extraction_errors_in_children": len(extraction_errors),
            "stored_before_replay": before,
            "replay_inserted": inserted,
            "second_replay_inserted": again,
            "events_after_replay": counts["events"],
            "archive_after_replay": counts["archive"],
            "expected_archive": rs.archived_in(0, STREAM),
            "tables_equal_clean_capture": rows == clean_rows,
            "memory_equal_clean_extraction": memory == clean_memory,
            "memory_items": len(memory[0]),
        },
    )
    assert not child_failures, child_failures[:2]
    assert kills >= KILLS, f"only {kills} kills landed in {attempts} children"
    assert lost_total == [], f"acknowledged but lost: {lost_total[:20]}"
    assert integrity_failures == [] and final_problems == []
    assert capture_errors == [], capture_errors[:5]
    assert (replay_errors, again_errors) == (0, 0)
    assert inserted == STREAM - before
    assert again == 0
    assert counts["events"] == STREAM
    assert counts["archive"] == rs.archived_in(0, STREAM)
    assert checkpoint.last_event_seq == STREAM - 1
    assert rows == clean_rows
    assert extraction_errors == [] and extraction_left == [], (extraction_errors, extraction_left)
    assert memory == clean_memory, "memory derived after the kills differs from a clean run"
