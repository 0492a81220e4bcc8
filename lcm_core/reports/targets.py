"""Refuse an output path that would overwrite the live database, whatever `--force` says.

Every command that writes a path the user gives (export today; `import` and `backup`
when they land) calls `refuse_database_target` before touching the disk: replacing
the source database, one of its journal files, or a folder that holds it loses the
memory a user keeps, and no flag makes that what they meant.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from lcm_core.store.errors import StoreError
from lcm_core.store.registry import parse_store_url

# Files a database keeps beside itself: SQLite's rollback journal, WAL and shared
# memory, and DuckDB's write-ahead log. Replacing any of them corrupts the database.
COMPANION_SUFFIXES: Final = ("-wal", "-shm", "-journal", ".wal")


class UnsafeTargetError(StoreError):
    """An output path that is, or holds, the database being read."""


def database_files(url: str) -> tuple[Path, ...]:
    """The database file a store URL names and its companion files, resolved; () in memory."""
    location = parse_store_url(url).location
    if location == ":memory:":
        return ()
    main = _resolved(Path(location))
    return (main, *(main.with_name(main.name + suffix) for suffix in COMPANION_SUFFIXES))


def refuse_database_target(out: Path, url: str) -> None:
    """Raise `UnsafeTargetError` when writing `out` would replace or remove the database."""
    files = database_files(url)
    if not files:
        return
    target = _resolved(Path(out))
    database = files[0]
    for file in files:
        if target == file or _same_file(target, file):
            raise UnsafeTargetError(
                f"refusing to write {out}: it is the database being read ({file}); "
                "choose another output"
            )
    if database.is_relative_to(target):
        raise UnsafeTargetError(
            f"refusing to write {out}: that folder holds the database being read ({database}); "
            "choose another output"
        )


def _resolved(path: Path) -> Path:
    # `resolve` follows symlinks in the part of the path that exists and makes the
    # rest absolute, so `./x/../db`, `~/db` and a link to the database all compare equal.
    return path.expanduser().resolve(strict=False)


def _same_file(a: Path, b: Path) -> bool:
    # A hard link or a case-insensitive file system can name one file two ways.
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
