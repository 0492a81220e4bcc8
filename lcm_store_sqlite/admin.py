"""Whole-store operations of the SQLite store: the read hooks, integrity, and its files."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lcm_core.store.queries import Query
from lcm_core.store.sql_reads import STREAM_BATCH
from lcm_store_sqlite.connection import translate

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection
    from lcm_store_sqlite.session_cache import SessionCache


class AdminMixin:
    """`SqlReads`' hooks, integrity, introspection, vacuum, scrub and backup; needs `self._db`."""

    _db: Connection
    _sessions: SessionCache

    def _fetch(self, where: str, query: Query) -> list[sqlite3.Row]:
        # `guarded`, written out: every keyed read of a pre-step comes here, and a
        # generator-based context manager per statement is most of what it costs.
        db = self._db
        with db.lock:
            try:
                return db.raw.execute(*query).fetchall()
            except sqlite3.Error as exc:
                raise translate(exc, f"{db.label}: {where}") from exc

    def _cursor(self, where: str, query: Query) -> sqlite3.Cursor:
        with self._db.guarded(where) as raw:
            return raw.execute(*query)

    def _next_batch(self, where: str, cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
        with self._db.guarded(where):
            return [
                dict(zip(r.keys(), tuple(r), strict=True)) for r in cursor.fetchmany(STREAM_BATCH)
            ]

    def _store_problems(self) -> list[str]:
        """SQLite's own check of the file, and each FTS index against its content table."""
        problems: list[str] = []
        with self._db.guarded("integrity check") as raw:
            for row in raw.execute("PRAGMA integrity_check"):
                if row[0] != "ok":
                    problems.append(f"sqlite: {row[0]}")
            for fts in ("events_fts", "memory_fts"):
                try:
                    # rank 1 also compares the index with its content table: without it
                    # a row missing from the index, or indexed with other text, passes.
                    raw.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")
                except Exception as exc:  # the FTS module reports damage as an error
                    # The check is written as an INSERT: a read-only file cannot run
                    # it, which says nothing about damage.
                    if "readonly" not in str(exc):
                        problems.append(f"{fts}: {exc}")
        return problems

    # --- extras ------------------------------------------------------------------
    def introspect(self) -> dict[str, Any]:
        """Tables with row counts, triggers and each table's FTS table, by sqlite-utils.

        Only `lcm doctor` calls this, so sqlite-utils (~80 ms to import) is loaded here
        and never on the capture, pre-step, search or hook paths; it is used because its
        FTS detection is the one sqlite-utils and Datasette apply to this file.
        """
        import sqlite_utils

        with self._db.guarded("introspect") as raw:
            db = sqlite_utils.Database(raw)
            names = db.table_names()
            virtual = [n for n in names if db.table(n).virtual_table_using]
            # Content tables only: not the FTS tables themselves nor their shadow tables.
            plain = [n for n in names if not any(n.startswith(v) for v in virtual)]
            return {
                "tables": {name: db.table(name).count for name in names},
                "triggers": sorted(trigger.name for trigger in db.triggers),
                "fts": {name: db.table(name).detect_fts() for name in plain},
            }

    def vacuum(self) -> None:
        """Reclaim free pages, rebuilding the FTS indexes in between (VACUUM may renumber rowids).

        FTS5 keeps a deleted row's postings until its segments merge, so after a purge the
        first VACUUM still copies them; the rebuild writes a compact index and frees the
        old one, and the second VACUUM gives those pages back. SQLite 3.40 keeps rowids
        through VACUUM; tests/store_sqlite/test_index_and_vacuum.py searches through the
        index afterwards, so a version that renumbers twice would be caught.
        """
        with self._db.guarded("vacuum") as raw:
            raw.execute("VACUUM")
            with self._db.transaction():
                raw.execute("INSERT INTO events_fts (events_fts) VALUES ('rebuild')")
                raw.execute("INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')")
            raw.execute("VACUUM")
            self._sessions.invalidate()  # VACUUM may renumber rowids

    def scrub(self) -> dict[str, Any]:
        """Wipe erased text from the file: merge each FTS index (an FTS 'delete' only adds a
        marker; the old tokens stay in their segment until a merge), then checkpoint the WAL
        into the file and truncate it. With secure_delete on (set by `forget_*`) the freed
        space is zeroed; tests/store_sqlite/test_forget_bytes.py reads the bytes."""
        with self._db.guarded("scrub") as raw:
            raw.execute("PRAGMA secure_delete = ON")
            with self._db.transaction():
                for fts in ("events_fts", "memory_fts"):
                    raw.execute(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
            if self._db.in_memory:
                return {"checkpoint": "none (in memory)"}
            busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        # Busy: another connection reads an older snapshot; its end lets the next checkpoint
        # finish, and until then the WAL may still hold the erased text.
        return {"checkpoint": "busy" if busy else "complete"}

    def backup(self, path: Path) -> None:
        """Write a consistent copy of the database to `path`."""
        target = sqlite3.connect(str(path))
        try:
            with self._db.guarded("backup") as raw:
                raw.backup(target)
        finally:
            target.close()

    def shares_file(self) -> bool:
        return not self._db.in_memory
