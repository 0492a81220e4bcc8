"""Errors a store raises; backends translate their driver's errors into these."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class StoreError(Exception):
    """Any storage failure, with a one-line message a person can act on."""


class StoreOpenError(StoreError):
    """The database could not be opened: not a database, corrupt, or unreadable."""


@dataclass(frozen=True, slots=True)
class DamageReport:
    """What can still be read of a damaged database file, read without writing to it."""

    path: str
    reason: str
    size: int
    header: str  # what the file's first page says (format, page size, pages)
    readable: Mapping[str, int] = field(default_factory=dict)  # table -> rows counted
    unreadable: Mapping[str, str] = field(default_factory=dict)  # table -> the error
    checks: tuple[str, ...] = ()  # the first findings of the backend's own check
    side_files: tuple[str, ...] = ()  # a -wal or -journal beside it, not read here


class DamagedStoreError(StoreOpenError):
    """The file is this backend's database format, but damaged (torn, truncated,
    overwritten in part). Opening it changed nothing in it; `report()` says what can
    still be read, so a face can tell the user what is left and how to recover."""

    def __init__(self, message: str, assess: Callable[[], DamageReport] | None = None) -> None:
        super().__init__(message)
        self._assess = assess

    def report(self) -> DamageReport | None:
        """The damage report (worked out now: counting rows costs time), or None."""
        return None if self._assess is None else self._assess()


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


class translated:  # named as a function: it is used like one, `with translated(...)`
    """Inside the block, a database driver's error becomes the port's: `then` runs first
    (a quiet rollback, say), then `translate(exc, "label: where")` is raised from it.

    A class, not a generator, and the message put together only on an error: a store
    may wrap many statements in it.
    """

    __slots__ = ("_driver_error", "_label", "_then", "_translate", "_where")

    def __init__(
        self,
        driver_error: type[BaseException],
        translate: Callable[[Any, str], StoreError],
        label: str,
        where: str = "",
        *,
        then: Callable[[], object] | None = None,
    ) -> None:
        self._driver_error, self._translate, self._then = driver_error, translate, then
        self._label, self._where = label, where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, trace: object) -> None:
        if exc is not None and isinstance(exc, self._driver_error):
            if self._then is not None:
                self._then()
            where = f"{self._label}: {self._where}" if self._where else self._label
            raise self._translate(exc, where) from exc
