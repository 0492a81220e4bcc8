"""Capture: turn committed host events into normalized `events` rows, idempotently."""

from __future__ import annotations

from typing import Final

from lcm_core.models import Event

# Source kinds of text that a plugin or the runtime generated rather than the user typed.
# Such events are stored (the audit log stays complete) but no consumer treats them as
# user evidence. DSH labels every plugin-injected message with the plain kind `plugin`.
GENERATED_SOURCE_KINDS: Final[frozenset[str]] = frozenset(
    {
        "long-conversation-memory",
        "runtime-context",
        "agent-instructions",
        "skill-invocation",
        "time-context",
        "compaction-checkpoint",
        "compact-checkpoint",
        "plan-mode",
        "plugin",
    }
)
# Source kinds a human typed: a prompt, an input box, or a steer message mid-run.
USER_SOURCE_KINDS: Final[frozenset[str]] = frozenset({"user", "input", "prompt", "steer"})


def is_generated(event: Event) -> bool:
    """True when the event's text came from a plugin or the runtime, not from a person."""
    return event.source_kind is not None and event.source_kind in GENERATED_SOURCE_KINDS


def is_user_input(event: Event) -> bool:
    """True for a user message a person wrote: source kind absent or a user kind."""
    if event.type != "user/message":
        return False
    return event.source_kind is None or event.source_kind in USER_SOURCE_KINDS
