"""The bookkeeping tables over keyed rows: sessions, state, the queue, skills, rules, logs.

Each method is a few keyed-row calls (`primitives.StoreBackend`), the same on every
backend; rows are the `records.*_record` dicts, read back by `rows.*_from_row`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.errors import StoreConflictError, StoreError
from lcm_core.store.models import (
    ROW_KEYS,
    AssemblyLog,
    Checkpoint,
    PendingExtraction,
    Rule,
    RuleOverride,
    Session,
    SkillFile,
    SkillVersion,
    TaskState,
    ValidationLog,
)
from lcm_core.store.primitives import StoreBackend
from lcm_core.store.queries import AtMost
from lcm_core.store.rows import nulls_first


class BookkeepingMixin(StoreBackend):
    """Every table but events, archive and items, written once for all backends."""

    def _upsert(self, table: str, row: Mapping[str, Any], keep: Sequence[str] = ()) -> None:
        """Store `row` under its key: update the stored one (but its `keep` columns) or add it."""
        key = {name: row[name] for name in ROW_KEYS[table]}
        values = {name: v for name, v in row.items() if name not in key and name not in keep}
        with self.transaction():
            if self.update_rows(table, key, values):
                return
            try:
                self.put_row(table, row)
            except StoreConflictError:
                # Another writer added the key between the two statements: update it.
                self.update_rows(table, key, values)

    def _added(self, table: str, record: dict[str, Any]) -> int:
        """Insert a new row of a generated-id table (its `id` left to the store, and taken
        off `record`) and return the id the store gave it."""
        record.pop("id", None)
        new_id = self.put_row(table, record)
        if new_id is None:
            raise StoreError(f"{table}: the store returned no id for a new row")
        return int(new_id)

    # --- sessions, task state, checkpoints ---------------------------------------------
    def upsert_session(self, session: Session) -> None:
        now = utc_now_iso()
        stored = replace(
            session, created_at=session.created_at or now, updated_at=session.updated_at or now
        )
        # An existing session keeps the time it was first seen.
        self._upsert("sessions", records.session_record(stored), keep=("created_at",))

    def get_session(self, session_id: str) -> Session | None:
        row = self._find("sessions", {"session_id": session_id})
        return rows.session_from_row(row) if row else None

    def list_sessions(self) -> list[Session]:
        found = self._list("sessions", order=("-updated_at", "session_id"))
        return [rows.session_from_row(row) for row in found]

    def put_task_state(self, state: TaskState) -> None:
        stored = replace(state, updated_at=state.updated_at or utc_now_iso())
        self._upsert("task_state", records.task_state_record(stored))

    def get_task_state(self, session_id: str) -> TaskState | None:
        row = self._find("task_state", {"session_id": session_id})
        return rows.task_state_from_row(row) if row else None

    def put_checkpoint(self, checkpoint: Checkpoint) -> None:
        stored = replace(checkpoint, updated_at=checkpoint.updated_at or utc_now_iso())
        self._upsert("checkpoints", records.checkpoint_record(stored))

    def get_checkpoint(self, session_id: str) -> Checkpoint:
        row = self._find("checkpoints", {"session_id": session_id})
        return rows.checkpoint_from_row(row) if row else Checkpoint(session_id)

    # --- extraction retry queue ------------------------------------------------------
    def record_pending(self, session_id: str, seq: int, error: str) -> PendingExtraction:
        key = {"session_id": session_id, "seq": seq}
        with self.transaction():
            old = self._find("pending_extraction", key)
            attempts = int(old["attempts"]) + 1 if old else 1
            row = records.pending_record(session_id, seq, attempts, error, utc_now_iso())
            self._upsert("pending_extraction", row)
        return rows.pending_from_row(row)

    def list_pending(self, session_id: str | None = None) -> list[PendingExtraction]:
        match = {} if session_id is None else {"session_id": session_id}
        found = self._list("pending_extraction", match, order=("session_id", "seq"))
        return [rows.pending_from_row(row) for row in found]

    def clear_pending(self, session_id: str, seq: int) -> None:
        self.delete_rows("pending_extraction", {"session_id": session_id, "seq": seq})

    # --- skills and rules ------------------------------------------------------------
    def add_skill_version(self, version: SkillVersion) -> SkillVersion:
        with self.transaction():
            row = self._find(
                "skill_versions", {"name": version.name, "content_hash": version.content_hash}
            )
            if row is not None:
                return rows.skill_version_from_row(row)
            stored = replace(version, created_at=version.created_at or utc_now_iso())
            new_id = self._added("skill_versions", records.skill_version_record(stored))
        return replace(stored, id=new_id)

    def list_skill_versions(self, name: str) -> list[SkillVersion]:
        found = self._list("skill_versions", {"name": name}, order=("version", "id"))
        return [rows.skill_version_from_row(row) for row in found]

    def put_skill_file(self, skill: SkillFile) -> None:
        stored = replace(skill, updated_at=skill.updated_at or utc_now_iso())
        self._upsert("skill_files", records.skill_file_record(stored))

    def get_skill_file(self, name: str) -> SkillFile | None:
        row = self._find("skill_files", {"name": name})
        return rows.skill_file_from_row(row) if row else None

    def list_skill_files(self) -> list[SkillFile]:
        return [rows.skill_file_from_row(row) for row in self._list("skill_files", order=("name",))]

    def upsert_rule(self, rule: Rule) -> None:
        stored = replace(rule, updated_at=rule.updated_at or utc_now_iso())
        with self.transaction():
            # The rule key, not the id, names a rule within a skill: the row of either goes,
            # then the rule is written afresh (its two unique keys may both move).
            self.delete_rows("rules", {"id": rule.id})
            self.delete_rows("rules", {"skill_name": rule.skill_name, "rule_key": rule.rule_key})
            self.put_row("rules", records.rule_record(stored))

    def list_rules(
        self, *, skill_name: str | None = None, active: bool | None = None
    ) -> list[Rule]:
        match: dict[str, Any] = {}
        if skill_name is not None:
            match["skill_name"] = skill_name
        if active is not None:
            match["active"] = int(active)
        # By skill, source line (none first, as SQL sorts NULL on SQLite) and key: sorted
        # here, where NULL sorts the same whatever the database.
        found = sorted(
            self._list("rules", match),
            key=lambda r: (r["skill_name"], nulls_first(r["source_line"]), r["rule_key"]),
        )
        return [rows.rule_from_row(row) for row in found]

    def put_rule_override(self, override: RuleOverride) -> None:
        stored = replace(override, updated_at=override.updated_at or utc_now_iso())
        self._upsert("rule_overrides", records.rule_override_record(stored))

    def list_rule_overrides(self) -> list[RuleOverride]:
        found = self._list("rule_overrides", order=("rule_id",))
        return [rows.rule_override_from_row(row) for row in found]

    # --- logs ------------------------------------------------------------------------
    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        keep = max(1, int(retention))
        record = records.assembly_log_record(log, 0)
        # Stamped on the record, not by `replace`: the log is written at every step.
        record["created_at"] = log.created_at or utc_now_iso()
        with self.transaction():
            new_id = self._added("assembly_logs", record)
            self._keep_newest_logs(log.session_id, keep)
        return new_id

    def _keep_newest_logs(self, session_id: str, keep: int) -> None:
        """Delete the session's assembly logs but its newest `keep` (an SQL backend does it
        in one statement, `SqlReads._keep_newest_logs`)."""
        session = {"session_id": session_id}
        cut = self._list(
            "assembly_logs", session, order=("-id",), limit=1, offset=keep, columns=("id",)
        )
        if cut:
            self.delete_rows("assembly_logs", {**session, "id": AtMost(cut[0]["id"])})

    def list_assembly_logs(self, session_id: str, *, limit: int | None = None) -> list[AssemblyLog]:
        found = self._list("assembly_logs", {"session_id": session_id}, order=("-id",), limit=limit)
        return [rows.assembly_log_from_row(row) for row in found]

    def rewrite_assembly_log_reasons(self, log_id: int, reasons: Sequence[dict[str, Any]]) -> bool:
        values = {"reasons_json": rows.dumps(list(reasons))}
        with self.transaction():
            return self.update_rows("assembly_logs", {"id": int(log_id)}, values) > 0

    def add_validation_log(self, log: ValidationLog) -> int:
        stored = replace(log, created_at=log.created_at or utc_now_iso())
        with self.transaction():
            return self._added("validation_logs", records.validation_log_record(stored, 0))

    def list_validation_logs(
        self, session_id: str, *, limit: int | None = None
    ) -> list[ValidationLog]:
        found = self._list(
            "validation_logs", {"session_id": session_id}, order=("-id",), limit=limit
        )
        return [rows.validation_log_from_row(row) for row in found]
