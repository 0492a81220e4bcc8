"""The entries a memory block could hold, in priority order, with retrieval's omissions.

`collect_candidates` reads the step's text (or falls back to the newest stored user
message), retrieves items and raw turns, and turns the task state, the resident set,
skill rules, ranked items, quoted turns and notices into `Candidate` entries; what an
earlier block still in context shows word for word is left out (`drop_shown_entries`).
`assemble` packs them under the budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final

from lcm_core.assembly.compaction import CompactionStatus
from lcm_core.assembly.packing import Candidate
from lcm_core.assembly.recall import HeldBack, asks_about_past, replaced_values
from lcm_core.assembly.render import (
    disputed_entry,
    disputed_summary,
    evidence_day,
    evidence_entry,
    item_entry,
    old_task_entry,
    rule_entry,
    rule_entry_of_item,
    superseded_entry,
    task_entries,
)
from lcm_core.assembly.repeats import beside_items, few_of_each_shape
from lcm_core.assembly.resident import pending_resident
from lcm_core.assembly.step import StepMessage, VisibleText, task_text
from lcm_core.capture.events import is_user_input
from lcm_core.config import Config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.evidence import retrieve
from lcm_core.retrieval.project import project_scope
from lcm_core.retrieval.quoting import EvidenceRow
from lcm_core.retrieval.rank import ALREADY_SHOWN, ON_SCREEN
from lcm_core.retrieval.ranked import Omission
from lcm_core.retrieval.retriever import Retriever, question_terms
from lcm_core.retrieval.said import said_dates
from lcm_core.retrieval.shown import Shown, entry_key
from lcm_core.retrieval.standing import rules_in_force
from lcm_core.store.models import MemoryItem, Rule
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import BlockWords, block_words
from lcm_core.text.query import (
    LOGGED_QUERY_CHARS,
    QuerySignals,
    query_signals,
    search_terms,
)

# Returns the resident skill core lines and the task-relevant rules for a query.
RuleProvider = Callable[[MemoryStore, QuerySignals, Config], tuple[Sequence[str], Sequence[Rule]]]

# How far back the task-text fallback looks for the newest user message, in seqs.
_FALLBACK_WINDOWS: Final = (64, 512, 4096)
# The events whose user messages decide the block's language under `auto`.
_LANGUAGE_WINDOW: Final = 64
_DISPUTED_SHOWN: Final = 6
# Why a selected item's source is not quoted while the item is in the resident section.
RESIDENT_SOURCE: Final = "source of a resident item; the item itself is restated"
# Why a turn is not quoted when every item it supports is a standing rule of the block.
RULE_SOURCE: Final = "source of a standing rule; the rule itself is restated"


def session_words(
    store: MemoryStore,
    session_id: str,
    config: Config,
    task: str | None,
    newest: int | None,
) -> BlockWords:
    """The block's words per `assembly.language`; `auto` reads the user's recent messages."""
    setting = config.assembly.language
    if setting != "auto":
        return block_words(setting, ())
    texts = [task] if task else []
    if newest is not None:
        recent = store.list_events(
            session_id,
            start_seq=max(newest - _LANGUAGE_WINDOW, 0),
            end_seq=newest,
            types=["user/message"],
        )
        texts += [e.text for e in recent if is_user_input(e) and e.text]
    return block_words(setting, texts)


def fallback_task_text(store: MemoryStore, session_id: str, newest: int | None) -> str:
    """The newest stored user-typed message, for a step whose messages carry none."""
    if newest is None:
        return ""
    for window in _FALLBACK_WINDOWS:
        events = store.list_events(
            session_id, start_seq=max(newest - window, 0), end_seq=newest, types=["user/message"]
        )
        for event in reversed(events):
            if is_user_input(event) and event.text:
                return event.text
        if newest - window <= 0:
            break
    return ""


class _Visibility:
    """Tells which items have every source event on screen in this step."""

    def __init__(self, store: MemoryStore, session_id: str, visible: VisibleText) -> None:
        self._store, self._session_id, self._visible = store, session_id, visible

    def item_ids(self, items: Sequence[MemoryItem]) -> frozenset[str]:
        """The ids among `items` whose cited events are all still visible (one store read)."""
        cited = {
            item.id: source_seqs(item) for item in items if item.session_id == self._session_id
        }
        wanted = sorted({seq for seqs in cited.values() for seq in seqs})
        if not self._visible or not wanted:
            return frozenset()
        events = {e.seq: e for e in self._store.get_events(self._session_id, wanted)}
        shown = {seq for seq, event in events.items() if self._visible.contains_event(event)}
        return frozenset(item_id for item_id, seqs in cited.items() if seqs and set(seqs) <= shown)


def _origin(item: MemoryItem, session_id: str) -> str | None:
    """The other session an item comes from (project scope), None for this session's own."""
    return item.session_id if item.session_id != session_id else None


