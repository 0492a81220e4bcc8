"""Reading DuckDB results as column -> value dicts, the shape `lcm_core.store.rows` converts."""

from __future__ import annotations

from typing import Any

import duckdb


def fetch_dicts(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """All remaining rows of an executed statement as column -> value dicts."""
    names = [str(d[0]) for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def fetch_dict(cursor: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The next row of an executed statement as a dict, or None."""
    names = [str(d[0]) for d in cursor.description or ()]
    row = cursor.fetchone()
    return None if row is None else dict(zip(names, row, strict=True))
