"""Schema v2 in DuckDB types, the search side tables, and per-table keys and export order."""

from __future__ import annotations

from typing import Final

# Types follow the SQLite store column for column: TEXT -> VARCHAR, INTEGER -> BIGINT
# (SQLite integers are 64-bit). Flags stay 0/1 integers and timestamps stay ISO text, so
# an exported row is equal on both backends. DuckDB has no partial indexes, so the
# "one active item per (session_id, content_hash)" rule is enforced by the store's code,
# and no AUTOINCREMENT, so id columns draw from sequences.
V1: Final = (
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id VARCHAR PRIMARY KEY, cwd VARCHAR, project VARCHAR, origin VARCHAR,
        dsh_version VARCHAR, memory_enabled BIGINT NOT NULL DEFAULT 1,
        created_at VARCHAR NOT NULL, updated_at VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS events (
        session_id VARCHAR NOT NULL, seq BIGINT NOT NULL, type VARCHAR NOT NULL,
        time VARCHAR, turn BIGINT, step BIGINT, role VARCHAR,
        text VARCHAR NOT NULL DEFAULT '', source_kind VARCHAR, source_form VARCHAR,
        tool_name VARCHAR, call_id VARCHAR, store VARCHAR NOT NULL DEFAULT 'host',
        content_hash VARCHAR NOT NULL, truncated BIGINT NOT NULL DEFAULT 0,
        ingested_at VARCHAR NOT NULL, PRIMARY KEY (session_id, seq))""",
    """CREATE TABLE IF NOT EXISTS archive (
        session_id VARCHAR NOT NULL, ref VARCHAR NOT NULL, text VARCHAR NOT NULL,
        created_at VARCHAR NOT NULL, PRIMARY KEY (session_id, ref))""",
    """CREATE TABLE IF NOT EXISTS memory_items (
        id VARCHAR PRIMARY KEY, session_id VARCHAR NOT NULL, kind VARCHAR NOT NULL,
        content VARCHAR NOT NULL, conditions_json VARCHAR NOT NULL DEFAULT '[]',
        scope_json VARCHAR NOT NULL DEFAULT '{}', numbers_json VARCHAR NOT NULL DEFAULT '[]',
        source_refs_json VARCHAR NOT NULL DEFAULT '[]', evidence_type VARCHAR NOT NULL,
        status VARCHAR NOT NULL DEFAULT 'active', supersedes_json VARCHAR NOT NULL DEFAULT '[]',
        superseded_by VARCHAR, content_hash VARCHAR NOT NULL,
        extractor VARCHAR NOT NULL DEFAULT '', derived_from_seq BIGINT,
        created_at VARCHAR NOT NULL, updated_at VARCHAR NOT NULL)""",
    "CREATE SEQUENCE IF NOT EXISTS memory_events_id",
    """CREATE TABLE IF NOT EXISTS memory_events (
        id BIGINT PRIMARY KEY DEFAULT nextval('memory_events_id'), memory_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL, event VARCHAR NOT NULL, "at" VARCHAR NOT NULL,
        actor VARCHAR NOT NULL, detail_json VARCHAR NOT NULL DEFAULT '{}')""",
    """CREATE TABLE IF NOT EXISTS task_state (
        session_id VARCHAR PRIMARY KEY, goal VARCHAR,
        progress_json VARCHAR NOT NULL DEFAULT '[]', blockers_json VARCHAR NOT NULL DEFAULT '[]',
        open_items_json VARCHAR NOT NULL DEFAULT '[]',
        superseded_json VARCHAR NOT NULL DEFAULT '[]', updated_by_seq BIGINT,
        updated_at VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        session_id VARCHAR PRIMARY KEY, last_event_seq BIGINT NOT NULL DEFAULT -1,
        last_extract_seq BIGINT NOT NULL DEFAULT -1,
        last_assembly_seq BIGINT NOT NULL DEFAULT -1, updated_at VARCHAR NOT NULL)""",
    "CREATE SEQUENCE IF NOT EXISTS skill_versions_id",
    """CREATE TABLE IF NOT EXISTS skill_versions (
        id BIGINT PRIMARY KEY DEFAULT nextval('skill_versions_id'), name VARCHAR NOT NULL,
        source VARCHAR NOT NULL DEFAULT '', path VARCHAR NOT NULL DEFAULT '',
        content VARCHAR NOT NULL, content_hash VARCHAR NOT NULL, version BIGINT NOT NULL,
        supersedes BIGINT, created_at VARCHAR NOT NULL, UNIQUE (name, content_hash))""",
    """CREATE TABLE IF NOT EXISTS skill_files (
        name VARCHAR PRIMARY KEY, path VARCHAR NOT NULL, version_id BIGINT,
        version BIGINT NOT NULL, enabled BIGINT NOT NULL DEFAULT 1,
        description VARCHAR NOT NULL DEFAULT '', when_to_use VARCHAR NOT NULL DEFAULT '',
        invocation VARCHAR NOT NULL DEFAULT '', updated_at VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS rules (
        id VARCHAR PRIMARY KEY, skill_name VARCHAR NOT NULL, rule_key VARCHAR NOT NULL,
        text VARCHAR NOT NULL, category VARCHAR NOT NULL,
        scope_json VARCHAR NOT NULL DEFAULT '{}', source_path VARCHAR NOT NULL DEFAULT '',
        source_line BIGINT, active BIGINT NOT NULL DEFAULT 1, content_hash VARCHAR NOT NULL,
        updated_at VARCHAR NOT NULL, UNIQUE (skill_name, rule_key))""",
    """CREATE TABLE IF NOT EXISTS rule_overrides (
        rule_id VARCHAR PRIMARY KEY, category VARCHAR, active BIGINT, scope_json VARCHAR,
        updated_at VARCHAR NOT NULL)""",
    "CREATE SEQUENCE IF NOT EXISTS assembly_logs_id",
    """CREATE TABLE IF NOT EXISTS assembly_logs (
        id BIGINT PRIMARY KEY DEFAULT nextval('assembly_logs_id'), session_id VARCHAR NOT NULL,
        created_at VARCHAR NOT NULL, trigger VARCHAR NOT NULL, turn BIGINT, step BIGINT,
        budget_tokens BIGINT NOT NULL, used_tokens BIGINT NOT NULL,
        token_source VARCHAR NOT NULL, content_hash VARCHAR, injected BIGINT NOT NULL DEFAULT 0,
        message_seq BIGINT, sections_json VARCHAR NOT NULL DEFAULT '[]',
        items_json VARCHAR NOT NULL DEFAULT '[]', omitted_json VARCHAR NOT NULL DEFAULT '[]',
        reasons_json VARCHAR NOT NULL DEFAULT '[]', errors_json VARCHAR NOT NULL DEFAULT '[]')""",
    """CREATE TABLE IF NOT EXISTS pending_extraction (
        session_id VARCHAR NOT NULL, seq BIGINT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0,
        last_error VARCHAR NOT NULL DEFAULT '', updated_at VARCHAR NOT NULL,
        PRIMARY KEY (session_id, seq))""",
    # Search side tables, the counterpart of SQLite's FTS5 shadow tables: the text folded
    # by Python's casefold, as the core's scoring folds it, so a scan needs no lower() per
    # row and matches exactly what the score counts; `grams` is the length in trigrams.
    """CREATE TABLE IF NOT EXISTS events_search (
        session_id VARCHAR NOT NULL, seq BIGINT NOT NULL, folded VARCHAR NOT NULL,
        grams BIGINT NOT NULL, PRIMARY KEY (session_id, seq))""",
    """CREATE TABLE IF NOT EXISTS memory_search (
        id VARCHAR PRIMARY KEY, session_id VARCHAR NOT NULL, folded VARCHAR NOT NULL,
        grams BIGINT NOT NULL)""",
)

# Version 2 adds the audit trail of deterministic validation runs.
V2: Final = (
    "CREATE SEQUENCE IF NOT EXISTS validation_logs_id",
    """CREATE TABLE IF NOT EXISTS validation_logs (
        id BIGINT PRIMARY KEY DEFAULT nextval('validation_logs_id'),
        session_id VARCHAR NOT NULL, event_seq BIGINT, target VARCHAR NOT NULL,
        ok BIGINT NOT NULL, checked BIGINT NOT NULL DEFAULT 0, skipped BIGINT NOT NULL DEFAULT 0,
        deterministic BIGINT NOT NULL DEFAULT 1, blocked BIGINT NOT NULL DEFAULT 0,
        violations_json VARCHAR NOT NULL DEFAULT '[]', errors_json VARCHAR NOT NULL DEFAULT '[]',
        created_at VARCHAR NOT NULL)""",
)

# v3 changed only the SQLite file's FTS declarations, v4 added the SQLite file's index
# of each text's last two characters and v5 its count of item rewrites; here each
# records the version alone.
MIGRATIONS: Final = ((1, V1), (2, V2), (3, ()), (4, ()), (5, ()))

# The side tables follow their content tables on every write and purge.
SEARCH_TABLES: Final = {"events": "events_search", "memory_items": "memory_search"}