def _notice_candidates(
    store: MemoryStore,
    session_id: str,
    current: Sequence[MemoryItem],
    signals: QuerySignals,
    status: CompactionStatus,
    old_task_values: Sequence[str],
    max_chars: int,
    words: BlockWords,
) -> list[Candidate]:
    notices: list[Candidate] = []
    if status.notice:
        # The one notice compaction gives: its policy is `none`, so it is not tracked.
        notices.append(Candidate("notice", "compaction-policy", f"- {words.untracked_compaction}"))
    for item in current:
        for old_id in item.supersedes:
            old = store.get_item(old_id)
            if old is not None and old.status == "superseded":
                text = superseded_entry(old, item.id, max_chars, words)
                notices.append(Candidate("notice", old.id, text))
    disputed = store.list_items(session_id, statuses=("disputed",))
    if disputed:
        terms = search_terms(signals)
        if terms:
            hits = store.search_items(
                session_id, terms, statuses=("disputed",), limit=_DISPUTED_SHOWN
            )
            for hit in sorted(hits, key=lambda h: h.item.id):
                notices.append(
                    Candidate("notice", hit.item.id, disputed_entry(hit.item, max_chars, words))
                )
        summary = disputed_summary(len(disputed), words)
        notices.append(Candidate("notice", "disputed-count", summary))
    for index, value in enumerate(old_task_values):
        line = old_task_entry(value, max_chars, words)
        notices.append(Candidate("notice", f"task-old[{index}]", line))
    return notices


def drop_shown_entries(
    candidates: list[Candidate], shown: Shown
) -> tuple[list[Candidate], list[Omission]]:
    """Leave out entries an earlier block still in context holds word for word.

    The host keeps our earlier blocks in the history, so the task state, resident
    rules and notices would otherwise be repeated at every step.
    """
    if not shown.entries:
        return candidates, []
    kept: list[Candidate] = []
    dropped: list[Omission] = []
    for candidate in candidates:
        if entry_key(candidate.text) in shown.entries:
            dropped.append(Omission(candidate.section, candidate.ref, ALREADY_SHOWN))
        else:
            kept.append(candidate)
    return kept, dropped


