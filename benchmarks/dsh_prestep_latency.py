"""Added pre-step latency of the memory plugin on the real DSH runtime.

Two DSH runtimes (profile sdk-minimal) talk to the same fake model on 127.0.0.1: one
with the memory plugin, one without. Both carry a small timing plugin that measures
the whole `agent/pre-step` chain of every step. Each session is first filled to about
1 000 events with a mixed Chinese/English conversation (constraints, numbers with
conditions, chatter), then both get the same 50 questions, alternating turn by turn so
machine noise lands on both. The table shows median and p95 per step with memory on,
off, and the difference; the target is under 15 ms added at p95.

Turn 1 is measured apart (`--starts` fresh runtime pairs, alternating): the first
turn of a new session right after the runtime starts, while the sidecar may still be
starting; target under 300 ms added at p95. The compaction part (`--compaction-turns`)
runs the same 50-turn session on both runtimes with DSH's compaction thresholds
lowered: four turns that set a budget, a latency limit and a corrected port, then
filler. It prints the request body size per turn with and without memory, the memory
text each request carries, and how often each runtime compacted.

Needs the `e2e` extra (deepseek-harness-sdk and deepseek-harness-runtime-bin).

    python benchmarks/dsh_prestep_latency.py
    python benchmarks/dsh_prestep_latency.py --events 1000 --turns 50 --starts 10
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))  # the fake model the e2e tests use

from fake_model import FakeModel  # noqa: E402

from lcm_adapter.dsh import plugin_path  # noqa: E402
from lcm_adapter.dsh.patch import PluginRow, render_block  # noqa: E402
from lcm_adapter.runtime import MemoryRuntime  # noqa: E402

# DSH's compaction thresholds lowered (fractions of the model's 1M window), as in e2e.
COMPACTION_ROWS = """\
- id: compaction-basic
  config:
    thresholdRatio: 0.003
    retainRatio: 0.0008
