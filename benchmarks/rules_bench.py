"""Score standing rules on convention dialogues, through the CLI a user runs.

For each dialogue of a `gen_conventions.py` file: its sessions become DSH session logs
(`convention_logs.py`), `lcm ingest` reads them into a fresh SQLite file, and
`lcm assemble --session S --scope project --query REQUEST --json` builds the block the
new session's coding request gets. Scored from that block:

- recall: the share of rules in force (the latest version of each) whose `show` strings
  are all in the block;
- stale: old values shown as current: an old version's `show` string (one the version in
  force does not share) on a line that carries no old-value marker (旧值 / old value);
- tokens: the block's tokens (mean, p95);
- filler: items derived from the filler sentences, and how many of them are rules.

    python benchmarks/gen_conventions.py --out /tmp/conv.jsonl
    python benchmarks/rules_bench.py --dataset /tmp/conv.jsonl

`--order shuffled` ingests each dialogue's sessions in a scrambled (seeded) order, as
a folder of logs named by session id would be read; `--budget N` and `--config FILE`
are passed to `lcm`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import convention_logs

from lcm_adapter.cli.main import cli
from lcm_core.extraction.standing import rule_key
from lcm_core.store.registry import open_store

OLD_MARKERS = ("旧值", "old value")


@dataclass
class Score:
    """One dialogue's figures."""

    dialogue: str
    language: str
    in_force: int
    found: int
    stale: int
    tokens: int
    filler_items: int
    filler_rules: int
    missed: list[str] = field(default_factory=list)
    stale_lines: list[str] = field(default_factory=list)


def _lcm(*args: str) -> dict[str, Any]:
    """Run one `lcm` command in-process, as the CLI runs it; its JSON output."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"lcm {' '.join(args)}: exit {result.exit_code}: {result.output}")
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def score_dialogue(
    dialogue: dict[str, Any],
    work: Path,
    extra: list[str],
    order: str = "time",
    seed: int = 0,
    budget: int | None = None,
) -> Score:
    """Ingest one dialogue's logs, assemble the request's block, and score it."""
    logs = convention_logs.write_logs(dialogue, work / "logs")
    if order == "shuffled":
        logs = logs[:-1]
        random.Random(f"{seed}:{dialogue['id']}").shuffle(logs)
        logs.append(convention_logs.write_logs(dialogue, work / "logs")[-1])
    db = work / "memory.sqlite"
    for log in logs:
        _lcm("--db", str(db), *extra, "ingest", str(log), "--quiet", "--json")
    request = dialogue["sessions"][-1]["id"]
    query = dialogue["request"]
    budgeted = ["--budget", str(budget)] if budget is not None else []
    data = _lcm(
        "--db", str(db), *extra, "assemble", "--session", request, "--scope", "project",
        "--query", query, *budgeted, "--json",
    )  # fmt: skip
    block = data["text"]
    lines = block.splitlines()
    current = {r["rule"]: r for r in dialogue["rules"] if r["in_force"]}
    found, missed = 0, []
    for rule in current.values():
        if all(s in block for s in rule["show"]):
            found += 1
        else:
            missed.append(f"{rule['type']}={rule['value']}")
    stale_lines: list[str] = []
    for rule in dialogue["rules"]:
        if rule["in_force"]:
            continue
        kept = set(current[rule["rule"]]["show"]) if rule["rule"] in current else set()
        for shown in set(rule["show"]) - kept:
            stale_lines += [
                line
                for line in lines
                if shown in line
                and not any(m in line for m in OLD_MARKERS)
                and not any(k in line and shown in k for k in kept)
            ]
    filler_items, filler_rules = _filler_items(dialogue, db)
    return Score(
        dialogue=dialogue["id"],
        language=dialogue["language"],
        in_force=len(current),
        found=found,
        stale=len(set(stale_lines)),
        tokens=int(data["explain"]["used_tokens"]),
        filler_items=filler_items,
        filler_rules=filler_rules,
        missed=missed,
        stale_lines=sorted(set(stale_lines)),
    )


def _filler_items(dialogue: dict[str, Any], db: Path) -> tuple[int, int]:
    """Items whose content lies inside a filler sentence, and how many of them are rules."""
    fillers = [
        tag["sentence"]
        for session in dialogue["sessions"]
        for turn in session["turns"]
        for tag in turn.get("tags", ())
        if tag["tag"] == "filler"
    ]
    store = open_store(str(db))
    try:
        items = store.list_items(None, statuses=("active", "superseded"))
    finally:
        store.close()
    from_filler = [i for i in items if any(i.content and i.content in f for f in fillers)]
    return len(from_filler), sum(1 for i in from_filler if rule_key(i.scope))


def read_dataset(path: Path, limit: int | None) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for n, line in enumerate(lines):
            if limit is not None and n >= limit:
                return
            yield json.loads(line)


def summary(scores: list[Score]) -> dict[str, Any]:
    """Overall and per-language figures."""

    def figures(group: list[Score]) -> dict[str, Any]:
        tokens = sorted(s.tokens for s in group)
        in_force = sum(s.in_force for s in group)
        filler = sum(s.filler_items for s in group)
        return {
            "dialogues": len(group),
            "rulesInForce": in_force,
            "recall": round(sum(s.found for s in group) / in_force, 4) if in_force else None,
            "stale": sum(s.stale for s in group),
            "meanTokens": round(statistics.fmean(tokens), 1) if tokens else 0,
            "p95Tokens": tokens[int(0.95 * (len(tokens) - 1))] if tokens else 0,
            "fillerItems": filler,
            "fillerRules": sum(s.filler_rules for s in group),
            "fillerRuleShare": round(sum(s.filler_rules for s in group) / filler, 4)
            if filler
            else 0.0,
        }

    report = {"overall": figures(scores)}
    for language in sorted({s.language for s in scores}):
        report[language] = figures([s for s in scores if s.language == language])
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="score the first N dialogues")
    parser.add_argument("--budget", type=int, default=None, help="lcm assemble --budget")
    parser.add_argument("--config", type=Path, default=None, help="lcm --config FILE")
    parser.add_argument("--order", choices=("time", "shuffled"), default="time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--misses", type=Path, default=None, help="write each miss (JSONL)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    extra = ["--config", str(args.config)] if args.config else []
    scores: list[Score] = []
    with tempfile.TemporaryDirectory(prefix="lcm-rules-") as tmp:
        for n, dialogue in enumerate(read_dataset(args.dataset, args.limit)):
            work = Path(tmp) / f"d{n}"
            work.mkdir()
            scores.append(score_dialogue(dialogue, work, extra, args.order, args.seed, args.budget))
    if args.misses is not None:
        with args.misses.open("w", encoding="utf-8") as out:
            for s in scores:
                if s.missed or s.stale_lines:
                    row = {"dialogue": s.dialogue, "missed": s.missed, "stale": s.stale_lines}
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    report = summary(scores)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2))
    else:
        for name, fig in report.items():
            print(
                f"{name:8} dialogues {fig['dialogues']:4}  recall {fig['recall']}  stale "
                f"{fig['stale']}  tokens mean {fig['meanTokens']} p95 {fig['p95Tokens']}  "
                f"filler items {fig['fillerItems']} rules {fig['fillerRules']} "
                f"({fig['fillerRuleShare']:.1%})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
