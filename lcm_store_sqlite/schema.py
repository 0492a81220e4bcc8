"""Schema v4 of the SQLite store, as ordered migrations (v1 core, v2 validation_logs, v3 FTS,
v4 the texts' last two characters)."""

from __future__ import annotations

from typing import Final

# Version 1: every table but validation_logs, the indexes, and the two trigram FTS5
# tables kept in sync with their content tables by triggers.
V1: Final = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    cwd TEXT,
    project TEXT,
    origin TEXT,
    dsh_version TEXT,
    memory_enabled INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    time TEXT,
    turn INTEGER,
    step INTEGER,
    role TEXT,
    text TEXT NOT NULL DEFAULT '',
    source_kind TEXT,
    source_form TEXT,
    tool_name TEXT,
    call_id TEXT,
    store TEXT NOT NULL DEFAULT 'host',
    content_hash TEXT NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0,
    ingested_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS idx_events_session_type_seq ON events (session_id, type, seq);
CREATE INDEX IF NOT EXISTS idx_events_session_turn ON events (session_id, turn);
CREATE INDEX IF NOT EXISTS idx_events_content_hash ON events (content_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    text, content='events', content_rowid='rowid', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS events_fts_insert AFTER INSERT ON events BEGIN
    INSERT INTO events_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS events_fts_delete AFTER DELETE ON events BEGIN
    INSERT INTO events_fts (events_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS events_fts_update AFTER UPDATE OF text ON events BEGIN
    INSERT INTO events_fts (events_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO events_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TABLE IF NOT EXISTS archive (
    session_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, ref)
);

CREATE TABLE IF NOT EXISTS memory_items (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    conditions_json TEXT NOT NULL DEFAULT '[]',
    scope_json TEXT NOT NULL DEFAULT '{}',
    numbers_json TEXT NOT NULL DEFAULT '[]',
    source_refs_json TEXT NOT NULL DEFAULT '[]',
    evidence_type TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    supersedes_json TEXT NOT NULL DEFAULT '[]',
    superseded_by TEXT,
    content_hash TEXT NOT NULL,
    extractor TEXT NOT NULL DEFAULT '',
    derived_from_seq INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS ux_memory_items_active_hash
    ON memory_items (session_id, content_hash) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS idx_memory_items_session_status
    ON memory_items (session_id, status, kind);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    content, content='memory_items', content_rowid='rowid', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS memory_fts_insert AFTER INSERT ON memory_items BEGIN
    INSERT INTO memory_fts (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memory_fts_delete AFTER DELETE ON memory_items BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memory_fts_update AFTER UPDATE OF content ON memory_items BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memory_fts (rowid, content) VALUES (new.rowid, new.content);
END;

CREATE TABLE IF NOT EXISTS memory_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    event TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    detail_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS idx_memory_events_memory ON memory_events (memory_id, id);
CREATE INDEX IF NOT EXISTS idx_memory_events_session ON memory_events (session_id, id);

CREATE TABLE IF NOT EXISTS task_state (
    session_id TEXT PRIMARY KEY,
    goal TEXT,
    progress_json TEXT NOT NULL DEFAULT '[]',
    blockers_json TEXT NOT NULL DEFAULT '[]',
    open_items_json TEXT NOT NULL DEFAULT '[]',
    superseded_json TEXT NOT NULL DEFAULT '[]',
    updated_by_seq INTEGER,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT PRIMARY KEY,
    last_event_seq INTEGER NOT NULL DEFAULT -1,
    last_extract_seq INTEGER NOT NULL DEFAULT -1,
    last_assembly_seq INTEGER NOT NULL DEFAULT -1,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS skill_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    version INTEGER NOT NULL,
    supersedes INTEGER,
    created_at TEXT NOT NULL,
    UNIQUE (name, content_hash)
);
CREATE TABLE IF NOT EXISTS skill_files (
    name TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    version_id INTEGER,
    version INTEGER NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    description TEXT NOT NULL DEFAULT '',
    when_to_use TEXT NOT NULL DEFAULT '',
    invocation TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rules (
    id TEXT PRIMARY KEY,
    skill_name TEXT NOT NULL,
    rule_key TEXT NOT NULL,
    text TEXT NOT NULL,
    category TEXT NOT NULL,
    scope_json TEXT NOT NULL DEFAULT '{}',
    source_path TEXT NOT NULL DEFAULT '',
    source_line INTEGER,
    active INTEGER NOT NULL DEFAULT 1,
    content_hash TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (skill_name, rule_key)
);
CREATE TABLE IF NOT EXISTS rule_overrides (
    rule_id TEXT PRIMARY KEY,
    category TEXT,
    active INTEGER,
    scope_json TEXT,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS assembly_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    trigger TEXT NOT NULL,
    turn INTEGER,
    step INTEGER,
    budget_tokens INTEGER NOT NULL,
    used_tokens INTEGER NOT NULL,
    token_source TEXT NOT NULL,
    content_hash TEXT,
    injected INTEGER NOT NULL DEFAULT 0,
    message_seq INTEGER,
    sections_json TEXT NOT NULL DEFAULT '[]',
    items_json TEXT NOT NULL DEFAULT '[]',
    omitted_json TEXT NOT NULL DEFAULT '[]',
    reasons_json TEXT NOT NULL DEFAULT '[]',
    errors_json TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS idx_assembly_logs_session ON assembly_logs (session_id, id);

CREATE TABLE IF NOT EXISTS pending_extraction (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""

# Version 2 adds the audit trail of deterministic validation runs.
V2: Final = """
CREATE TABLE IF NOT EXISTS validation_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    event_seq INTEGER,
    target TEXT NOT NULL,
    ok INTEGER NOT NULL,
    checked INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    deterministic INTEGER NOT NULL DEFAULT 1,
    blocked INTEGER NOT NULL DEFAULT 0,
    violations_json TEXT NOT NULL DEFAULT '[]',
    errors_json TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_validation_logs_session ON validation_logs (session_id, id);
"""

# Version 3 re-declares the two FTS tables with `content="..."` in double quotes: SQLite
# reads both spellings alike, but sqlite-utils and Datasette only recognise an FTS table
# of a content table spelled with double quotes (or brackets), so `sqlite-utils search`
# and Datasette's `_search=` work on an lcm file. The triggers above stay: they are
# lcm's own, fire only when the indexed text changes (sqlite-utils' triggers fire on any
# column update), and name the FTS tables, which keep their names. 'rebuild' refills
# each index from its content table inside the migration's transaction.
V3: Final = """
DROP TABLE IF EXISTS events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5(
    text, content="events", content_rowid="rowid", tokenize="trigram"
);
INSERT INTO events_fts (events_fts) VALUES ('rebuild');
DROP TABLE IF EXISTS memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, content="memory_items", content_rowid="rowid", tokenize="trigram"
);
INSERT INTO memory_fts (memory_fts) VALUES ('rebuild');
"""

# Version 4 indexes each text's last two characters, as LIKE reads them (up to a NUL,
# ASCII folded): with the trigram index's vocabulary it finds a two-character term
# without a LIKE over the whole table (see `pairs`; the expression is `tail_expression`).
V4: Final = """
CREATE INDEX IF NOT EXISTS idx_events_tail ON events (lower(substr(text, length(text) - 1, 2)));
CREATE INDEX IF NOT EXISTS idx_memory_items_tail
    ON memory_items (lower(substr(content, length(content) - 1, 2)));
"""

# Version 5 counts every update and delete of a memory item, whoever makes it: a
# long-lived handle's copy of a session's items (`session_cache`) is current while the
# count is the one it was read at and no row was added past its last rowid.
V5: Final = """
CREATE TABLE IF NOT EXISTS rewrites (name TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0);
INSERT OR IGNORE INTO rewrites (name, n) VALUES ('memory_items', 0);
CREATE TRIGGER IF NOT EXISTS memory_items_rewritten AFTER UPDATE ON memory_items BEGIN
    UPDATE rewrites SET n = n + 1 WHERE name = 'memory_items';
END;
CREATE TRIGGER IF NOT EXISTS memory_items_removed AFTER DELETE ON memory_items BEGIN
    UPDATE rewrites SET n = n + 1 WHERE name = 'memory_items';
END;
"""

MIGRATIONS: Final = ((1, V1), (2, V2), (3, V3), (4, V4), (5, V5))
