"""Concurrency: four writer processes and one assembling reader share one SQLite file.

Writers use the live path, batches and direct port inserts, into their own sessions and
one shared session with overlapping seq ranges. Every expected row must be stored once,
no lock error may reach a caller (the store waits within its busy timeout), and the
reader's assemblies must report no errors.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import rel_support as rs

from lcm_store_sqlite import SQLiteMemoryStore

WRITERS = 4
COUNT = rs.scaled(2_000, 5_000)  # events per writer
SHARED = "shared"


def start(args: list[object]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        rs.child_command("rel_workers.py", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=rs.child_env(),
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, f"child failed ({proc.returncode}): {err[-2000:]}"
    return json.loads(out.strip().splitlines()[-1])


def expected_counts(count: int) -> dict[str, int]:
    half, quarter = count // 2, count // 4
    counts = {f"own-{index}": half for index in range(WRITERS)}
    counts[SHARED] = (WRITERS - 1) * quarter + half  # union of the overlapping ranges
    return counts


def run_all(db: Path, tmp_path: Path, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start the writers and the reader together; their JSON summaries."""
    go, stop = tmp_path / "go", tmp_path / "stop"
    writers = [start(["writer", db, index, count, go]) for index in range(WRITERS)]
    reader = start(["reader", db, go, stop])
    go.touch()
    try:
        results = [finish(proc) for proc in writers]
    finally:
        stop.touch()
    return results, finish(reader)


def test_four_writers_and_a_reader_store_every_event_once(tmp_path: Path) -> None:
    """Stored rows equal the expected union, no lock error reaches a caller, no assembly error."""
    db = tmp_path / "memory.sqlite"
    SQLiteMemoryStore(db).close()  # the schema exists before the race starts
    writers, reader = run_all(db, tmp_path, COUNT)

    store = SQLiteMemoryStore(db)
    try:
        expected = expected_counts(COUNT)
        stored = {session: store.stats(session)["events"] for session in expected}
        wrong = {
            session: [e.seq for e in store.list_events(session) if not rs.matches_stream(e, e.seq)][
                :10
            ]
            for session in expected
        }
        problems = store.integrity_check()
    finally:
        store.close()
    lock_errors = sum(
        summary.get(key, 0)
        for summary in [*writers, reader]
        for key in ("lock_errors_raised", "lock_errors_reported", "lock_errors_extraction")
    )
    other_errors = sum(
        summary.get(key, 0) for summary in writers for key in ("raised", "errors", "x_errors")
    )
    inserted = sum(summary.get("inserted", 0) for summary in writers)
    rs.record(
        "concurrency",
        {
            "writers": WRITERS,
            "events_per_writer": COUNT,
            "events_expected": sum(expected.values()),
            "events_stored": sum(stored.values()),
            "rows_reported_inserted": inserted,
            "lock_errors_reaching_callers": lock_errors,
            "other_writer_errors": other_errors,
            "reader_assembles": reader.get("assembly", False),
            "reader_assemblies": reader.get("assemblies", 0),
            "reader_searches": reader.get("searches", 0),
            "assembly_errors": reader.get("assembly_errors", 0) + reader.get("raised", 0),
            "counts_went_down": reader.get("counts_went_down", 0),
            "integrity_failures": len(problems),
        },
    )
    details = [s["first_errors"] for s in [*writers, reader] if s["first_errors"]]
    assert lock_errors == 0, details
    assert other_errors == 0, details
    assert stored == expected
    assert inserted == sum(expected.values())
    assert all(not seqs for seqs in wrong.values()), wrong
    assert reader.get("assembly_errors", 0) == 0 and reader.get("raised", 0) == 0, details
    assert reader.get("counts_went_down", 0) == 0
    assert reader.get("searches", 0) > 0
    assert problems == []


def test_five_processes_opening_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    """The first open (schema creation, WAL switch) is safe when several processes race to it."""
    db = tmp_path / "fresh" / "memory.sqlite"
    writers, reader = run_all(db, tmp_path, 40)
    failures = [s["first_errors"] for s in [*writers, reader] if s["first_errors"]]
    store = SQLiteMemoryStore(db)
    try:
        stored = {session: store.stats(session)["events"] for session in expected_counts(40)}
        problems = store.integrity_check()
    finally:
        store.close()
    ok = stored == expected_counts(40) and not failures
    rs.record("concurrent_first_open", {"processes": WRITERS + 1, "ok": ok})
    assert failures == []
    assert stored == expected_counts(40)
    assert problems == []
