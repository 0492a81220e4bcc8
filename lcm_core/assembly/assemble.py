"""Build the one memory message of a step under a token budget, in fixed section order.

Sections go task, resident, rules-core, rules, memory, evidence, notice. Each candidate
entry costs its tokens (the estimate, or the host's exact meter); whatever does not fit
the budget `max(minBudgetTokens, softBudgetTokens)` is left out with a reason. After a
host compaction, and until each entry has been shown again, the task state and the
resident set (`resident.py`) come first within `assembly.residentShare` of the budget,
so the step's text never displaces what the user set down. The insufficient-evidence
statement is added only when the step asks about the past (`recall.py`). The output
depends only on stored state, the step's messages and config: no clock, no randomness.
The function the host calls never raises; a failure comes back as `injected = False`
with its errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.assembly.compaction import CompactionStatus, compaction_status
from lcm_core.assembly.packing import Candidate, Reserve, TokenMeter, choose_meter, pack
from lcm_core.assembly.recall import HeldBack, asks_about_past, replaced_values
from lcm_core.assembly.render import (
    disputed_entry,
    disputed_summary,
    evidence_entry,
    item_entry,
    old_task_entry,
    rule_entry,
    said_on,
    superseded_entry,
    task_entries,
)
from lcm_core.assembly.resident import pending_resident
from lcm_core.assembly.step import StepMessage, VisibleText, task_text
from lcm_core.capture.events import is_user_input
from lcm_core.config import Config, budget_tokens, load_config
from lcm_core.retrieval.evidence import retrieve
from lcm_core.retrieval.project import project_scope
from lcm_core.retrieval.rank import (
    ALREADY_SHOWN,
    Omission,
    newest_source_seq,
    source_seqs,
)
from lcm_core.retrieval.retriever import LexicalRetriever, Retriever
from lcm_core.retrieval.shown import Shown, entry_key
from lcm_core.skills.select import rule_provider
from lcm_core.store.models import MemoryItem, Rule
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import BlockWords, block_words
from lcm_core.text.query import QuerySignals, query_signals, search_terms
from lcm_core.text.tokens import sha256_hex

# Returns the resident skill core lines and the task-relevant rules for a query.
RuleProvider = Callable[[MemoryStore, QuerySignals, Config], tuple[Sequence[str], Sequence[Rule]]]

# How far back the task-text fallback looks for the newest user message, in seqs.
_FALLBACK_WINDOWS: Final = (64, 512, 4096)
# The events whose user messages decide the block's language under `auto`.
_LANGUAGE_WINDOW: Final = 512
_DISPUTED_SHOWN: Final = 6
# Why a selected item's source is not quoted while the item is in the resident section.
RESIDENT_SOURCE: Final = "source of a resident item; the item itself is restated"


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    """The block (possibly empty) and every decision behind it."""

    session_id: str
    text: str = ""
    injected: bool = False
    trigger: str = "pre-step"
    budget_tokens: int = 0
    used_tokens: int = 0
    token_source: str = "estimate"
    sections: tuple[dict[str, Any], ...] = ()
    item_ids: tuple[str, ...] = ()
    evidence_refs: tuple[str, ...] = ()
    omitted: tuple[Omission, ...] = ()
    reasons: tuple[dict[str, Any], ...] = ()
    errors: tuple[str, ...] = ()
    turn: int | None = None
    step: int | None = None
    state_seq: int | None = None
    compaction: CompactionStatus | None = field(default=None, compare=False)

    @property
    def content_hash(self) -> str | None:
        return sha256_hex(self.text) if self.text else None


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


def _fallback_task_text(store: MemoryStore, session_id: str, newest: int | None) -> str:
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


def _said_dates(store: MemoryStore, session_id: str, items: Sequence[MemoryItem]) -> dict[str, str]:
    """item id -> the ISO date its newest source turn was said, read in one store call."""
    dates: dict[str, str] = {}
    # One read per session: another session's item (project scope) cites its own turns.
    for source in sorted({item.session_id for item in items} | {session_id}):
        newest = {
            item.id: seq
            for item in items
            if item.session_id == source and (seq := newest_source_seq(item)) is not None
        }
        if not newest:
            continue
        events = store.get_events(source, sorted(set(newest.values())))
        times = {e.seq: e.time for e in events}
        for item_id, seq in newest.items():
            date = said_on(times.get(seq))
            if date:
                dates[item_id] = date
    for item in items:
        # Another session's item with no dated turn still says when it was set down.
        if item.session_id != session_id and item.id not in dates:
            date = said_on(item.created_at)
            if date:
                dates[item.id] = date
    return dates


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


def _drop_shown_entries(
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
) -> tuple[list[Candidate], list[Omission], list[dict[str, Any]], bool]:
    """Every entry the block could hold, in priority order, plus retrieval's omissions.

    Also returns the reasons for explain and whether the session holds anything at all.
    """
    finder = retriever if retriever is not None else LexicalRetriever()
    max_chars = config.assembly.max_evidence_chars
    text = query if query is not None else task_text(messages)
    if text is None:
        text = _fallback_task_text(store, session_id, newest)
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
        retriever=finder,
        in_history=in_history,
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
    resident = [
        item
        for item in pending_resident(
            store, session_id, status, shown or Shown(), project=project_scope(config)
        )
        if current_text("resident", item.id, item.content)
    ]
    focus = signals.exact_signals()
    said = _said_dates(store, session_id, [*resident, *(r.item for r in ranking.selected)])
    for item in resident:
        entry = item_entry(
            item, max_chars, focus, said.get(item.id), words, _origin(item, session_id)
        )
        candidates.append(Candidate("resident", item.id, entry))
    resident_ids = {item.id for item in resident}
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
    found = ranking.selected or evidence.rows or was_visible or resident
    # Only a step that asks about the past earns the statement: on a working step it
    # would say nothing, at every step, and the host keeps every copy in its history.
    if has_history and not signals.empty and not found and asks_about_past(text):
        candidates.append(Candidate("memory", "insufficient-evidence", words.insufficient))
    restated: list[Omission] = []
    for row in evidence.rows:
        if row.item_ids and set(row.item_ids) <= resident_ids:
            restated.append(Omission("evidence", row.ref, RESIDENT_SOURCE))
            continue
        if current_text("evidence", row.ref, row.text):
            candidates.append(Candidate("evidence", row.ref, evidence_entry(row, max_chars, words)))
    old_task = state.superseded if state is not None else ()
    current = [*resident, *(r.item for r in ranking.selected if r.item.id not in resident_ids)]
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
        {"kind": "query", "text": signals.text[:200], "terms": list(signals.tokens[:40])},
        {"kind": "compaction", **status.to_dict()},
        {"kind": "resident", "pending": [item.id for item in resident]},
        *({"kind": "item", **ranked.to_dict()} for ranked in ranking.selected),
        *({"kind": "evidence", **row.to_dict()} for row in evidence.rows),
    ]
    omitted = [*ranking.omitted, *evidence.omitted, *restated, *current_text.omitted]
    return candidates, omitted, reasons, has_history


def assemble(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage] = (),
    config: Config | None = None,
    *,
    query: str | None = None,
    turn: int | None = None,
    step: int | None = None,
    token_meter: TokenMeter | None = None,
    rules: RuleProvider | None = None,
    trigger: str = "pre-step",
    shown: Shown | None = None,
    retriever: Retriever | None = None,
    in_history: frozenset[int] = frozenset(),
) -> AssemblyResult:
    """Assemble the step's memory block; never raises (errors come back in the result).

    `rules` defaults to the skills provider (resident core plus task-relevant rules).
    `shown` is what earlier memory blocks still in context list: a host runtime keeps
    it incrementally with `ShownItems`, a one-off caller reads it with
    `ShownItems().read(store, session_id)`; by default nothing counts as shown.
    `retriever` finds the candidates (the store's lexical search by default).
    `in_history` are the seqs the host still holds in its history (its surface): raw
    turns among them are not quoted again.
    """
    config = config if config is not None else load_config()
    budget = budget_tokens(config)
    base = AssemblyResult(session_id, trigger=trigger, budget_tokens=budget, turn=turn, step=step)
    provider = rules if rules is not None else rule_provider
    try:
        return _assemble(
            store,
            session_id,
            messages,
            config,
            base,
            query,
            token_meter,
            provider,
            shown,
            retriever,
            in_history,
        )
    except Exception as exc:  # the host's step must go on without memory
        return AssemblyResult(
            session_id,
            trigger=trigger,
            budget_tokens=budget,
            turn=turn,
            step=step,
            errors=(f"assembly failed: {type(exc).__name__}: {exc}",),
        )


def _assemble(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage],
    config: Config,
    base: AssemblyResult,
    query: str | None,
    token_meter: TokenMeter | None,
    rules: RuleProvider,
    shown: Shown | None,
    retriever: Retriever | None,
    in_history: frozenset[int],
) -> AssemblyResult:
    cost, token_source, errors = choose_meter(token_meter)
    if shown is None:
        shown = Shown()
    newest = store.max_event_seq(session_id)
    checkpoint = store.get_checkpoint(session_id)
    status = compaction_status(store, session_id, checkpoint.last_assembly_seq, config)
    trigger = "post-compaction" if status.rearmed else base.trigger
    task = query if query is not None else task_text(messages)
    if task is None:
        task = _fallback_task_text(store, session_id, newest)
    words = session_words(store, session_id, config, task, newest)
    candidates, omitted, reasons, has_history = collect_candidates(
        store,
        session_id,
        messages,
        config,
        query=query,
        rules=rules,
        status=status,
        newest=newest,
        turn=base.turn,
        shown=shown,
        retriever=retriever,
        words=words,
        in_history=in_history,
    )
    candidates, repeated = _drop_shown_entries(candidates, shown)
    omitted = [*omitted, *repeated]
    # A policy notice alone is not worth a message: it says nothing about this session.
    content = [c for c in candidates if c.ref != "compaction-policy"]
    if not content:
        if config.assembly.skip_when_empty:
            why = "empty session" if not has_history else "nothing relevant to inject"
            if repeated:
                why = f"nothing new since the blocks in context ({len(repeated)} already shown)"
            return _result(
                base, trigger, token_source, status, newest, omitted, reasons, errors, why
            )
        candidates.append(Candidate("memory", "insufficient-evidence", words.insufficient))
    reserve = None
    if any(c.section == "resident" for c in candidates):
        share = config.assembly.resident_share
        reserve = Reserve(("task", "resident"), int(base.budget_tokens * share))
    text, used, sections, kept, left_out = pack(
        candidates, base.budget_tokens, cost, reserve, words
    )
    omitted.extend(left_out)
    if not kept:
        why = "no entry fits the budget"
        return _result(base, trigger, token_source, status, newest, omitted, reasons, errors, why)
    item_ids = tuple(c.ref for c in kept if c.ref.startswith("mem_"))
    evidence_refs = tuple(c.ref for c in kept if c.section == "evidence")
    return AssemblyResult(
        session_id=session_id,
        text=text,
        injected=True,
        trigger=trigger,
        budget_tokens=base.budget_tokens,
        used_tokens=used,
        token_source=token_source,
        sections=tuple(sections),
        item_ids=item_ids,
        evidence_refs=evidence_refs,
        omitted=tuple(omitted),
        reasons=tuple(reasons),
        errors=tuple(errors),
        turn=base.turn,
        step=base.step,
        state_seq=newest,
        compaction=status,
    )


def _result(
    base: AssemblyResult,
    trigger: str,
    token_source: str,
    status: CompactionStatus,
    newest: int | None,
    omitted: list[Omission],
    reasons: list[dict[str, Any]],
    errors: list[str],
    why: str,
) -> AssemblyResult:
    """A not-injected result that still carries the decisions made on the way."""
    return AssemblyResult(
        session_id=base.session_id,
        injected=False,
        trigger=trigger,
        budget_tokens=base.budget_tokens,
        token_source=token_source,
        omitted=tuple(omitted),
        reasons=(*reasons, {"kind": "skipped", "why": why}),
        errors=tuple(errors),
        turn=base.turn,
        step=base.step,
        state_seq=newest,
        compaction=status,
    )
