"""Added pre-step latency of the memory plugin on the real DSH runtime.

Two DSH runtimes (profile sdk-minimal) talk to the same fake model on 127.0.0.1: one
with the memory plugin, one without. Both carry a small timing plugin that measures
the whole `agent/pre-step` chain of every step. Each session is first filled to about
1 000 events with a mixed Chinese/English conversation (constraints, numbers with
conditions, chatter), then both get the same 50 questions, alternating turn by turn so
machine noise lands on both. The table shows median and p95 per step with memory on,
off, and the difference; the target is under 15 ms added at p95.

Needs the `e2e` extra (deepseek-harness-sdk and deepseek-harness-runtime-bin).

    python benchmarks/dsh_prestep_latency.py
    python benchmarks/dsh_prestep_latency.py --events 1000 --turns 50
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
        (self.root / "patch.yml").write_text(rows, encoding="utf-8")
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
