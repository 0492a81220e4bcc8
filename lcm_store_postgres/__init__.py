"""The server backend: schema v2 on PostgreSQL, one tenant per database role, same contract."""

from __future__ import annotations

from lcm_store_postgres.store import PostgresMemoryStore

__all__ = ["PostgresMemoryStore", "open_postgres_store"]


def open_postgres_store(location: str) -> PostgresMemoryStore:
    """Entry point for `lcm.stores`: what follows `postgresql://` in the URL."""
    return PostgresMemoryStore(f"postgresql://{location}")
