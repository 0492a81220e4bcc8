"""The in-memory reference store: the port's contract in plain Python (see `store`)."""

from __future__ import annotations

from lcm_core.store.memory.db import MemoryDatabase
from lcm_core.store.memory.store import InMemoryStore

__all__ = ["InMemoryStore", "MemoryDatabase"]
