"""Savepoints emulated for DuckDB: each inner transaction level keeps before-images of rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb


@dataclass(frozen=True, slots=True)
class BeforeImage:
    """The rows matching `where` in `table` before a write; restoring puts exactly them back."""

    table: str
    where: str
    params: tuple[Any, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


class UndoLog:
    """A stack of frames, one per open inner transaction, of before-images in write order.

    A write inside an inner level first records the rows its key predicate selects (the
    predicate must also cover any row the write adds, so restoring deletes those). A failed
    level restores its images newest first; a level that succeeds hands its images to the
    enclosing inner level, because that level may still fail. The outermost level needs no
    images: DuckDB's own ROLLBACK undoes everything.
    """

    def __init__(self, raw: duckdb.DuckDBPyConnection) -> None:
        self._raw = raw
        self._frames: list[list[BeforeImage]] = []

    def push(self) -> None:
        self._frames.append([])

    def remember(self, table: str, where: str, params: Sequence[Any]) -> None:
        if not self._frames:
            return
        cursor = self._raw.execute(f"SELECT * FROM {table} WHERE {where}", list(params))
        columns = tuple(str(d[0]) for d in cursor.description or ())
        rows = tuple(tuple(row) for row in cursor.fetchall())
        self._frames[-1].append(BeforeImage(table, where, tuple(params), columns, rows))

    def added(self, table: str, where: str, params: Sequence[Any]) -> None:
        """Record rows a write has just added under new keys: undoing deletes them."""
        if self._frames:
            self._frames[-1].append(BeforeImage(table, where, tuple(params), (), ()))

    def rollback(self) -> None:
        """Undo the innermost frame's writes, newest first."""
        frame = self._frames.pop()
        for image in reversed(frame):
            self._raw.execute(f"DELETE FROM {image.table} WHERE {image.where}", list(image.params))
            if image.rows:
                marks = ", ".join("?" * len(image.columns))
                # Quoted: some column names ("at") are keywords in DuckDB.
                columns = ", ".join(f'"{name}"' for name in image.columns)
                self._raw.executemany(
                    f"INSERT INTO {image.table} ({columns}) VALUES ({marks})",
                    [list(row) for row in image.rows],
                )

    def release(self) -> None:
        """The innermost frame succeeded: its images now belong to the enclosing frame."""
        frame = self._frames.pop()
        if self._frames:
            self._frames[-1].extend(frame)

    def discard(self) -> None:
        """Drop the innermost frame without restoring (the transaction is lost anyway)."""
        if self._frames:
            self._frames.pop()

    def clear(self) -> None:
        self._frames.clear()