"""
SETUP = (
    "这个项目的预算不超过3000元（含税）。",
    "The p95 latency of /invoices must stay under 180 ms when the cache is warm.",
    "The staging database listens on port 6432.",
    "Correction: the staging database listens on port 5433, not 6432.",
)
FILLER = "继续闲聊，" + "一些无关的填充文字。" * 30
MEMORY_HEADER = "[长对话记忆 · long-conversation-memory"
FIRST_TEXT = "你好，我们今天开始一个新项目。"

TOPICS = ["数据库迁移", "staging 部署", "季度预算", "酒店预订", "API 限流", "备份策略", "发布窗口"]
CITIES = ["上海", "Lisbon", "北京", "Berlin", "深圳"]


def user_turn(rng: random.Random, i: int) -> str:
    """One user message: a constraint, a conditioned number, a decision or chatter."""
    topic = rng.choice(TOPICS)
    kind = i % 5
    if kind == 0:
        return f"约束：{topic}期间不要使用 Redis {i}，必须走 Postgres。"
    if kind == 1:
        amount = rng.randint(100, 900)
        return f"{topic}的预算上限是每月 {amount} 美元（不含税，{rng.choice(CITIES)}团队）。"
    if kind == 2:
        return f"Decision: the {topic} window is Friday {rng.randint(10, 22)}:00 UTC, run {i}."
    if kind == 3:
        return f"更正：{topic}的负责人改为 owner-{i % 17}。"
    return f"随便聊聊 {i}：今天{rng.choice(CITIES)}的天气不错，我们晚点再看{topic}。"


def question(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    return rng.choice(
        [
            f"{topic}的预算上限是多少？",
            f"What did we decide about the {topic} window?",
            f"{topic}有哪些约束？",
            f"谁负责{topic}？ (question {i})",
        ]
    )


@dataclass
class Runtime:
    """One DSH runtime with the timing plugin, and the memory plugin when `memory`."""

    root: Path
    memory: bool
    extra_rows: str = ""
    harness: Any = None
    session: Any = None

    @property
    def timings(self) -> Path:
        return self.root / "timings.jsonl"

    def start(self, model: FakeModel, cache: Path) -> Runtime:
        from deepseek_harness import DeepSeekHarness

        for name in ("home", "dsh", "work"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        timing = json.dumps({"out": str(self.timings)})
        rows = (
            "- insert:\n"
            "    - id: lcm-bench-timing\n"
            f"      name: {json.dumps(str(HERE / 'dsh_timing_plugin.mjs'))}\n"
            f"      config: {timing}\n"
        )
        if self.memory:
            rows += render_block(
                PluginRow(plugin_path(), sys.executable, str(self.root / "m.sqlite"))
            )
        (self.root / "patch.yml").write_text(rows + self.extra_rows, encoding="utf-8")
        self.harness = DeepSeekHarness(
            dsh_home=str(self.root / "dsh"),
            cwd=str(self.root / "work"),
            profile="sdk-minimal",
            patches=(str(self.root / "patch.yml"),),
            base_url=model.base_url,
            api_key="bench",
            env={
                "HOME": str(self.root / "home"),
                "DSH_HOME": str(self.root / "dsh"),
                "PKG_NATIVE_CACHE_PATH": str(cache),
                "DSH_TELEMETRY_DISABLED": "1",
            },
            initialize_timeout_seconds=120.0,
            request_timeout_seconds=120.0,
        )
        self.harness.start()
        self.session = self.harness.start_session()
        return self

    def run(self, text: str) -> tuple[int, float]:
        """One turn; returns its event count and wall time in seconds."""
        started = time.perf_counter()
        result = self.session.run(text)
        return len(result.events), time.perf_counter() - started

    def step_ms(self, first_turn: int) -> list[float]:
        rows = [json.loads(line) for line in self.timings.read_text().splitlines()]
        return [row["ns"] / 1e6 for row in rows if row["turn"] >= first_turn]

    def close(self) -> None:
        if self.harness is not None:
            self.harness.close()


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="session size before measuring")
    parser.add_argument("--turns", type=int, default=50, help="measured turns")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--starts", type=int, default=10, help="fresh runtime pairs for turn 1")
    parser.add_argument(
        "--compaction-turns", type=int, default=50, help="turns of the compaction session"
    )
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cache = Path(
        os.environ.get("PKG_NATIVE_CACHE_PATH") or Path(tempfile.gettempdir()) / "lcm-pkg-cache"
    )
    cache.mkdir(parents=True, exist_ok=True)
    model = FakeModel().start()
    with tempfile.TemporaryDirectory(prefix="lcm-dsh-bench-") as scratch:
        tmp = str(args.keep or scratch)
        off = Runtime(Path(tmp) / "off", memory=False).start(model, cache)
        on = Runtime(Path(tmp) / "on", memory=True).start(model, cache)
        try:
            events, turn = 0, 0
            while events < args.events:  # fill both sessions to the target size
                turn += 1
                text = user_turn(rng, turn)
                off.run(text)
                events += on.run(text)[0]
            first_measured = turn + 1
            walls: dict[str, list[float]] = {"off": [], "on": []}
            questions = [question(rng, i) for i in range(args.turns)]
            for text in questions:
                walls["off"].append(off.run(text)[1] * 1000)
                walls["on"].append(on.run(text)[1] * 1000)
            steps = {"off": off.step_ms(first_measured), "on": on.step_ms(first_measured)}
            sizes = request_sizes(model, {off.session.id: "off", on.session.id: "on"}, args.turns)
        finally:
            off.close()
            on.close()
            model.stop()
        runtime = MemoryRuntime.open(str(Path(tmp) / "on" / "m.sqlite"))
        try:
            stats = runtime.store.stats()
            logs = runtime.store.list_assembly_logs(on.session.id, limit=args.turns)
            injected = sum(1 for log in logs if log.injected)
            steps["in-process"] = in_process(runtime, on.session.id, questions, first_measured)
        finally:
            runtime.close()
    report(args, events, stats, injected, steps, walls)
    print(
        f"request body, median bytes over the measured turns: memory off {sizes['off']:,.0f}, "
        f"on {sizes['on']:,.0f} (each step's block stays in the history)"
    )
    first_turn(args.starts, cache)
    compaction_session(args.compaction_turns, cache)


def first_turn(starts: int, cache: Path) -> None:
    """Turn 1 of a new session right after the runtime starts, memory off and on."""
    model = FakeModel().start()
    walls: dict[str, list[float]] = {"off": [], "on": []}
    chains: dict[str, list[float]] = {"off": [], "on": []}
    try:
        with tempfile.TemporaryDirectory(prefix="lcm-dsh-turn1-") as tmp:
            for index in range(starts):
                for name in ("off", "on") if index % 2 == 0 else ("on", "off"):
                    runtime = Runtime(Path(tmp) / f"{name}{index}", memory=name == "on")
                    runtime.start(model, cache)
                    try:
                        walls[name].append(runtime.run(FIRST_TEXT)[1] * 1000)
                        chains[name].append(runtime.step_ms(1)[0])
                    finally:
                        runtime.close()
    finally:
        model.stop()
    print(f"\nturn 1 of a new session, {starts} fresh runtimes each (ms)")
    print(f"{'':<26}{'median':>10}{'p95':>10}")
    for label, values in (("pre-step chain", chains), ("whole turn", walls)):
        for name in ("off", "on"):
            v = values[name]
            print(f"{label + ', memory ' + name:<26}{statistics.median(v):>10.1f}{p95(v):>10.1f}")
        added = p95(values["on"]) - p95(values["off"])
        median = statistics.median(values["on"]) - statistics.median(values["off"])
        print(f"{label + ', added':<26}{median:>10.1f}{added:>10.1f}   (target p95 <= 300 ms)")


def compaction_session(turns: int, cache: Path) -> None:
    """The same session with lowered compaction thresholds, memory off and on."""
    model = FakeModel().start()
    compactions = {"off": 0, "on": 0}
    try:
        with tempfile.TemporaryDirectory(prefix="lcm-dsh-compact-") as tmp:
            runtimes = {
                name: Runtime(Path(tmp) / name, name == "on", COMPACTION_ROWS).start(model, cache)
                for name in ("off", "on")
            }
            try:
                rows = []
                for turn in range(1, turns + 1):
                    text = SETUP[turn - 1] if turn <= len(SETUP) else FILLER
                    row = [turn]
                    for name in ("off", "on"):
                        before = len(model.bodies)
                        events = runtimes[name].session.run(text).events
                        compactions[name] += sum(
                            1 for e in events if e.get("type") == "compaction/summary"
                        )
                        body = model.bodies[-1] if len(model.bodies) > before else {}
                        row.append(len(json.dumps(body, ensure_ascii=False).encode()))
                        if name == "on":
                            row.append(memory_chars(body))
                    rows.append(row)
            finally:
                for runtime in runtimes.values():
                    runtime.close()
    finally:
        model.stop()
    print(f"\ncompaction session, {turns} turns (4 that set values, then filler)")
    print(f"{'turn':>5}{'body off':>12}{'body on':>12}{'memory chars':>14}")
    for turn, off, on, chars in rows:
        if turn <= 6 or turn % 5 == 0:
            print(f"{turn:>5}{off:>12,}{on:>12,}{chars:>14,}")
    print(f"compactions: memory off {compactions['off']}, on {compactions['on']}")


def memory_chars(body: dict[str, Any]) -> int:
    """Characters of our memory blocks in one request body (all of them DSH re-sends)."""
    total = 0
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            text = block.get("text", "") if isinstance(block, dict) else ""
            if text.startswith(MEMORY_HEADER):
                total += len(text)
    return total


def request_sizes(model: FakeModel, names: dict[str, str], turns: int) -> dict[str, float]:
    """Median JSON size of each runtime's last `turns` requests (told apart by session id)."""
    sizes: dict[str, list[int]] = {name: [] for name in names.values()}
    for body in model.bodies:
        session = ((body.get("dsh_session_log") or {}).get("session") or {}).get("id")
        if session in names:
            sizes[names[session]].append(len(json.dumps(body, ensure_ascii=False).encode()))
    return {name: statistics.median(values[-turns:]) for name, values in sizes.items()}


