"""Project scope: the durable items of the other sessions of this session's project.

With `memory.scope = project` a pre-step also draws on what the user set down in the
other sessions of the same project (see `lcm_core.capture.project` for the identity).
Only durable items (`is_durable`) cross: a passing proposal of last week is not memory
today. A session without a recorded project shares with none, and projects are compared
as whole strings, so nothing ever crosses to another project whatever the query says.

Such an item is scored by its own text only (its source turns are another session's),
times `PROJECT_FACTOR`, so at equal relevance this session's item ranks first. When two
candidates state the same subject (`cross_session_key`), only the newest stays: a
correction in one session replaces the other session's item in both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final, TypeVar

from lcm_core.config import Config
from lcm_core.extraction.durability import is_durable
from lcm_core.extraction.subject import subject_fact
from lcm_core.extraction.supersede import REPLACEABLE_KINDS
from lcm_core.store.models import MemoryItem, Session
from lcm_core.store.ports import ItemStore

T = TypeVar("T")

# Another session's item at equal relevance scores this share of this session's.
PROJECT_FACTOR: Final = 0.8
# Items read per other session per query.
ITEMS_PER_SESSION: Final = 8


def project_scope(config: Config) -> bool:
    """Whether a pre-step draws on the project's other sessions (`memory.scope`)."""
    return config.memory.scope == "project"


def project_items(
    store: ItemStore,
    session_id: str,
    siblings: Sequence[Session],
    filters: Sequence[str],
    *,
    limit: int = ITEMS_PER_SESSION,
) -> list[MemoryItem]:
    """The durable items of the sibling sessions whose content matches any filter term.

    One search over the whole store answers when it holds only this project's matches
    (every match, or a full list of this project's best): the per-session search costs
    one query per session. Otherwise each sibling is searched on its own, `limit` items
    each, so another project's matches can never crowd this project's out.
    """
    mine = {s.session_id for s in siblings}
    wanted = limit * len(siblings) + limit
    hits = store.search_items(None, filters, statuses=("active",), limit=wanted)
    if len(hits) < wanted or all(h.item.session_id in mine | {session_id} for h in hits):
        found = [h.item for h in hits if h.item.session_id in mine]
    else:
        found = []
        for sibling in siblings:
            per = store.search_items(sibling.session_id, filters, statuses=("active",), limit=limit)
            found.extend(h.item for h in per)
    return [item for item in found if is_durable(item)]


def durable_of(store: ItemStore, siblings: Iterable[Session]) -> list[MemoryItem]:
    """Every durable item of the sibling sessions (for the post-compaction resident set)."""
    return [
        item
        for sibling in siblings
        for item in store.list_items(sibling.session_id, statuses=("active",))
        if is_durable(item)
    ]


def cross_session_key(item: MemoryItem) -> str:
    """The kind family and subject an item states, "" when it is no subject-value statement.

    Facts and decisions are one family (extraction replaces one by the other within a
    session too, see `REPLACEABLE_KINDS`); any other kind only meets its own kind.
    """
    stated = subject_fact(item.content)
    if stated is None:
        return ""
    family = "fact" if item.kind in REPLACEABLE_KINDS else item.kind
    return f"{family}|{stated.key}"


def newest_per_subject(entries: Sequence[T], item_of: Callable[[T], MemoryItem]) -> list[T]:
    """`entries` without those whose subject a newer entry of another session states again.

    Within one session extraction already decides what replaces what, so two entries of
    the same session never drop each other here. Order is kept.
    """
    newest: dict[str, MemoryItem] = {}
    for entry in entries:
        item = item_of(entry)
        key = cross_session_key(item)
        if not key:
            continue
        held = newest.get(key)
        if held is None or (item.created_at, item.id) > (held.created_at, held.id):
            newest[key] = item
    kept: list[T] = []
    for entry in entries:
        item = item_of(entry)
        key = cross_session_key(item)
        latest = newest.get(key) if key else None
        if latest is None or latest.session_id == item.session_id:
            kept.append(entry)
    return kept
