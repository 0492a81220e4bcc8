"""The storage port: the store the core uses, and what a backend adds to it.

A backend writes the primitives of `lcm_core.store.primitives.StoreBackend` (keyed rows
of any table, the event log, item search, transactions and close: 14 methods);
`lcm_core.store.base.BaseStore` derives the rest of `MemoryStore` from them, once for
every backend: the item write policy (dedup, lifecycle rows, tombstones), the archive,
meta, stats, purges, the integrity checks every store shares and every bookkeeping
table. `MemoryStore` composes the role Protocols (rows, events and archive,
items, sessions, skills and rules, logs, admin, lifetime); a core function asks for the
narrowest role it needs, so a caller's signature says what it touches. All methods are
synchronous; an async host calls them through a thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lcm_core.store.models import (
    ArchiveEntry,
    AssemblyLog,
    Checkpoint,
    Event,
    EventHit,
    ItemChange,
    ItemHit,
    MemoryEvent,
    MemoryItem,
    PendingExtraction,
    Rule,
    RuleOverride,
    Session,
    SkillFile,
    SkillVersion,
    TaskState,
    ValidationLog,
)


@runtime_checkable
class RowStore(Protocol):
    """Rows of any table of `TABLES`, as column -> value dicts shaped as `export_rows` yields.

    A match maps columns to values: None tests NULL, a list or tuple tests membership (an
    empty one matches nothing), `queries.AtMost(v)` tests `<= v`, anything else equality.
    A column the table lacks, or a table not in `TABLES`, raises `StoreError`. Search
    indexes follow every write of a text column.
    """

    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        """The first row, in export order, whose columns equal `match`."""
        ...

    def list_rows(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Rows equal to `match`, in `order` (column names, "-" in front for descending;
        export order by default), skipping `offset`, at most `limit`; only `columns` when
        named. NULL sorts as the database sorts it: order nullable columns in Python."""
        ...

    def count_rows(self, table: str, match: Mapping[str, Any] | None = None) -> int: ...

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        """Insert one row with exactly these columns (absent ones take their defaults).

        Returns the row's integer `id` in a table of `GENERATED_ID_TABLES` (the one given
        when the store keeps it, else the one it assigned), None elsewhere. A row clashing
        with a stored key or unique constraint raises `StoreConflictError` and leaves an
        enclosing transaction usable.
        """
        ...

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        """Set `values` on the rows equal to `match`; how many rows matched."""
        ...

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        """Delete the rows equal to `match` (every row for an empty match); how many."""
        ...

    def end_import(self, table: str) -> None:
        """Let the table's id generator continue past every id now stored (after put_row)."""
        ...


@runtime_checkable
class EventStore(Protocol):
    """Events (insert-or-ignore on `(session_id, seq)`) and the archive of their long text."""

    def insert_event(self, event: Event) -> bool:
        """Store one event unless `(session_id, seq)` exists; True if it was inserted."""
        ...

    def insert_events(self, events: Iterable[Event]) -> int:
        """Store many events in one transaction; returns how many were new."""
        ...

    def get_event(self, session_id: str, seq: int) -> Event | None: ...

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        """Events of a session in seq order, `start_seq <= seq <= end_seq` when given."""
        ...

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        """The events with these seqs that exist, in seq order."""
        ...

    def max_event_seq(self, session_id: str) -> int | None: ...

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        """Events matching any term (as a literal substring), best first."""
        ...

    # --- archive -------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        """Store archived text; an existing `(session_id, ref)` keeps its first text."""
        ...

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None: ...

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        """Erase an event's text (`records.erase_event`), its `seq:N` archive entry and its
        index entries; the row stays as a tombstone. None for an unknown event."""
        ...


