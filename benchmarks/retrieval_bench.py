"""Retrieval quality on a conversation-QA dataset, beside a BM25 baseline over raw turns.

Runs `lcm_core.bench_retrieval` on SQLite (one in-memory store per conversation) and
ranks the raw turns with rank-bm25's BM25Okapi in the same run, both tokenised with
`lcm_core.text.tokenize` (Latin words and CJK bigrams), so the comparison is of the
ranking, not of the tokenizer. Without --dataset the synthetic set of
`gen_conversations.py` is generated in memory.

    python benchmarks/retrieval_bench.py [--dataset FILE] [--json] [--ranking-only]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lcm_core.bench_retrieval import (
    Conversation,
    default_extractor,
    every_user_message,
    format_table,
    load_dataset,
    parse_line,
    run,
)
from lcm_core.text import tokenize
from lcm_store_sqlite import SQLiteMemoryStore

sys.path.insert(0, str(Path(__file__).parent))
from gen_conversations import generate


class BM25Baseline:
    """BM25Okapi over the raw turns of one conversation, cached per conversation."""

    def __init__(self) -> None:
        self._key: int | None = None
        self._index: object = None

    def __call__(self, texts: Sequence[str], question: str, k: int) -> list[int]:
        from rank_bm25 import BM25Okapi

        if self._key != id(texts):
            self._key = id(texts)
            self._index = BM25Okapi([tokenize(text) or ["\u0000"] for text in texts])
        scores = self._index.get_scores(tokenize(question))  # type: ignore[attr-defined]
        order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
        return order[:k]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="JSONL in the DESIGN.md section 9 format")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--ranking-only",
        action="store_true",
        help="diagnostic: make every user message an item instead of running extraction",
    )
    args = parser.parse_args(argv)
    if args.dataset is not None:
        conversations: list[Conversation] = load_dataset(args.dataset)
    else:
        conversations = [parse_line(json.dumps(c)) for c in generate()]
    extract = every_user_message if args.ranking_only else default_extractor
    report = run(
        conversations, lambda: SQLiteMemoryStore(":memory:"), BM25Baseline(), extract=extract
    )
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        turns = sum(len(c.turns) for c in conversations)
        print(f"{len(conversations)} conversations, {turns} turns")
        print(format_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
