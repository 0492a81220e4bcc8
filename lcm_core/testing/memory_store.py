"""The reference store, where the suite's users have found it: it now lives in the port
(`lcm_core.store.memory`), since re-extraction uses it outside tests too."""

from __future__ import annotations

from lcm_core.store.memory import InMemoryStore, MemoryDatabase

__all__ = ["InMemoryStore", "MemoryDatabase"]
