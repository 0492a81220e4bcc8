"""The words of the memory block: header, section titles, and one entry per candidate.

Titles and labels are short Chinese by default, or English (`block_words`); quoted
content keeps its own language. Every
stored text is quoted through `neutralize`, so a message that imitates our labels
(`[mem x]`, `[ev seq:9]`) or our header cannot pass for the real thing in the block.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from lcm_core.assembly.snippet import snippet
from lcm_core.extraction.correct import drop_replaced
from lcm_core.extraction.standing import RULE_SCOPE_KEY, retires, rule_key, shown_words
from lcm_core.extraction.values import shown_values, without_retired
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.quoting import EvidenceRow
from lcm_core.store.models import MemoryItem, Rule, TaskState
from lcm_core.text.block_words import ZH, BlockWords
from lcm_core.text.dates import said_on
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.numbers_role import flagged_numbers

HEADER_TAG: Final = "长对话记忆"
# The Chinese words under their old names; `block_words` has them for every language.
HEADER: Final = ZH.header
SECTION_ORDER: Final = (
    "task",
    "standing",
    "resident",
    "rules-core",
    "rules",
    "memory",
    "evidence",
    "notice",
)
SECTION_TITLES: Final = ZH.section_titles
KIND_LABELS: Final = ZH.kind_labels
EVIDENCE_LABELS: Final = ZH.evidence_labels
EVENT_LABELS: Final = ZH.event_labels
PROPOSAL_WARNING: Final = ZH.proposal_warning
CURRENT_STATE_WARNING: Final = ZH.current_state_warning
ELLIPSIS: Final = "…"
# Characters of another session's id a rule line shows (a UUID's first group).
ORIGIN_CHARS: Final = 8

# A bracket that opens one of our labels or the header tag, with or without its close.
_LABEL_WORDS: Final = rf"(?:mem|rule|ev)\b|{HEADER_TAG}|long-conversation-memory"
_CLOSED_LABEL_RE: Final = lazy_compile(rf"\[(\s*(?:{_LABEL_WORDS})[^\[\]\n]{{0,200}})\]", re.I)
_OPEN_LABEL_RE: Final = lazy_compile(rf"\[(?=\s*(?:{_LABEL_WORDS}))", re.I)
_SPACE_RUN_RE: Final = lazy_compile(r"[ \t]+")


def neutralize(text: str) -> str:
    """Turn label-like brackets in stored text into full-width ones the model cannot confuse."""
    if "[" not in text:  # both patterns open with a bracket: most texts have none
        return text
    text = _CLOSED_LABEL_RE.sub(lambda m: f"［{m.group(1)}］", text)
    return _OPEN_LABEL_RE.sub("［", text)


def excerpt(text: str, max_chars: int, focus: Sequence[str] = ()) -> str:
    """At most `max_chars` characters of `text`, centred on the first focus term found."""
    if len(text) <= max_chars:
        return text
    folded = text.casefold()
    positions = [p for p in (folded.find(term.casefold()) for term in focus) if p >= 0]
    center = min(positions) if positions else 0
    start = max(0, min(center - max_chars // 3, len(text) - max_chars))
    piece = text[start : start + max_chars]
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if start + max_chars < len(text) else ""
    return prefix + piece + suffix


def inline_quote(text: str, max_chars: int, focus: Sequence[str] = ()) -> str:
    """Stored text as one quoted line: newlines shown as ⏎, labels neutralised, clamped."""
    flat = text.replace("\n", " ⏎ ")
    if "  " in flat or "\t" in flat:  # else every run of spaces is one space already
        flat = _SPACE_RUN_RE.sub(" ", flat)
    flat = flat.strip()
    return f"“{neutralize(excerpt(flat, max_chars, focus))}”"


def block_quote(text: str, max_chars: int, focus: Sequence[str] = ()) -> list[str]:
    """Stored text as `  > ` lines, so no quoted line can start a section of its own."""
    body = neutralize(excerpt(text, max_chars, focus))
    return [f"  > {line}".rstrip() for line in body.split("\n")]


def _scope_text(scope: dict[str, Any]) -> str:
    parts = [
        f"{key}={json.dumps(scope[key], ensure_ascii=False, sort_keys=True)}"
        for key in sorted(scope)
    ]
    return neutralize("; ".join(parts))


def _number_text(number: dict[str, Any]) -> str:
    raw = number.get("raw") or number.get("text")
    if raw is None:
        value = number.get("value")
        raw = "" if value is None else str(value)
        unit = number.get("unit")
        if unit:
            raw = f"{raw} {unit}"
    return neutralize(str(raw))


def number_warning(item: MemoryItem, words: BlockWords = ZH) -> str | None:
    """A warning naming each number that lacks conditions or a unit, or None."""
    parts: list[str] = []
    for number in flagged_numbers(item):  # identifiers (ports) are never flagged
        has_conditions = bool(item.conditions) or bool(number.get("conditions"))
        has_unit = bool(number.get("unit"))
        missing = [
            name
            for ok, name in (
                (has_conditions, words.missing_conditions),
                (has_unit, words.missing_unit),
            )
            if not ok
        ]
        if missing:
            parts.append(
                words.number_missing.format(
                    number=_number_text(number), missing=words.missing_joiner.join(missing)
                )
            )
    if not parts:
        return None
    return words.number_warning.format(parts=words.number_joiner.join(parts))


def item_entry(
    item: MemoryItem,
    max_chars: int,
    focus: Sequence[str] = (),
    said: str | None = None,
    words: BlockWords = ZH,
    origin: str | None = None,
) -> str:
    """One memory item: label, kind (and evidence, when not the user's word), content, its
    sources and date on the same line, then conditions, scope and warnings.

    `said` is the ISO date of the item's newest source turn (see `said_on`), when known;
    `origin` is the other session of the project the item comes from (project scope).
    """
    kind = words.kind_labels.get(item.kind, item.kind)
    # The user's own word is the usual evidence; any other is said (a proposal, a skill).
    if item.evidence_type != "user_explicit":
        kind += "·" + words.evidence_labels.get(item.evidence_type, item.evidence_type)
    line = f"- [mem {item.id}] {kind}: {inline_quote(item.content, max_chars, focus)}"
    lines = [line + _provenance(item, said)]
    details: list[str] = []
    if item.conditions:
        details.append(
            words.conditions + words.detail_joiner.join(neutralize(c) for c in item.conditions)
        )
    # The subject key a fact was matched by is the store's, not news to the model.
    scope = {k: v for k, v in item.scope.items() if k not in (RULE_SCOPE_KEY, "subject")}
    if scope:
        details.append(words.scope + _scope_text(scope))
    if origin:
        details.append(words.from_session.format(session=neutralize(origin)))
    if details:
        lines.append("  " + words.detail_joiner.join(details))
    warning = number_warning(item, words)
    if warning:
        lines.append("  " + warning)
    if item.kind == "proposal" or item.evidence_type == "assistant_proposal":
        lines.append("  " + words.proposal_warning)
    return "\n".join(lines)


def _provenance(item: MemoryItem, said: str | None) -> str:
    """ " · seq:3, seq:5 · 2026-11-30": the turns an entry came from and when, on its line."""
    seqs = source_seqs(item)
    text = " · " + ", ".join(f"seq:{seq}" for seq in seqs) if seqs else ""
    return text + (f" · {said}" if said else "")


def rule_entry_of_item(
    item: MemoryItem,
    max_chars: int,
    said: str | None = None,
    words: BlockWords = ZH,
    replaced: Sequence[str] = (),
    origin: str | None = None,
) -> str:
    """One standing rule: the subject it governs, its words and the day it was said.

    Shown without the values it names as replaced ("…, not 'a_'", or a clause naming only
    a value of a `replaced` rule's words: an old value is listed as old in the notice, when
    it is in memory) and without an opener that only says a
    rule follows; a rule of another session of the project names that session by the
    start of its id (`lcm inspect` the `[mem …]` id for the whole of it). Its
    numbers get no warning: a rule sets its value, it does not report a measurement.
    """
    content = drop_replaced(item.content)
    for old in replaced:  # the words of the rules it replaced, shown as old in the notice
        content = shown_values(content, old)
    content = shown_words(without_retired(content, retires))
    label = words.rule_label.format(key=neutralize(rule_key(item.scope)))
    line = f"- [mem {item.id}] {label}: {inline_quote(content, max_chars)}"
    line += _provenance(item, said)
    if origin:  # another session of the project: its id's start (`lcm inspect` the item)
        short = neutralize(origin[:ORIGIN_CHARS])
        line += f" · {words.rule_origin.format(session=short)}"
    if not item.conditions:
        return line
    # A condition says no old value either: "after 60 seconds now instead of 30s".
    conditions = words.detail_joiner.join(neutralize(drop_replaced(c)) for c in item.conditions)
    return f"{line}\n  {words.conditions}{conditions}"


def evidence_entry(
    row: EvidenceRow,
    max_chars: int,
    words: BlockWords = ZH,
    terms: Mapping[str, float] | None = None,
    snippet_chars: int = 0,
) -> str:
    """One raw event on one line: its `[ev seq:N]` label and its words verbatim, a longer
    event by its matching sentences (`snippet`); the day it was said heads its group
    (`evidence_day`), so a block quoting ten turns of one day says the date once.

    A user's message needs no label of its type (most evidence is one); another type
    says what it is. Which items it supports and which turn it sits beside are in
    `explain`, not in the block: the item lines name their sources, and the tokens go to
    more evidence.
    """
    event = row.event
    head = f"- [ev seq:{event.seq}]"
    if event.type != "user/message":
        head += " " + words.event_labels.get(event.type, event.type) + ":"
    text = row.text
    if terms is not None and snippet_chars > 0:
        text = snippet(text, terms, snippet_chars, row.matched)
    return f"{head} {inline_quote(text, max_chars, row.matched)}"


def evidence_day(row: EvidenceRow) -> str:
    """The line that heads the quoted events of one day ("### 2026-11-30"), or "" when the
    event carries no time."""
    said = said_on(row.event.time)
    return f"### {said}" if said else ""


def task_entries(state: TaskState, max_chars: int, words: BlockWords = ZH) -> list[tuple[str, str]]:
    """The task state as (ref, line) pairs: goal, then progress, blockers, open items."""
    labels = words.task_labels
    entries: list[tuple[str, str]] = []
    if state.goal:
        entries.append(("goal", f"- {labels['goal']}: {inline_quote(state.goal, max_chars)}"))
    for field, values in (
        ("progress", state.progress),
        ("blockers", state.blockers),
        ("open_items", state.open_items),
    ):
        for index, value in enumerate(values):
            line = f"- {labels[field]}: {inline_quote(value, max_chars)}"
            entries.append((f"{field}[{index}]", line))
    return entries


def rule_entry(rule: Rule, max_chars: int, words: BlockWords = ZH) -> str:
    """One task-relevant rule with where it comes from, its scope and a state warning."""
    where = rule.source_path or rule.skill_name
    if rule.source_line is not None:
        where = f"{where}:{rule.source_line}"
    place = words.rule_where.format(where=neutralize(where))
    lines = [f"- [rule {rule.id}] {inline_quote(rule.text, max_chars)}{place}"]
    if rule.scope:
        lines.append("  " + words.scope + _scope_text(rule.scope))
    if rule.category == "current_state":
        lines.append("  " + words.current_state_warning)
    return "\n".join(lines)


def superseded_entry(old: MemoryItem, new_id: str, max_chars: int, words: BlockWords = ZH) -> str:
    """An old value that a correction replaced; shown so it is not mistaken for current."""
    quote = inline_quote(old.content, max_chars)
    return words.superseded.format(new_id=new_id, old_id=old.id, quote=quote)


def disputed_entry(item: MemoryItem, max_chars: int, words: BlockWords = ZH) -> str:
    """One side of a conflict the user has not resolved."""
    return words.disputed.format(id=item.id, quote=inline_quote(item.content, max_chars))


def disputed_summary(count: int, words: BlockWords = ZH) -> str:
    return words.disputed_summary.format(count=count)


def old_task_entry(value: str, max_chars: int, words: BlockWords = ZH) -> str:
    return words.old_task.format(quote=inline_quote(value, max_chars))
