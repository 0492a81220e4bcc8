"""Keyed rows of the in-memory reference store: the `RowStore` contract in plain Python.

A table's columns are those its record builder writes (`lcm_core.store.records`), so a
column the schema lacks is refused as a SQL backend refuses it; the unique constraints
the SQL schemas declare beside the keys are checked here too. A match, an order and a
limit mean what they mean in SQL (`lcm_core.store.row_sql`), NULL sorting first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from lcm_core.store import records
from lcm_core.store.errors import StoreConflictError, StoreError
from lcm_core.store.memory.db import MemoryDatabase, Row, public
from lcm_core.store.models import (
    EXPORT_ORDER,
    GENERATED_ID_TABLES,
    ROW_KEYS,
    SESSION_TABLES,
    ArchiveEntry,
    AssemblyLog,
    Checkpoint,
    Event,
    MemoryEvent,
    MemoryItem,
    Rule,
    RuleOverride,
    Session,
    SkillFile,
    SkillVersion,
    TaskState,
    ValidationLog,
)
from lcm_core.store.queries import AtMost, known_table
from lcm_core.store.rows import nulls_first

_SAMPLES: Final[dict[str, Callable[[], dict[str, Any]]]] = {
    "meta": lambda: {"key": "", "value": ""},
    "sessions": lambda: records.session_record(Session("")),
    "events": lambda: records.event_record(Event("", 0, "")),
    "archive": lambda: records.archive_record(ArchiveEntry("", "", "")),
    "memory_items": lambda: records.item_record(MemoryItem("", "", "", "", "")),
    "memory_events": lambda: records.memory_event_record(MemoryEvent("", "", ""), 0),
    "task_state": lambda: records.task_state_record(TaskState("")),
    "checkpoints": lambda: records.checkpoint_record(Checkpoint("")),
    "skill_versions": lambda: records.skill_version_record(SkillVersion("", "", "", 0)),
    "skill_files": lambda: records.skill_file_record(SkillFile("", "", None, 0)),
    "rules": lambda: records.rule_record(Rule("", "", "", "", "", "")),
    "rule_overrides": lambda: records.rule_override_record(RuleOverride("")),
    "assembly_logs": lambda: records.assembly_log_record(AssemblyLog("", "", 0, 0), 0),
    "validation_logs": lambda: records.validation_log_record(ValidationLog("", "", True), 0),
    "pending_extraction": lambda: records.pending_record("", 0, 0, "", ""),
}
# Unique constraints besides the key, as the SQL schemas declare them: (columns, only when).
_UNIQUE: Final[dict[str, tuple[tuple[str, ...], Callable[[Row], bool]]]] = {
    "skill_versions": (("name", "content_hash"), lambda row: True),
    "rules": (("skill_name", "rule_key"), lambda row: True),
    "memory_items": (("session_id", "content_hash"), lambda row: row.get("status") == "active"),
}


def _key(table: str, row: Mapping[str, Any]) -> Any:
    keys = ROW_KEYS[table]
    return row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)


def _holds(value: Any, wanted: Any) -> bool:
    """Whether a stored value meets one column of a match (see `RowStore`)."""
    if isinstance(wanted, AtMost):
        return value is not None and bool(value <= wanted.value)
    if isinstance(wanted, list | tuple):
        return bool(value in wanted)
    return bool(value == wanted)  # None matches NULL only


def _sorted(found: list[Row], order: Sequence[str]) -> list[Row]:
    """Rows in `order` (names, "-" in front for descending), NULL first as SQLite sorts."""
    for key in reversed(order):  # stable sorts, last key first
        name = key.removeprefix("-")
        found.sort(key=lambda row: nulls_first(row.get(name)), reverse=key.startswith("-"))
    return found


class KeyedRowsMixin:
    """The keyed-row primitives over a `MemoryDatabase`; needs `self._db`."""

    _db: MemoryDatabase

    def _checked(self, table: str, names: Iterable[str]) -> None:
        known = _SAMPLES[known_table(table)]()
        for name in names:
            if name not in known:
                raise StoreError(f"{table}: column {name!r} is not in this database")

    def _matching(self, table: str, match: Mapping[str, Any]) -> list[Row]:
        """The stored rows (with their rowid) equal to `match`, in rowid order."""
        self._checked(table, match)
        if (
            match
            and set(match) == set(ROW_KEYS[table])
            and not any(isinstance(v, list | tuple | AtMost) for v in match.values())
        ):
            one = self._db.get(table, _key(table, match))
            return [one] if one is not None else []
        if "session_id" in match and table in SESSION_TABLES:
            candidates = self._db.session_rows(table, match["session_id"])
        else:
            candidates = self._db.rows(table)
        return [r for r in candidates if all(_holds(r.get(n), v) for n, v in match.items())]

    def find_row(self, table: str, match: Mapping[str, Any]) -> Row | None:
        found = self.list_rows(table, match, limit=1)
        return found[0] if found else None

    def list_rows(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> list[Row]:
        found = self._matching(table, match or {})
        names = [n.strip() for n in EXPORT_ORDER[table].split(",")] if order is None else order
        self._checked(table, (n.removeprefix("-") for n in names))
        found = _sorted(found, names)[max(0, offset) :]
        if limit is not None:
            found = found[: max(0, limit)]
        if columns is not None:
            self._checked(table, columns)
            return [{name: row[name] for name in columns} for row in found]
        return [public(row) for row in found]

    def count_rows(self, table: str, match: Mapping[str, Any] | None = None) -> int:
        return len(self._matching(table, match or {}))

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[Row]:
        match = (
            {"session_id": session_id} if session_id is not None and table in SESSION_TABLES else {}
        )
        return iter(self.list_rows(table, match))

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        self._checked(table, row)
        stored = {**_SAMPLES[table](), **row}  # absent columns take the builders' defaults
        generated = table in GENERATED_ID_TABLES
        with self._db.transaction():
            if generated and row.get("id") is None:
                stored["id"] = self._db.next_id(table)
            self._refuse_clash(table, stored, _key(table, stored))
            self._db.put(table, _key(table, stored), stored)
        return stored["id"] if generated else None

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        self._checked(table, values)
        found = self._matching(table, match)
        with self._db.transaction():
            for row in found:
                changed = {**row, **values}
                key = _key(table, row)
                if _key(table, changed) != key:
                    self._db.drop(table, key)
                    key = _key(table, changed)
                self._refuse_clash(table, changed, key, same=_key(table, row))
                self._db.put(table, key, changed)
        return len(found)

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        found = self._matching(table, match)
        with self._db.transaction():
            for row in found:
                self._db.drop(table, _key(table, row))
        return len(found)

    def end_import(self, table: str) -> None:
        if table in GENERATED_ID_TABLES:
            top = max((int(row["id"]) for row in self._db.rows(table)), default=0)
            while self._db.next_id(table) < top:
                continue  # each call moves the counter one id on

    def _refuse_clash(self, table: str, row: Row, key: Any, same: Any = None) -> None:
        """Raise `StoreConflictError` when `row` would take a stored key or unique value."""
        if key != same and self._db.get(table, key) is not None:
            raise StoreConflictError(f"{table}: a row with key {key!r} exists")
        unique = _UNIQUE.get(table)
        if unique is None or not unique[1](row):
            return
        columns, applies = unique
        for other in self._db.rows(table):
            if _key(table, other) in (key, same) or not applies(other):
                continue
            if all(other.get(c) == row.get(c) for c in columns):
                raise StoreConflictError(f"{table}: unique {columns} already stored")
