"""`lcm import` speed: a JSONL export into a fresh store, then the same export again.

Usage: python benchmarks/import_speed.py [--events N] [--runs R] [--targets sqlite,duckdb] [--json]

Captures N synthetic DSH events (the capture benchmark's stream) into SQLite, exports
them as JSONL, and times `import_export` into a fresh database of each target (every
row added) and a second time into the same database (every row skipped, one key lookup
each). The floor, measured in the same run, is the export of the same rows: it reads
every row once and writes it once. Reported: medians over R runs of rows/s and the
ratio to the floor.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from capture_throughput import synthetic_events

from lcm_adapter.runtime import MemoryRuntime
from lcm_core.reports.export import export_store
from lcm_core.reports.importer import import_export
from lcm_core.store.registry import open_store


def _source(folder: Path, events: int) -> Path:
    db = folder / "source.sqlite"
    runtime = MemoryRuntime.open(str(db))
    stream = synthetic_events(events)
    for start in range(0, len(stream), 5000):
        runtime.on_events("bench", stream[start : start + 5000])
    runtime.close()
    return db


def _run(folder: Path, source: Path, target: str, run: int) -> dict[str, float]:
    store = open_store(str(source))
    started = time.perf_counter()
    exported = export_store(store, "jsonl", folder / f"export-{target}-{run}")
    floor = time.perf_counter() - started
    store.close()
    url = f"{target}:///{folder / f'target-{run}.{target}'}"
    store = open_store(url)
    try:
        started = time.perf_counter()
        first = import_export(store, exported.out)
        fresh = time.perf_counter() - started
        started = time.perf_counter()
        again = import_export(store, exported.out)
        repeat = time.perf_counter() - started
    finally:
        store.close()
    assert again.rows_added == 0 and first.rows_added + first.rows_skipped == exported.rows
    rows = exported.rows
    return {"rows": rows, "floor": rows / floor, "fresh": rows / fresh, "again": rows / repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--targets", default="sqlite,duckdb")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report: dict[str, Any] = {"events": args.events, "runs": args.runs, "targets": {}}
    with tempfile.TemporaryDirectory(prefix="lcm-import-bench-") as tmp:
        folder = Path(tmp)
        source = _source(folder, args.events)
        for target in args.targets.split(","):
            runs = [_run(folder, source, target, run) for run in range(args.runs)]
            median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            median["fresh_ratio"] = median["fresh"] / median["floor"]
            median["again_ratio"] = median["again"] / median["floor"]
            report["targets"][target] = {k: round(v, 3) for k, v in median.items()}
    if args.json:
        print(json.dumps(report, sort_keys=True))
        return
    for target, m in report["targets"].items():
        print(
            f"{target}: {m['rows']:.0f} rows; export floor {m['floor']:.0f} rows/s; "
            f"fresh import {m['fresh']:.0f} rows/s ({m['fresh_ratio']:.2f}x); "
            f"again {m['again']:.0f} rows/s ({m['again_ratio']:.2f}x)"
        )


if __name__ == "__main__":
    main()
