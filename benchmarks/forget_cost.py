"""What `lcm forget` costs on a SQLite file of N events, beside its parts.

Rows: the whole forget (`control.forget_item`: blank the rows, merge both FTS indexes,
checkpoint the WAL), the FTS 'optimize' merge alone after the same row updates (the floor
a forget cannot beat while it must drop the index's old tokens), and the row updates
alone. The first forget of the file merges every segment written since it was built; the
median is of `--runs` forgets, each of a different item, on one file. Run:

    .venv/bin/python benchmarks/forget_cost.py --events 100000 --runs 5
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from lcm_core.extraction import control
from lcm_core.store.models import Event, MemoryEvent
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore

TEXT = "第 {n} 条消息：staging 数据库端口是 {port}，deploy window Friday 18:{m:02d} UTC, batch {n}"


def build(path: Path, events: int, runs: int) -> list[str]:
    """A file of `events` message events, in batches of 5 000, and `2 * runs` items."""
    store = SQLiteMemoryStore(path)
    for start in range(0, events, 5000):
        store.insert_events(
            Event("s1", n, "user/message", TEXT.format(n=n, port=5000 + n % 997, m=n % 60))
            for n in range(start, min(events, start + 5000))
        )
    ids = []
    for k in range(2 * runs):
        seq = k * (events // (2 * runs))
        item, _ = store.insert_item(
            make_item("s1", f"端口 {seq} 的说法 item {k}", source_refs=(f"seq:{seq}",))
        )
        ids.append(item.id)
    store.close()
    return ids


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.sqlite"
        ids = build(path, args.events, args.runs)
        store = SQLiteMemoryStore(path)
        whole, rows_only = [], []
        for item_id in ids[: args.runs]:
            start = time.perf_counter()
            control.forget_item(store, item_id)
            whole.append(time.perf_counter() - start)
        merge = []
        for item_id in ids[args.runs :]:
            item = store.get_item(item_id)
            assert item is not None
            start = time.perf_counter()
            with store.transaction():
                store.forget_item(item_id, MemoryEvent(item_id, "s1", "forgotten"))
                store.forget_event("s1", int(item.source_refs[0][4:]))
            rows_only.append(time.perf_counter() - start)
            # The merge a forget needs, timed on its own after the same kind of update.
            raw = sqlite3.connect(path, isolation_level=None)
            start = time.perf_counter()
            raw.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
            raw.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
            merge.append(time.perf_counter() - start)
            raw.close()
        store.close()
        size = path.stat().st_size
    print(f"events {args.events}, file {size / 1e6:.1f} MB, {args.runs} runs (median ms)")
    print(f"  lcm forget (rows + FTS merge + checkpoint)  {median_ms(whole)}")
    print(f"  FTS optimize of both indexes alone          {median_ms(merge)}")
    print(f"  row updates alone (no merge, no checkpoint) {median_ms(rows_only)}")
    print(
        f"  ratio forget / optimize floor               {median_ms(whole) / median_ms(merge):.2f}"
    )


if __name__ == "__main__":
    main()
