"""What a block would say twice: turns of one shape, and the part of a turn its items say.

A navigation step ("look at src/module_45.py") matches every turn of that shape; a
quoted turn repeats the items that came from it. Both cost tokens and add nothing, so
the block quotes the best few of a shape and names the rest, and quotes of a turn only
the sentences its items leave out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from lcm_core.assembly.packing import Candidate
from lcm_core.assembly.snippet import sentence_spans
from lcm_core.extraction.correct import correction_cue
from lcm_core.extraction.standing import vocabulary
from lcm_core.retrieval.quoting import EvidenceRow
from lcm_core.retrieval.ranked import Omission
from lcm_core.text.block_words import BlockWords
from lcm_core.text.languages import en
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.relevance import relevance_tokens
from lcm_core.text.tokens import WORD_RUN_RE, normalize_text, per_text_cache

# Turns of one shape (the same words, other numbers) quoted at most; the others are named.
SIMILAR_QUOTED: Final = 5
_NAMED: Final = 12
_DIGITS_RE: Final = lazy_compile(r"\d+")


def few_of_each_shape(
    rows: Sequence[EvidenceRow], words: BlockWords
) -> tuple[list[EvidenceRow], list[Omission], list[Candidate]]:
    """The rows to quote when many say the same thing with other numbers.

    "Let's look at file src/module_45.py next" matches every "src/module_N" line ever
    said: the best `SIMILAR_QUOTED` of such a shape are quoted, the others left out with
    their reason and named on one line, so the model knows they exist without reading
    them. Rows keep their order.
    """
    groups: dict[str, list[EvidenceRow]] = {}
    for row in rows:
        groups.setdefault(_shape(row.text), []).append(row)
    dropped: set[str] = set()
    omitted: list[Omission] = []
    summaries: list[Candidate] = []
    for group in groups.values():
        if len(group) <= SIMILAR_QUOTED:
            continue
        best = sorted(group, key=lambda r: (-r.score, r.event.seq))
        kept, rest = best[:SIMILAR_QUOTED], best[SIMILAR_QUOTED:]
        lead = kept[0].ref
        for row in rest:
            dropped.add(row.ref)
            reason = f"one of {len(group)} turns like {lead}; the best {SIMILAR_QUOTED} are quoted"
            omitted.append(Omission("evidence", row.ref, reason))
        named = ", ".join(row.ref for row in sorted(rest, key=lambda r: r.event.seq)[:_NAMED])
        more = "" if len(rest) <= _NAMED else ", …"
        line = words.similar.format(count=len(rest), ref=lead, refs=named + more)
        summaries.append(Candidate("evidence", f"alike:{lead}", line))
    return [row for row in rows if row.ref not in dropped], omitted, summaries


@per_text_cache(maxsize=4096)
def _shape(text: str) -> str:
    """A text with its digits as `#` and its spacing and case folded: turns of one shape
    differ only in their numbers (file and case numbers, ids, ports)."""
    return _DIGITS_RE.sub("#", " ".join(normalize_text(text).casefold().split()))


def beside_items(
    row: EvidenceRow, selected: Mapping[str, str], weights: Mapping[str, float]
) -> tuple[tuple[str, ...], str]:
    """The items a quoted turn's words come from, and what of the turn they leave out.

    When every selected item citing the turn is in the block, the turn is quoted only by
    its sentences that say something the items do not (a word they lack, stop words and
    a correction's lead such as "Correction:" or "不对，" aside) and that match the
    question (an exact term or a relevance term); "" when none does, and the turn is
    left out. `selected` maps each selected item's id to its content. An id cited twice,
    or not selected, leaves the list short: the turn is quoted whole.
    """
    item_ids = row.item_ids
    contents = [selected[item_id] for item_id in set(item_ids) if item_id in selected]
    if not contents or len(contents) < len(item_ids):
        return (), ""
    said = frozenset().union(*(_words(c) for c in contents))
    exact = [term.casefold() for term in row.matched if term]
    kept = [
        piece
        for piece in (row.text[start:end].strip() for start, end in sentence_spans(row.text))
        if _new_words(piece, said)
        and (
            any(term in piece.casefold() for term in exact)
            or any(weights.get(t, 0.0) > 0.0 for t in relevance_tokens(piece))
        )
    ]
    return item_ids, " … ".join(kept)


@per_text_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """A text's runs of letters and digits, casefolded: every number however short, and a
    Chinese phrase whole, so a changed digit or a dropped 不 is a word the item lacks."""
    return frozenset(run.casefold() for run in WORD_RUN_RE.findall(normalize_text(text)))


def _new_words(piece: str, said: frozenset[str]) -> frozenset[str]:
    """The words of a sentence its items lack, not counting stop words, its correction lead
    or its label: "Correction: the batch size is 1000." and "约束：周末不安排工作会议" say
    nothing their items do not."""
    cue = correction_cue(piece)
    body = vocabulary().labelled.sub("", cue.body if cue is not None else piece)
    return frozenset(w for w in _words(body) - said if w not in en.STOP_WORDS)
