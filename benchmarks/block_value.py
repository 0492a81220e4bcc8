"""What a block's candidates are worth per token: evidence recall by kind and score band.

For each question of a conversation-QA file (DESIGN.md section 9) the pipeline's
candidates are gathered with a low floor (`relativeMinScore` 0.02, 100 quoted turns, 40
items), each tagged with its kind (a memory item, a raw turn matched directly, a turn
quoted beside a match), its score as a share of the step's best, its tokens (its text's
estimate plus a line's labels) and the evidence turns it covers. Two tables follow:

- the recall each band adds per 1 000 tokens, candidates taken best first, so a band
  that adds little for many tokens is where a cut-off belongs;
- the recall and tokens of a block cut at a share of the best score (the rule
  `retrieval.relativeMinScore` applies), as if packed under the default 3 000 tokens;
- the bound of any cut-off by kind and band: the bands taken in the order of what they
  add per token, with the recall reached by the time the block holds `--within` tokens.

Token counts are an estimate of the rendered lines (the header and sections counted as
`HEADER_TOKENS`), so the second table tracks `lcm bench retrieval`'s figures closely but
not exactly; it is for comparing cut-off rules, not for reporting a block's size.

    python benchmarks/block_value.py --dataset realtalk.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lcm_core.bench.dataset import load_dataset
from lcm_core.bench.retrieval import default_extractor, ingest
from lcm_core.config import load_config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.evidence import retrieve
from lcm_core.store.memory.store import InMemoryStore
from lcm_core.text.query import query_signals
from lcm_core.text.tokens import estimate_tokens

# Labels a rendered line adds to its text: `- [ev seq:N] “…”` (and a share of its day's
# `### DATE` heading), and an item's id, kind and provenance.
EVIDENCE_LINE_TOKENS: Final = 6
ITEM_LINE_TOKENS: Final = 22
HEADER_TOKENS: Final = 150
BANDS: Final = (1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.05, 0.0)
CUTS: Final = (0.1, 0.15, 0.2, 0.3, 0.4)
WIDE: Final = {"retrieval": {"relativeMinScore": 0.02, "evidenceLimit": 100, "limit": 40}}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One thing a block could hold."""

    kind: str  # item, direct or beside
    score: float
    tokens: int
    covers: frozenset[str]


def candidates(dataset: Path) -> list[tuple[int, list[Candidate]]]:
    """Per question: its number of evidence turns and its candidates, best first."""
    config = load_config(WIDE)
    result: list[tuple[int, list[Candidate]]] = []
    for conv in load_dataset(dataset):
        store = InMemoryStore()
        ingest(store, conv, config, default_extractor)
        ids = [turn.id for turn in conv.turns]
        for question in conv.questions:
            wanted = set(question.evidence)
            found = retrieve(store, conv.id, query_signals(question.question), config)
            listed = [
                Candidate(
                    "item",
                    ranked.score,
                    estimate_tokens(ranked.item.content) + ITEM_LINE_TOKENS,
                    frozenset(
                        ids[s]
                        for s in source_seqs(ranked.item)
                        if s < len(ids) and ids[s] in wanted
                    ),
                )
                for ranked in found.ranking.selected
            ]
            for row in found.evidence.rows:
                if not row.raw:
                    continue
                seq = row.event.seq
                listed.append(
                    Candidate(
                        "beside" if row.neighbour_of is not None else "direct",
                        row.score,
                        estimate_tokens(row.text) + EVIDENCE_LINE_TOKENS,
                        frozenset({ids[seq]} & wanted) if seq < len(ids) else frozenset(),
                    )
                )
            listed.sort(key=lambda c: -c.score)
            result.append((len(wanted), listed))
        store.close()
    return result


def bands(questions: list[tuple[int, list[Candidate]]]) -> list[dict[str, object]]:
    """Per kind and band: lines and tokens per question, the recall it adds, per 1 000 tokens."""
    totals: dict[tuple[str, float], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for wanted, listed in questions:
        best = listed[0].score if listed else 0.0
        seen: set[str] = set()
        for one in listed:
            share = one.score / best if best else 0.0
            band = next(b for b in BANDS if share >= b)
            added = len(one.covers - seen) / wanted
            seen |= one.covers
            cell = totals[(one.kind, band)]
            cell[0] += 1
            cell[1] += one.tokens
            cell[2] += added
    count = len(questions)
    return [
        {
            "kind": kind,
            "band": band,
            "lines": round(lines / count, 2),
            "tokens": round(tokens / count, 1),
            "recall": round(recall / count, 4),
            "recallPer1kTokens": round(1000 * recall / tokens, 3) if tokens else 0.0,
        }
        for (kind, band), (lines, tokens, recall) in sorted(
            totals.items(), key=lambda p: (p[0][0], -p[0][1])
        )
    ]


def cut(
    questions: list[tuple[int, list[Candidate]]], share: float, budget: int
) -> dict[str, float]:
    """Recall and mean tokens of blocks cut at `share` of the best score, under `budget`."""
    recall = 0.0
    used_total = 0
    for wanted, listed in questions:
        best = listed[0].score if listed else 0.0
        used = HEADER_TOKENS
        got: set[str] = set()
        for one in listed:
            if one.score < share * best or used + one.tokens > budget:
                continue
            used += one.tokens
            got |= one.covers
        recall += len(got) / wanted
        used_total += used
    count = len(questions)
    return {"share": share, "recall": round(recall / count, 4), "tokens": round(used_total / count)}


def frontier(rows: list[dict[str, object]], within: int) -> dict[str, float]:
    """The most recall bands (best value per token first) give within `within` tokens."""
    used, recall = float(HEADER_TOKENS), 0.0
    for row in sorted(rows, key=lambda r: -float(r["recallPer1kTokens"])):  # type: ignore[arg-type]
        tokens = float(row["tokens"])  # type: ignore[arg-type]
        if used + tokens > within:
            break
        used += tokens
        recall += float(row["recall"])  # type: ignore[arg-type]
    return {"within": within, "recall": round(recall, 4), "tokens": round(used)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--within", type=int, default=1200, help="tokens for the bound")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions = candidates(args.dataset)
    rows = bands(questions)
    report = {
        "questions": len(questions),
        "bands": rows,
        "cuts": [cut(questions, share, args.budget) for share in CUTS],
        "bound": frontier(rows, args.within),
    }
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return
    print(f"{report['questions']} questions")
    print("kind    band  lines/q tokens/q  recall  per 1k tokens")
    for row in report["bands"]:
        print(
            f"{row['kind']:7} {row['band']:>4}  {row['lines']:7} {row['tokens']:8} "
            f"{row['recall']:7} {row['recallPer1kTokens']:8}"
        )
    print("cut at share of best: recall, mean tokens")
    for row in report["cuts"]:
        print(f"  {row['share']:>4}: {row['recall']} in {row['tokens']}")
    bound = report["bound"]
    print(f"best bands within {bound['within']} tokens: {bound['recall']} in {bound['tokens']}")


if __name__ == "__main__":
    main()
