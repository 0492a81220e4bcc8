"""Every ranking signal declared once: its name, stage, setting, what it does and its ablation.

`retrieval.ablate` and `lcm bench retrieval --ablate` take these names; the formula that
combines them is `retrieval.scoring`'s docstring, and docs/ranking.md's table is written
from this list (`python -m lcm_core.retrieval.reference --write`; `--check` in lint and
in tests/core/test_ranking_reference.py). A signal's strength is read through `strength`,
so switching one off never needs a check of its own at the place it acts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from lcm_core.config.sections import RetrievalSettings


@dataclass(frozen=True, slots=True)
class Signal:
    """One ranking signal: where it acts, the setting that holds its strength, what it does."""

    name: str  # the ablation name
    stage: str  # one of STAGES
    applies: str  # what it moves: turns, items, or both
    setting: str  # the `retrieval.*` field of its strength, "" when it has none
    does: str
    off: str  # what switching it off does
    # The strength when switched off: 0 takes a boost or a penalty away; a share that
    # lowers an offer is 1 when off (the offer is kept whole).
    off_value: float = 0.0


# The stages in the order a step runs them (`retrieval.scoring` states each).
STAGES: Final[dict[str, str]] = {
    "query": "how the question becomes terms",
    "retriever": "the retriever's own relevance (`retrieval.retriever`: lexical)",
    "lift": "applied to the pool's turns after any retriever",
    "pool": "which candidates compete",
    "score": "a candidate's score from its relevance (a raw turn has no kind or evidence type)",
    "evidence": "the turns quoted beside a match",
}

SIGNALS: Final[tuple[Signal, ...]] = (
    Signal(
        "stemming",
        "query",
        "turns and items",
        "",
        "English words are matched by their Snowball stem (`painted` finds `paint`)",
        "words are matched as written, not by their Snowball stem",
    ),
    Signal(
        "stopwords",
        "query",
        "turns and items",
        "",
        "function words and CJK grammar bigrams are no terms",
        "function words count like any other term",
    ),
    Signal(
        "bridge",
        "query",
        "turns and items",
        "",
        "English and Chinese words of the question add their translations at `BRIDGE_WEIGHT`",
        "no English-Chinese query expansion",
    ),
    Signal(
        "concepts",
        "query",
        "turns and items",
        "",
        "an everyday concept the question names (hobbies, job, family, 爱好) adds the words "
        "of its parts (enjoy, favourite; 喜欢) at `CONCEPT_WEIGHT`",
        "no concept expansion: only the question's own words and their translations",
    ),
    Signal(
        "idf",
        "retriever",
        "turns and items",
        "",
        "a term weighs by how rare it is among the session's turns",
        "every term weighs the same (no inverse document frequency)",
    ),
    Signal(
        "context",
        "retriever",
        "turns",
        "context_weight",
        "a turn adds a share of the relevance of the message right before it",
        "a turn is scored without the message before it",
    ),
    Signal(
        "episode",
        "retriever",
        "turns",
        "episode_weight",
        "the turns of the day (episode) that matches best rise together",
        "no prior for the session day (episode) a turn belongs to",
    ),
    Signal(
        "speaker",
        "lift",
        "turns",
        "speaker_weight",
        'a chat log\'s turn whose speaker ("Emi: ...") the question names is lifted; '
        'another spelling of the name, or the name the other speaker calls her by ("Hey '
        'Kate!"), names her too',
        "a question naming a chat log's speaker does not favour that speaker's turns",
    ),
    Signal(
        "day",
        "lift",
        "turns",
        "day_weight",
        "a turn said on a day the question names, or calling it yesterday or tomorrow",
        "a question naming a date does not favour the turns said that day",
    ),
    Signal(
        "answer-kind",
        "lift",
        "turns",
        "answer_kind_weight",
        "among the best `rerankDepth` turns, one holding the asked kind of token "
        "(a date for when, a place, a name, a number)",
        "a turn holding the kind of token the question asks for is not lifted",
    ),
    Signal(
        "items",
        "pool",
        "items",
        "",
        "memory items compete beside raw turns",
        "memory items do not compete; only raw turns",
    ),
    Signal(
        "raw-turns",
        "pool",
        "turns",
        "",
        "raw turns compete beside items (a fact said in passing)",
        "raw user turns do not compete; only items and their sources",
    ),
    Signal(
        "priors",
        "score",
        "items",
        "prior_share",
        "kind and evidence type move a score by at most `priorShare`",
        "kind and evidence type do not move a score",
    ),
    Signal(
        "intent",
        "score",
        "items",
        "intent_boost",
        "a question about a rule or liking lifts preferences, constraints and decisions",
        "a question about a rule or liking does not favour such items",
    ),
    Signal(
        "exact-boost",
        "score",
        "turns and items",
        "exact_match_boost",
        "exact identifiers, numbers, paths or quoted phrases of the question lift",
        "no boost for exact identifiers, numbers, paths or phrases",
    ),
    Signal(
        "supersession",
        "score",
        "items",
        "",
        "an item still carrying a superseded_by link loses `SUPERSESSION_PENALTY`",
        "an item with a superseded_by link keeps its whole score",
    ),
    Signal(
        "recency",
        "score",
        "turns and items",
        "recency_boost",
        "a source within `recencyWindow` seqs of the checkpoint (else the newest event) lifts",
        "no boost for recent sources",
    ),
    Signal(
        "redundancy",
        "score",
        "items",
        "redundancy_penalty",
        "an item whose every source a better item already cites is lowered",
        "an item whose source turns a better item already cites keeps its score",
    ),
    Signal(
        "neighbours",
        "evidence",
        "turns",
        "neighbour_share",
        "a quotable turn next to a strong match is offered a share of its score",
        "the turns next to a strong match are not quoted with it",
    ),
    Signal(
        "speaker-neighbours",
        "evidence",
        "turns",
        "neighbour_other_speaker",
        "in a chat log, a neighbour the other speaker said is offered less",
        "a neighbour said by the other speaker of a chat log is offered as much",
        off_value=1.0,
    ),
)

BY_NAME: Final[dict[str, Signal]] = {signal.name: signal for signal in SIGNALS}
# Name -> what switching it off does: `--ablate list`.
ABLATIONS: Final[dict[str, str]] = {signal.name: signal.off for signal in SIGNALS}


def ablated(retrieval: RetrievalSettings, name: str) -> bool:
    """True when `retrieval.ablate` switches this signal off (a name not declared is a bug)."""
    return BY_NAME[name].name in retrieval.ablate


def strength(retrieval: RetrievalSettings, name: str) -> float:
    """The signal's setting, or its `off_value` when `retrieval.ablate` switches it off."""
    signal = BY_NAME[name]
    if not signal.setting:
        raise ValueError(f"ranking signal {name!r} has no setting: ask `ablated` instead")
    if signal.name in retrieval.ablate:
        return signal.off_value
    value: float = getattr(retrieval, signal.setting)
    return value
