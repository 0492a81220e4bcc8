"""Which memory items an earlier memory block still shows the model.

A host such as DSH keeps every injected memory message in the conversation history, so
an item restated at each step would pile up copies of itself. The committed copies of
our own blocks are captured like any event; what they show stays in view while the
block is in the host's history (the seqs the host says it holds; without them, until
the next compaction), after which it may be shown again. Entries are recognised by the
ids and seqs they name, not their words, so a block in another language counts too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import EN, ZH
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import sha256_hex

# The source kind our injected messages carry (and that capture stores with them).
OWN_SOURCE_KIND: Final = "long-conversation-memory"
# An item line of the memory section: `- [mem <id>] ...` at the start of a line. Notice
# lines name superseded ids too, but after other words, so they do not match.
_ITEM_LINE: Final = lazy_compile(r"^- \[mem (mem_[0-9a-f]{8}_[0-9a-f]{16})\]", re.MULTILINE)
# A quoted event of the evidence section: `- [ev seq:N] ...` at the start of a line.
_EVIDENCE_LINE: Final = lazy_compile(r"^- \[ev seq:(\d{1,18})\]", re.MULTILINE)
_WATCHED: Final = ("user/message", "compaction/start", "compaction/summary", "compaction/end")


def _own_block(event: Event) -> bool:
    return event.type == "user/message" and event.source_kind == OWN_SOURCE_KIND


def listed_items(event: Event) -> frozenset[str]:
    """The item ids one of our own committed memory blocks lists; empty for other events."""
    return frozenset(_ITEM_LINE.findall(event.text)) if _own_block(event) else frozenset()


def quoted_seqs(event: Event) -> frozenset[int]:
    """The event seqs one of our own committed memory blocks quotes as evidence."""
    if not _own_block(event):
        return frozenset()
    return frozenset(int(seq) for seq in _EVIDENCE_LINE.findall(event.text))


def block_entries(text: str) -> frozenset[str]:
    """Fingerprints of a block's entries: a `- ` line with its indented continuation lines.

    The insufficient-evidence statement counts as an entry too, so a block that would
    repeat only that statement is not sent while an earlier copy is still in context.
    """
    entries: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        if line in (ZH.insufficient, EN.insufficient):
            entries.append([line])
            current = None
        elif line.startswith("- "):
            current = [line]
            entries.append(current)
        elif current is not None and line.startswith("  "):
            current.append(line)
        else:
            current = None
    return frozenset(entry_key("\n".join(lines)) for lines in entries)


# What names an entry in any language: its item and rule ids and the seqs it cites.
_REF_RE: Final = lazy_compile(r"\[(?:mem|rule) [^\]\s]+\]|seq:\d{1,18}")


def entry_key(entry: str) -> str:
    """The fingerprint an entry is recognised by in a later block, whatever its language.

    The task state, the old task values, the disputed count, the untracked compaction
    notice and the insufficient-evidence statement are recognised by what they say
    without their label; an entry that names items, rules or seqs by them (`[mem …]`,
    `[rule …]`, `seq:N`); anything else by its text.
    """
    text = entry.strip()
    neutral = _neutral(text)
    if neutral is not None:  # the user's own words may name a seq: the whole value counts
        return sha256_hex(neutral)
    refs = _REF_RE.findall(text)
    if refs:
        lead = "ref" if text.startswith("- [") else "note"
        return sha256_hex("\0".join((lead, *refs)))
    return sha256_hex(text)


def _neutral(text: str) -> str | None:
    """A fixed entry (task state, statements) without the block words of its language."""
    for words in (ZH, EN):
        if text == words.insufficient:
            return "\0insufficient"
        if text == f"- {words.untracked_compaction}":
            return "\0untracked"
        for name, label in words.task_labels.items():
            if text.startswith(f"- {label}: "):
                return f"\0task\0{name}\0{text[len(label) + 4 :]}"
        head = words.old_task.split("{quote}", 1)[0]
        if text.startswith(head):
            return f"\0old-task\0{text[len(head) :]}"
        before, _, after = words.disputed_summary.partition("{count}")
        if text.startswith(before) and text.endswith(after):
            return f"\0disputed\0{text[len(before) : len(text) - len(after)]}"
    return None


@dataclass(frozen=True, slots=True)
class Shown:
    """What earlier memory blocks still in context show: items, quoted seqs, entries."""

    items: frozenset[str] = frozenset()
    seqs: frozenset[int] = frozenset()
    entries: frozenset[str] = frozenset()


# Our blocks a session view remembers (the newest); a host's history holds far fewer.
MAX_BLOCKS: Final = 512


@dataclass(slots=True)
class _SessionView:
    cursor: int = -1
    compacted_at: int = -1  # the seq of the latest compaction event read
    blocks: dict[int, Shown] = field(default_factory=dict)  # seq of our block -> what it shows


class ShownItems:
    """Per-session record of what our blocks show, read incrementally from the event log.

    Owned by a long-lived host runtime, so each pre-step reads only the events committed
    since the previous one; a fresh instance rebuilds the same answer from the log.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _SessionView] = {}

    def read(
        self, store: MemoryStore, session_id: str, in_history: frozenset[int] = frozenset()
    ) -> Shown:
        """What our blocks still in the host's history show.

        `in_history` are the seqs the host says it still holds (DSH's surface): a block
        among them counts even when a compaction came after it, since a compaction keeps
        a tail of the history, and one outside them does not. Without it, the blocks
        committed since the session's latest compaction count.
        """
        view = self._sessions.setdefault(session_id, _SessionView())
        fresh = store.list_events(session_id, start_seq=view.cursor + 1, types=_WATCHED)
        for event in fresh:
            if event.type.startswith("compaction/"):
                view.compacted_at = max(view.compacted_at, event.seq)
            elif _own_block(event):
                view.blocks[event.seq] = Shown(
                    listed_items(event), quoted_seqs(event), block_entries(event.text)
                )
                if len(view.blocks) > MAX_BLOCKS:
                    del view.blocks[min(view.blocks)]
            view.cursor = max(view.cursor, event.seq)
        if in_history:
            held = [shown for seq, shown in view.blocks.items() if seq in in_history]
        else:
            held = [shown for seq, shown in view.blocks.items() if seq > view.compacted_at]
        return Shown(
            frozenset().union(*(b.items for b in held)),
            frozenset().union(*(b.seqs for b in held)),
            frozenset().union(*(b.entries for b in held)),
        )

    def items(self, store: MemoryStore, session_id: str) -> frozenset[str]:
        """Item ids listed by our blocks committed since the latest compaction."""
        return self.read(store, session_id).items

    def forget(self, session_id: str) -> None:
        """Drop what is known of a session (after a purge, say)."""
        self._sessions.pop(session_id, None)


