"""Backfill speed of `lcm ingest` on a generated 100k-event multi-frame zstd session log.

The log looks like what DSH 0.2 writes with compression on: a header frame, then one
zstd frame per append batch (1 to 12 events), turns of markers, mixed Chinese/English
user messages, assistant replies, tool calls and results, and packed `text-chunks`
rows that stand for many streamed deltas each. Three numbers, each the median of
`--runs` runs:

- floor: read, decompress and JSON-parse every line, storing nothing;
- ingest: `lcm ingest` into a fresh SQLite file (capture, extraction, validation);
- again: the same log a second time (every event already stored, nothing added).

Needs the `dsh` extra (zstandard).

    python benchmarks/ingest_speed.py
    python benchmarks/ingest_speed.py --events 20000 --runs 1
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import zstandard

from lcm_adapter.dsh.ingest import ingest_paths
from lcm_adapter.dsh.logread import Damage, read_lines
from lcm_adapter.dsh.sample import T0, assistant, header, marker, user
from lcm_adapter.runtime import MemoryRuntime

SESSION = "session-ingest-bench"
TOPICS = ["数据库迁移", "staging deploy", "季度预算", "hotel booking", "API 限流", "备份策略"]


def turn_events(rng: random.Random, turn: int, seq: int) -> Iterator[dict[str, Any]]:
    """One turn of a DSH session, seqs from `seq` on; packed rows cover several seqs."""
    topic = rng.choice(TOPICS)
    yield marker(seq, "turn/start", turn)
    yield marker(seq + 1, "step/start", turn)
    text = rng.choice(
        [
            f"约束：{topic}不要使用 Redis，预算上限每月 {rng.randint(100, 900)} 美元（不含税）。",
            f"Decision {turn}: {topic} goes out on Friday at {rng.randint(9, 21)}:00 UTC.",
            f"第 {turn} 轮：关于{topic}，我们明天再讨论细节。",
        ]
    )
    yield user(seq + 2, text)
    deltas = [f"片段{i} " for i in range(rng.randint(8, 30))]
    yield {
        "type": "text-chunks",
        "seq0": seq + 3,
        "time0": T0 + seq,
        "data": {
            "turn": turn,
            "step": 1,
            "index": 0,
            "dt": [1] * (len(deltas) - 1),
            "texts": deltas,
        },
    }
    seq += 3 + len(deltas)
    if turn % 3 == 0:
        call = {
            "turn": turn,
            "step": 1,
            "callId": f"c{turn}",
            "name": "bash",
            "arguments": {"command": "ls"},
        }
        yield {"type": "tool/call", "seq": seq, "time": T0 + seq, "data": call}
        result = {
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": f"c{turn}",
                    "content": "a.txt\nb.txt",
                    "isError": False,
                }
            ],
            "source": {"kind": "tool"},
        }
        yield {"type": "tool/result", "seq": seq + 1, "time": T0 + seq, "data": result}
        seq += 2
    yield assistant(seq, "".join(deltas), turn)
    yield marker(seq + 1, "step/end", turn)
    yield marker(seq + 2, "turn/end", turn)


def write_log(path: Path, target: int, seed: int) -> int:
    """Write the log; returns how many events it stands for (packed deltas counted)."""
    rng = random.Random(seed)
    compressor = zstandard.ZstdCompressor(level=3)
    events = seq = turn = 0
    with path.open("wb") as out:
        out.write(compressor.compress(json.dumps(header(SESSION)).encode() + b"\n"))
        batch: list[bytes] = []
        while events < target:
            turn += 1
            for row in turn_events(rng, turn, seq):
                covered = len(row["data"]["texts"]) if row["type"] == "text-chunks" else 1
                events += covered
                seq += covered
                batch.append(json.dumps(row, ensure_ascii=False).encode() + b"\n")
                if len(batch) >= rng.randint(1, 12):  # one frame per append batch
                    out.write(compressor.compress(b"".join(batch)))
                    batch = []
        if batch:
            out.write(compressor.compress(b"".join(batch)))
    return events


def floor(path: Path) -> float:
    """Seconds to read, decompress and parse every line."""
    started = time.perf_counter()
    damage: list[Damage] = []
    for line in read_lines(path, damage):
        json.loads(line.data)
    assert not damage
    return time.perf_counter() - started


def ingest(path: Path, db: Path) -> tuple[float, int, int]:
    runtime = MemoryRuntime.open(str(db))
    try:
        report = ingest_paths(runtime, [path])
    finally:
        runtime.close()
    assert not report.issues, report.issues[:3]
    return report.seconds, report.events, report.inserted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lcm-ingest-bench-") as tmp:
        log = Path(tmp) / "session.v4.jsonl.zstd"
        expected = write_log(log, args.events, args.seed)
        print(f"log: {expected} events, {log.stat().st_size / 1e6:.1f} MB compressed")
        rates: dict[str, list[float]] = {"floor": [], "ingest": [], "again": []}
        for run in range(args.runs):
            rates["floor"].append(expected / floor(log))
            db = Path(tmp) / f"run{run}.sqlite"
            seconds, events, inserted = ingest(log, db)
            assert events == inserted == expected, (events, inserted, expected)
            rates["ingest"].append(events / seconds)
            seconds, events, inserted = ingest(log, db)
            assert inserted == 0
            rates["again"].append(events / seconds)
    print(f"{'events/s (median of ' + str(args.runs) + ')':<28}{'median':>12}{'runs':>40}")
    for name, label in (
        ("floor", "floor: read+parse"),
        ("ingest", "lcm ingest (fresh db)"),
        ("again", "lcm ingest (2nd run)"),
    ):
        values = rates[name]
        runs = " ".join(f"{v:,.0f}" for v in values)
        print(f"{label:<28}{statistics.median(values):>12,.0f}{runs:>40}")
    ratio = statistics.median(rates["ingest"]) / statistics.median(rates["floor"])
    print(f"ingest / floor: {ratio:.1%}")


if __name__ == "__main__":
    main()
