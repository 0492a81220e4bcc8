"""The retrieval-quality harness behind `lcm bench retrieval` (DESIGN.md section 9).

Each conversation becomes one session (turn i -> seq i), goes through extraction, and
every question is asked as a pre-step query on the complete session. Reported per
category and overall:

- recall@k of the pipeline's ranking: the share of a question's evidence turns among
  the source turns of its top k entries, where the ranking is the merged list the
  assembler consumes (selected items and raw evidence turns by final score; see
  `lcm_core.retrieval.evidence.Retrieval.merged`). For depth, `retrieval.limit` and
  `retrieval.evidenceLimit` are both raised to the largest k;
- the same recall@k of the ranked items alone, so what items contribute stays visible;
- recall of the assembled block at the configured budget (its items' sources and quoted
  events), with the tokens the block used;
- the extraction ceiling: the share of evidence turns cited by any active item, since
  items can only return what extraction derived;
- the same recall@k for a baseline ranking of the raw turns (Okapi BM25 from
  `lcm_core.bench.bm25` in both the CLI and the benchmark script), in the same run.

Beside BM25, further frozen references (SQLite FTS5 from the SQLite backend, through the
`lcm.bench_references` entry points) are scored on the same questions when given.
`--ablate` switches ranking features off by name (`retrieval.signals`), and a misses
collector receives every question whose evidence is not all in the top 10, with the
evidence turns and the top 10 entries (text, score, item or raw turn).

Only the standard library is used here; the baselines are passed in as functions.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.step import StepMessage
from lcm_core.bench.dataset import Conversation, Question
from lcm_core.config import Config, load_config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.evidence import Retrieval, retrieve
from lcm_core.retrieval.signals import ABLATIONS
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import ItemStore, MemoryStore
from lcm_core.text.dates import iso_time
from lcm_core.text.query import query_signals
from lcm_core.text.tokens import fingerprint, normalize_text, stable_item_id

KS: Final = (5, 10, 25)
# A question is a miss when its evidence is not all among this many top entries.
MISS_DEPTH: Final = 10
# (turn texts, question, k) -> indices of the k best turns, best first.
Baseline = Callable[[Sequence[str], str, int], list[int]]
Extractor = Callable[[MemoryStore, str, Config], object]


def default_extractor(store: MemoryStore, session_id: str, config: Config) -> object:
    """The project's extraction (imported on use, so the harness loads without it)."""
    from lcm_core.extraction.run import run_extraction

    return run_extraction(store, session_id, config)


def every_user_message(store: MemoryStore, session_id: str, config: Config) -> None:
    """A diagnostic stand-in for extraction: every user message becomes one fact item.

    Running the harness with it measures ranking alone, as if extraction missed nothing.
    """
    for event in store.list_events(session_id, types=["user/message"]):
        if event.text:
            item = MemoryItem(
                id=stable_item_id(session_id, "fact", event.text),
                session_id=session_id,
                kind="fact",
                content=event.text,
                content_hash=fingerprint(event.text),
                source_refs=(f"seq:{event.seq}",),
                extractor="bench-every-user-message",
                derived_from_seq=event.seq,
            )
            store.insert_item(item)


def ingest(store: MemoryStore, conv: Conversation, config: Config, extract: Extractor) -> None:
    """Write a conversation as one session (turn i -> seq i) and derive its memory."""
    events = []
    for seq, turn in enumerate(conv.turns):
        user = turn.speaker == "user"
        events.append(
            Event(
                session_id=conv.id,
                seq=seq,
                type="user/message" if user else "assistant/message",
                text=normalize_text(turn.text),
                time=(iso_time(turn.time) or turn.time) if turn.time else None,
                turn=seq,
                role="user" if user else "assistant",
                source_kind="user" if user else "model",
            )
        )
    store.insert_events(events)
    extract(store, conv.id, config)


def _p95(values: list[int]) -> int:
    """The 95th percentile by the nearest rank (0 for no values)."""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def _recall(evidence: Iterable[str], found: set[str]) -> float:
    wanted = set(evidence)
    return len(wanted & found) / len(wanted) if wanted else 0.0