# Compaction event types: a block injected before the latest of them is gone from context.
_COMPACTION_TYPES: Final = ("compaction/start", "compaction/summary", "compaction/end")
# Most assembly logs read for `logged_items`; retention keeps 200 by default.
_LOG_LOOKBACK: Final = 200


def logged_shown(store: MemoryStore, session_id: str) -> Shown:
    """Items and quoted seqs of the blocks the assembly logs record since the compaction.

    For a host that does not keep our blocks in a transcript we can read (Claude Code's
    hooks): each log's compaction reason names the latest compaction it had seen, so a
    log that saw the current one was injected after it.
    """
    events = store.list_events(session_id, types=_COMPACTION_TYPES)
    latest = events[-1].seq if events else None
    found: set[str] = set()
    seqs: set[int] = set()
    for log in store.list_assembly_logs(session_id, limit=_LOG_LOOKBACK):
        seen = next((r.get("lastSeq") for r in log.reasons if r.get("kind") == "compaction"), None)
        if log.injected and seen != latest:
            break  # newest first: everything older predates the latest compaction
        if log.injected:
            found.update(log.item_ids)
            for section in log.sections:
                if section.get("name") == "evidence":
                    seqs.update(_ref_seqs(section.get("refs", ())))
    return Shown(frozenset(found), frozenset(seqs))


def _ref_seqs(refs: object) -> list[int]:
    """The N of each `seq:N` ref in a logged section."""
    if not isinstance(refs, list | tuple):
        return []
    out: list[int] = []
    for ref in refs:
        if isinstance(ref, str) and ref.startswith("seq:") and ref[4:].isdigit():
            out.append(int(ref[4:]))
    return out
