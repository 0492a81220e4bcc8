"""Errors a store raises; backends translate their driver's errors into these."""

from __future__ import annotations


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
