"""The block's token budget: the configured one, or a share of what the host can hold.

A host that says how large its context is, or at how many tokens it compacts, gets a
block that fits it: `min(budget_tokens(config), assembly.hostShare x size)`, never less
than `assembly.minBudgetTokens`, where size is the compaction threshold when the host
names one (compacting is what a block too large for the host costs) and the context
window otherwise. The floor is not lower because every block pays its header (~100-115
tokens): measured on DSH (`benchmarks/host_share.py`), a 300-token budget spread the same
entries over more blocks and made DSH compact more often than a 600-token one. The adapter only reads the host's facts into a `HostWindow`; this module
decides, and says where the budget came from, for the assembly log and `explain`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lcm_core.config import Config, budget_tokens


@dataclass(frozen=True, slots=True)
class HostWindow:
    """What the host says about its context, in tokens (None where it says nothing)."""

    context_tokens: int | None = None
    compact_at_tokens: int | None = None
    # Where the figures come from, for the log: "DSH compaction-basic", "Claude Code ...".
    source: str = ""

    def size(self) -> tuple[int, str] | None:
        """The size the block must fit (the compaction threshold first) and what it is."""
        if _positive(self.compact_at_tokens):
            return int(self.compact_at_tokens or 0), "compaction threshold"
        if _positive(self.context_tokens):
            return int(self.context_tokens or 0), "context window"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "contextTokens": self.context_tokens,
            "compactAtTokens": self.compact_at_tokens,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class StepBudget:
    """The budget of one step and the reason it is that number."""

    tokens: int
    origin: str  # "setting" or "host"
    why: str
    host: HostWindow | None = None

    def to_reason(self) -> dict[str, Any]:
        """The assembly log's `budget` reason."""
        reason: dict[str, Any] = {
            "kind": "budget",
            "tokens": self.tokens,
            "origin": self.origin,
            "why": self.why,
        }
        if self.host is not None:
            reason["host"] = self.host.to_dict()
        return reason


def step_budget(config: Config, host: HostWindow | None = None) -> StepBudget:
    """The budget for a step on this host: the setting, or the host's share when smaller."""
    configured = budget_tokens(config)
    setting = f"assembly.softBudgetTokens {configured}"
    share = config.assembly.host_share
    sized = host.size() if host is not None else None
    if sized is None:
        why = f"{setting} (the host says nothing of its context size)"
        return StepBudget(configured, "setting", why, host)
    size, what = sized
    where = f"{host.source} {what}" if host is not None and host.source else what
    if share <= 0:
        why = f"{setting} (assembly.hostShare 0: the {where} of {size} tokens is not used)"
        return StepBudget(configured, "setting", why, host)
    shared = int(share * size)
    if shared >= configured:
        why = f"{setting}, within {share:g} x the {where} of {size} tokens ({shared})"
        return StepBudget(configured, "setting", why, host)
    least = config.assembly.min_budget_tokens
    tokens = max(least, shared)
    floor = f", raised to assembly.minBudgetTokens {least}" if tokens > shared else ""
    why = f"{share:g} x the {where} of {size} tokens = {shared}{floor} (below {setting})"
    return StepBudget(min(tokens, configured), "host", why, host)


def _positive(value: int | None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