def collect_candidates(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage],
    config: Config,
    *,
    query: str | None,
    rules: RuleProvider,
    status: CompactionStatus,
    newest: int | None,
    turn: int | None = None,
    shown: Shown | None = None,
    retriever: Retriever | None = None,
    words: BlockWords | None = None,
    in_history: frozenset[int] = frozenset(),
    budget_tokens: int | None = None,
) -> tuple[list[Candidate], list[Omission], list[dict[str, Any]], bool]:
    """Every entry the block could hold, in priority order, plus retrieval's omissions.

    Also returns the reasons for explain and whether the session holds anything at all;
    `budget_tokens`, the block's budget, sets how relevant an entry must be.
    """
    max_chars = config.assembly.max_evidence_chars
    text = query if query is not None else task_text(messages)
    if text is None:
        text = fallback_task_text(store, session_id, newest)
    if words is None:
        words = session_words(store, session_id, config, text, newest)
    signals = query_signals(text)
    visible = VisibleText(messages, trust_generated=status.trust_summary)
    visibility = _Visibility(store, session_id, visible)
    found_now = retrieve(
        store,
        session_id,
        signals,
        config,
        visible_ids=visibility.item_ids,
        is_visible=visible.contains_event if visible else None,
        current_turn=turn,
        shown=shown,
        retriever=retriever,
        in_history=in_history,
        budget_tokens=budget_tokens,
    )
    ranking, evidence = found_now.ranking, found_now.evidence
    candidates: list[Candidate] = []
    state = store.get_task_state(session_id)
    if state is not None:
        for ref, line in task_entries(state, max_chars, words):
            candidates.append(Candidate("task", ref, line))
    # Numbers this very step says are replaced: its message may not be stored (nor the
    # old item superseded) before the host's pre-step, so they are held back here.
    current_text = HeldBack(replaced_values(text))
    project = project_scope(config)
    in_force = rules_in_force(store, session_id, project=project)
    # A rule the model can still read where the user said it is not restated yet.
    on_screen = visibility.item_ids(in_force)
    listed = shown.items if shown is not None else frozenset()
    standing = [
        item
        for item in in_force
        if item.id not in on_screen
        and item.id not in listed
        and current_text("standing", item.id, item.content)
    ]
    screen_omissions = [
        Omission("standing", item.id, ON_SCREEN if item.id in on_screen else ALREADY_SHOWN)
        for item in in_force
        if item.id in on_screen or item.id in listed
    ]
    resident = [
        item
        for item in pending_resident(store, session_id, status, shown or Shown(), project=project)
        if current_text("resident", item.id, item.content)
    ]
    focus = signals.exact_signals()
    said = said_dates(
        store, session_id, [*standing, *resident, *(r.item for r in ranking.selected)]
    )
    for item in standing:
        replaced = [old.content for old in map(store.get_item, item.supersedes) if old]
        entry = rule_entry_of_item(
            item, max_chars, said.get(item.id), words, replaced, _origin(item, session_id)
        )
        candidates.append(Candidate("standing", item.id, entry))
    for item in resident:
        entry = item_entry(
            item, max_chars, focus, said.get(item.id), words, _origin(item, session_id)
        )
        candidates.append(Candidate("resident", item.id, entry))
    resident_ids = {item.id for item in resident}
    standing_ids = {item.id for item in standing}
    core_lines, relevant_rules = rules(store, signals, config)
    for index, line in enumerate(core_lines):
        candidates.append(Candidate("rules-core", f"core[{index}]", line))
    for rule in relevant_rules:
        candidates.append(Candidate("rules", rule.id, rule_entry(rule, max_chars, words)))
    for ranked in ranking.selected:
        # A resident item the share left out may still come in here (`pack` never
        # keeps one ref twice).
        if current_text("memory", ranked.item.id, ranked.item.content):
            entry = item_entry(
                ranked.item,
                max_chars,
                focus,
                said.get(ranked.item.id),
                words,
                _origin(ranked.item, session_id),
            )
            candidates.append(Candidate("memory", ranked.item.id, entry))
    has_history = newest is not None or state is not None or ranking.candidates > 0
    was_visible = any(
        o.reason.endswith("visible in this step") or o.reason == ALREADY_SHOWN
        for o in ranking.omitted
    )
    found = ranking.selected or evidence.rows or was_visible or resident or standing
    # Only a step that asks about the past earns the statement: on a working step it
    # would say nothing, at every step, and the host keeps every copy in its history.
    if has_history and not signals.empty and not found and asks_about_past(text):
        candidates.append(Candidate("memory", "insufficient-evidence", words.insufficient))
    restated: list[Omission] = []
    rows, alike, summaries = few_of_each_shape(evidence.rows, words)
    restated += alike
    terms = question_terms(text, config.retrieval)
    snippet_chars = config.assembly.snippet_chars
    contents = {ranked.item.id: ranked.item.content for ranked in ranking.selected}
    first_contents = {item.id: item.content for item in (*standing, *resident)}

    def quote(row: EvidenceRow, text: str) -> str:
        """The evidence line of `text`, the whole turn or the part of it its items leave out."""
        part = row if text == row.text else dataclasses.replace(row, text=text)
        return evidence_entry(part, max_chars, words, terms.weights, snippet_chars)

    def quoted(
        row: EvidenceRow, entry: str, said_by: tuple[str, ...] = (), rest: str = ""
    ) -> Candidate:
        """The evidence candidate of a turn, under the day it was said, in seq order."""
        day = evidence_day(row)
        return Candidate("evidence", row.ref, entry, said_by, rest, group=day, order=row.event.seq)

    for row in rows:
        if row.item_ids and set(row.item_ids) <= resident_ids | standing_ids:
            # Its items are restated: quote only what of the turn they leave out, if any.
            _, rest = beside_items(row, first_contents, terms.weights)
            if not rest:
                why = RESIDENT_SOURCE if set(row.item_ids) <= resident_ids else RULE_SOURCE
                restated.append(Omission("evidence", row.ref, why))
                continue
            if current_text("evidence", row.ref, rest):
                candidates.append(quoted(row, quote(row, rest)))
            continue
        if current_text("evidence", row.ref, row.text):
            said_by, rest = beside_items(row, contents, terms.weights)
            rest_entry = quote(row, rest) if rest else ""
            candidates.append(quoted(row, quote(row, row.text), said_by, rest_entry))
    candidates.extend(summaries)
    old_task = state.superseded if state is not None else ()
    shown_first = [*standing, *(item for item in resident if item.id not in standing_ids)]
    first_ids = {item.id for item in shown_first}
    current = [*shown_first, *(r.item for r in ranking.selected if r.item.id not in first_ids)]
    candidates.extend(
        _notice_candidates(
            store,
            session_id,
            current,
            signals,
            status,
            old_task,
            max_chars,
            words,
        )
    )
    reasons: list[dict[str, Any]] = [
        {
            "kind": "query",
            "text": signals.text[:LOGGED_QUERY_CHARS],
            "terms": list(signals.tokens[:40]),
        },
        {"kind": "compaction", **status.to_dict()},
        {"kind": "standing", "rules": [item.id for item in standing]},
        {"kind": "resident", "pending": [item.id for item in resident]},
        *({"kind": "item", **ranked.to_dict()} for ranked in ranking.selected),
        *({"kind": "evidence", **row.to_dict()} for row in evidence.rows),
    ]
    omitted = [
        *screen_omissions,
        *ranking.omitted,
        *evidence.omitted,
        *restated,
        *current_text.omitted,
    ]
    return candidates, omitted, reasons, has_history
