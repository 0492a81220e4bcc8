"""What one agent step shows the model: its messages, its task text, and visible text.

Assembly leaves out memory whose sources the model can already read in the step, so
it needs to know which stored texts are on screen. Text that a plugin or the runtime
generated (our own earlier memory block included) never counts as the user's words:
it is neither the task text nor proof that an event is visible. A compaction summary
is generated text too, so after compaction the summarised events are no longer
visible and their items return, unless `compatibility.reinjectAfterCompaction` is off,
in which case the host's summary is trusted to carry them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from lcm_core.capture.events import is_generated_kind
from lcm_core.store.models import Event
from lcm_core.text.tokens import fingerprint, normalize_text, per_text_cache

OWN_SOURCE_KIND: Final = "long-conversation-memory"
# Below this length a stored text counts as visible only when a message equals it;
# a short line such as "ok" would otherwise be "visible" inside any long message.
MIN_SUBSTRING_CHARS: Final = 24


@dataclass(frozen=True, slots=True)
class StepMessage:
    """One message of the step as the host gives it: role, text and source kind."""

    role: str
    text: str
    source_kind: str | None = None
    is_tool_result: bool = False
    # Read back from the events table: capture already scrubbed it (private spans).
    stored: bool = False

    @property
    def generated(self) -> bool:
        return is_generated_kind(self.source_kind)


def task_text(messages: Sequence[StepMessage]) -> str | None:
    """The newest user-typed message of the step, or None when there is none."""
    for message in reversed(messages):
        if message.role == "user" and not message.generated and not message.is_tool_result:
            text = normalize_text(message.text)
            if text:
                return text
    return None


class VisibleText:
    """The step's on-screen text, for asking whether a stored event is still visible."""

    def __init__(self, messages: Iterable[StepMessage], *, trust_generated: bool = False) -> None:
        texts: list[str] = []
        keys: set[str] = set()
        for message in messages:
            if message.source_kind == OWN_SOURCE_KIND:
                continue  # our own block restates memory; it must not hide that memory
            if message.generated and not trust_generated:
                continue
            # The host's surface repeats its messages step after step: folded once each.
            text, key = _folded(message.text)
            if text:
                texts.append(text)
                keys.add(key)
        self._fingerprints = frozenset(keys)
        self._joined = "\n\u0000\n".join(texts)

    def __bool__(self) -> bool:
        return bool(self._joined)

    def contains_text(self, text: str) -> bool:
        """True when `text` equals a visible message or, if long enough, appears in one."""
        folded, key = _folded(text)
        if not folded:
            return False
        if key in self._fingerprints:
            return True
        return len(folded) >= MIN_SUBSTRING_CHARS and folded in self._joined

    def contains_event(self, event: Event) -> bool:
        return self.contains_text(event.text)


@per_text_cache(maxsize=16_384)
def _folded(text: str) -> tuple[str, str]:
    """A stored text as compared with the screen: normalised and case-folded, and its
    fingerprint. Cached: the same stored turns are checked step after step."""
    folded = normalize_text(text).casefold()
    return folded, fingerprint(folded) if folded else ""
