"""The DuckDB store's bookkeeping tables: sessions, state, skills, rules, logs and the queue."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import rows
from lcm_core.store.models import (
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
from lcm_core.store.queries import log_reasons_query, log_retention_query
from lcm_store_duckdb.admin import AdminMixin
from lcm_store_duckdb.fetch import fetch_dict

if TYPE_CHECKING:
    import duckdb

    from lcm_store_duckdb.connection import Connection


class RecordsMixin(AdminMixin):
    """Operations on every table but events and memory items; needs `self._db`.

    Each write first names the rows it may change (`remember`), so an inner transaction
    that fails can put them back.
    """

    _db: Connection

    def _next_id(self, raw: duckdb.DuckDBPyConnection, table: str) -> int:
        """Draw the next id of an id table; undoing the insert deletes that id."""
        row = raw.execute(f"SELECT nextval('{table}_id')").fetchone()
        new_id = int(row[0]) if row else 0
        self._db.added(table, "id = ?", (new_id,))
        return new_id

    # --- sessions ----------------------------------------------------------------
    def upsert_session(self, session: Session) -> None:
        now = utc_now_iso()
        with self._db.transaction(), self._db.guarded("upsert session") as raw:
            self._db.remember("sessions", "session_id = ?", (session.session_id,))
            raw.execute(
                "INSERT INTO sessions (session_id, cwd, project, origin, dsh_version, "
                "memory_enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET cwd = excluded.cwd, "
                "project = excluded.project, origin = excluded.origin, "
                "dsh_version = excluded.dsh_version, memory_enabled = excluded.memory_enabled, "
                "updated_at = excluded.updated_at",
                (
                    session.session_id,
                    session.cwd,
                    session.project,
                    session.origin,
                    session.dsh_version,
                    int(session.memory_enabled),
                    session.created_at or now,
                    session.updated_at or now,
                ),
            )

    def get_session(self, session_id: str) -> Session | None:
        row = self._one("get session", "SELECT * FROM sessions WHERE session_id = ?", session_id)
        return rows.session_from_row(row) if row else None

    def list_sessions(self) -> list[Session]:
        found = self._all(
            "list sessions", "SELECT * FROM sessions ORDER BY updated_at DESC, session_id"
        )
        return [rows.session_from_row(row) for row in found]

    # --- task state and checkpoints ----------------------------------------------
    def put_task_state(self, state: TaskState) -> None:
        with self._db.transaction(), self._db.guarded("put task state") as raw:
            self._db.remember("task_state", "session_id = ?", (state.session_id,))
            raw.execute(
                "INSERT OR REPLACE INTO task_state (session_id, goal, progress_json, "
                "blockers_json, open_items_json, superseded_json, updated_by_seq, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    state.session_id,
                    state.goal,
                    rows.dumps(list(state.progress)),
                    rows.dumps(list(state.blockers)),
                    rows.dumps(list(state.open_items)),
                    rows.dumps(list(state.superseded)),
                    state.updated_by_seq,
                    state.updated_at or utc_now_iso(),
                ),
            )

    def get_task_state(self, session_id: str) -> TaskState | None:
        row = self._one(
            "get task state", "SELECT * FROM task_state WHERE session_id = ?", session_id
        )
        return rows.task_state_from_row(row) if row else None

    def put_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._db.transaction(), self._db.guarded("put checkpoint") as raw:
            self._db.remember("checkpoints", "session_id = ?", (checkpoint.session_id,))
            raw.execute(
                "INSERT OR REPLACE INTO checkpoints (session_id, last_event_seq, "
                "last_extract_seq, last_assembly_seq, updated_at) VALUES (?, ?, ?, ?, ?)",
                (
                    checkpoint.session_id,
                    checkpoint.last_event_seq,
                    checkpoint.last_extract_seq,
                    checkpoint.last_assembly_seq,
                    checkpoint.updated_at or utc_now_iso(),
                ),
            )

    def get_checkpoint(self, session_id: str) -> Checkpoint:
        row = self._one(
            "get checkpoint", "SELECT * FROM checkpoints WHERE session_id = ?", session_id
        )
        return rows.checkpoint_from_row(row) if row else Checkpoint(session_id)

    # --- skills and rules ----------------------------------------------------------
    def add_skill_version(self, version: SkillVersion) -> SkillVersion:
        with self._db.transaction(), self._db.guarded("add skill version") as raw:
            row = fetch_dict(
                raw.execute(
                    "SELECT * FROM skill_versions WHERE name = ? AND content_hash = ?",
                    (version.name, version.content_hash),
                )
            )
            if row is not None:
                return rows.skill_version_from_row(row)
            stored = replace(
                version,
                id=self._next_id(raw, "skill_versions"),
                created_at=version.created_at or utc_now_iso(),
            )
            raw.execute(
                "INSERT INTO skill_versions (id, name, source, path, content, content_hash, "
                "version, supersedes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stored.id,
                    stored.name,
                    stored.source,
                    stored.path,
                    stored.content,
                    stored.content_hash,
                    stored.version,
                    stored.supersedes,
                    stored.created_at,
                ),
            )
        return stored

    def list_skill_versions(self, name: str) -> list[SkillVersion]:
        found = self._all(
            "list skill versions",
            "SELECT * FROM skill_versions WHERE name = ? ORDER BY version, id",
            name,
        )
        return [rows.skill_version_from_row(row) for row in found]

    def put_skill_file(self, skill: SkillFile) -> None:
        with self._db.transaction(), self._db.guarded("put skill file") as raw:
            self._db.remember("skill_files", "name = ?", (skill.name,))
            raw.execute(
                "INSERT OR REPLACE INTO skill_files (name, path, version_id, version, enabled, "
                "description, when_to_use, invocation, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    skill.name,
                    skill.path,
                    skill.version_id,
                    skill.version,
                    int(skill.enabled),
                    skill.description,
                    skill.when_to_use,
                    skill.invocation,
                    skill.updated_at or utc_now_iso(),
                ),
            )

    def get_skill_file(self, name: str) -> SkillFile | None:
        row = self._one("get skill file", "SELECT * FROM skill_files WHERE name = ?", name)
        return rows.skill_file_from_row(row) if row else None

    def list_skill_files(self) -> list[SkillFile]:
        found = self._all("list skill files", "SELECT * FROM skill_files ORDER BY name")
        return [rows.skill_file_from_row(row) for row in found]

    def upsert_rule(self, rule: Rule) -> None:
        with self._db.transaction(), self._db.guarded("upsert rule") as raw:
            # The rule key, not the id, names a rule within a skill: replace by either.
            # DuckDB's INSERT OR REPLACE needs a single unique constraint, rules have two.
            where = "id = ? OR (skill_name = ? AND rule_key = ?)"
            key = (rule.id, rule.skill_name, rule.rule_key)
            self._db.remember("rules", where, key)
            raw.execute(f"DELETE FROM rules WHERE {where}", key)
            raw.execute(
                "INSERT INTO rules (id, skill_name, rule_key, text, category, scope_json, "
                "source_path, source_line, active, content_hash, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rule.id,
                    rule.skill_name,
                    rule.rule_key,
                    rule.text,
                    rule.category,
                    rows.dumps(rule.scope),
                    rule.source_path,
                    rule.source_line,
                    int(rule.active),
                    rule.content_hash,
                    rule.updated_at or utc_now_iso(),
                ),
            )

    def put_rule_override(self, override: RuleOverride) -> None:
        with self._db.transaction(), self._db.guarded("put rule override") as raw:
            self._db.remember("rule_overrides", "rule_id = ?", (override.rule_id,))
            raw.execute(
                "INSERT OR REPLACE INTO rule_overrides (rule_id, category, active, scope_json, "
                "updated_at) VALUES (?, ?, ?, ?, ?)",
                (
                    override.rule_id,
                    override.category,
                    None if override.active is None else int(override.active),
                    None if override.scope is None else rows.dumps(override.scope),
                    override.updated_at or utc_now_iso(),
                ),
            )

    def list_rule_overrides(self) -> list[RuleOverride]:
        found = self._all("list rule overrides", "SELECT * FROM rule_overrides ORDER BY rule_id")
        return [rows.rule_override_from_row(row) for row in found]

    # --- logs ----------------------------------------------------------------------
    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        keep = max(1, int(retention))
        with self._db.transaction(), self._db.guarded("add assembly log") as raw:
            # The retention delete may touch any row of the session: remember them all.
            self._db.remember("assembly_logs", "session_id = ?", (log.session_id,))
            new_id = self._next_id(raw, "assembly_logs")
            raw.execute(
                "INSERT INTO assembly_logs (id, session_id, created_at, trigger, turn, step, "
                "budget_tokens, used_tokens, token_source, content_hash, injected, message_seq, "
                "sections_json, items_json, omitted_json, reasons_json, errors_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    new_id,
                    log.session_id,
                    log.created_at or utc_now_iso(),
                    log.trigger,
                    log.turn,
                    log.step,
                    log.budget_tokens,
                    log.used_tokens,
                    log.token_source,
                    log.content_hash,
                    int(log.injected),
                    log.message_seq,
                    rows.dumps(list(log.sections)),
                    rows.dumps(list(log.item_ids)),
                    rows.dumps_omitted(log.omitted),
                    rows.dumps(list(log.reasons)),
                    rows.dumps(list(log.errors)),
                ),
            )
            raw.execute(*log_retention_query(log.session_id, keep))
        return new_id

    def list_assembly_logs(self, session_id: str, *, limit: int | None = None) -> list[AssemblyLog]:
        sql = "SELECT * FROM assembly_logs WHERE session_id = ? ORDER BY id DESC"
        params: list[Any] = [session_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, int(limit)))
        return [
            rows.assembly_log_from_row(r) for r in self._all("list assembly logs", sql, *params)
        ]

    def rewrite_assembly_log_reasons(self, log_id: int, reasons: Sequence[dict[str, Any]]) -> bool:
        key = (int(log_id),)
        with self._db.transaction(), self._db.guarded("rewrite assembly log") as raw:
            if fetch_dict(raw.execute("SELECT id FROM assembly_logs WHERE id = ?", key)) is None:
                return False
            self._db.remember("assembly_logs", "id = ?", key)
            raw.execute(*log_reasons_query(log_id, reasons))
        return True

    def add_validation_log(self, log: ValidationLog) -> int:
        with self._db.transaction(), self._db.guarded("add validation log") as raw:
            new_id = self._next_id(raw, "validation_logs")
            raw.execute(
                "INSERT INTO validation_logs (id, session_id, event_seq, target, ok, checked, "
                "skipped, deterministic, blocked, violations_json, errors_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    new_id,
                    log.session_id,
                    log.event_seq,
                    log.target,
                    int(log.ok),
                    log.checked,
                    log.skipped,
                    int(log.deterministic),
                    int(log.blocked),
                    rows.dumps(list(log.violations)),
                    rows.dumps(list(log.errors)),
                    log.created_at or utc_now_iso(),
                ),
            )
        return new_id

    def list_validation_logs(
        self, session_id: str, *, limit: int | None = None
    ) -> list[ValidationLog]:
        sql = "SELECT * FROM validation_logs WHERE session_id = ? ORDER BY id DESC"
        params: list[Any] = [session_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, int(limit)))
        found = self._all("list validation logs", sql, *params)
        return [rows.validation_log_from_row(row) for row in found]

    # --- extraction retry queue ----------------------------------------------------
    def record_pending(self, session_id: str, seq: int, error: str) -> PendingExtraction:
        now = utc_now_iso()
        with self._db.transaction(), self._db.guarded("record pending") as raw:
            key = (session_id, seq)
            self._db.remember("pending_extraction", "session_id = ? AND seq = ?", key)
            raw.execute(
                "INSERT INTO pending_extraction (session_id, seq, attempts, last_error, "
                "updated_at) VALUES (?, ?, 1, ?, ?) ON CONFLICT (session_id, seq) DO UPDATE "
                "SET attempts = attempts + 1, last_error = excluded.last_error, "
                "updated_at = excluded.updated_at",
                (session_id, seq, error, now),
            )
            row = fetch_dict(
                raw.execute(
                    "SELECT * FROM pending_extraction WHERE session_id = ? AND seq = ?", key
                )
            )
        assert row is not None  # written just above, in the same transaction
        return rows.pending_from_row(row)

    def list_pending(self, session_id: str | None = None) -> list[PendingExtraction]:
        params: tuple[str, ...]
        if session_id is None:
            sql, params = "SELECT * FROM pending_extraction ORDER BY session_id, seq", ()
        else:
            sql = "SELECT * FROM pending_extraction WHERE session_id = ? ORDER BY seq"
            params = (session_id,)
        return [rows.pending_from_row(row) for row in self._all("list pending", sql, *params)]

    def clear_pending(self, session_id: str, seq: int) -> None:
        with self._db.transaction(), self._db.guarded("clear pending") as raw:
            key = (session_id, seq)
            self._db.remember("pending_extraction", "session_id = ? AND seq = ?", key)
            raw.execute("DELETE FROM pending_extraction WHERE session_id = ? AND seq = ?", key)