@runtime_checkable
class ItemStore(Protocol):
    """Memory items, their links and lifecycle rows, and item search."""

    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        """Insert an item, or return the active item with the same content hash.

        Returns the stored item and whether it was created.
        """
        ...

    def get_item(self, item_id: str) -> MemoryItem | None: ...

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        """Items ordered by `created_at`, then id; filtered when arguments are given."""
        ...

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        """Apply `change` and append `event` in one transaction; returns the new state.

        Raises `StoreNotFoundError` for an unknown id and `StoreConflictError` when the
        change would make two active items with the same content hash.
        """
        ...

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        """Make the item its tombstone (`records.erase_item`) and append `event`, at once.

        Its index entries go too. Raises `StoreNotFoundError` for an unknown id.
        """
        ...

    def list_memory_events(
        self,
        *,
        memory_id: str | None = None,
        session_id: str | None = None,
        events: Sequence[str] | None = None,
    ) -> list[MemoryEvent]:
        """Lifecycle rows in the order they were written, of the named `events` if given."""
        ...

    def search_items(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[ItemHit]:
        """Items whose content contains any term, best first; ties in id order."""
        ...


@runtime_checkable
class SessionStore(Protocol):
    """Sessions, task state, checkpoints and the extraction retry queue."""

    def upsert_session(self, session: Session) -> None: ...

    def get_session(self, session_id: str) -> Session | None: ...

    def list_sessions(self) -> list[Session]:
        """Sessions, most recently updated first."""
        ...

    def put_task_state(self, state: TaskState) -> None: ...

    def get_task_state(self, session_id: str) -> TaskState | None: ...

    def put_checkpoint(self, checkpoint: Checkpoint) -> None: ...

    def get_checkpoint(self, session_id: str) -> Checkpoint:
        """The session's cursors; a fresh `Checkpoint` if none was stored."""
        ...

    # --- extraction retry queue ------------------------------------------------
    def record_pending(self, session_id: str, seq: int, error: str) -> PendingExtraction:
        """Queue (or re-queue) an event whose extraction failed; attempts grows by one."""
        ...

    def list_pending(self, session_id: str | None = None) -> list[PendingExtraction]:
        """Queued events ordered by session id, then seq."""
        ...

    def clear_pending(self, session_id: str, seq: int) -> None: ...


@runtime_checkable
class SkillStore(Protocol):
    """Skill files and versions, rules and the user's rule overrides."""

    def add_skill_version(self, version: SkillVersion) -> SkillVersion:
        """Store a skill version (or return the stored one with the same name and hash)."""
        ...

    def list_skill_versions(self, name: str) -> list[SkillVersion]:
        """All versions of a skill, oldest first."""
        ...

    def put_skill_file(self, skill: SkillFile) -> None: ...

    def get_skill_file(self, name: str) -> SkillFile | None: ...

    def list_skill_files(self) -> list[SkillFile]:
        """Current skills ordered by name."""
        ...

    def upsert_rule(self, rule: Rule) -> None:
        """Insert or replace the rule with the same `(skill_name, rule_key)`."""
        ...

    def list_rules(
        self, *, skill_name: str | None = None, active: bool | None = None
    ) -> list[Rule]:
        """Rules ordered by skill, source line, then key."""
        ...

    def put_rule_override(self, override: RuleOverride) -> None:
        """Set (replace) the one override of `override.rule_id`."""
        ...

    def list_rule_overrides(self) -> list[RuleOverride]:
        """Overrides ordered by rule id."""
        ...


@runtime_checkable
class LogStore(Protocol):
    """The assembly and validation logs."""

    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        """Append a log row and keep only the newest `retention` rows of its session."""
        ...

    def list_assembly_logs(self, session_id: str, *, limit: int | None = None) -> list[AssemblyLog]:
        """Newest first."""
        ...

    def rewrite_assembly_log_reasons(self, log_id: int, reasons: Sequence[dict[str, Any]]) -> bool:
        """Replace one log row's reasons (a forget erases the words they quote); False when
        no row has that id. Nothing else of the row changes."""
        ...

    def add_validation_log(self, log: ValidationLog) -> int: ...

    def list_validation_logs(
        self, session_id: str, *, limit: int | None = None
    ) -> list[ValidationLog]:
        """Newest first."""
        ...


@runtime_checkable
class AdminStore(Protocol):
    """Meta, stats, export rows, purge and integrity: the store as a whole."""

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def schema_version(self) -> int: ...

    def stats(self, session_id: str | None = None) -> dict[str, int]:
        """Row counts of every table in `TABLES` (for one session where it applies)."""
        ...

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Stream the rows of one table as column -> value, in a stable order.

        A table not in `TABLES` raises `StoreError` naming the known tables.
        """
        ...

    def purge_session(self, session_id: str) -> dict[str, int]:
        """Delete every row of one session; returns rows deleted per table."""
        ...

    def purge_all(self) -> dict[str, int]:
        """Delete every row of every table but `meta`; returns rows deleted per table."""
        ...

    def integrity_check(self) -> list[str]:
        """Problems found in the stored data; an empty list means healthy."""
        ...


@runtime_checkable
class Lifetime(Protocol):
    """The store's URL, its transactions and its end."""

    url: str

    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all; nesting is allowed."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class MemoryStore(
    RowStore,
    EventStore,
    ItemStore,
    SessionStore,
    SkillStore,
    LogStore,
    AdminStore,
    Lifetime,
    Protocol,
):
    """Durable storage of events, memory items and everything derived from them.

    Contract highlights (the conformance suite in `lcm_core.testing` checks each):

    - Event writes are insert-or-ignore on `(session_id, seq)`; text longer than
      `MAX_EVENT_TEXT` is cut and flagged `truncated`, and an empty `content_hash`
      is filled with the SHA-256 of the stored (cut) text.
    - `insert_item` dedupes on the active `(session_id, content_hash)` and writes a
      `created` lifecycle row only when it inserts; an existing id with other
      content raises `StoreConflictError`.
    - `update_item` changes an item and appends its lifecycle row in one transaction.
    - Search accepts any text without raising, matches each term as a literal
      substring after Unicode casefold (`lcm_core.store.matching`: `ÉTÉ` finds `été`,
      `Straße` finds `strasse`), serves CJK and terms shorter than three characters,
      ignores blank terms, and scores a hit as the number of distinct terms it
      contains plus a tie-breaker in [0, 1) (the core caps it at 10). A session of at
      most `matching.SCAN_ROWS_MAX` rows is searched exactly; a larger scope yields at
      least each term's newest matches (`matching` states the rule).
    - `transaction()` nests: a failure caught inside an outer transaction undoes
      only the inner block's writes.
    - Timestamps left empty on a model are filled by the store.
    - Per-session filters (`stats`, `export_rows`, `purge_session`) apply to tables
      that have a `session_id` column; skills, rules and meta are global.
    """


