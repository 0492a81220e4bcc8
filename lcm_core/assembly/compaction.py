"""Noticing host compaction and re-arming memory after it.

The host's compaction removes old messages from the model's context. Our store keeps
every event, so nothing needs preserving: the first pre-step after a compaction simply
assembles from the store, and items whose sources left the screen come back (see
`step.VisibleText`). This module reads the event stream to say whether a compaction
happened since the last assembly and what `compatibility.compactionPolicy` implies:

- `auto`: detect compaction from the `compaction/*` events;
- `compaction-basic`: the host calls pre-step before every model call (serial model);
- `billion-context`: a gating compressor may skip ordinary pre-steps, so each call
  that does arrive assembles in full;
- `none`: compaction is not tracked at all, and the block carries a notice saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import ZH

COMPACTION_EVENT_TYPES: Final = (
    "compaction/start",
    "compaction/summary",
    "compaction/end",
    "compaction/prune",
)
POLICIES: Final = ("auto", "compaction-basic", "billion-context", "none")

NONE_POLICY_NOTICE: Final = ZH.untracked_compaction  # the English one: block_words.EN


@dataclass(frozen=True, slots=True)
class CompactionStatus:
    """What the event stream says about compaction, and what assembly should do about it."""

    policy: str
    detected: bool = False
    last_seq: int | None = None
    since_last_assembly: int = 0
    rearmed: bool = False
    trust_summary: bool = False
    notice: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "detected": self.detected,
            "lastSeq": self.last_seq,
            "sinceLastAssembly": self.since_last_assembly,
            "rearmed": self.rearmed,
        }


def compaction_status(
    store: MemoryStore, session_id: str, last_assembly_seq: int, config: Config
) -> CompactionStatus:
    """Read the session's compaction events and apply the configured policy."""
    policy = config.compatibility.compaction_policy
    reinject = config.compatibility.reinject_after_compaction
    if policy == "none":
        return CompactionStatus(policy=policy, trust_summary=True, notice=NONE_POLICY_NOTICE)
    events = store.list_events(session_id, types=COMPACTION_EVENT_TYPES)
    if not events:
        return CompactionStatus(policy=policy, trust_summary=not reinject)
    since = sum(1 for event in events if event.seq > last_assembly_seq)
    return CompactionStatus(
        policy=policy,
        detected=True,
        last_seq=events[-1].seq,
        since_last_assembly=since,
        rearmed=since > 0 and reinject,
        trust_summary=not reinject,
    )
