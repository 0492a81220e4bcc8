"""Pre-step latency on SQLite at 1k .. 1M stored events, beside the single-FTS5-query floor.

For each size the script builds (or reuses) a database of synthetic sessions written
straight into the schema with `executemany`, then times, over a realistic query mix:

- pre-step: the core's `pre_step` for one session (retrieval, evidence, packing, dedup, log row, reminder);
- floor: one `memory_fts MATCH` with the same terms (the terms the trigram index serves),
  `ORDER BY rank LIMIT 100`, on a raw connection to the same file.

Each run measures every query once; the table shows the median over runs of each
run's p50 and p95, and the ratio of the two p95s. Target: pre-step p95 within 3x the
floor p95 + 5 ms, and under 50 ms at 1M events.

    python benchmarks/prestep_latency.py                   # 1k, 10k, 100k, 1M
    python benchmarks/prestep_latency.py --sizes 1000,10000 --runs 3
    python benchmarks/prestep_latency.py --sizes 1000 --per-query 7   # CPU time per query
    python benchmarks/prestep_latency.py --sizes 1000 --instructions 2,9,21   # valgrind

`--instructions` counts the machine instructions of one step of the named queries (their
indexes in the mix, or `all`) and of one floor query, under valgrind's callgrind: the
count of a run that repeats them minus that of a run that only warms up, with Python's
hash seed fixed. The same build, file and queries give the same count whatever else the
machine is doing, so two builds compare exactly where times on a busy machine do not.
`--config FILE` merges settings over the defaults for the pre-steps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lcm_core.assembly.assemble import AssemblyResult
from lcm_core.assembly.step import StepMessage
from lcm_core.config import Config, load_config
from lcm_core.extraction.rulebook import write_index
from lcm_core.steps import prestep
from lcm_core.text.query import query_signals, search_terms
from lcm_core.text.tokens import fingerprint, sha256_hex, stable_item_id
from lcm_store_sqlite import SQLiteMemoryStore

EVENTS_PER_SESSION = 1000
ITEM_EVERY = 4  # one memory item per four events, from user messages
STAMP = "2026-11-30T00:00:00.000+00:00"
DATA_VERSION = "prestep-v2"  # v2: the rules index extraction writes

_WORDS_TEXT = (
    "deploy staging production database migration schema index cache redis postgres docker "
    "budget hotel flight train ticket invoice customer report deadline friday monday meeting "
    "review release branch commit merge conflict failure latency memory garden tomato tram "
    "lisbon porto school teacher doctor dentist birthday party cake recipe pasta bakery "
    "concert guitar piano lesson soccer practice weekend holiday beach mountain hiking "
    "camera printer laptop keyboard monitor router password backup server cluster queue "
    "contract lawyer landlord apartment kitchen bathroom painter plumber insurance bank "
    "salary pension mortgage grocery vegetable market coffee breakfast dinner lunch "
    "grandma uncle cousin neighbour daughter son wife husband puppy kitten vet"
)
WORDS = _WORDS_TEXT.split()
_FILLER_TEXT = (
    "the a and to of we it is was that for on with this just really so then also "
    "about some they there yes okay maybe think know said going"
)
FILLER = _FILLER_TEXT.split()
_CHINESE_TEXT = (
    "预算 搬家 学校 老师 医生 生日 蛋糕 周末 旅行 酒店 机票 火车 会议 报告 "
    "部署 数据库 迁移 服务器 备份 密码 合同 房东 厨房 保险 工资 超市 咖啡 晚饭 "
    "奶奶 表哥 女儿 儿子 小狗 花园 西湖 杭州 上海 北京"
)
CHINESE = _CHINESE_TEXT.split()
NAMES = ("Anna", "Dana", "Marco", "Li Wei", "Sofia", "Tom", "Yuki", "Omar", "Chen", "Nina")

QUERY_TEMPLATES = (
    "can you remind me what we said about the {a} and the {b}?",
    "what was the {a} for {name} again",
    "is the {a} still {n}? check the {b}",
    "please draft a note about the {a}, {b} and {c}",
    "{zh_a}的{zh_b}是怎么定的？",
    "关于{zh_a}，还有{a}的事情，我们之前说过什么",
    'what did {name} say about "{a} {b}"',
    "ok next step: update {a} in src/{a}/{b}.py before {c}",
)


@dataclass(frozen=True)
class Row:
    pre_p50: float
    pre_p95: float
    floor_p50: float
    floor_p95: float


def _zipf_choice(rng: random.Random, words: tuple[str, ...] | list[str]) -> str:
    # Rank-biased choice: a few words are everywhere, most are rare, as in real text.
    index = min(int(rng.paretovariate(1.2)) - 1, len(words) - 1)
    return words[index]


def _message(rng: random.Random, seq: int) -> str:
    if rng.random() < 0.25:
        parts = [_zipf_choice(rng, CHINESE) for _ in range(rng.randint(3, 8))]
        text = "，".join(parts) + "。"
        if rng.random() < 0.3:
            text += f"大概{rng.randint(2, 9999)}元"
        return text
    words = [
        _zipf_choice(rng, WORDS) if rng.random() < 0.45 else rng.choice(FILLER)
        for _ in range(rng.randint(8, 20))
    ]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(NAMES))
    if rng.random() < 0.25:
        words.append(str(rng.choice((3000, 2025, rng.randint(10, 99999)))))
    return " ".join(words).capitalize() + "."


def _session_rows(
    session: str, rng: random.Random
) -> Iterator[tuple[tuple[object, ...], tuple[object, ...] | None]]:
    for seq in range(EVENTS_PER_SESSION):
        kind = ("user/message", "assistant/message", "user/message", "tool/result")[seq % 4]
        role = {"user/message": "user", "assistant/message": "assistant"}.get(kind, "tool")
        text = _message(rng, seq)
        event = (
            session, seq, kind, None, seq // 4, 1, role, text,
            "user" if role == "user" else None, None, None, None, "host",
            sha256_hex(text), 0, STAMP,
        )  # fmt: skip
        item = None
        if kind == "user/message" and seq % ITEM_EVERY == 0:
            item_id = stable_item_id(session, "fact", text)
            item = (
                item_id, session, "fact", text, "[]", "{}", "[]", json.dumps([f"seq:{seq}"]),
                "user_explicit", "active", "[]", None, fingerprint(text), "bench", seq, STAMP, STAMP,
            )  # fmt: skip
        yield event, item


def build(path: Path, n_events: int, seed: int = 11) -> list[str]:
    """Create the database at `path` (schema from the store, rows by executemany)."""
    sessions = [f"bench-{i:05d}" for i in range(max(1, n_events // EVENTS_PER_SESSION))]
    marker = f"{DATA_VERSION}:{n_events}:{seed}"
    if path.exists():
        raw = sqlite3.connect(path)
        try:
            found = raw.execute("SELECT value FROM meta WHERE key = 'bench.data'").fetchone()
        except sqlite3.Error:
            found = None
        raw.close()
        if found and found[0] == marker:
            return sessions
        path.unlink()
        for suffix in ("-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    SQLiteMemoryStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA journal_mode = OFF")
    raw.execute("PRAGMA synchronous = OFF")
    rng = random.Random(seed)
    started = time.perf_counter()
    for number, session in enumerate(sessions):
        events, items = [], []
        for event, item in _session_rows(session, rng):
            events.append(event)
            if item is not None:
                items.append(item)
        raw.executemany(f"INSERT INTO events VALUES ({','.join('?' * 16)})", events)
        raw.executemany(
            "INSERT OR IGNORE INTO memory_items (id, session_id, kind, content, conditions_json,"
            " scope_json, numbers_json, source_refs_json, evidence_type, status, supersedes_json,"
            " superseded_by, content_hash, extractor, derived_from_seq, created_at, updated_at)"
            f" VALUES ({','.join('?' * 17)})",
            items,
        )
        if number % 50 == 49:
            raw.commit()
            done = (number + 1) * EVENTS_PER_SESSION
            print(
                f"  built {done:,} events in {time.perf_counter() - started:.0f} s", file=sys.stderr
            )
    raw.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('bench.data', ?)", (marker,))
    raw.commit()
    raw.execute("ANALYZE")
    raw.close()
    # Every extraction run leaves its session's index of rules in force (`rules:<id>`);
    # without one a pre-step lists all of a session's items to find its rules.
    store = SQLiteMemoryStore(path)
    try:
        with store.transaction():
            for session in sessions:
                write_index(store, session)
    finally:
        store.close()
    return sessions


def queries(session: str, seed: int = 5, count: int = 48) -> list[str]:
    """A query mix for one session: its own topics, names, numbers, Chinese and paths."""
    rng = random.Random(f"{seed}:{session}")
    out = []
    for index in range(count):
        template = QUERY_TEMPLATES[index % len(QUERY_TEMPLATES)]
        out.append(
            template.format(
                a=rng.choice(WORDS[:60]),
                b=rng.choice(WORDS),
                c=rng.choice(WORDS),
                name=rng.choice(NAMES),
                n=rng.choice((3000, 2025, rng.randint(10, 9999))),
                zh_a=rng.choice(CHINESE),
                zh_b=rng.choice(CHINESE),
            )
        )
    return out


# The floor: one FTS5 query over the items' index with the query's terms.
FLOOR_SQL = (
    "SELECT rowid, bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ? "
    "ORDER BY rank LIMIT 100"
)


def pre_step(store: SQLiteMemoryStore, session: str, query: str, config: Config) -> AssemblyResult:
    """One pre-step whose only message is the user's `query`, run as a host runs it (the core's `pre_step`)."""
    request = prestep.StepRequest(session, [StepMessage("user", query, "user")])
    return prestep.pre_step(store, request, config).result


def floor_sql_terms(query: str) -> str | None:
    """The FTS5 expression of the terms the trigram index can serve (3+ characters)."""
    terms = [t for t in search_terms(query_signals(query)) if len(t) >= 3]
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def measure(path: Path, session: str, runs: int, config: Config) -> Row:
    store = SQLiteMemoryStore(path)
    raw = sqlite3.connect(path)
    mix = queries(session)
    fts = [floor_sql_terms(q) for q in mix]
    pre: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    try:
        for query, expr in zip(mix, fts, strict=True):  # warm the page cache once
            pre_step(store, session, query, config)
            if expr:
                raw.execute(FLOOR_SQL, (expr,)).fetchall()
        for _ in range(runs):
            pre_times, floor_times = [], []
            for query, expr in zip(mix, fts, strict=True):
                start = time.perf_counter()
                result = pre_step(store, session, query, config)
                pre_times.append((time.perf_counter() - start) * 1000)
                if result.errors:
                    raise SystemExit(f"assembly failed: {result.errors}")
                start = time.perf_counter()
                if expr:
                    raw.execute(FLOOR_SQL, (expr,)).fetchall()
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


def per_query(path: Path, session: str, repeats: int, config: Config) -> list[tuple[float, str]]:
    """CPU ms of each query, the best of `repeats` (after one warm pass), slowest first.

    CPU time and the best of several runs keep the other processes of a busy machine out:
    this says which questions set the p95 and how a change moves each, not the p95 itself.
    """
    store = SQLiteMemoryStore(path)
    mix = queries(session)
    best = [float("inf")] * len(mix)
    try:
        for query in mix:
            pre_step(store, session, query, config)
        for _ in range(repeats):
            for index, query in enumerate(mix):
                start = time.process_time()
                pre_step(store, session, query, config)
                best[index] = min(best[index], time.process_time() - start)
    finally:
        store.close()
    return sorted(((ms * 1000, query) for ms, query in zip(best, mix, strict=True)), reverse=True)


def replay(
    path: Path, session: str, picked: list[int], repeat: int, config: Config, *, floor: bool
) -> None:
    """Warm up on the whole mix, then run the picked pre-steps and floor queries `repeat`
    times, untimed: the workload `--instructions` counts under callgrind."""
    store = SQLiteMemoryStore(path)
    raw = sqlite3.connect(path)
    mix = queries(session)
    try:
        for query in mix:
            pre_step(store, session, query, config)
        for _ in range(repeat):
            for index in picked:
                if floor:
                    expr = floor_sql_terms(mix[index])
                    if expr:
                        raw.execute(FLOOR_SQL, (expr,)).fetchall()
                else:
                    pre_step(store, session, mix[index], config)
    finally:
        raw.close()
        store.close()


def instructions(args: argparse.Namespace, size: int, picked: list[int]) -> dict[str, float]:
    """Instructions per pre-step and per floor query of the picked queries (callgrind)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind on PATH (Debian: apt install valgrind)")
    repeat = 2

    def counted(times: int, floor: bool) -> int:
        command = [
            valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
            __file__, "--sizes", str(size), "--dir", str(args.dir), "--replay",
            ",".join(map(str, picked)), "--repeat", str(times),
        ]  # fmt: skip
        if args.config is not None:
            command += ["--config", str(args.config)]
        if floor:
            command.append("--floor")
        # A fixed hash seed: set and dict-of-str orders follow it, and so does the work
        # done: two runs of one build then agree to within 1%, not 10%.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"callgrind run failed: {done.stderr.strip()[-300:]}")
        return int(found.group(1))

    steps = repeat * len(picked)
    return {
        "pre-step": (counted(repeat, False) - counted(0, False)) / steps,
        "floor": (counted(repeat, True) - counted(0, True)) / steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "lcm-bench")
    parser.add_argument(
        "--per-query",
        type=int,
        default=0,
        metavar="N",
        help="instead: each query's CPU time, the best of N runs (sum, median, slowest five)",
    )
    parser.add_argument(
        "--instructions",
        metavar="QUERIES",
        help="instead: instructions per step of these queries (indexes in the mix, or all) "
        "and per floor query, under valgrind's callgrind",
    )
    parser.add_argument("--config", type=Path, help="a JSON settings file for the pre-steps")
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    overrides = json.loads(args.config.read_text(encoding="utf-8")) if args.config else {}
    config = load_config(overrides)
    if args.replay is not None or args.instructions is not None:
        size = int(args.sizes.split(",")[0])
        path = args.dir / f"prestep-{size}.sqlite"
        sessions = build(path, size)
        wanted = args.replay if args.replay is not None else args.instructions
        count = len(queries(sessions[len(sessions) // 2]))
        picked = list(range(count)) if wanted == "all" else [int(i) for i in wanted.split(",")]
        if args.replay is not None:
            session = sessions[len(sessions) // 2]
            replay(path, session, picked, args.repeat, config, floor=args.floor)
            return 0
        counts = instructions(args, size, picked)
        print(
            f"{size:,} events, queries {wanted}: {counts['pre-step'] / 1e6:.2f} M instructions "
            f"per pre-step, {counts['floor'] / 1e6:.3f} M per floor query "
            f"({counts['pre-step'] / counts['floor']:.0f}x)"
        )
        return 0
    if args.per_query > 0:
        for size in (int(s) for s in args.sizes.split(",")):
            path = args.dir / f"prestep-{size}.sqlite"
            sessions = build(path, size)
            timed = per_query(path, sessions[len(sessions) // 2], args.per_query, config)
            ms = [t for t, _ in timed]
            print(
                f"{size:,} events: sum {sum(ms):.1f} ms, median {statistics.median(ms):.2f}, "
                f"third slowest (the p95 of 48) {ms[2]:.2f}"
            )
            for t, query in timed[:5]:
                print(f"  {t:6.2f}  {query}")
        return 0
    print("| stored events | pre-step p50 ms | pre-step p95 ms | floor p50 ms | floor p95 ms "
          "| p95 ratio | target p95 ms | meets |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|:--:|")
    ok = True
    for size in (int(s) for s in args.sizes.split(",")):
        path = args.dir / f"prestep-{size}.sqlite"
        sessions = build(path, size)
        row = measure(path, sessions[len(sessions) // 2], args.runs, config)
        target = 3 * row.floor_p95 + 5
        if size >= 1_000_000:
            target = min(target, 50.0)
        meets = row.pre_p95 <= target
        ok = ok and meets
        ratio = row.pre_p95 / row.floor_p95 if row.floor_p95 > 0 else float("inf")
        print(
            f"| {size:,} | {row.pre_p50:.2f} | {row.pre_p95:.2f} | {row.floor_p50:.2f} "
            f"| {row.floor_p95:.2f} | {ratio:.1f}x | {target:.1f} | {'yes' if meets else 'NO'} |",
            flush=True,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