@runtime_checkable
class SupportsScratch(Protocol):
    """A backend that can open an empty, private, throwaway store of its own kind."""

    def scratch(self) -> MemoryStore:
        """A new in-memory store of this backend (re-extraction derives items in one)."""
        ...


@runtime_checkable
class SupportsVacuum(Protocol):
    """A backend that can give freed space back to the file system."""

    def vacuum(self) -> None: ...


@runtime_checkable
class SupportsScrub(Protocol):
    """A file backend that can wipe erased text from its files (after `forget_*`)."""

    def scrub(self) -> dict[str, Any]:
        """Drop erased entries from indexes and flush the log into the file; what it did."""
        ...


@runtime_checkable
class SupportsBackup(Protocol):
    """A backend that can write a consistent copy of itself to a file."""

    def backup(self, path: Path) -> None: ...


@runtime_checkable
class SupportsSharedFile(Protocol):
    """A backend whose file several handles (and processes) may open at once."""

    def shares_file(self) -> bool: ...


@runtime_checkable
class SupportsBulkLoad(Protocol):
    """A backend that stores exported rows verbatim, fast, ids and timestamps included."""

    def load_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Append rows (as `export_rows` yields them) to an empty table; returns the count.

        Rows are consumed a chunk at a time, so an iterator of any length stays bounded in
        memory. `meta` rows replace the keys they name. Chunks commit one by one: a failure
        leaves the chunks before it stored.
        """
        ...


# What `lcm import` needs (find_row, put_row, end_import): every store has it now, through
# its `RowStore` methods; the importer (`lcm_core.reports.importer`) decides what is new,
# identical or in conflict, inside one `transaction()`.
SupportsImport = RowStore


@runtime_checkable
class SupportsExportReading(Protocol):
    """A backend that reads DuckDB export files and Parquet export folders back as rows."""

    def read_export_rows(self, export: Path, table: str) -> Iterator[dict[str, Any]]:
        """One table's rows of the export at `export`, in export order, every column kept."""
        ...


@runtime_checkable
class SupportsParquet(Protocol):
    """A backend that writes its tables as Parquet files without a row passing through Python."""

    def write_parquet(self, folder: Path, *, session_id: str | None = None) -> dict[str, int]:
        """Write `<table>.parquet` for every table into an existing folder; rows per table."""
        ...

    def write_parquet_rows(self, path: Path, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Stream one table's rows (from any store) into a new Parquet file; the count."""
        ...


@runtime_checkable
class SupportsAnalytics(Protocol):
    """A backend that answers the stats report (see `lcm_core.reports.analytics`) with SQL."""

    def analytics(
        self, session_id: str | None = None, *, export: Path | None = None
    ) -> dict[str, Any]:
        """The report over this store, or over the export (DuckDB file, Parquet or JSONL folder)."""
        ...


@runtime_checkable
class SupportsTenants(Protocol):
    """A server backend whose tenants are database roles (row-level security isolates them)."""

    def create_tenant(self, name: str) -> str:
        """Create the tenant role `name` (idempotent); returns its URL, never a password."""
        ...


@runtime_checkable
class SupportsIntrospection(Protocol):
    """A file backend that describes its own layout for `lcm doctor`, as other tools see it."""

    def introspect(self) -> dict[str, Any]:
        """`{"tables": {name: rows}, "triggers": [names], "fts": {table: fts table or None}}`,
        the full-text tables as sqlite-utils and Datasette detect them."""
        ...


@runtime_checkable
class SupportsServerReport(Protocol):
    """A server backend that reports on its server for `lcm doctor`."""

    def server_report(self) -> dict[str, Any]:
        """Reachability, schema, extensions, privileges and row counts, as plain values."""
        ...
