"""A plain lexical probe over raw turns, to judge the pipeline against the simplest ranker
built from the same ideas (the relevance issue's yardstick).

Each conversation's turns are ranked for each question by BM25 over the whole
conversation (the core's stems and stop words, `relevance_tokens`), plus `--context`
times the previous turn's score, times (1 + `--episode` x the turn's day's share of the
best day's score), times (1 + `--speaker`) for a turn whose "Name:" head the question
names. Scores are divided by the question's best turn score first, so the weights mean
the same in every conversation. No items, no pool, no priors, no block: recall@k of
the ranking only, as `lcm bench retrieval` reports it (R@k).

    python benchmarks/lexical_probe.py --dataset realtalk.jsonl
    python benchmarks/lexical_probe.py --dataset realtalk.jsonl --b 0.2 --speaker 1.0
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lcm_core.bench.dataset import Conversation, load_dataset
from lcm_core.bench.retrieval import KS
from lcm_core.text.dates import iso_time, said_on
from lcm_core.text.relevance import relevance_tokens
from lcm_core.text.speakers import speaker_of

K1 = 1.2
# Turns without a date are grouped in windows of this many, as the pipeline does.
WINDOW = 50


def bm25_scores(docs: Sequence[Sequence[str]], query: Sequence[str], b: float) -> list[float]:
    """Okapi BM25 (idf `ln(1 + (N - n + 0.5) / (n + 0.5))`) of every document."""
    size = len(docs)
    average = sum(len(d) for d in docs) / size if size else 1.0
    frequency = Counter(t for d in docs for t in set(d))
    counts = [Counter(d) for d in docs]
    scores = []
    for doc, tf in zip(docs, counts, strict=True):
        norm = K1 * (1 - b + b * len(doc) / max(average, 1.0))
        total = 0.0
        for term in query:
            f = tf.get(term, 0)
            if f:
                n = frequency[term]
                total += math.log(1 + (size - n + 0.5) / (n + 0.5)) * f * (K1 + 1) / (f + norm)
        scores.append(total)
    return scores


def rank(conv: Conversation, question: str, args: argparse.Namespace) -> list[int]:
    """Turn indices, best first (ties to the earlier turn)."""
    docs = [relevance_tokens(t.text) for t in conv.turns]
    query = list(dict.fromkeys(relevance_tokens(question)))
    own = bm25_scores(docs, query, args.b)
    top = max(own, default=0.0) or 1.0
    days = [
        said_on(iso_time(turn.time) if turn.time else None) or f"#{index // WINDOW}"
        for index, turn in enumerate(conv.turns)
    ]
    names = sorted(set(days), key=days.index)
    grouped = [[t for day, doc in zip(days, docs, strict=True) if day == name for t in doc]
               for name in names]  # fmt: skip
    day_score = dict(zip(names, bm25_scores(grouped, query, args.b), strict=True))
    best_day = max(day_score.values(), default=0.0) or 1.0
    asked = set(query)
    final = []
    for index, turn in enumerate(conv.turns):
        value = own[index] / top
        if index:
            value += args.context * own[index - 1] / top
        value *= 1 + args.episode * day_score[days[index]] / best_day
        name = speaker_of(turn.text)
        if args.speaker and name and set(relevance_tokens(name)) & asked:
            value *= 1 + args.speaker
        final.append(value)
    return sorted(range(len(final)), key=lambda i: (-final[i], i))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--b", type=float, default=0.75)
    parser.add_argument("--context", type=float, default=0.5)
    parser.add_argument("--episode", type=float, default=0.5)
    parser.add_argument("--speaker", type=float, default=0.0)
    args = parser.parse_args()
    recall: dict[int, list[float]] = {k: [] for k in KS}
    for conv in load_dataset(args.dataset):
        ids = [t.id for t in conv.turns]
        for q in conv.questions:
            order = [ids[i] for i in rank(conv, q.question, args)]
            wanted = set(q.evidence)
            for k in KS:
                recall[k].append(len(wanted & set(order[:k])) / len(wanted) if wanted else 0.0)
    questions = len(recall[KS[0]])
    row = " ".join(f"R@{k} {sum(v) / questions:.4f}" for k, v in recall.items())
    print(f"{questions} questions  b {args.b} context {args.context} episode {args.episode} "
          f"speaker {args.speaker}  {row}")  # fmt: skip


if __name__ == "__main__":
    main()
