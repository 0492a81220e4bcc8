"""Every setting lcm reads, declared once: its typed field, default, bounds or choices, help.

Each section is a frozen dataclass whose fields are settings (`lcm_core.config.declare`
says how one is written). From these declarations `lcm_core.config` derives `DEFAULTS`,
`LIMITS`, the typed sections of a `Config` and `json_schema()`, and
`lcm_core.config.reference` writes the settings reference, docs/settings.md. A new
setting is one field here, then `python -m lcm_core.config.reference --write`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from lcm_core.config.declare import Section, Setting, declared, setting


@dataclass(frozen=True, slots=True)
class TopSettings(Section):
    """The keys outside any section."""

    data_dir: str = setting(
        "",
        help="the original plugin's data folder, accepted and not read: the database is "
        "`--db`, `$LCM_DB` or the default path",
    )


@dataclass(frozen=True, slots=True)
class CaptureSettings(Section):
    """`capture.*`: whether host events are stored, and what text is withheld from the store."""

    enabled: bool = setting(True, help="store the host's events (false: nothing is captured)")
    private_patterns: tuple[str, ...] = setting(
        (),
        help="regular expressions (Python syntax) whose matches are stored as `[private]`, "
        "like `<private>` spans (always hidden); one that does not compile or matches the "
        "empty string is left out with a warning",
    )
    redact: bool = setting(
        False,
        help="replace secret-shaped strings (keys, tokens, passwords, private keys: what "
        "`lcm export --redact` replaces) by `[REDACTED:kind]` before events are stored",
    )


@dataclass(frozen=True, slots=True)
class ArchiveSettings(Section):
    """`archive.*`: how much text one event may keep before the rest goes to the archive."""

    max_chars_per_event: int = setting(
        100_000,
        low=1_000,
        high=5_000_000,
        help="the most characters of an event's full text kept in its archive row (the "
        "event row itself keeps the first 20 000); the rest is dropped",
    )


@dataclass(frozen=True, slots=True)
class ExtractionSettings(Section):
    """`extraction.*`: whether memory is derived, and how often a failed event is retried."""

    enabled: bool = setting(
        True, help="derive memory items from the messages (false: events are only stored)"
    )
    max_attempts: int = setting(
        3,
        low=1,
        high=100,
        help="how many times extraction tries an event that failed before giving it up",
    )


@dataclass(frozen=True, slots=True)
class RetrievalSettings(Section):
    """`retrieval.*`: the weights and limits of ranking and raw evidence."""

    retriever: str = setting(
        "lexical",
        choices=("lexical", "plain"),
        help="what pools and scores the candidates before the lifts and priors: `lexical` "
        "(BM25 with the previous message and the day as context) or `plain` (the same "
        "BM25 of a turn's own text only); docs/ranking.md",
    )
    min_score: float = setting(
        0.5, low=0.0, high=10.0, help="the least score (BM25 units) an item or raw turn needs"
    )
    limit: int = setting(24, low=1, high=100, help="items per block at most")
    exact_match_boost: float = setting(
        0.5,
        low=0.0,
        high=5.0,
        help="up to +50% for exact identifiers, numbers, paths, quoted phrases",
    )
    recency_boost: float = setting(
        0.05,
        low=0.0,
        high=1.0,
        help="+5% for a source within `retrieval.recencyWindow` seqs of the newest event",
    )
    prior_share: float = setting(
        0.1, low=0.0, high=0.5, help="the most kind and evidence type move a score (±10%)"
    )
    context_weight: float = setting(
        0.3, low=0.0, high=1.0, help="share of the previous message's relevance a turn adds"
    )
    episode_weight: float = setting(
        0.5, low=0.0, high=2.0, help="how much the turn's day (episode) as a whole lifts it"
    )
    speaker_weight: float = setting(
        1.0,
        low=0.0,
        high=2.0,
        help='+100% for a turn of a chat log ("Emi: ...") whose speaker the question names',
    )
    day_weight: float = setting(
        1.0,
        low=0.0,
        high=2.0,
        help='+100% for a turn said on a day the question names ("on 29 Dec 2023", '
        '"10.01.2024", "11月30日"), or that calls it "yesterday" / "tomorrow" (昨天 / 明天) '
        "the day after or before",
    )
    rerank_depth: int = setting(
        50,
        low=0,
        high=400,
        help="the best turns by relevance looked at again for `answerKindWeight` "
        "(0 switches the second look off)",
    )
    answer_kind_weight: float = setting(
        0.6,
        low=0.0,
        high=2.0,
        help="+60% for a turn holding the kind of token the question asks for: a date for "
        '"when" (什么时候), a place for "where" (哪里), a name for "who" (谁), a number for '
        '"how many" (多少)',
    )
    redundancy_penalty: float = setting(
        0.6,
        low=0.0,
        high=0.9,
        help="share taken off an item whose every source turn a better-ranked item already "
        "cites: it adds no evidence",
    )
    intent_boost: float = setting(
        0.5,
        low=0.0,
        high=1.0,
        help="+50% for preferences, constraints and decisions when the question asks about "
        "a rule or a liking",
    )
    relative_min_score: float = setting(
        0.22,
        low=0.0,
        high=1.0,
        help="a candidate also needs this share of the best candidate's score (beside "
        "`minScore`): where relevance runs out, the block stops",
    )
    recency_window: int = setting(
        40,
        low=0,
        high=100_000,
        help="how many seqs before the newest event count as recent for `recencyBoost`",
    )
    evidence_limit: int = setting(
        80,
        low=0,
        high=100,
        help="quoted turns per block at most (the token budget still applies)",
    )
    neighbour_share: float = setting(
        0.6,
        low=0.0,
        high=1.0,
        help="a quotable turn of the same day within `neighbourRadius` seqs of a match gets "
        "this share of its score, divided by the distance (0 switches neighbours off)",
    )
    neighbour_radius: int = setting(
        3,
        low=0,
        high=5,
        help="how many seqs either side of a match its neighbours may lie (0 switches them off)",
    )
    neighbour_other_speaker: float = setting(
        0.5,
        low=0.0,
        high=1.0,
        help="in a chat log, a neighbour said by another speaker than the match gets this "
        "share of its offer (the same speaker going on carries the answer more often)",
    )
    ablate: tuple[str, ...] = setting(
        (),
        help="ranking features switched off, for measurement "
        "(`lcm bench retrieval --ablate list` names them)",
    )


@dataclass(frozen=True, slots=True)
class AssemblySettings(Section):
    """`assembly.*`: the budget and what the block may quote."""

    soft_budget_tokens: int = setting(3000, low=50, high=200_000, help="the block's token budget")
    min_budget_tokens: int = setting(
        600,
        low=50,
        high=200_000,
        help="the least budget: a smaller `softBudgetTokens` is raised to it",
    )
    host_share: float = setting(
        0.1,
        low=0.0,
        high=1.0,
        help="where the host says at how many tokens it compacts (DSH) or how large its "
        "context is (Claude Code), the budget is at most this share of it (never below "
        "`minBudgetTokens`, never above `softBudgetTokens`); 0 keeps the fixed budget",
    )
    skip_when_empty: bool = setting(
        True,
        help="send no memory message when nothing relevant is stored (false: a message saying "
        "so, telling the model to answer “insufficient evidence” rather than invent history)",
    )
    evidence_types: tuple[Any, ...] = setting(
        ("user/message",), help="event types that may be quoted verbatim"
    )
    max_evidence_chars: int = setting(
        600, low=40, high=100_000, help="the most characters one quoted turn may show"
    )
    snippet_chars: int = setting(
        120,
        low=0,
        high=100_000,
        help="a longer quoted turn shows only its sentences that match the question, about "
        "this many characters (0 quotes turns whole, up to `maxEvidenceChars`)",
    )
    language: str = setting(
        "auto",
        choices=("auto", "zh", "en"),
        help="block headings: `auto` (the user's language), `zh`, `en`",
    )
    resident_share: float = setting(
        0.5,
        low=0.0,
        high=1.0,
        help="share of the budget the resident set may take after a compaction",
    )
    rules_share: float = setting(
        0.25,
        low=0.0,
        high=1.0,
        help="share of the budget the user's standing rules (a section of their own at every "
        "step) may take",
    )


@dataclass(frozen=True, slots=True)
class DiagnosticsSettings(Section):
    """`diagnostics.*`: how many assembly log rows a session keeps."""

    assembly_log_retention: int = setting(
        200,
        low=1,
        high=100_000,
        help="assembly log rows a session keeps (`lcm explain`); older ones are deleted",
    )


@dataclass(frozen=True, slots=True)
class CompatibilitySettings(Section):
    """`compatibility.*`: the host's compaction policy and re-injection after it."""

    compaction_policy: str = setting(
        "auto",
        choices=("auto", "compaction-basic", "billion-context", "none"),
        help="`auto` detects compaction from `compaction/*` events; `compaction-basic`: the "
        "host runs a pre-step before every model call; `billion-context`: a gating "
        "compressor may skip pre-steps, so each one that arrives assembles in full; `none`: "
        "compaction is not tracked and the block says so",
    )
    reinject_after_compaction: bool = setting(
        True,
        help="after a compaction, bring back the items whose sources left the context "
        "(false trusts the host's summary)",
    )


