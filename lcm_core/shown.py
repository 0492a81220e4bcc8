"""Which memory items an earlier memory block still shows the model.

A host such as DSH keeps every injected memory message in the conversation history, so
an item restated at each step would pile up copies of itself. The committed copies of
our own blocks are captured like any event; the items they list stay in view until a
compaction removes old history, after which they may be shown again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from lcm_core.models import Event
from lcm_core.ports import MemoryStore

# The source kind our injected messages carry (and that capture stores with them).
OWN_SOURCE_KIND: Final = "long-conversation-memory"
# An item line of the memory section: `- [mem <id>] ...` at the start of a line. Notice
# lines name superseded ids too, but after other words, so they do not match.
_ITEM_LINE: Final = re.compile(r"^- \[mem (mem_[0-9a-f]{8}_[0-9a-f]{16})\]", re.MULTILINE)
_WATCHED: Final = ("user/message", "compaction/start", "compaction/summary", "compaction/end")


def listed_items(event: Event) -> frozenset[str]:
    """The item ids one of our own committed memory blocks lists; empty for other events."""
    if event.type != "user/message" or event.source_kind != OWN_SOURCE_KIND:
        return frozenset()
    return frozenset(_ITEM_LINE.findall(event.text))


@dataclass(slots=True)
class _SessionView:
    cursor: int = -1
    shown: set[str] = field(default_factory=set)


class ShownItems:
    """Per-session record of items still in view, read incrementally from the event log.

    Owned by a long-lived host runtime, so each pre-step reads only the events committed
    since the previous one; a fresh instance rebuilds the same answer from the log.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _SessionView] = {}

    def items(self, store: MemoryStore, session_id: str) -> frozenset[str]:
        """Ids listed by our blocks committed since the session's latest compaction."""
        view = self._sessions.setdefault(session_id, _SessionView())
        fresh = store.list_events(session_id, start_seq=view.cursor + 1, types=_WATCHED)
        for event in fresh:
            if event.type.startswith("compaction/"):
                view.shown.clear()
            else:
                view.shown.update(listed_items(event))
            view.cursor = max(view.cursor, event.seq)
        return frozenset(view.shown)

    def forget(self, session_id: str) -> None:
        """Drop what is known of a session (after a purge, say)."""
        self._sessions.pop(session_id, None)