@dataclass
class Scores:
    """Per-question scores collected for one category (or overall)."""

    questions: int = 0
    pipeline: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    items: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    baseline: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    # Further frozen references by name (e.g. "fts5"), recall@k like the baseline.
    references: dict[str, dict[int, list[float]]] = field(default_factory=dict)
    block: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    covered: list[float] = field(default_factory=list)

    def add(self, other: Scores) -> None:
        self.questions += other.questions
        for k in KS:
            self.pipeline[k] += other.pipeline[k]
            self.items[k] += other.items[k]
            self.baseline[k] += other.baseline[k]
        for name, per_k in other.references.items():
            mine = self.references.setdefault(name, {k: [] for k in KS})
            for k in KS:
                mine[k] += per_k[k]
        self.block += other.block
        self.tokens += other.tokens
        self.covered += other.covered

    def summary(self) -> dict[str, Any]:
        def mean(values: list[float]) -> float:
            return round(statistics.fmean(values), 4) if values else 0.0

        return {
            "questions": self.questions,
            **{f"recall@{k}": mean(self.pipeline[k]) for k in KS},
            **{f"itemsRecall@{k}": mean(self.items[k]) for k in KS},
            "blockRecall": mean(self.block),
            "blockTokens": round(statistics.fmean(self.tokens), 1) if self.tokens else 0.0,
            "blockTokensP95": _p95(self.tokens),
            # Evidence the block holds per 1 000 tokens it spends: what a token buys.
            "recallPer1kTokens": round(1000 * mean(self.block) / statistics.fmean(self.tokens), 4)
            if self.tokens and statistics.fmean(self.tokens) > 0
            else 0.0,
            "extracted": mean(self.covered),
            **{f"baseline@{k}": mean(self.baseline[k]) for k in KS},
            **{
                f"{name}@{k}": mean(per_k[k])
                for name, per_k in sorted(self.references.items())
                for k in KS
            },
        }


def evaluate_conversation(
    store: MemoryStore,
    conv: Conversation,
    config: Config,
    baseline: Baseline | None,
    extract: Extractor = default_extractor,
    references: Mapping[str, Baseline] | None = None,
    misses: list[dict[str, Any]] | None = None,
) -> dict[str, Scores]:
    """Scores per category for one conversation, on a store that holds nothing else.

    When `misses` is given, every question whose evidence is not all in the top
    `MISS_DEPTH` entries is appended to it (see `miss_record`).
    """
    ingest(store, conv, config, extract)
    ids = [turn.id for turn in conv.turns]
    texts = [turn.text for turn in conv.turns]
    # Rank deep enough for the largest k; the injected block still uses `config`.
    deep = {"limit": max(KS), "evidenceLimit": max(KS)}
    ranking_config = load_config(
        {**config.values, "retrieval": {**config.section("retrieval"), **deep}}
    )
    # Turns that some active item cites: the ceiling extraction puts on item recall.
    cited = {
        ids[q]
        for item in store.list_items(conv.id, statuses=("active",))
        for q in source_seqs(item)
        if q < len(ids)
    }
    scores: dict[str, Scores] = {}
    for question in conv.questions:
        s = scores.setdefault(question.category, Scores())
        s.questions += 1
        s.covered.append(_recall(question.evidence, cited))
        found = retrieve(store, conv.id, query_signals(question.question), ranking_config)
        merged = found.merged()
        for k in KS:
            turns = {ids[q] for _, _, seqs in merged[:k] for q in seqs if q < len(ids)}
            s.pipeline[k].append(_recall(question.evidence, turns))
            items = found.ranking.selected[:k]
            turns = {ids[q] for r in items for q in source_seqs(r.item) if q < len(ids)}
            s.items[k].append(_recall(question.evidence, turns))
        result = assemble(store, conv.id, [StepMessage("user", question.question, "user")], config)
        shown = {seq for item_id in result.item_ids for seq in _item_seqs(store, item_id)}
        shown |= {int(ref.split(":", 1)[1]) for ref in result.evidence_refs}
        s.block.append(_recall(question.evidence, {ids[q] for q in shown if q < len(ids)}))
        s.tokens.append(result.used_tokens)
        if baseline is not None:
            for k in KS:
                top = {ids[i] for i in baseline(texts, question.question, k)}
                s.baseline[k].append(_recall(question.evidence, top))
        for name, reference in (references or {}).items():
            per_k = s.references.setdefault(name, {k: [] for k in KS})
            ranked = reference(texts, question.question, max(KS))
            for k in KS:
                per_k[k].append(_recall(question.evidence, {ids[i] for i in ranked[:k]}))
        if misses is not None and s.pipeline[MISS_DEPTH][-1] < 1.0:
            misses.append(miss_record(store, conv, question, found, s.pipeline[MISS_DEPTH][-1]))
    return scores


