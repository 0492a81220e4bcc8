"""The PostgreSQL store's bookkeeping tables: sessions, state, skills, rules, logs, queue."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import rows
from lcm_core.store.errors import StoreError
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

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection


class RecordsMixin:
    """Sessions, state, skills, rules, logs and the queue; needs `self._db`."""

    _db: Connection

    # --- sessions ----------------------------------------------------------------
    def upsert_session(self, session: Session) -> None:
        now = utc_now_iso()
        with self._db.transaction(), self._db.guarded("upsert session") as raw:
            raw.execute(
                "INSERT INTO sessions (session_id, cwd, project, origin, dsh_version, "
                "memory_enabled, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, session_id) DO UPDATE SET cwd = excluded.cwd, "
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
        with self._db.guarded("get session") as raw:
            row = raw.execute(
                "SELECT * FROM sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
        return rows.session_from_row(row) if row else None

    def list_sessions(self) -> list[Session]:
        with self._db.guarded("list sessions") as raw:
            return [
                rows.session_from_row(row)
                for row in raw.execute(
                    "SELECT * FROM sessions ORDER BY updated_at DESC, session_id"
                )
            ]

    # --- task state and checkpoints ----------------------------------------------
    def put_task_state(self, state: TaskState) -> None:
        with self._db.transaction(), self._db.guarded("put task state") as raw:
            raw.execute(
                "INSERT INTO task_state (session_id, goal, progress_json, "
                "blockers_json, open_items_json, superseded_json, updated_by_seq, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, session_id) DO "
                "UPDATE SET goal = excluded.goal, progress_json = excluded.progress_json, "
                "blockers_json = excluded.blockers_json, "
                "open_items_json = excluded.open_items_json, "
                "superseded_json = excluded.superseded_json, "
                "updated_by_seq = excluded.updated_by_seq, updated_at = excluded.updated_at",
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
        with self._db.guarded("get task state") as raw:
            row = raw.execute(
                "SELECT * FROM task_state WHERE session_id = %s", (session_id,)
            ).fetchone()
        return rows.task_state_from_row(row) if row else None

    def put_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._db.transaction(), self._db.guarded("put checkpoint") as raw:
            raw.execute(
                "INSERT INTO checkpoints (session_id, last_event_seq, "
                "last_extract_seq, last_assembly_seq, updated_at) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, session_id) DO UPDATE SET "
                "last_event_seq = excluded.last_event_seq, "
                "last_extract_seq = excluded.last_extract_seq, "
                "last_assembly_seq = excluded.last_assembly_seq, updated_at = excluded.updated_at",
                (
                    checkpoint.session_id,
                    checkpoint.last_event_seq,
                    checkpoint.last_extract_seq,
                    checkpoint.last_assembly_seq,
                    checkpoint.updated_at or utc_now_iso(),
                ),
            )

    def get_checkpoint(self, session_id: str) -> Checkpoint:
        with self._db.guarded("get checkpoint") as raw:
            row = raw.execute(
                "SELECT * FROM checkpoints WHERE session_id = %s", (session_id,)
            ).fetchone()
        return rows.checkpoint_from_row(row) if row else Checkpoint(session_id)

    # --- skills and rules ----------------------------------------------------------
    def add_skill_version(self, version: SkillVersion) -> SkillVersion:
        with self._db.transaction(), self._db.guarded("add skill version") as raw:
            row = raw.execute(
                "SELECT * FROM skill_versions WHERE name = %s AND content_hash = %s",
                (version.name, version.content_hash),
            ).fetchone()
            if row is not None:
                return rows.skill_version_from_row(row)
            stored = replace(version, created_at=version.created_at or utc_now_iso())
            cursor = raw.execute(
                "INSERT INTO skill_versions (name, source, path, content, content_hash, "
                "version, supersedes, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "RETURNING id",
                (
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
        new = cursor.fetchone()
        return replace(stored, id=None if new is None else int(new["id"]))

    def list_skill_versions(self, name: str) -> list[SkillVersion]:
        with self._db.guarded("list skill versions") as raw:
            return [
                rows.skill_version_from_row(row)
                for row in raw.execute(
                    "SELECT * FROM skill_versions WHERE name = %s ORDER BY version, id", (name,)
                )
            ]

    def put_skill_file(self, skill: SkillFile) -> None:
        with self._db.transaction(), self._db.guarded("put skill file") as raw:
            raw.execute(
                "INSERT INTO skill_files (name, path, version_id, version, enabled, "
                "description, when_to_use, invocation, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, name) DO "
                "UPDATE SET path = excluded.path, version_id = excluded.version_id, "
                "version = excluded.version, enabled = excluded.enabled, "
                "description = excluded.description, when_to_use = excluded.when_to_use, "
                "invocation = excluded.invocation, updated_at = excluded.updated_at",
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
        with self._db.guarded("get skill file") as raw:
            row = raw.execute("SELECT * FROM skill_files WHERE name = %s", (name,)).fetchone()
        return rows.skill_file_from_row(row) if row else None

    def list_skill_files(self) -> list[SkillFile]:
        with self._db.guarded("list skill files") as raw:
            return [
                rows.skill_file_from_row(row)
                for row in raw.execute("SELECT * FROM skill_files ORDER BY name")
            ]

    def upsert_rule(self, rule: Rule) -> None:
        with self._db.transaction(), self._db.guarded("upsert rule") as raw:
            # The rule key, not the id, names a rule within a skill: replace by key.
            raw.execute(
                "DELETE FROM rules WHERE skill_name = %s AND rule_key = %s AND id <> %s",
                (rule.skill_name, rule.rule_key, rule.id),
            )
            raw.execute(
                "INSERT INTO rules (id, skill_name, rule_key, text, category, "
                "scope_json, source_path, source_line, active, content_hash, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, id) "
                "DO UPDATE SET skill_name = excluded.skill_name, rule_key = excluded.rule_key, "
                "text = excluded.text, category = excluded.category, "
                "scope_json = excluded.scope_json, source_path = excluded.source_path, "
                "source_line = excluded.source_line, active = excluded.active, "
                "content_hash = excluded.content_hash, updated_at = excluded.updated_at",
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

    def list_rules(
        self, *, skill_name: str | None = None, active: bool | None = None
    ) -> list[Rule]:
        clauses: list[str] = []
        params: list[Any] = []
        if skill_name is not None:
            clauses.append("skill_name = %s")
            params.append(skill_name)
        if active is not None:
            clauses.append("active = %s")
            params.append(int(active))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.guarded("list rules") as raw:
            return [
                rows.rule_from_row(row)
                for row in raw.execute(
                    f"SELECT * FROM rules {where} ORDER BY skill_name, source_line, rule_key",
                    params,
                )
            ]

    def put_rule_override(self, override: RuleOverride) -> None:
        with self._db.transaction(), self._db.guarded("put rule override") as raw:
            raw.execute(
                "INSERT INTO rule_overrides (rule_id, category, active, scope_json, "
                "updated_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant, rule_id) DO "
                "UPDATE SET category = excluded.category, active = excluded.active, "
                "scope_json = excluded.scope_json, updated_at = excluded.updated_at",
                (
                    override.rule_id,
                    override.category,
                    None if override.active is None else int(override.active),
                    None if override.scope is None else rows.dumps(override.scope),
                    override.updated_at or utc_now_iso(),
                ),
            )

    def list_rule_overrides(self) -> list[RuleOverride]:
        with self._db.guarded("list rule overrides") as raw:
            return [
                rows.rule_override_from_row(row)
                for row in raw.execute("SELECT * FROM rule_overrides ORDER BY rule_id")
            ]

    # --- logs ----------------------------------------------------------------------
    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        keep = max(1, int(retention))
        with self._db.transaction(), self._db.guarded("add assembly log") as raw:
            # The log is on the pre-step's path and only explains what was shown: its
            # commit need not wait for the disk (a server crash may lose the newest few
            # rows, never make the database inconsistent). Capture keeps full durability.
            raw.execute("SET LOCAL synchronous_commit = off")
            cursor = raw.execute(
                "INSERT INTO assembly_logs (session_id, created_at, trigger, turn, step, "
                "budget_tokens, used_tokens, token_source, content_hash, injected, message_seq, "
                "sections_json, items_json, omitted_json, reasons_json, errors_json) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
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
            raw.execute(*log_retention_query(log.session_id, keep, mark="%s"))
        new = cursor.fetchone()
        return 0 if new is None else int(new["id"])

    def list_assembly_logs(self, session_id: str, *, limit: int | None = None) -> list[AssemblyLog]:
        with self._db.guarded("list assembly logs") as raw:
            return [
                rows.assembly_log_from_row(row)
                for row in raw.execute(
                    "SELECT * FROM assembly_logs WHERE session_id = %s ORDER BY id DESC LIMIT %s",
                    (session_id, None if limit is None else max(0, limit)),
                )
            ]

    def rewrite_assembly_log_reasons(self, log_id: int, reasons: Sequence[dict[str, Any]]) -> bool:
        with self._db.transaction(), self._db.guarded("rewrite assembly log") as raw:
            cursor = raw.execute(*log_reasons_query(log_id, reasons, mark="%s"))
        return cursor.rowcount > 0

    def add_validation_log(self, log: ValidationLog) -> int:
        with self._db.transaction(), self._db.guarded("add validation log") as raw:
            cursor = raw.execute(
                "INSERT INTO validation_logs (session_id, event_seq, target, ok, checked, "
                "skipped, deterministic, blocked, violations_json, errors_json, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
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
        new = cursor.fetchone()
        return 0 if new is None else int(new["id"])

    def list_validation_logs(
        self, session_id: str, *, limit: int | None = None
    ) -> list[ValidationLog]:
        with self._db.guarded("list validation logs") as raw:
            return [
                rows.validation_log_from_row(row)
                for row in raw.execute(
                    "SELECT * FROM validation_logs WHERE session_id = %s ORDER BY id DESC LIMIT %s",
                    (session_id, None if limit is None else max(0, limit)),
                )
            ]

    # --- extraction retry queue ----------------------------------------------------
    def record_pending(self, session_id: str, seq: int, error: str) -> PendingExtraction:
        now = utc_now_iso()
        with self._db.transaction(), self._db.guarded("record pending") as raw:
            row = raw.execute(
                "INSERT INTO pending_extraction (session_id, seq, attempts, last_error, "
                "updated_at) VALUES (%s, %s, 1, %s, %s) ON CONFLICT (tenant, session_id, seq) DO UPDATE "
                "SET attempts = pending_extraction.attempts + 1, last_error = excluded.last_error, "
                "updated_at = excluded.updated_at RETURNING *",
                (session_id, seq, error, now),
            ).fetchone()
        if row is None:
            raise StoreError(f"record pending {session_id}:{seq}: the server returned no row")
        return rows.pending_from_row(row)

    def list_pending(self, session_id: str | None = None) -> list[PendingExtraction]:
        sql = "SELECT * FROM pending_extraction"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = %s"
            params = (session_id,)
        with self._db.guarded("list pending") as raw:
            return [
                rows.pending_from_row(row)
                for row in raw.execute(sql + " ORDER BY session_id, seq", params)
            ]

    def clear_pending(self, session_id: str, seq: int) -> None:
        with self._db.transaction(), self._db.guarded("clear pending") as raw:
            raw.execute(
                "DELETE FROM pending_extraction WHERE session_id = %s AND seq = %s",
                (session_id, seq),
            )
