"""The DSH format at the runtime's edge: envelopes and step messages in, the memory message out.

A DSH pre-step hands over only the messages it is about to add (the claimed inbox), so
the plugin also sends the seqs of the messages already on screen; their text comes from
our own events table, which keeps the request small however long the session is.
`DshParser` and `dsh_message` are the runtime's default parser and message builder.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from lcm_adapter.envelope.parse import parse_envelope
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.rows import ParseResult
from lcm_core.steps.prestep import StepOutcome
from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore

# Surface event types whose text the model reads.
_MESSAGE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "system/message"}
)
MAX_VISIBLE: Final = 20_000
SOURCE_KIND: Final = "long-conversation-memory"
SOURCE_FORM: Final = "snapshot"
# A fixed namespace so the id of the memory message depends only on its inputs.
_MESSAGE_NAMESPACE: Final = uuid.UUID("6f1c2a4e-3b5d-4e8f-9a7b-1c2d3e4f5a6b")


def host_message(raw: Any) -> StepMessage | None:
    """A DSH message object (`{role, content: [...], source}`) as a `StepMessage`."""
    if not isinstance(raw, Mapping):
        return None
    role = raw.get("role")
    if not isinstance(role, str):
        return None
    source = raw.get("source")
    kind = source.get("kind") if isinstance(source, Mapping) else None
    texts: list[str] = []
    tool_result = False
    content = raw.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, Sequence):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool-result":
                tool_result = True
            text = block.get("text")
            if isinstance(text, str):
                texts.append(text)
    return StepMessage(
        role=role,
        text="\n".join(texts),
        source_kind=kind if isinstance(kind, str) else None,
        is_tool_result=tool_result,
    )


def event_message(event: Event) -> StepMessage:
    """A stored surface event as the message the model saw."""
    return StepMessage(
        role=event.role or ("assistant" if event.type == "assistant/message" else "user"),
        text=event.text,
        source_kind=event.source_kind,
        is_tool_result=event.type == "tool/result",
        stored=True,
    )


@dataclass(slots=True)
class _Seen:
    """One session's surface events read so far: seq -> message (None: not a message)."""

    newest: int = -1
    messages: dict[int, StepMessage | None] = field(default_factory=dict)


class SurfaceMessages:
    """The stored events a host's steps show, as messages, each read from the store once.

    A DSH step names every event it still holds (hundreds to thousands of seqs); reading
    and converting all of them again at every step was the largest part of a pre-step.
    A stored event never changes, so only seqs not seen before are read. When the
    session's newest seq goes down the session was purged: what was kept is dropped.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _Seen] = {}

    def read(self, store: MemoryStore, session_id: str, seqs: Sequence[int]) -> list[StepMessage]:
        """The messages among the stored events `seqs`, in seq order."""
        seen = self._sessions.setdefault(session_id, _Seen())
        newest = store.max_event_seq(session_id)
        newest = -1 if newest is None else newest
        if newest < seen.newest:
            seen.messages.clear()
        seen.newest = newest
        wanted = sorted(set(seqs))
        missing = [seq for seq in wanted if seq not in seen.messages]
        if missing:
            for event in store.get_events(session_id, missing):
                message = event_message(event) if event.type in _MESSAGE_TYPES else None
                seen.messages[event.seq] = message
        if len(seen.messages) > 2 * len(wanted) + 1000:  # a compaction shrank the surface
            seen.messages = {seq: seen.messages[seq] for seq in wanted if seq in seen.messages}
        found = (seen.messages.get(seq) for seq in wanted)
        return [message for message in found if message is not None]

    def forget(self, session_id: str) -> None:
        """Drop what is known of a session (after a purge, say)."""
        self._sessions.pop(session_id, None)


def int_set(values: Sequence[Any] | None) -> frozenset[int]:
    """The integers of a host-sent list (anything else is ignored)."""
    if not values:
        return frozenset()
    return frozenset(v for v in values if isinstance(v, int) and not isinstance(v, bool))


def step_messages(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[Any],
    visible_seqs: Sequence[int] | None,
    surface: SurfaceMessages | None = None,
) -> list[StepMessage]:
    """What the model sees in this step: the visible surface, then the new messages.

    Without a surface from the host only the new messages count; assembly then falls
    back to the newest stored user message for the task text. A long-lived runtime
    passes its `surface` so stored events are read once, not at every step.
    """
    out: list[StepMessage] = []
    if visible_seqs:
        seqs = [s for s in visible_seqs if isinstance(s, int) and not isinstance(s, bool)]
        if surface is not None:
            out.extend(surface.read(store, session_id, seqs[-MAX_VISIBLE:]))
        else:
            for event in store.get_events(session_id, seqs[-MAX_VISIBLE:]):
                if event.type in _MESSAGE_TYPES:
                    out.append(event_message(event))
    for raw in messages or ():
        converted = host_message(raw)
        if converted is not None:
            out.append(converted)
    return out


class HostParser(Protocol):
    """What the runtime reads of a host: its event envelopes and its step's messages."""

    def envelope(
        self, session_id: str, raw: Any, *, ingested_at: str, archive_limit: int
    ) -> ParseResult: ...

    def event_type(self, raw: Any) -> str | None: ...

    def step_messages(
        self,
        store: MemoryStore,
        session_id: str,
        messages: Sequence[Any],
        visible_seqs: Sequence[int] | None,
        surface: SurfaceMessages | None,
    ) -> list[StepMessage]: ...


class MessageBuilder(Protocol):
    """The message a host appends to its step, from the pre-step's outcome."""

    def __call__(
        self, session_id: str, turn: int | None, step: int | None, outcome: StepOutcome
    ) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class DshParser:
    """DSH's `session/event` envelopes and `{role, content, source}` messages."""

    def envelope(
        self, session_id: str, raw: Any, *, ingested_at: str, archive_limit: int
    ) -> ParseResult:
        return parse_envelope(session_id, raw, ingested_at=ingested_at, archive_limit=archive_limit)

    def event_type(self, raw: Any) -> str | None:
        value = raw.get("type") if isinstance(raw, Mapping) else None
        return value if isinstance(value, str) else None

    def step_messages(
        self,
        store: MemoryStore,
        session_id: str,
        messages: Sequence[Any],
        visible_seqs: Sequence[int] | None,
        surface: SurfaceMessages | None,
    ) -> list[StepMessage]:
        return step_messages(store, session_id, messages, visible_seqs, surface)


def dsh_message(
    session_id: str, turn: int | None, step: int | None, outcome: StepOutcome
) -> dict[str, Any]:
    """The DSH message carrying the block and the repair reminder, each its own text block.

    Its id depends only on the session, turn, step and texts, so a retried step gets the
    same id. The sections name the block's sources, then the reminder.
    """
    blocks = outcome.blocks
    sections = [_section_ref(s) for s in outcome.result.sections] if outcome.memory_text else []
    if outcome.reminder:
        sections.append({"name": "repair", "text": "validation repair reminder", "refs": []})
    key = "\n".join((session_id, str(turn), str(step), *blocks))
    return {
        "id": str(uuid.uuid5(_MESSAGE_NAMESPACE, key)),
        "role": "user",
        "content": [{"type": "text", "text": text} for text in blocks],
        "source": {"kind": SOURCE_KIND, "form": SOURCE_FORM, "sections": sections},
    }


def _section_ref(section: Mapping[str, Any]) -> dict[str, Any]:
    """A section of the block as the host records it: its name, title and sources."""
    return {
        "name": str(section.get("name", "")),
        "text": str(section.get("title", "")),
        "refs": [str(ref) for ref in section.get("refs", ())],
    }
