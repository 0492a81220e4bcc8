"""Capture (+ extraction when present) throughput on SQLite, beside a raw executemany floor.

Usage: python benchmarks/capture_throughput.py [--events N] [--runs R] [--batch B] [--json]

Each run writes N synthetic DSH events (EN/ZH/mixed user and assistant messages, tool
calls and block-list results, step/turn markers, generated context) into a fresh SQLite
file through `capture_batch` in batches of B, then runs `run_extraction` if
`lcm_core.extraction.run` provides it. The floor, measured in the same process, inserts the
very same rows into the same schema (triggers included) with one `executemany` in one
transaction. Reported: median events/s of each over R runs and their ratio (target: the
capture path reaches at least 0.30 of the floor).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lcm_adapter.envelope.capture import capture_batch
from lcm_adapter.envelope.parse import parse_envelope
from lcm_core.config import Config, load_config
from lcm_core.store.rows import EVENT_COLUMNS, event_params
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "bench-session"
TARGET_RATIO = 0.30

EN_USER = [
    "Keep p95 latency under {n} ms when the cache is warm.",
    "Use port {n} for the staging API, not 3000.",
    "Actually, make the retry limit {k} instead.",
    "Please refactor src/module_{k}.py so the parser handles empty input.",
    "We decided to ship the migration on Friday; budget is {n} dollars.",
]
ZH_USER = [
    "预算不超过{n}元（含税），下周五之前交付。",
    "不对，应该是{k}个副本，不是3个。",
    "把缓存过期时间改成{n}秒。",
    "请检查 src/模块_{k}.py 里的解析逻辑，空输入时不要崩溃。",
    "我们决定用 PostgreSQL，连接池上限 {n}。",
]
ASSISTANT = [
    "I suggest splitting the parser into two passes; the first handles {k} tokens.",
    "好的，我会把超时设为 {n} ms，并补充单元测试。",
    "Done: updated config.yaml (port {n}) and reran the {k} failing tests.",
]
TOOL_OUTPUT = [
    "def handler(event):\n    return process(event, limit={n})\n",
    "PASS tests/test_api.py::test_{k} ({n} ms)\n错误: 0",
    "total {n}\n-rw-r--r-- 1 user user {k} Jan 1 main.py",
]


def synthetic_events(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic stream of `count` DSH events shaped like a real agent session."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    turn = 0

    def add(event_type: str, data: dict[str, Any]) -> None:
        seq = len(events)
        events.append(
            {"type": event_type, "seq": seq, "time": 1_796_000_000_000 + seq * 37, "data": data}
        )

    def fill(template: str) -> str:
        return template.format(n=rng.randint(10, 99_999), k=rng.randint(1, 400))

    while len(events) < count:
        turn += 1
        add("turn/start", {"turn": turn})
        pool = rng.choice((EN_USER, ZH_USER, EN_USER + ZH_USER))
        text = fill(rng.choice(pool))
        if rng.random() < 0.2:
            text += " " + fill(rng.choice(ZH_USER if pool is EN_USER else EN_USER))
        add(
            "user/message",
            {
                "id": f"u{turn}",
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"},
            },
        )
        if rng.random() < 0.15:
            add(
                "user/message",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": f"Current time: turn {turn}"}],
                    "source": {"kind": "time-context"},
                },
            )
        for step in range(rng.randint(1, 3)):
            add("step/start", {"turn": turn, "step": step})
            call_id = f"call-{turn}-{step}"
            arguments = json.dumps(
                {"path": f"src/module_{rng.randint(1, 400)}.py", "limit": rng.randint(1, 500)}
            )
            add(
                "tool/call",
                {
                    "turn": turn,
                    "step": step,
                    "callId": call_id,
                    "name": rng.choice(("read", "bash", "grep")),
                    "arguments": arguments,
                },
            )
            blocks = [
                {"type": "text", "text": fill(rng.choice(TOOL_OUTPUT))}
                for _ in range(rng.randint(1, 3))
            ]
            result = {
                "role": "user",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "content": blocks,
                        "isError": False,
                    }
                ],
                "source": {"kind": "tool", "callId": call_id},
            }
            add("tool/result", {"turn": turn, "step": step, "message": result})
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": fill(rng.choice(ASSISTANT))}],
                "source": {"kind": "model"},
            }
            add(
                "assistant/message",
                {
                    "turn": turn,
                    "step": step,
                    "message": message,
                    "usage": {"inputTokens": 100, "outputTokens": 20},
                },
            )
            add("step/end", {"turn": turn, "step": step})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return events[:count]


def find_extraction() -> Callable[[Any, str, Config], Any] | None:
    """`lcm_core.extraction.run.run_extraction` when another engineer has landed it, else None."""
    try:
        module = importlib.import_module("lcm_core.extraction.run")
    except ImportError:
        return None
    runner = getattr(module, "run_extraction", None)
    return runner if callable(runner) else None


def run_capture(
    path: Path,
    events: list[dict[str, Any]],
    config: Config,
    batch: int,
    extract: Callable[..., Any] | None,
) -> float:
    """Seconds to capture (and extract) all events into a fresh file."""
    store = SQLiteMemoryStore(path)
    try:
        started = time.perf_counter()
        for start in range(0, len(events), batch):
            report = capture_batch(store, SESSION, events[start : start + batch], config)
            if report.errors:
                raise SystemExit(f"capture reported errors: {report.errors[:3]}")
        if extract is not None:
            extract(store, SESSION, config)
        return time.perf_counter() - started
    finally:
        store.close()


def floor_rows(events: list[dict[str, Any]], config: Config) -> list[tuple[Any, ...]]:
    """The exact event rows capture writes, as insert parameters (built outside the timing)."""
    limit = config.archive.max_chars_per_event
    rows: list[tuple[Any, ...]] = []
    for raw in events:
        result = parse_envelope(
            SESSION, raw, ingested_at="2026-01-01T00:00:00.000+00:00", archive_limit=limit
        )
        rows.extend(event_params(row.event) for row in result.rows)
    return rows


def run_floor(path: Path, rows: list[tuple[Any, ...]]) -> float:
    """Seconds for one executemany of the same rows into the same schema and pragmas."""
    SQLiteMemoryStore(path).close()  # creates schema v2 with its FTS triggers
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        marks = ", ".join("?" * len(rows[0]))
        started = time.perf_counter()
        connection.execute("BEGIN")
        connection.executemany(
            f"INSERT OR IGNORE INTO events ({EVENT_COLUMNS}) VALUES ({marks})", rows
        )
        connection.execute("COMMIT")
        return time.perf_counter() - started
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10_000, help="events per capture_batch call")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.events < 1 or args.runs < 1 or args.batch < 1:
        parser.error("--events, --runs and --batch must be positive")

    config = load_config()
    events = synthetic_events(args.events)
    rows = floor_rows(events, config)
    extract = find_extraction()
    capture_times: list[float] = []
    floor_times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="lcm-bench-") as folder:
        for run in range(args.runs):
            # Alternate the order so neither side always runs on a warmer machine.
            order = (("capture", "floor"), ("floor", "capture"))[run % 2]
            for side in order:
                path = Path(folder) / f"{side}-{run}.sqlite"
                if side == "capture":
                    capture_times.append(run_capture(path, events, config, args.batch, extract))
                else:
                    floor_times.append(run_floor(path, rows))

    capture_rate = args.events / statistics.median(capture_times)
    floor_rate = args.events / statistics.median(floor_times)
    ratio = capture_rate / floor_rate
    result = {
        "events": args.events,
        "rows": len(rows),
        "runs": args.runs,
        "batch": args.batch,
        "measured": "capture+extraction"
        if extract
        else "capture only (lcm_core.extraction.run.run_extraction not found)",
        "capture_events_per_s": round(capture_rate),
        "floor_events_per_s": round(floor_rate),
        "ratio": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio >= TARGET_RATIO,
        "capture_seconds": [round(value, 3) for value in capture_times],
        "floor_seconds": [round(value, 3) for value in floor_times],
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"measured: {result['measured']}")
        print(
            f"{args.events} events ({len(rows)} rows), median of {args.runs} runs, batches of {args.batch}"
        )
        print(f"  capture : {capture_rate:>10,.0f} events/s  {capture_times}")
        print(
            f"  floor   : {floor_rate:>10,.0f} events/s  (one executemany, same schema and triggers)"
        )
        print(
            f"  ratio   : {ratio:.3f}  (target >= {TARGET_RATIO:.2f}: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
