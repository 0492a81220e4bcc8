"""`lcm import`: what `lcm export` wrote, back into a store, idempotently, ids kept.

Any export is read: a JSONL or Parquet folder (its `export.json` names the format and
the schema) or a DuckDB file (its `meta` table does). An export of a newer schema than
this lcm's is refused before anything is read. Rows are taken column-generically, so
columns a later schema adds travel without this module knowing them.

Each row is matched by its table's key (`ROW_KEYS`):

- no stored row with that key: the row is added as it was exported (ids, timestamps,
  supersession links and lifecycle rows included);
- an identical stored row: skipped, so importing twice adds nothing;
- a different stored row: the import stops with a one-line error and nothing of it is
  kept (the whole import is one transaction). Merging two memories whose sessions
  overlap is a decision for a person, not for the importer.

Two kinds of rows are treated differently, because their keys are bookkeeping rather
than identity: integer ids a store generates (`GENERATED_ID_TABLES`: lifecycle rows,
skill versions, assembly and validation logs) and `meta`. A generated id taken by a
different row is no conflict: the row is skipped when an identical row exists under
another id, else added under a new id (skill files and versions follow the new id).
A `meta` key takes the export's value (cursors, the extractor's version), except
`schema`, which is the database's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lcm_core.reports.files import ExportError, read_manifest
from lcm_core.reports.jsonl import read_jsonl
from lcm_core.store.errors import StoreConflictError
from lcm_core.store.models import GENERATED_ID_TABLES, ROW_KEYS, SCHEMA_VERSION, TABLES
from lcm_core.store.ports import MemoryStore, SupportsExportReading, SupportsImport
from lcm_core.store.registry import open_store

OLDEST_IMPORTABLE: Final = 2
SCHEMA_KEY: Final = "schema"
_DUCKDB_MAGIC: Final = b"DUCK"
# References to a generated id that follow it when a row is renumbered.
_REFERENCES: Final = {"skill_versions": ("supersedes",), "skill_files": ("version_id",)}
_REFERENCED: Final = "skill_versions"

Progress = Callable[[str, int], None]


class ImportConflictError(StoreConflictError):
    """A row of the export differs from the stored row with the same key; nothing was imported."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import read and did, per table."""

    source: Path
    format: str
    schema_version: int
    redacted: bool
    session: str | None
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    renumbered: dict[str, int] = field(default_factory=dict)

    # `meta` holds settings and cursors, not rows a person put there: the database's own
    # schema key is always kept, so it is counted apart from the rows (`meta_set`,
    # `meta_kept`) and a fresh import never says it skipped rows "already stored".
    @property
    def rows_added(self) -> int:
        return sum(n for table, n in self.added.items() if table != "meta")

    @property
    def rows_skipped(self) -> int:
        return sum(n for table, n in self.skipped.items() if table != "meta")

    @property
    def meta_set(self) -> int:
        return self.added.get("meta", 0)

    @property
    def meta_kept(self) -> int:
        return self.skipped.get("meta", 0)


@dataclass(slots=True)
class ExportSource:
    """An opened export: what it is, and its rows table by table."""

    path: Path
    format: str
    schema_version: int
    rows: Callable[[str], Iterable[dict[str, Any]]]
    redacted: bool = False
    session: str | None = None
    close: Callable[[], None] = lambda: None


def check_version(where: Path, version: int) -> int:
    """The export's schema version when this lcm can import it, else a one-line `ExportError`."""
    if version > SCHEMA_VERSION:
        raise ExportError(
            f"{where}: export has schema v{version}, newer than this lcm's v{SCHEMA_VERSION}; "
            "upgrade long-conversation-memory to import it"
        )
    if version < OLDEST_IMPORTABLE:
        raise ExportError(f"{where}: export has schema v{version}; lcm imports v2 and later")
    return version


