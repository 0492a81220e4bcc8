"""Every exported table has a row key for `lcm import`, so a new table cannot be forgotten."""

from __future__ import annotations

from lcm_core.store.models import EXPORT_ORDER, GENERATED_ID_TABLES, ROW_KEYS, TABLES


def test_every_table_has_a_row_key() -> None:
    """ROW_KEYS names a key for each table in TABLES, and nothing else."""
    assert set(ROW_KEYS) == set(TABLES) == set(EXPORT_ORDER)
    assert all(ROW_KEYS[table] for table in TABLES)


def test_generated_id_tables_are_keyed_by_id() -> None:
    """A table whose ids the store generates is keyed by that id alone."""
    assert all(ROW_KEYS[table] == ("id",) for table in GENERATED_ID_TABLES)
