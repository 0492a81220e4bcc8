"""A shared conversation and queries for ranking-parity tests between backends.

Every backend scores search hits with `lcm_core.text.score_matches`, so with the same
rows stored each must rank these queries identically; a backend's test loads this
conversation into it and into the reference SQLite store and compares the hits.
"""

from __future__ import annotations

from lcm_core.store.models import ItemChange
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import lifecycle, make_event, make_item

SESSION = "trip-and-deploy"

# One conversation: travel planning and a database migration, in English, Chinese and
# both, with ids, numbers and short words, and repeated words so bm25 has work to do.
TURNS = (
    "The hotel budget is 3000 yuan per night, breakfast included.",
    "Actually the hotel budget is 2500 yuan, not 3000.",
    "预算不超过3000元（含税），酒店要靠近车站。",
    "酒店预订改到周五，预算不变。",
    "We will migrate PostgreSQL to the staging cluster before Friday.",
    "周五前把 PostgreSQL 迁移到 staging 环境。",
    "The migration plan: dump, restore, verify row counts, switch DNS.",
    "数据库迁移之后要验证行数。",
    "Move the db to v2 of the schema; v2 adds validation logs.",
    "The ui team wants the db dashboard in v2 too.",
    "Redis cache latency is 40 ms at p95; the cache should stay warm.",
    "Cache invalidation runs every 5 minutes.",
    "Train ticket w123 is booked for Monday 08:15.",
    "Flight LH 4711 lands at 18:40; taxi to the hotel.",
    "火车票已经订好，周一早上八点出发。",
    "Use the nginx proxy config from the staging branch.",
    "nginx proxy error 502 after the restart; check the upstream config.",
    "Decision: keep PostgreSQL 16, do not upgrade during the trip.",
    "Preference: window seat on the train, aisle on the flight.",
    "Open question: does the hotel have parking for the rental car?",
)

QUERIES = (
    "what is the hotel budget",
    "酒店预算多少",
    "PostgreSQL 迁移 staging",
    "数据库迁移",
    "db v2",
    "ui",
    "redis cache latency",
    "train ticket w123",
    "火车票 周一",
    "nginx proxy error",
    "3000",
    "flight 4711 hotel",
)


def load_parity_conversation(store: MemoryStore) -> None:
    """Write the conversation as events and one item per turn, then supersede one item."""
    store.insert_events([make_event(SESSION, seq, text) for seq, text in enumerate(TURNS)])
    items = [
        store.insert_item(make_item(SESSION, text, derived_from_seq=seq))[0]
        for seq, text in enumerate(TURNS)
    ]
    old, new = items[0], items[1]
    store.update_item(
        old.id,
        ItemChange(status="superseded", superseded_by=new.id),
        lifecycle(old, "superseded", by=new.id),
    )