def _reader() -> SupportsExportReading:
    """An in-memory DuckDB store that reads Parquet folders and DuckDB files."""
    engine = open_store("duckdb:///:memory:")
    if not isinstance(engine, SupportsExportReading):
        engine.close()
        raise ExportError("the installed DuckDB backend cannot read exports")
    return engine


def _is_duckdb_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(12)[8:12] == _DUCKDB_MAGIC
    except OSError as exc:
        raise ExportError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def _jsonl_rows(
    folder: Path, expected: dict[str, int]
) -> Callable[[str], Iterator[dict[str, Any]]]:
    def rows(table: str) -> Iterator[dict[str, Any]]:
        path = folder / f"{table}.jsonl"
        if not path.is_file():
            if expected.get(table, 0):
                raise ExportError(f"{folder}: export lacks {path.name}")
            return iter(())
        return read_jsonl(path)

    return rows


def open_export(path: Path) -> ExportSource:
    """Open what `lcm export` wrote at `path`; anything else is a one-line `ExportError`."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ExportError(f"{path}: no such export (a JSONL or Parquet folder, or a DuckDB file)")
    if path.is_dir():
        manifest = read_manifest(path)
        version = check_version(path, manifest.schema_version)
        if manifest.format == "jsonl":
            rows = _jsonl_rows(path, manifest.tables)
            return ExportSource(path, "jsonl", version, rows, manifest.redacted, manifest.session)
        engine = _reader()
        source = ExportSource(
            path,
            "parquet",
            version,
            lambda table: engine.read_export_rows(path, table),
            manifest.redacted,
            manifest.session,
            close=engine.close,  # type: ignore[attr-defined]
        )
        return source
    if not _is_duckdb_file(path):
        raise ExportError(
            f"{path}: not an lcm export (expected a JSONL or Parquet export folder, "
            "or a DuckDB export file)"
        )
    engine = _reader()
    try:
        meta = {row.get("key"): row.get("value") for row in engine.read_export_rows(path, "meta")}
        try:
            version = check_version(path, int(str(meta.get(SCHEMA_KEY))))
        except ValueError:
            raise ExportError(f"{path}: export records no schema version") from None
    except BaseException:
        engine.close()  # type: ignore[attr-defined]
        raise
    return ExportSource(
        path,
        "duckdb",
        version,
        lambda table: engine.read_export_rows(path, table),
        close=engine.close,  # type: ignore[attr-defined]
    )


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """Rows added, skipped as already stored, and added under a new generated id, per table."""

    added: dict[str, int]
    skipped: dict[str, int]
    renumbered: dict[str, int]


def import_rows(
    store: MemoryStore,
    rows: Callable[[str], Iterable[dict[str, Any]]],
    *,
    where: str = "import",
    progress: Progress | None = None,
) -> ImportCounts:
    """Merge each table's exported rows (`rows(table)`) into `store`, in one transaction."""
    if not isinstance(store, SupportsImport):
        raise ExportError(f"{store.url}: this backend cannot import exports")
    merger = _Merger(store)
    with store.transaction():
        # A table empty when the import starts holds nothing to compare with: its rows go
        # straight in (a restore into a fresh database makes no lookups at all).
        merger.fresh = {t for t, n in store.stats().items() if n == 0 and t in TABLES}
        for table in TABLES:
            count = 0
            for number, row in enumerate(rows(table), start=1):
                merger.take(table, row, f"{where} {table} row {number}")
                count += 1
                if progress is not None and count % 5000 == 0:
                    progress(table, 5000)
            store.end_import(table)
            if progress is not None and count % 5000:
                progress(table, count % 5000)
    return ImportCounts(
        {t: merger.added.get(t, 0) for t in TABLES},
        {t: merger.skipped.get(t, 0) for t in TABLES},
        {t: n for t, n in merger.renumbered.items() if n},
    )


