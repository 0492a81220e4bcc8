"""Pre-step latency with `memory.scope = project` over many sessions, beside the floor.

The database is `prestep_latency.py`'s synthetic one (same messages, items and query
mix), built with `--sessions` sessions of `--events` events each, all in one project.
For one session in the middle it times, over the query mix:

- session: the core's `pre_step` with `memory.scope = session` (today's pre-step);
- project: the same with `memory.scope = project` (also the other sessions' items);
- floor: one `memory_fts MATCH` with the same terms, `ORDER BY rank LIMIT 100`.

The table shows the median over runs of each run's p50 and p95 and the ratios of the
p95s. Target (the pre-step target): project p95 within 3x the floor p95 + 5 ms.

    python benchmarks/prestep_project.py                          # 20 sessions x 50k events
    python benchmarks/prestep_project.py --sessions 20 --events 5000 --runs 3
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import prestep_latency as base

from lcm_core.assembly.step import StepMessage
from lcm_core.config import Config, load_config
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_store_sqlite import SQLiteMemoryStore

PROJECT = "/bench/app"
FLOOR_SQL = (
    "SELECT rowid, bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ? "
    "ORDER BY rank LIMIT 100"
)


def build(path: Path, sessions: int, events: int) -> list[str]:
    """The synthetic database with `sessions` x `events` rows, every session in one project."""
    base.EVENTS_PER_SESSION = events
    base.DATA_VERSION = f"prestep-project-v1:{events}"
    names = base.build(path, sessions * events)
    raw = sqlite3.connect(path)
    raw.executemany(
        "INSERT OR REPLACE INTO sessions (session_id, cwd, project, memory_enabled, created_at,"
        " updated_at) VALUES (?, ?, ?, 1, ?, ?)",
        [(name, PROJECT, PROJECT, base.STAMP, base.STAMP) for name in names],
    )
    raw.commit()
    raw.close()
    return names


def _times(store: SQLiteMemoryStore, session: str, mix: list[str], config: Config) -> list[float]:
    out = []
    for query in mix:
        start = time.perf_counter()
        result = pre_step(
            store, StepRequest(session, [StepMessage("user", query, "user")]), config
        ).result
        out.append((time.perf_counter() - start) * 1000)
        if result.errors:
            raise SystemExit(f"assembly failed: {result.errors}")
    return out


def _floor(raw: sqlite3.Connection, exprs: list[str | None]) -> list[float]:
    out = []
    for expr in exprs:
        start = time.perf_counter()
        if expr:
            raw.execute(FLOOR_SQL, (expr,)).fetchall()
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(path: Path, session: str, runs: int) -> dict[str, tuple[float, float]]:
    """name -> (median p50, median p95) in ms for session scope, project scope and the floor."""
    store = SQLiteMemoryStore(path)
    raw = sqlite3.connect(path)
    configs = {
        "session": load_config(),
        "project": load_config({"memory": {"scope": "project"}}),
    }
    mix = base.queries(session)
    exprs = [base.floor_sql_terms(q) for q in mix]
    found: dict[str, list[tuple[float, float]]] = {"session": [], "project": [], "floor": []}
    try:
        for config in configs.values():  # warm the page cache once
            _times(store, session, mix, config)
        _floor(raw, exprs)
        for _ in range(runs):
            # Interleaved in each run, so machine noise hits all three alike.
            for name, config in configs.items():
                times = _times(store, session, mix, config)
                found[name].append((base.percentile(times, 0.5), base.percentile(times, 0.95)))
            times = _floor(raw, exprs)
            found["floor"].append((base.percentile(times, 0.5), base.percentile(times, 0.95)))
    finally:
        raw.close()
        store.close()
    return {
        name: (statistics.median(p for p, _ in rows), statistics.median(p for _, p in rows))
        for name, rows in found.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--events", type=int, default=50_000, help="Events per session.")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "lcm-bench")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"prestep-project-{args.sessions}x{args.events}.sqlite"
    sessions = build(path, args.sessions, args.events)
    row = measure(path, sessions[len(sessions) // 2], args.runs)
    floor_p95 = row["floor"][1]
    target = 3 * floor_p95 + 5
    print(f"{args.sessions} sessions x {args.events:,} events, one project; {args.runs} runs")
    print("| pre-step | p50 ms | p95 ms | p95 / floor p95 |")
    print("|---|---:|---:|---:|")
    for name in ("session", "project", "floor"):
        p50, p95 = row[name]
        ratio = p95 / floor_p95 if floor_p95 > 0 else float("inf")
        print(f"| {name} | {p50:.2f} | {p95:.2f} | {ratio:.1f}x |")
    meets = row["project"][1] <= target
    print(f"target: project p95 <= 3 x floor p95 + 5 = {target:.1f} ms: {'yes' if meets else 'NO'}")
    return 0 if meets else 1


if __name__ == "__main__":
    raise SystemExit(main())