def in_process(
    runtime: MemoryRuntime, session_id: str, questions: list[str], turn: int
) -> list[float]:
    """The floor: the same questions through `MemoryRuntime.pre_step` with no host and no pipe."""
    out: list[float] = []
    for offset, text in enumerate(questions):
        message = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
        }
        started = time.perf_counter()
        runtime.pre_step(session_id, [message], turn + 10_000 + offset, 1, visible_seqs=[])
        out.append((time.perf_counter() - started) * 1000)
    return out


def report(
    args: argparse.Namespace,
    events: int,
    stats: dict[str, int],
    injected: int,
    steps: dict[str, list[float]],
    walls: dict[str, list[float]],
) -> None:
    print(
        f"session: {events} events before measuring ({stats['events']} stored, "
        f"{stats['memory_items']} memory items); {args.turns} measured turns; "
        f"memory block injected in {injected} of the last {args.turns} assemblies"
    )
    print(f"{'ms per step':<26}{'median':>10}{'p95':>10}{'steps':>8}")
    for name in ("off", "on"):
        values = steps[name]
        print(
            f"pre-step chain, memory {name:<4}{statistics.median(values):>10.2f}{p95(values):>10.2f}{len(values):>8}"
        )
    added_median = statistics.median(steps["on"]) - statistics.median(steps["off"])
    added_p95 = p95(steps["on"]) - p95(steps["off"])
    print(f"{'added by memory':<26}{added_median:>10.2f}{added_p95:>10.2f}   (target p95 < 15 ms)")
    floor = steps["in-process"]
    print(
        f"{'floor: in-process pre_step':<26}{statistics.median(floor):>10.2f}{p95(floor):>10.2f}{len(floor):>8}"
    )
    for name in ("off", "on"):
        values = walls[name]
        print(f"whole turn, memory {name:<8}{statistics.median(values):>10.1f}{p95(values):>10.1f}")


if __name__ == "__main__":
    main()
