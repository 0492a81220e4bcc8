"""Bulk event insert: sqlite-utils `insert_all` against today's paths, in one run.

Three ways to write the same N synthetic DSH event rows into a fresh lcm file (schema,
lcm's FTS triggers and pragmas included), each in one transaction:

- floor: one `executemany` of the rows (the floor of the capture figure in docs/measurements.md);
- store: today's path, `SQLiteMemoryStore.insert_events` on the parsed events;
- insert_all: sqlite-utils `Table.insert_all(..., ignore=True)` of the same rows as dicts;
- multirow: plain sqlite3, `INSERT OR IGNORE ... VALUES (...), (...), ...` 100 rows a
  statement (the statement shape insert_all uses, without the library).

Runs rotate the order; the table shows median events/s and each beside the floor. The
store path would adopt `insert_all` only if it beats the store path here.

    python benchmarks/sqlite_utils_insert.py --events 20000 --runs 5
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from capture_throughput import SESSION, floor_rows, run_floor, synthetic_events

from lcm_adapter.envelope.parse import parse_envelope
from lcm_core.config import load_config
from lcm_core.store.models import Event
from lcm_core.store.rows import EVENT_COLUMNS
from lcm_store_sqlite import SQLiteMemoryStore


def parsed_events(raw: list[dict[str, Any]]) -> list[Event]:
    limit = load_config().archive.max_chars_per_event
    found: list[Event] = []
    for item in raw:
        result = parse_envelope(
            SESSION, item, ingested_at="2026-01-01T00:00:00.000+00:00", archive_limit=limit
        )
        found.extend(row.event for row in result.rows)
    return found


def run_store(path: Path, events: list[Event]) -> float:
    store = SQLiteMemoryStore(path)
    try:
        started = time.perf_counter()
        store.insert_events(events)
        return time.perf_counter() - started
    finally:
        store.close()


def run_insert_all(path: Path, rows: list[tuple[Any, ...]]) -> float:
    import sqlite_utils

    SQLiteMemoryStore(path).close()  # the same schema and triggers
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    names = [c.strip() for c in EVENT_COLUMNS.split(",")]
    records = [dict(zip(names, row, strict=True)) for row in rows]
    db = sqlite_utils.Database(connection)
    try:
        started = time.perf_counter()
        connection.execute("BEGIN")
        db["events"].insert_all(records, ignore=True, batch_size=100)
        connection.execute("COMMIT")
        return time.perf_counter() - started
    finally:
        connection.close()


def run_multirow(path: Path, rows: list[tuple[Any, ...]], per: int = 100) -> float:
    SQLiteMemoryStore(path).close()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    one = "(" + ", ".join("?" * len(rows[0])) + ")"
    try:
        started = time.perf_counter()
        connection.execute("BEGIN")
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            values = ", ".join([one] * len(chunk))
            flat = [value for row in chunk for value in row]
            connection.execute(
                f"INSERT OR IGNORE INTO events ({EVENT_COLUMNS}) VALUES {values}", flat
            )
        connection.execute("COMMIT")
        return time.perf_counter() - started
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    raw = synthetic_events(args.events)
    rows = floor_rows(raw, load_config())
    events = parsed_events(raw)
    assert len(events) == len(rows)
    sides = {
        "floor": lambda p: run_floor(p, rows),
        "store": lambda p: run_store(p, events),
        "insert_all": lambda p: run_insert_all(p, rows),
        "multirow": lambda p: run_multirow(p, rows),
    }
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    with tempfile.TemporaryDirectory(prefix="lcm-bench-") as folder:
        for run in range(args.runs):
            order = names[run % len(names) :] + names[: run % len(names)]
            for name in order:
                times[name].append(sides[name](Path(folder) / f"{name}-{run}.sqlite"))
    floor = len(rows) / statistics.median(times["floor"])
    print(f"{len(rows)} event rows, {args.runs} runs")
    for name, values in times.items():
        rate = len(rows) / statistics.median(values)
        print(f"{name:<11} {rate:9.0f} events/s  {rate / floor:5.2f} x floor")


if __name__ == "__main__":
    main()
