"""Search latency of the DuckDB store beside the SQLite store: same data, queries and run.

Usage: python benchmarks/search_latency.py [--events 100000] [--runs 5] [--repeat 3] [--json]

Both stores get the same synthetic conversation corpus (benchmarks/search_corpus.py:
English, Chinese, mixed script, ids, numbers, short words) over ten sessions, one memory
item per ten events. Each run times every query of the mix `--repeat` times per backend,
backends interleaved query by query so load on the machine hits both alike, and takes
p50/p95 per backend and method; the report shows the median of each over the runs and
DuckDB's ratio to SQLite. Session-scoped search is what pre-step assembly does; the
all-sessions rows are what `lcm search` without a session does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from search_corpus import Corpus, make_corpus, query_terms

from lcm_core.store.ports import MemoryStore
from lcm_store_duckdb import DuckDBMemoryStore
from lcm_store_sqlite import SQLiteMemoryStore

_BATCH = 5000


def load(store: MemoryStore, corpus: Corpus) -> float:
    """Insert the corpus in batches; returns seconds taken."""
    start = time.perf_counter()
    for first in range(0, len(corpus.events), _BATCH):
        store.insert_events(corpus.events[first : first + _BATCH])
    with store.transaction():
        for item in corpus.items:
            store.insert_item(item)
    return time.perf_counter() - start


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


Search = Callable[[MemoryStore, str | None, list[str]], object]
METHODS: dict[str, Search] = {
    "search_items": lambda store, session, terms: store.search_items(session, terms),
    "search_events": lambda store, session, terms: store.search_events(session, terms),
}


def one_run(
    stores: dict[str, MemoryStore], session: str | None, repeat: int
) -> dict[tuple[str, str], list[float]]:
    """Latencies in ms per (backend, method) for the whole query mix, `repeat` times."""
    laps: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for terms in query_terms():
            for method, search in METHODS.items():
                for backend, store in stores.items():
                    start = time.perf_counter()
                    search(store, session, terms)
                    laps.setdefault((backend, method), []).append(
                        (time.perf_counter() - start) * 1000
                    )
    return laps


def measure(args: argparse.Namespace) -> dict[str, Any]:
    corpus = make_corpus(args.events)
    session = corpus.sessions[len(corpus.sessions) // 2]
    report: dict[str, Any] = {
        "events": len(corpus.events),
        "items": len(corpus.items),
        "queries": len(query_terms()),
        "runs": args.runs,
        "repeat": args.repeat,
        "results": [],
    }
    with tempfile.TemporaryDirectory() as folder:
        stores: dict[str, MemoryStore] = {
            "sqlite": SQLiteMemoryStore(Path(folder) / "bench.sqlite"),
            "duckdb": DuckDBMemoryStore(Path(folder) / "bench.duckdb"),
        }
        try:
            report["load_seconds"] = {name: load(s, corpus) for name, s in stores.items()}
            for scope, target in (("session", session), ("all sessions", None)):
                one_run(stores, target, 1)  # warm caches before timing
                p50s: dict[tuple[str, str], list[float]] = {}
                p95s: dict[tuple[str, str], list[float]] = {}
                for _ in range(args.runs):
                    for key, values in one_run(stores, target, args.repeat).items():
                        p50s.setdefault(key, []).append(percentile(values, 0.50))
                        p95s.setdefault(key, []).append(percentile(values, 0.95))
                for method in METHODS:
                    row = {"scope": scope, "method": method}
                    for backend in stores:
                        row[f"{backend}_p50_ms"] = statistics.median(p50s[(backend, method)])
                        row[f"{backend}_p95_ms"] = statistics.median(p95s[(backend, method)])
                    row["p95_ratio"] = row["duckdb_p95_ms"] / max(row["sqlite_p95_ms"], 1e-9)
                    report["results"].append(row)
        finally:
            for store in stores.values():
                store.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    report = measure(parser.parse_args())
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{report['events']} events, {report['items']} items, {report['queries']} queries x "
        f"{report['repeat']}, median of {report['runs']} runs; load s: "
        + ", ".join(f"{k} {v:.1f}" for k, v in report["load_seconds"].items())
    )
    print(
        f"{'scope':13} {'method':14} {'sqlite p50':>10} {'p95':>8} "
        f"{'duckdb p50':>10} {'p95':>8} {'p95 ratio':>9}"
    )
    for row in report["results"]:
        print(
            f"{row['scope']:13} {row['method']:14} {row['sqlite_p50_ms']:10.2f} "
            f"{row['sqlite_p95_ms']:8.2f} {row['duckdb_p50_ms']:10.2f} "
            f"{row['duckdb_p95_ms']:8.2f} {row['p95_ratio']:9.2f}"
        )


if __name__ == "__main__":
    main()
