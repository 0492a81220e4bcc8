"""Analytics at scale: the stats SQL on DuckDB against SQLite, and SQLite-to-Parquet export speed.

Usage: python benchmarks/analytics_bench.py [--events N] [--runs R] [--sessions S]
       [--data DIR] [--load-options] [--json]

One SQLite store of N events (default 1M) over S sessions, with memory items in
supersession chains, assembly logs with omissions and validation logs, is generated with
sqlite3 directly (FTS triggers and indexes are dropped during the load and put back; the
FTS index stays empty, which neither stats nor export reads). `lcm export --format duckdb`
then makes the DuckDB copy of the same data. Measured, medians of R runs:

1. stats: every query of `lcm_core.reports.analytics` on SQLite and on DuckDB, same data,
   same process; per query and in total (target: DuckDB 5x faster). DuckDB runs both the
   same text as SQLite and its own variants of the two JSON-unnesting queries (what
   `lcm stats` runs). The reports must be equal, or the run fails.
2. export: SQLite -> Parquet through `export_store` (what `lcm export --format parquet`
   runs) in rows/s, beside the floor of DuckDB writing the same rows from its own tables
   with COPY ... TO (target: 25% of the floor); each in a child process whose peak RSS
   is read with resource.getrusage (target: under 500 MB).

--load-options compares ways of loading 200k exported event rows into DuckDB
(executemany, unnest of column lists, a NumPy frame, Arrow batches); --data DIR keeps
the generated files for the next run.
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
from analytics_data import generate  # a sibling module: benchmarks/ is sys.path[0]

from lcm_core.reports.analytics import QUERIES, Query, render, run_all, shape, totals_query
from lcm_core.reports.export import export_store
from lcm_core.store.models import TABLES
from lcm_core.store.registry import open_store

TARGET_SPEEDUP = 5.0
TARGET_FLOOR_SHARE = 0.25
TARGET_RSS_MB = 500
LOAD_SAMPLE = 200_000


# --- stats -------------------------------------------------------------------------------
def _timed(run: Callable[[str, list[Any]], list[Any]], query: Query, dialect: str) -> float:
    sql, params = render(query, {t: t for t in TABLES}, None, dialect)
    start = time.perf_counter()
    run(sql, params)
    return time.perf_counter() - start


def bench_stats(sqlite_path: Path, duckdb_path: Path, runs: int) -> dict[str, Any]:
    """Each query on SQLite, on DuckDB with the same text, and with DuckDB's JSON variants."""
    lite = sqlite3.connect(sqlite_path)
    duck = duckdb.connect(str(duckdb_path), read_only=True)
    duck.execute("SET enable_progress_bar = false")
    engines: dict[str, tuple[Callable[[str, list[Any]], list[Any]], str]] = {
        "sqlite": (lambda sql, p: lite.execute(sql, p).fetchall(), "sql"),
        "duckdb_same_sql": (lambda sql, p: duck.execute(sql, p).fetchall(), "sql"),
        "duckdb": (lambda sql, p: duck.execute(sql, p).fetchall(), "duckdb"),
    }
    times: dict[str, dict[str, list[float]]] = {e: {} for e in engines}
    for _ in range(runs):
        for engine, (run, dialect) in engines.items():
            for query in (totals_query(), *QUERIES):
                times[engine].setdefault(query.name, []).append(_timed(run, query, dialect))
    tables = {t: t for t in TABLES}
    reports = [shape(run_all(run, tables, None, d), None) for run, d in engines.values()]
    if any(report != reports[0] for report in reports):
        raise SystemExit("the engines gave different reports: the comparison is void")
    lite.close()
    duck.close()
    ms = {
        e: {q: statistics.median(v) * 1000 for q, v in found.items()} for e, found in times.items()
    }
    per_query = {
        name: {
            "sqlite_ms": round(ms["sqlite"][name], 1),
            "duckdb_same_sql_ms": round(ms["duckdb_same_sql"][name], 1),
            "duckdb_ms": round(ms["duckdb"][name], 1),
            "speedup": round(ms["sqlite"][name] / ms["duckdb"][name], 1),
        }
        for name in ms["sqlite"]
    }
    totals = {
        e: statistics.median(sum(v[i] for v in found.values()) for i in range(runs)) * 1000
        for e, found in times.items()
    }
    return {
        "queries": per_query,
        "sqlite_ms": round(totals["sqlite"], 1),
        "duckdb_same_sql_ms": round(totals["duckdb_same_sql"], 1),
        "duckdb_ms": round(totals["duckdb"], 1),
        "speedup_same_sql": round(totals["sqlite"] / totals["duckdb_same_sql"], 1),
        "speedup": round(totals["sqlite"] / totals["duckdb"], 1),
        "target": TARGET_SPEEDUP,
    }


