"""What ranking hands on: scored items with the parts of their score, and what was left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lcm_core.store.models import MemoryItem


# Not frozen: a step builds hundreds of these, and a frozen dataclass's __init__ costs
# about four times as much (a call per field). Nothing changes one once built.
@dataclass(slots=True)
class Omission:
    """Something retrieval or assembly considered and left out, with the reason why."""

    section: str
    ref: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"section": self.section, "ref": self.ref, "reason": self.reason}


# Not frozen, for the same reason as `Omission`.
@dataclass(slots=True)
class RankedItem:
    """A scored candidate and the parts of its score, for explain output."""

    item: MemoryItem
    score: float
    search_score: float
    exact: tuple[str, ...] = ()
    recent: bool = False
    superseded_link: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.item.id,
            "score": round(self.score, 4),
            "search": round(self.search_score, 4),
            "exact": list(self.exact),
            "recent": self.recent,
            "supersededLink": self.superseded_link,
        }


@dataclass(frozen=True, slots=True)
class Ranking:
    """The items chosen for a query, best first, and the candidates left out."""

    selected: tuple[RankedItem, ...] = ()
    omitted: tuple[Omission, ...] = ()
    candidates: int = 0
    # Matching items left out because an earlier block still in context lists them.
    listed: tuple[MemoryItem, ...] = ()
