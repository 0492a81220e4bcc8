"""`SupportsImport` for the in-memory reference store: the contract in plain Python.

A table's columns are those its record builder writes (`lcm_core.store.records`), so a
column the schema lacks is refused as a SQL backend refuses it; the unique constraints
the SQL schemas declare beside the keys are checked here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store import records
from lcm_core.store.errors import StoreConflictError, StoreError
from lcm_core.store.models import (
    EXPORT_ORDER,
    GENERATED_ID_TABLES,
    ROW_KEYS,
    TABLES,
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
from lcm_core.testing.memory_db import nulls_first, public

if TYPE_CHECKING:
    from lcm_core.testing.memory_db import MemoryDatabase

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
_UNIQUE: Final[dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], bool]]]] = {
    "skill_versions": (("name", "content_hash"), lambda row: True),
    "rules": (("skill_name", "rule_key"), lambda row: True),
    "memory_items": (("session_id", "content_hash"), lambda row: row.get("status") == "active"),
}


def _key(table: str, row: Mapping[str, Any]) -> Any:
    keys = ROW_KEYS[table]
    return row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)


class MemoryImportMixin:
    """`find_row`, `put_row`, `end_import` over the `MemoryDatabase`; needs `self._db`."""

    _db: MemoryDatabase

    def _checked(self, table: str, names: Any) -> None:
        if table not in TABLES:
            raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
        known = _SAMPLES[table]()
        for name in names:
            if name not in known:
                raise StoreError(f"{table}: column {name!r} is not in this database")

    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        self._checked(table, match)
        columns = [name.strip() for name in EXPORT_ORDER[table].split(",")]
        hits = [
            row
            for row in self._db.rows(table)
            if all(row.get(name) == value for name, value in match.items())
        ]
        hits.sort(key=lambda row: [nulls_first(row.get(c)) for c in columns])
        return public(hits[0]) if hits else None

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        self._checked(table, row)
        stored = {**_SAMPLES[table](), **row}  # absent columns take the builders' defaults
        generated = table in GENERATED_ID_TABLES
        if generated and row.get("id") is None:
            stored["id"] = self._db.next_id(table)
        key = _key(table, stored)
        if self._db.get(table, key) is not None:
            raise StoreConflictError(f"{table}: a row with key {key!r} exists")
        unique = _UNIQUE.get(table)
        if unique is not None and unique[1](stored):
            columns, applies = unique
            for other in self._db.rows(table):
                if applies(other) and all(other.get(c) == stored.get(c) for c in columns):
                    raise StoreConflictError(f"{table}: unique {columns} already stored")
        with self._db.transaction():
            self._db.put(table, key, stored)
        return stored["id"] if generated else None

    def end_import(self, table: str) -> None:
        if table in GENERATED_ID_TABLES:
            top = max((int(row["id"]) for row in self._db.rows(table)), default=0)
            while self._db.next_id(table) < top:
                continue  # each call moves the counter one id on
