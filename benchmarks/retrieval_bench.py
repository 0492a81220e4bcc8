"""Retrieval quality on a conversation-QA dataset, beside a BM25 baseline over raw turns.

Runs `lcm_core.bench.retrieval` on SQLite (one in-memory store per conversation) and
ranks the raw turns with `lcm_core.bench.bm25` (Okapi BM25 as rank-bm25's BM25Okapi
computes it, standard library only, the same function `lcm bench retrieval` uses), both
tokenised with `lcm_core.text.tokens.tokenize` (Latin words and CJK bigrams), so the comparison
is of the ranking, not of the tokenizer. Without --dataset the synthetic set of
`gen_conversations.py` is generated in memory. R@k is the pipeline's merged ranking
(items and raw evidence turns by final score), items R@k the ranked items alone.

Beside BM25, the second frozen reference is SQLite FTS5 (`porter unicode61`, English
stop words out of the query, `ORDER BY rank`). `--ablate NAME` (repeatable) switches one
ranking feature off; `--misses FILE` writes the questions whose evidence is not all in
the top 10.

    python benchmarks/retrieval_bench.py [--dataset FILE] [--json] [--ranking-only]
        [--ablate NAME ...] [--misses FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lcm_core.bench.bm25 import BM25Baseline
from lcm_core.bench.dataset import Conversation, load_dataset, parse_line
from lcm_core.bench.retrieval import default_extractor, every_user_message, format_table, run
from lcm_store_sqlite import SQLiteMemoryStore
from lcm_store_sqlite.reference_fts5 import FTS5Reference

sys.path.insert(0, str(Path(__file__).parent))
from gen_conversations import generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="JSONL in the DESIGN.md section 9 format")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--ranking-only",
        action="store_true",
        help="diagnostic: make every user message an item instead of running extraction",
    )
    parser.add_argument("--ablate", action="append", default=[], metavar="NAME")
    parser.add_argument("--misses", type=Path, help="write missed questions here (JSONL)")
    args = parser.parse_args(argv)
    if args.dataset is not None:
        conversations: list[Conversation] = load_dataset(args.dataset)
    else:
        conversations = [parse_line(json.dumps(c)) for c in generate()]
    extract = every_user_message if args.ranking_only else default_extractor
    misses: list[dict[str, object]] | None = [] if args.misses else None
    report = run(
        conversations,
        lambda: SQLiteMemoryStore(":memory:"),
        BM25Baseline(),
        extract=extract,
        references={"fts5": FTS5Reference()},
        ablate=args.ablate,
        misses=misses,
    )
    if args.misses and misses is not None:
        args.misses.write_text(
            "".join(json.dumps(m, ensure_ascii=False, sort_keys=True) + "\n" for m in misses),
            encoding="utf-8",
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