@dataclass(frozen=True, slots=True)
class SkillsSettings(Section):
    """`skills.*`: which SKILL.md files are read and how much of them assembly uses."""

    include: tuple[Any, ...] = setting(
        (),
        help="glob patterns (relative to the working folder, `~` for home) of the SKILL.md "
        "files, or their folders, to read; empty reads none",
    )
    exclude: tuple[Any, ...] = setting(
        (), help="glob patterns of SKILL.md files left out of what `include` finds"
    )
    core_lines_per_skill: int = setting(
        6,
        low=0,
        high=50,
        help="workflow rules of each enabled skill shown in the resident core",
    )
    rule_limit: int = setting(
        8, low=0, high=100, help="skill rules matched to the task shown at a step at most"
    )


@dataclass(frozen=True, slots=True)
class ValidationSettings(Section):
    """`validation.*`: post-step checks, tool preconditions and repair attempts."""

    checks: tuple[Any, ...] = setting(
        (),
        help="checks of each assistant message: objects with a `type` (`required_terms`, "
        "`forbidden_terms`, `numbers_with_conditions`, `script`) and its options",
    )
    preconditions: tuple[Any, ...] = setting(
        (),
        help="tool-call rules `{id?, pathPattern, mustExist | mustNotExist, tools?, reason?}`: "
        "a call naming a matching path is denied before it runs when the rule fails",
    )
    block_on_violation: bool = setting(
        False,
        help="a violated check blocks the message and asks for a repair (a check's own "
        "`block` wins)",
    )
    max_repair_attempts: int = setting(
        2,
        low=0,
        high=20,
        help="repair reminders a session gets at most; attempts are never reset",
    )
    script_dir: str = setting(
        "",
        help="the folder `script` checks may run .py files from (relative to the working "
        "folder); empty disables script checks",
    )


