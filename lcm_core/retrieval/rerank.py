"""A second look at the best turns of a pool: does a turn hold the kind of token the
question asks for?

BM25 scores a turn by the question's words alone: for "When did Kate start skiing?"
"I started skiing last winter" and "skiing is my favourite sport" weigh alike. The best
`rerankDepth` turns by relevance are looked at again, and each that holds a token of the
asked kind (`text.answer_kinds`: a date for "when", a place for "where", a name for
"who", a number for "how many", and their Chinese forms) that is not one of the
question's words or a chat speaker's name is multiplied by `1 + answerKindWeight`. It
only lifts, so the pool's floor stays where it was.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from lcm_core.text.answer_kinds import asked_kind, holds_kind


def kind_factors(
    texts: Mapping[int, str], question: str, known: Collection[str], weight: float
) -> dict[int, float]:
    """seq -> `1 + weight` for each turn holding the asked kind (none when nothing is asked)."""
    kind = asked_kind(question) if weight > 0 else None
    if kind is None:
        return {}
    return {seq: 1.0 + weight for seq, text in texts.items() if holds_kind(text, kind, known)}
