"""Fitting candidate entries into the token budget, section by section, in fixed order.

Each entry costs the tokens of its text plus a newline, and the first entry of a section
also pays for the section title; an entry that does not fit is left out with the tokens
it needed, and smaller entries after it may still fit. The sum of the costs is an upper
bound of the block's own count, so the block never exceeds the budget. A `Reserve` caps
what a group of sections may take (the standing rules, the resident set), so the step's
own entries always keep the rest of the budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from lcm_core.assembly.render import HEADER, SECTION_ORDER
from lcm_core.retrieval.ranked import Omission
from lcm_core.text.block_words import ZH, BlockWords
from lcm_core.text.tokens import estimate_tokens, per_text_cache

TokenMeter = Callable[[str], int]

# The estimate, counted once per entry text: a step's entries are mostly the last step's
# (the steps of one turn share its question; the task state, resident items and the turns
# they cite recur), and counting CJK characters costs more than looking a text up.
_estimate = per_text_cache(maxsize=8192)(estimate_tokens)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry that may go into the block: its section, a stable ref, and its text."""

    section: str
    ref: str
    text: str
    # Entries that together say part of this one (a quoted turn's items): when all of
    # them are in the block, `rest` is quoted instead, or nothing when `rest` is "".
    said_by: tuple[str, ...] = ()
    rest: str = ""
    # The line that heads this entry's group ("### 2026-11-30": the day a quoted turn was
    # said), paid for once by the group's first entry; grouped entries are shown by group
    # and `order` (the turn's seq), after the section's ungrouped ones.
    group: str = ""
    order: int = 0


@dataclass(frozen=True, slots=True)
class Reserve:
    """At most `tokens` for the entries (titles included) of the named sections together;
    `name` says whose share it is in an omission's reason."""

    sections: Collection[str]
    tokens: int
    name: str = "resident"


def choose_meter(meter: TokenMeter | None) -> tuple[TokenMeter, str, list[str]]:
    """The cost function and its token source; a failing host meter falls back to estimate."""
    if meter is None:
        return _estimate, "estimate", []

    def exact(text: str) -> int:
        value = meter(text)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"token meter returned {value!r}")
        return value

    try:
        exact(HEADER)
    except Exception as exc:
        return _estimate, "estimate", [f"token meter failed ({exc}); used the estimate"]
    return exact, "exact", []


def _grouped_lines(entries: Sequence[Candidate]) -> list[str]:
    """The section's lines: its ungrouped entries in the order kept, then each group under
    its heading, the groups and their entries in `(group, order)` order (days, then seqs:
    the turns of a day read as they were said)."""
    lines = [entry.text for entry in entries if not entry.group]
    heading = ""
    for entry in sorted((e for e in entries if e.group), key=lambda e: (e.group, e.order)):
        if entry.group != heading:
            heading = entry.group
            lines.append(heading)
        lines.append(entry.text)
    return lines


def pack(
    candidates: Sequence[Candidate],
    budget: int,
    cost: TokenMeter,
    reserves: Sequence[Reserve] = (),
    words: BlockWords = ZH,
) -> tuple[str, int, list[dict[str, Any]], list[Candidate], list[Omission]]:
    """Fill the budget in section order; returns text, tokens, section reports, kept, left out."""
    used = cost(words.header + "\n")
    if used > budget:
        reason = f"the header alone needs {used} tokens, more than the budget {budget}"
        return "", 0, [], [], [Omission(c.section, c.ref, reason) for c in candidates]
    parts = [words.header]
    reports: list[dict[str, Any]] = []
    kept: list[Candidate] = []
    omitted: list[Omission] = []
    reserved_used = [0] * len(reserves)
    placed: dict[str, str] = {}  # ref -> the section that holds it
    by_section: dict[str, list[Candidate]] = {}  # one pass, in the order given
    for candidate in candidates:
        by_section.setdefault(candidate.section, []).append(candidate)
    for section in SECTION_ORDER:
        if section not in by_section:
            continue
        capped = next((n for n, r in enumerate(reserves) if section in r.sections), None)
        title = words.section_titles[section]
        title_cost = cost("\n" + title + "\n")
        kept_here: list[Candidate] = []
        groups: set[str] = set()
        section_tokens = 0
        for candidate in by_section[section]:
            if candidate.ref in placed:
                reason = f"already in the {placed[candidate.ref]} section of this block"
                omitted.append(Omission(section, candidate.ref, reason))
                continue
            if candidate.said_by and all(ref in placed for ref in candidate.said_by):
                if not candidate.rest:
                    reason = f"{', '.join(candidate.said_by)} in this block says every word of it"
                    omitted.append(Omission(section, candidate.ref, reason))
                    continue
                # Its items are in: quote only what they leave out (no turn twice in full).
                candidate = dataclasses.replace(candidate, text=candidate.rest, said_by=())
            need = cost(candidate.text + "\n") + (0 if kept_here else title_cost)
            if candidate.group and candidate.group not in groups:
                need += cost(candidate.group + "\n")
            if used + need > budget:
                left = budget - used
                reason = f"needs {need} tokens, {left} of the budget {budget} left"
                omitted.append(Omission(section, candidate.ref, reason))
                continue
            if capped is not None and reserved_used[capped] + need > reserves[capped].tokens:
                share = reserves[capped]
                left = share.tokens - reserved_used[capped]
                reason = (
                    f"needs {need} tokens, {left} of the {share.name} share {share.tokens} left"
                )
                omitted.append(Omission(section, candidate.ref, reason))
                continue
            if capped is not None:
                reserved_used[capped] += need
            used += need
            placed[candidate.ref] = section
            section_tokens += need
            groups.add(candidate.group)
            kept_here.append(candidate)
            kept.append(candidate)
        if kept_here:
            parts.append(title + "\n" + "\n".join(_grouped_lines(kept_here)))
            reports.append(
                {
                    "name": section,
                    "title": title,
                    "entries": len(kept_here),
                    "tokens": section_tokens,
                    "refs": [candidate.ref for candidate in kept_here],
                }
            )
    return "\n\n".join(parts), used, reports, kept, omitted