def miss_record(
    store: MemoryStore,
    conv: Conversation,
    question: Question,
    found: Retrieval,
    recall: float,
) -> dict[str, Any]:
    """A missed question: its evidence turns and the top entries, each with where it came from."""
    by_id = {turn.id: (seq, turn) for seq, turn in enumerate(conv.turns)}
    items = {r.item.id: r.item for r in found.ranking.selected}
    top: list[dict[str, Any]] = []
    for rank, (ref, score, seqs) in enumerate(found.merged()[:MISS_DEPTH], 1):
        turn_ids = [conv.turns[q].id for q in seqs if q < len(conv.turns)]
        item = items.get(ref)
        if item is not None:
            entry = {"source": "item", "kind": item.kind, "text": item.content}
        else:
            entry = {"source": "raw turn", "text": conv.turns[seqs[0]].text if seqs else ""}
        top.append({"rank": rank, "ref": ref, "score": round(score, 4), "turns": turn_ids, **entry})
    wanted = {ref for entry in top for ref in entry["turns"]}
    return {
        "conversation": conv.id,
        "question": question.id,
        "text": question.question,
        "category": question.category,
        f"recall@{MISS_DEPTH}": round(recall, 4),
        "evidence": [
            {
                "turn": turn_id,
                "seq": by_id[turn_id][0] if turn_id in by_id else None,
                "found": turn_id in wanted,
                "text": by_id[turn_id][1].text if turn_id in by_id else "",
            }
            for turn_id in question.evidence
        ],
        "top": top,
    }


def _item_seqs(store: ItemStore, item_id: str) -> tuple[int, ...]:
    item = store.get_item(item_id)
    return source_seqs(item) if item is not None else ()


def ablation_config(config: Config, features: Sequence[str]) -> Config:
    """`config` with the named ranking features switched off; an unknown name is an error."""
    unknown = [name for name in features if name not in ABLATIONS]
    if unknown:
        known = ", ".join(sorted(ABLATIONS))
        raise ValueError(f"unknown ranking feature {unknown[0]!r} (known: {known})")
    if not features:
        return config
    section = config.section("retrieval")
    merged = sorted({*section.get("ablate", []), *features})
    return load_config({**config.values, "retrieval": {**section, "ablate": merged}})


def run(
    conversations: Sequence[Conversation],
    store_factory: Callable[[], MemoryStore],
    baseline: Baseline | None = None,
    config: Config | None = None,
    extract: Extractor = default_extractor,
    *,
    references: Mapping[str, Baseline] | None = None,
    ablate: Sequence[str] = (),
    misses: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Evaluate every conversation on its own fresh store; summaries per category and overall."""
    config = ablation_config(config if config is not None else load_config(), ablate)
    totals: dict[str, Scores] = {}
    for conv in conversations:
        store = store_factory()
        try:
            for category, scores in evaluate_conversation(
                store, conv, config, baseline, extract, references, misses
            ).items():
                totals.setdefault(category, Scores()).add(scores)
        finally:
            store.close()
    overall = Scores()
    for scores in totals.values():
        overall.add(scores)
    report = {category: totals[category].summary() for category in sorted(totals)}
    report["overall"] = overall.summary()
    return report


def format_table(report: dict[str, dict[str, Any]]) -> str:
    """The report as a Markdown table, one row per category and one overall, columns aligned.

    R@k is the pipeline (items and raw evidence merged), items R@10 the items alone; the
    frozen references (BM25, and any others in the report) are shown at R@10.
    """
    names = sorted(
        {key[: -len("@10")] for row in report.values() for key in row if key.endswith("@10")}
        - {"recall", "itemsRecall", "baseline"}
    )
    head = [
        "category",
        "n",
        "extracted",
        *(f"R@{k}" for k in KS),
        "items R@10",
        "block R",
        "block tok",
        "tok p95",
        "R/1k tok",
        *(f"BM25 R@{k}" for k in KS),
        *(f"{name.upper()} R@10" for name in names),
    ]
    rows = [
        [
            category,
            str(row["questions"]),
            f"{row['extracted']:.3f}",
            *(f"{row[f'recall@{k}']:.3f}" for k in KS),
            f"{row['itemsRecall@10']:.3f}",
            f"{row['blockRecall']:.3f}",
            f"{row['blockTokens']:.0f}",
            str(row["blockTokensP95"]),
            f"{row['recallPer1kTokens']:.3f}",
            *(f"{row[f'baseline@{k}']:.3f}" for k in KS),
            *(f"{row.get(f'{name}@10', 0.0):.3f}" for name in names),
        ]
        for category, row in report.items()
    ]
    widths = [max(len(line[i]) for line in (head, *rows)) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        # Text left, numbers right, as a reader scans them.
        padded = [
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            ":" + "-" * (w + 1) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([line(head), rule, *(line(cells) for cells in rows)])
