"""Skills, rules and logs of the reference `InMemoryStore` (a mixin, as the SQL stores split theirs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.models import (
    AssemblyLog,
    Rule,
    RuleOverride,
    SkillFile,
    SkillVersion,
    ValidationLog,
)
from lcm_core.testing.memory_db import MemoryDatabase, Row, nulls_first


class MemoryRecordsMixin:
    """Skill versions and files, rules and overrides, assembly and validation logs."""

    _db: MemoryDatabase

    def _session_rows(self, table: str, session_id: str) -> list[Row]:
        """One session's rows of a table (the store's own)."""
        raise NotImplementedError

    # --- skills and rules ----------------------------------------------------------------
    def add_skill_version(self, version: SkillVersion) -> SkillVersion:
        for row in self._db.rows("skill_versions"):
            if row["name"] == version.name and row["content_hash"] == version.content_hash:
                return rows.skill_version_from_row(row)
        with self._db.transaction():
            version_id = self._db.next_id("skill_versions")
            stored = replace(version, id=version_id, created_at=version.created_at or utc_now_iso())
            self._db.put("skill_versions", version_id, records.skill_version_record(stored))
        return stored

    def list_skill_versions(self, name: str) -> list[SkillVersion]:
        picked = [row for row in self._db.rows("skill_versions") if row["name"] == name]
        picked.sort(key=lambda row: (row["version"], row["id"]))
        return [rows.skill_version_from_row(row) for row in picked]

    def put_skill_file(self, skill: SkillFile) -> None:
        stored = replace(skill, updated_at=skill.updated_at or utc_now_iso())
        with self._db.transaction():
            self._db.put("skill_files", skill.name, records.skill_file_record(stored))

    def get_skill_file(self, name: str) -> SkillFile | None:
        row = self._db.get("skill_files", name)
        return rows.skill_file_from_row(row) if row else None

    def list_skill_files(self) -> list[SkillFile]:
        ordered = sorted(self._db.rows("skill_files"), key=lambda row: row["name"])
        return [rows.skill_file_from_row(row) for row in ordered]

    def upsert_rule(self, rule: Rule) -> None:
        stored = replace(rule, updated_at=rule.updated_at or utc_now_iso())
        with self._db.transaction():
            # The rule key, not the id, names a rule within a skill: replace by key.
            for row in self._db.rows("rules"):
                same_key = row["skill_name"] == rule.skill_name and row["rule_key"] == rule.rule_key
                if same_key and row["id"] != rule.id:
                    self._db.drop("rules", row["id"])
            self._db.put("rules", rule.id, records.rule_record(stored))

    def list_rules(
        self, *, skill_name: str | None = None, active: bool | None = None
    ) -> list[Rule]:
        picked = [
            row
            for row in self._db.rows("rules")
            if (skill_name is None or row["skill_name"] == skill_name)
            and (active is None or bool(row["active"]) == active)
        ]
        picked.sort(
            key=lambda row: (row["skill_name"], nulls_first(row["source_line"]), row["rule_key"])
        )
        return [rows.rule_from_row(row) for row in picked]

    def put_rule_override(self, override: RuleOverride) -> None:
        stored = replace(override, updated_at=override.updated_at or utc_now_iso())
        with self._db.transaction():
            self._db.put("rule_overrides", override.rule_id, records.rule_override_record(stored))

    def list_rule_overrides(self) -> list[RuleOverride]:
        ordered = sorted(self._db.rows("rule_overrides"), key=lambda row: row["rule_id"])
        return [rows.rule_override_from_row(row) for row in ordered]

    # --- logs ------------------------------------------------------------------------------
    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        keep = max(1, int(retention))
        with self._db.transaction():
            log_id = self._db.next_id("assembly_logs")
            stored = replace(log, created_at=log.created_at or utc_now_iso())
            self._db.put("assembly_logs", log_id, records.assembly_log_record(stored, log_id))
            ids = sorted(
                (row["id"] for row in self._session_rows("assembly_logs", log.session_id)),
                reverse=True,
            )
            for old_id in ids[keep:]:
                self._db.drop("assembly_logs", old_id)
        return log_id

    def list_assembly_logs(self, session_id: str, *, limit: int | None = None) -> list[AssemblyLog]:
        newest = self._newest("assembly_logs", session_id, limit)
        return [rows.assembly_log_from_row(row) for row in newest]

    def rewrite_assembly_log_reasons(self, log_id: int, reasons: Sequence[dict[str, Any]]) -> bool:
        row = self._db.get("assembly_logs", int(log_id))
        if row is None:
            return False
        with self._db.transaction():
            self._db.put(
                "assembly_logs", int(log_id), {**row, "reasons_json": rows.dumps(list(reasons))}
            )
        return True

    def add_validation_log(self, log: ValidationLog) -> int:
        with self._db.transaction():
            log_id = self._db.next_id("validation_logs")
            stored = replace(log, created_at=log.created_at or utc_now_iso())
            self._db.put("validation_logs", log_id, records.validation_log_record(stored, log_id))
        return log_id

    def list_validation_logs(
        self, session_id: str, *, limit: int | None = None
    ) -> list[ValidationLog]:
        newest = self._newest("validation_logs", session_id, limit)
        return [rows.validation_log_from_row(row) for row in newest]

    def _newest(self, table: str, session_id: str, limit: int | None) -> list[Row]:
        ordered = sorted(self._session_rows(table, session_id), key=lambda r: r["id"], reverse=True)
        return ordered if limit is None else ordered[: max(0, limit)]