@dataclass(frozen=True, slots=True)
class HostSettings(Section):
    """`host.*`: how long a pre-step may take before the step goes on without memory."""

    pre_step_deadline_ms: int = setting(
        1500,
        low=50,
        high=60_000,
        help="how long the DSH plugin waits for a pre-step or a tool check before the step "
        "goes on without memory (the plugin's own `deadlineMs` wins)",
    )


@dataclass(frozen=True, slots=True)
class MemorySettings(Section):
    """`memory.*`: whether a pre-step draws on the project's other sessions, and the project id."""

    scope: str = setting(
        "session",
        choices=("session", "project"),
        help="`session`: a pre-step draws on this session only; `project`: also on the "
        "durable items of the other sessions of the same project",
    )
    project: str = setting(
        "",
        help="the project id (`$LCM_PROJECT` wins); empty: the git top-level of the working "
        "folder, else the folder itself",
    )


@dataclass(frozen=True, slots=True)
class HooksSettings(Section):
    """`hooks.*`: how long a hook's `additionalContext` may be (whole entries are cut)."""

    # Claude Code is reported to cut a long additionalContext to a short preview (~10 KB).
    max_context_chars: int = setting(
        8000,
        low=500,
        high=1_000_000,
        help="the longest `additionalContext` a Claude Code hook returns; whole entries are "
        "cut (Claude Code is reported to cut a long one to a ~10 KB preview)",
    )


# File key -> typed section, in the order settings are checked and listed ("" is the top).
SECTIONS: Final[dict[str, type[Section]]] = {
    "": TopSettings,
    "capture": CaptureSettings,
    "archive": ArchiveSettings,
    "extraction": ExtractionSettings,
    "retrieval": RetrievalSettings,
    "assembly": AssemblySettings,
    "diagnostics": DiagnosticsSettings,
    "compatibility": CompatibilitySettings,
    "skills": SkillsSettings,
    "validation": ValidationSettings,
    "host": HostSettings,
    "memory": MemorySettings,
    "hooks": HooksSettings,
}


def all_settings() -> list[Setting]:
    """Every setting, section by section in `SECTIONS` order."""
    return [entry for key, section in SECTIONS.items() for entry in declared(key, section)]
