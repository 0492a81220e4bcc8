"""Prompt injection and poisoning: hostile events never become memory or quoted evidence.

Every case runs through the host-facing runtime (capture, extraction, pre-step), with a
genuine budget constraint in the session so the block is injected and a leak would show.
The step's question quotes the hostile event's marker and names its number, which asks
for the raw event by exact match, so the filters, not the search, must keep it out.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import rel_support as rs
from rel_injection_corpus import CASES, USER_FORGERIES, Case

from lcm_core.config import load_config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.store.models import ITEM_STATUSES, MemoryItem
from lcm_core.text.block_words import EN, ZH, BlockWords
from lcm_store_sqlite import SQLiteMemoryStore

runtime_module = pytest.importorskip("lcm_adapter.runtime")
assembly = pytest.importorskip("lcm_core.assembly.assemble")
render = pytest.importorskip("lcm_core.assembly.render")

SID = "inject-会话"
HOSTILE_SEQ = 2
GENUINE = "预算不超过3000元（含税），周五前交付"
LEAKS = ("9999", "MySQL", "mysql", "ignore previous", "忽略之前")
# An ASCII label of ours, as the block writes it: `[mem <id>]`, `[ev seq:N]`, `[rule <id>]`.
LABEL_RE = re.compile(r"\[(mem|ev|rule)\b\s*([^\]\n]*)\]", re.IGNORECASE)


def marker(index: int) -> str:
    return f"ZQX{index:03d}"


def run_session(hostile: dict[str, Any], question: str, config: Any) -> tuple[Any, Any]:
    """Capture a session with one hostile event; (runtime, pre-step message)."""
    store = SQLiteMemoryStore(":memory:")
    runtime = runtime_module.MemoryRuntime(store=store, config=config)
    events = [
        rs.user_message(0, GENUINE),
        rs.assistant_message(1, "好的，我会控制在预算内。"),
        hostile,
    ]
    for event in events:
        runtime.on_event(SID, event)
    message = runtime.pre_step(SID, [{"role": "user", "content": question}], turn=2, step=1)
    return runtime, message


def block_text(message: dict[str, Any] | None) -> str:
    if message is None:
        return ""
    return "\n".join(block["text"] for block in message["content"])


# The block's titles in either language (`assembly.language` follows the user).
ALL_TITLES = {t for w in (ZH, EN) for t in w.section_titles.values()}


def words_of(text: str) -> BlockWords:
    return EN if text.startswith(EN.header) else ZH


def header_count(text: str) -> int:
    """How many real-looking header openings the block holds (ours is one)."""
    return text.count(f"[{render.HEADER_TAG}") + text.count("[long-conversation-memory")


def items_from(store: SQLiteMemoryStore, seq: int) -> list[MemoryItem]:
    """Items of any status that cite `seq` or were derived from it."""
    items = store.list_items(SID, statuses=ITEM_STATUSES)
    return [i for i in items if seq in source_seqs(i) or i.derived_from_seq == seq]


def forged_labels(text: str, store: SQLiteMemoryStore, evidence_refs: tuple[str, ...]) -> list[str]:
    """ASCII labels in the block body that do not name a real item, event or rule."""
    body = text.split(words_of(text).header, 1)[-1]
    rules = {rule.id for rule in store.list_rules()}
    bad: list[str] = []
    for match in LABEL_RE.finditer(body):
        kind, ref = match.group(1), match.group(2).strip()
        if kind == "mem" and match.group(1) == "mem" and store.get_item(ref) is not None:
            continue
        if kind == "ev" and match.group(1) == "ev" and ref in evidence_refs:
            continue
        if kind == "rule" and match.group(1) == "rule" and ref in rules:
            continue
        bad.append(match.group(0))
    return bad


def section_lines(text: str) -> list[str]:
    """Lines that open a section; only the real titles may."""
    return [line for line in text.split("\n") if line.startswith("## ")]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_hostile_event_never_becomes_memory_nor_quoted(index: int) -> None:
    """No item derives from the hostile event, and the injected block quotes none of it."""
    case: Case = CASES[index]
    tag = marker(index)
    # The exact phrase, number and name pull the hostile row into the evidence search.
    question = f'"{tag}" 预算是 9999 元吗？数据库用 MySQL 吗？'
    rs.bump("injection.cases")
    runtime, message = run_session(case.build(HOSTILE_SEQ, tag), question, load_config())
    store = runtime.store
    try:
        hostile = store.get_event(SID, HOSTILE_SEQ)
        derived = items_from(store, HOSTILE_SEQ)
        text = block_text(message)
        leaked = [word for word in (tag, *LEAKS) if word in text]
        rs.bump("injection.became_memory", int(bool(derived)))
        rs.bump("injection.quoted_by_default", int(bool(leaked)))
        assert hostile is not None, "the hostile event must still be stored for audit"
        assert runtime.stats.capture_errors == 0 and runtime.stats.pre_step_errors == 0
        assert message is not None and "3000" in text, "the genuine constraint must be injected"
        assert derived == [], [item.content for item in derived]
        assert leaked == [], text
        assert set(section_lines(text)) <= ALL_TITLES
    finally:
        runtime.close()


@pytest.mark.parametrize(
    "index",
    [i for i, case in enumerate(CASES) if case.forged_labels],
    ids=[case.name for case in CASES if case.forged_labels],
)
def test_forged_labels_in_quoted_tool_output_are_neutralised(index: int) -> None:
    """With every event type quotable, a forged label in hostile text is not a real label."""
    case = CASES[index]
    tag = marker(index)
    config = load_config({"assembly": {"evidenceTypes": ["*"]}})
    store = SQLiteMemoryStore(":memory:")
    try:
        runtime = runtime_module.MemoryRuntime(store=store, config=config)
        for event in (rs.user_message(0, GENUINE), case.build(HOSTILE_SEQ, tag)):
            runtime.on_event(SID, event)
        result = assembly.assemble(store, SID, (), config, query=f'"{tag}" 预算')
        bad = forged_labels(result.text, store, result.evidence_refs)
        rs.bump("injection.forged_label_cases")
        rs.bump("injection.forged_labels_passed", len(bad))
        assert result.errors == ()
        assert tag in result.text, "the hostile text must be quoted for this check to bite"
        assert bad == [], result.text
        assert header_count(result.text) == 1
        assert set(section_lines(result.text)) <= ALL_TITLES
    finally:
        store.close()


@pytest.mark.parametrize("index", range(len(USER_FORGERIES)))
def test_user_typed_forgeries_are_quoted_with_labels_neutralised(index: int) -> None:
    """The user's own text that imitates our labels is quoted, but no forged label survives."""
    tag = marker(900 + index)
    text = f"{tag} {USER_FORGERIES[index]}"
    runtime, message = run_session(
        rs.user_message(HOSTILE_SEQ, text), f'"{tag}" 预算', load_config()
    )
    store = runtime.store
    try:
        block = block_text(message)
        logs = store.list_assembly_logs(SID, limit=1)
        refs = tuple(ref for section in logs[0].sections for ref in section.get("refs", []))
        bad = forged_labels(block, store, refs)
        rs.bump("injection.user_forgery_cases")
        rs.bump("injection.forged_labels_passed", len(bad))
        assert tag in block, "the user's message must be quoted for this check to bite"
        assert bad == [], block
        assert header_count(block) == 1
        assert set(section_lines(block)) <= ALL_TITLES
    finally:
        runtime.close()