def import_export(
    store: MemoryStore, path: Path, *, progress: Progress | None = None
) -> ImportResult:
    """Import the export at `path` into `store` in one transaction; see the module's rules."""
    if not isinstance(store, SupportsImport):
        raise ExportError(f"{store.url}: this backend cannot import exports")
    source = open_export(path)
    try:
        counts = import_rows(store, source.rows, where=str(source.path), progress=progress)
    finally:
        source.close()
    return ImportResult(
        source.path,
        source.format,
        source.schema_version,
        source.redacted,
        source.session,
        counts.added,
        counts.skipped,
        counts.renumbered,
    )


class _Merger:
    """Adds, skips or refuses one row at a time, remembering renumbered ids."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.added: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.renumbered: dict[str, int] = {}
        self.new_ids: dict[Any, Any] = {}  # skill version id in the export -> stored id
        self.fresh: set[str] = set()  # tables empty when the import began

    def take(self, table: str, row: Any, where: str) -> None:
        if not isinstance(row, dict):
            raise ExportError(f"{where}: not a row object")
        keys = ROW_KEYS[table]
        missing = [k for k in keys if row.get(k) is None]
        if missing:
            raise ExportError(f"{where}: no value for key column {missing[0]!r}")
        if table == "meta":
            self._meta(row)
            return
        row = self._follow(table, row)
        if table in self.fresh:
            self._add(table, row)
            return
        if table in GENERATED_ID_TABLES:
            self._generated(table, row)
            return
        found = self.store.find_row(table, {k: row[k] for k in keys})
        if found is None:
            self._add(table, row)
        elif _same(found, row):
            self._skip(table, row, found)
        else:
            key = ", ".join(f"{k}={row[k]!r}" for k in keys)
            raise ImportConflictError(
                f"{table} {key}: the database holds a different row with this key; "
                "nothing was imported"
            )

    def _generated(self, table: str, row: dict[str, Any]) -> None:
        """A row whose id the store generated: the same row anywhere is a skip, not a conflict."""
        found = self.store.find_row(table, {"id": row["id"]})
        if found is not None and _same(found, row):
            self._skip(table, row, found)
            return
        # Stored before under another id (an earlier import renumbered it)?
        twin = self.store.find_row(table, {c: v for c, v in row.items() if c != "id"})
        if twin is not None:
            self._skip(table, row, twin)
        elif found is None:
            self._add(table, row)
        else:
            self._add(table, {c: v for c, v in row.items() if c != "id"}, old_id=row["id"])

    def _meta(self, row: dict[str, Any]) -> None:
        key, value = str(row["key"]), row.get("value")
        if key == SCHEMA_KEY or self.store.get_meta(key) == value:
            self.skipped["meta"] = self.skipped.get("meta", 0) + 1
            return
        self.store.set_meta(key, "" if value is None else str(value))
        self.added["meta"] = self.added.get("meta", 0) + 1

    def _follow(self, table: str, row: dict[str, Any]) -> dict[str, Any]:
        columns = [c for c in _REFERENCES.get(table, ()) if row.get(c) in self.new_ids]
        if not columns:
            return row
        return {c: (self.new_ids[v] if c in columns else v) for c, v in row.items()}

    def _add(self, table: str, row: dict[str, Any], old_id: Any = None) -> None:
        stored_id = self.store.put_row(table, row)
        self.added[table] = self.added.get(table, 0) + 1
        exported_id = row.get("id", old_id)
        if table in GENERATED_ID_TABLES and stored_id != exported_id:
            self.renumbered[table] = self.renumbered.get(table, 0) + 1
            if table == _REFERENCED:
                self.new_ids[exported_id] = stored_id

    def _skip(self, table: str, row: dict[str, Any], found: dict[str, Any]) -> None:
        self.skipped[table] = self.skipped.get(table, 0) + 1
        if table == _REFERENCED and found.get("id") != row.get("id"):
            self.new_ids[row.get("id")] = found.get("id")


def _same(found: dict[str, Any], row: dict[str, Any], ignore: tuple[str, ...] = ()) -> bool:
    """Whether the stored row holds the exported row's values (columns it lacks differ)."""
    return all(c in found and found[c] == v for c, v in row.items() if c not in ignore)
