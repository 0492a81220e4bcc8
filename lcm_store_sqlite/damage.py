"""A damaged SQLite file: tell it from a foreign one, and say what can still be read.

Everything here reads the file through an `immutable` read-only URI, so SQLite takes
no lock, writes no `-wal` or `-shm` beside it and never checkpoints: the damaged file
stays exactly as it was, for whoever recovers it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from lcm_core.store.errors import DamagedStoreError, DamageReport
from lcm_core.store.models import TABLES

MAGIC: Final = b"SQLite format 3\x00"
CHECK_LINES: Final = 5  # findings of `PRAGMA quick_check` kept in a report


def has_sqlite_header(path: Path) -> bool:
    """True when the file begins as every SQLite database does."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def damaged(path: Path, reason: str) -> DamagedStoreError:
    """The one-line error for a damaged file, with its report worked out on demand."""
    message = (
        f"{path}: the database is damaged ({reason}); lcm changed nothing in it. "
        f"`lcm --db {path} doctor` shows what can still be read and how to recover"
    )
    return DamagedStoreError(message, lambda: assess(path, reason))


def _header(path: Path, size: int) -> str:
    with path.open("rb") as handle:
        first = handle.read(100)
    if len(first) < 100 or not first.startswith(MAGIC):
        return "no SQLite header"
    page_size = int.from_bytes(first[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(first[28:32], "big")
    held = size // page_size if page_size else 0
    journal = "WAL" if first[18] == 2 else "rollback journal"
    return (
        f"SQLite 3 header, page size {page_size}, {pages} pages declared, "
        f"{held} in the file ({journal})"
    )


def assess(path: Path, reason: str) -> DamageReport:
    """What a read-only look at the file finds, table by table."""
    size = path.stat().st_size
    readable: dict[str, int] = {}
    unreadable: dict[str, str] = {}
    checks: list[str] = []
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        raw = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        unreadable["*"] = str(exc)
    else:
        try:
            for table in TABLES:
                try:
                    readable[table] = int(
                        raw.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
                    )
                except sqlite3.Error as exc:
                    unreadable[table] = str(exc).splitlines()[0]
            try:
                rows = raw.execute(f"PRAGMA quick_check({CHECK_LINES})").fetchall()
                found = [line for row in rows for line in str(row[0]).splitlines()]
                checks = [line for line in found if line not in ("ok", "*** in database main ***")]
                checks = checks[:CHECK_LINES]
            except sqlite3.Error as exc:
                checks = [str(exc).splitlines()[0]]
        finally:
            raw.close()
    side = tuple(
        str(other)
        for other in (Path(f"{path}-wal"), Path(f"{path}-journal"))
        if other.exists() and other.stat().st_size > 0
    )
    return DamageReport(
        path=str(path),
        reason=reason,
        size=size,
        header=_header(path, size),
        readable=readable,
        unreadable=unreadable,
        checks=tuple(checks),
        side_files=side,
    )