# --- export ------------------------------------------------------------------------------
def child(mode: str, source: str, out: str) -> None:
    """Run one export in this (child) process and print seconds, rows and peak RSS."""
    start = time.perf_counter()
    if mode == "export":
        store = open_store(source)
        rows = export_store(store, "parquet", Path(out)).rows
    else:  # the floor: DuckDB's own COPY ... TO from its tables
        store = open_store(f"duckdb://{source}")
        Path(out).mkdir(mode=0o700)
        rows = sum(store.write_parquet(Path(out)).values())  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rows": rows, "rss_mb": round(peak, 1)}))


def _spawn(mode: str, source: Path, out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(source), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_export(sqlite_path: Path, duckdb_path: Path, work: Path, runs: int) -> dict[str, Any]:
    found: dict[str, list[dict[str, Any]]] = {"export": [], "floor": []}
    for index in range(runs):
        for mode, source in (("export", sqlite_path), ("floor", duckdb_path)):
            found[mode].append(_spawn(mode, source, work / f"{mode}-{index}"))
    result: dict[str, Any] = {}
    for mode, rows in found.items():
        result[mode] = {
            "rows": rows[0]["rows"],
            "seconds": round(statistics.median(r["seconds"] for r in rows), 2),
            "rows_per_s": round(statistics.median(r["rows"] / r["seconds"] for r in rows)),
            "peak_rss_mb": max(r["rss_mb"] for r in rows),
        }
    result["share_of_floor"] = round(
        result["export"]["rows_per_s"] / result["floor"]["rows_per_s"], 3
    )
    result["target_share"] = TARGET_FLOOR_SHARE
    result["target_rss_mb"] = TARGET_RSS_MB
    return result


# --- load options ------------------------------------------------------------------------
def bench_load(sqlite_path: Path) -> dict[str, float]:
    """Rows/s of ways to load exported event rows into the keyed DuckDB events table."""
    from lcm_store_duckdb import bulk
    from lcm_store_duckdb.schema import V1

    store = open_store(str(sqlite_path))
    sample = [r for _, r in zip(range(LOAD_SAMPLE), store.export_rows("events"), strict=False)]
    store.close()

    def fresh() -> duckdb.DuckDBPyConnection:
        con = duckdb.connect()
        for statement in V1:
            con.execute(statement)
        return con

    columns = bulk.table_columns(fresh(), "events")
    names = [c.name for c in columns]
    cast = ", ".join(f'CAST(f."{c.name}" AS {c.type})' for c in columns)
    unnest = ", ".join(f"unnest(${i}::{c.type}[])" for i, c in enumerate(columns, start=1))

    def executemany(con: duckdb.DuckDBPyConnection, part: list[dict[str, Any]]) -> None:
        con.executemany(
            f"INSERT INTO events VALUES ({', '.join('?' for _ in names)})",
            [tuple(r[n] for n in names) for r in part],
        )

    def lists(con: duckdb.DuckDBPyConnection, part: list[dict[str, Any]]) -> None:
        con.execute(f"INSERT INTO events SELECT {unnest}", [[r[n] for r in part] for n in names])

    def numpy_frame(con: duckdb.DuckDBPyConnection, part: list[dict[str, Any]]) -> None:
        import numpy

        f = {n: numpy.array([r[n] for r in part], dtype=object) for n in names}  # noqa: F841
        con.execute(f"INSERT INTO events SELECT {cast} FROM f")

    def arrow(con: duckdb.DuckDBPyConnection, part: list[dict[str, Any]]) -> None:
        batch = bulk.to_batch("events", bulk.arrow_schema(columns), part)  # noqa: F841
        con.execute("INSERT INTO events SELECT * FROM batch")

    out = {}
    for name, load in (
        ("executemany", executemany),
        ("unnest_lists", lists),
        ("numpy_frame", numpy_frame),
        ("arrow_batches", arrow),
    ):
        rows = sample[:10_000] if name == "executemany" else sample
        con = fresh()
        start = time.perf_counter()
        for part in bulk.chunks(rows):
            load(con, part)
        out[name] = round(len(rows) / (time.perf_counter() - start))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, help="keep (and reuse) the generated files here")
    parser.add_argument(
        "--load-options", action="store_true", help="also compare bulk-load methods"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="lcm-analytics-") as tmp:
        data = args.data or Path(tmp)
        data.mkdir(parents=True, exist_ok=True)
        sqlite_path = data / f"bench-{args.events}-{args.sessions}.sqlite"
        duckdb_path = data / f"bench-{args.events}-{args.sessions}.duckdb"
        if not sqlite_path.exists():
            generate(sqlite_path, args.events, args.sessions)
        if not duckdb_path.exists():
            start = time.perf_counter()
            export_store(open_store(str(sqlite_path)), "duckdb", duckdb_path)
            print(f"sqlite -> duckdb export: {time.perf_counter() - start:.1f}s", file=sys.stderr)
        work = Path(tempfile.mkdtemp(prefix="exports-", dir=tmp))
        result: dict[str, Any] = {
            "events": args.events,
            "sessions": args.sessions,
            "runs": args.runs,
        }
        result["stats"] = bench_stats(sqlite_path, duckdb_path, args.runs)
        result["export"] = bench_export(sqlite_path, duckdb_path, work, args.runs)
        if args.load_options:
            result["load_rows_per_s"] = bench_load(sqlite_path)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    stats, export = result["stats"], result["export"]
    print(f"{args.events} events, {args.sessions} sessions, median of {args.runs} runs")
    print(f"  {'query':24s} {'sqlite':>10s} {'duckdb same sql':>16s} {'duckdb':>10s}")
    for name, q in stats["queries"].items():
        print(
            f"  {name:24s} {q['sqlite_ms']:7.1f} ms {q['duckdb_same_sql_ms']:13.1f} ms "
            f"{q['duckdb_ms']:7.1f} ms  x{q['speedup']}"
        )
    print(
        f"stats total: sqlite {stats['sqlite_ms']} ms, duckdb {stats['duckdb_ms']} ms: "
        f"x{stats['speedup']} (same SQL text: {stats['duckdb_same_sql_ms']} ms, "
        f"x{stats['speedup_same_sql']}; target x{TARGET_SPEEDUP})"
    )
    print(
        f"export sqlite->parquet: {export['export']['rows_per_s']} rows/s "
        f"({export['export']['seconds']} s, peak RSS {export['export']['peak_rss_mb']} MB); "
        f"floor duckdb COPY: {export['floor']['rows_per_s']} rows/s "
        f"(peak RSS {export['floor']['peak_rss_mb']} MB); share {export['share_of_floor']} "
        f"(target {TARGET_FLOOR_SHARE}, RSS < {TARGET_RSS_MB} MB)"
    )
    for name, rate in result.get("load_rows_per_s", {}).items():
        print(f"  load {name:14s} {rate} rows/s")


if __name__ == "__main__":
    main()
