"""Errors a store raises; backends translate their driver's errors into these."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class StoreError(Exception):
    """Any storage failure, with a one-line message a person can act on."""


class StoreOpenError(StoreError):
    """The database could not be opened: not a database, corrupt, or unreadable."""


class StoreBusyError(StoreError):
    """Another writer held the database for longer than the busy timeout."""


class StoreConflictError(StoreError):
    """A write would break a uniqueness rule (for example two active items, same content)."""


class StoreNotFoundError(StoreError):
    """The row a write refers to does not exist."""


class SchemaVersionError(StoreError):
    """The file's schema version is newer than this code understands."""


class StoreUnavailableError(StoreError):
    """No backend serves the URL, or its optional dependency is not installed."""


class ReadOnlyStoreError(StoreError):
    """The database file or its folder cannot be written."""


class StorageFullError(StoreError):
    """The disk or a file-size limit stopped a write; nothing of it was committed."""


@contextmanager
def translated(
    driver_error: type[BaseException],
    translate: Callable[[Any, str], StoreError],
    where: str,
    *,
    then: Callable[[], object] | None = None,
) -> Iterator[None]:
    """Inside the block, a database driver's error becomes the port's: `then` runs first
    (a quiet rollback, say), then `translate(exc, where)` is raised from it."""
    try:
        yield
    except driver_error as exc:
        if then is not None:
            then()
        raise translate(exc, where) from exc
