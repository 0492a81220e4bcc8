"""`lcm backup PATH`: a consistent copy of a live database file, never written over anything.

SQLite copies through its online backup API in one step, which reads one snapshot while
other connections (the DSH sidecar, a hook) keep writing; DuckDB copies its database
into a new file (DuckDB lets one process at a time open a file, so no other process is
writing then). A PostgreSQL database is the server's to back up (`pg_dump`).

The copy is written into a private folder beside the target, opened as a store to check
its integrity and count its rows, and only then linked into place: `os.link` fails if
the target appeared meanwhile, so an existing file is never replaced, and a failed
backup leaves nothing behind. The copy is 0600.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lcm_core.reports.targets import refuse_database_target
from lcm_core.store.errors import StoreError
from lcm_core.store.models import TABLES
from lcm_core.store.ports import MemoryStore, SupportsBackup
from lcm_core.store.registry import open_store, parse_store_url, store_url

_FILE_SCHEMES = ("sqlite", "duckdb")


class BackupError(StoreError):
    """A backup that cannot be made; the message is one line."""


@dataclass(frozen=True, slots=True)
class BackupResult:
    """Where the copy is, its size, and the rows it holds per table."""

    out: Path
    source: str
    bytes: int
    tables: dict[str, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(count for table, count in self.tables.items() if table != "meta")


def backup_store(store: MemoryStore, out: Path) -> BackupResult:
    """Copy the live database behind `store` to the new file `out`; see the module's rules."""
    try:
        parsed = parse_store_url(store.url)
    except StoreError as exc:
        message = f"{store.url}: lcm backup copies SQLite and DuckDB database files only"
        raise BackupError(message) from exc
    if parsed.scheme.startswith("postgres"):
        raise BackupError(
            "lcm backup copies SQLite and DuckDB files; back up a PostgreSQL database with "
            "pg_dump (or take this tenant's rows with `lcm export --format jsonl`)"
        )
    if parsed.scheme not in _FILE_SCHEMES or parsed.location == ":memory:":
        raise BackupError(f"{store.url}: lcm backup copies SQLite and DuckDB database files only")
    if not isinstance(store, SupportsBackup):
        raise BackupError(f"{store.url}: this backend cannot make a backup")
    out = Path(out).expanduser()
    refuse_database_target(out, store.url)
    if out.exists() or out.is_symlink():
        raise BackupError(f"{out} exists; lcm backup never replaces a file, choose a new path")
    parent = out.parent
    if not parent.is_dir():
        raise BackupError(f"{parent}: no such folder")
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.backup-", dir=parent))
    except OSError as exc:
        raise BackupError(f"{parent}: cannot write ({exc.strerror or exc})") from exc
    try:
        copy = staging / out.name
        store.backup(copy)
        os.chmod(copy, 0o600)
        tables = _check(parsed.scheme, copy)
        size = copy.stat().st_size
        try:
            os.link(copy, out)
        except FileExistsError:
            raise BackupError(f"{out} exists; lcm backup never replaces a file") from None
        except OSError as exc:
            raise BackupError(f"{out}: cannot write ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return BackupResult(out, store.url, size, tables)


def _check(scheme: str, copy: Path) -> dict[str, int]:
    """Open the copy as a store: it must be healthy; returns its rows per table."""
    try:
        opened = open_store(store_url(scheme, copy))
    except StoreError as exc:
        raise BackupError(f"the copy does not open ({exc}); nothing was written") from exc
    try:
        problems = opened.integrity_check()
        if problems:
            raise BackupError(f"the copy is not healthy ({problems[0]}); nothing was written")
        counts = opened.stats()
    finally:
        opened.close()
    return {table: int(counts.get(table, 0)) for table in TABLES}
