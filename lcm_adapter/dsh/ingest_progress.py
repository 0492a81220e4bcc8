"""Progress of `lcm ingest`: a rich bar with a total and ETA on a terminal, sparse lines otherwise.

The total is the size of the logs on disk. A plain log advances the bar line by line;
a compressed one (its on-disk offset is not known while decoding) when it is done.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import TracebackType
from typing import Final

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from lcm_adapter.dsh.ingest import IngestReport
from lcm_adapter.dsh.logread import is_compressed

# Without a terminal, one line at most this often, so a log file stays readable.
LINE_SECONDS: Final = 5.0


def stderr_console() -> Console:
    """Where the bar is drawn (a seam the tests replace with a recording console)."""
    return Console(stderr=True)


class IngestProgress:
    """Told `(report, path)` after each batch; draws the bar or prints an occasional line."""

    def __init__(self, files: list[Path], quiet: bool) -> None:
        self.sizes = [_size(path) for path in files]
        self.quiet = quiet
        self.console = stderr_console()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.last_line = time.monotonic()  # the first line after LINE_SECONDS
        self._done_index = 0
        self._done_bytes = 0
        self._plain_at_start = 0

    def __enter__(self) -> IngestProgress:
        if not self.quiet and self.console.is_terminal:
            self.bar = Progress(
                TextColumn("ingest"),
                BarColumn(),
                DownloadColumn(),
                TextColumn("{task.fields[events]:,} events"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,  # the summary, printed once afterwards, replaces it
            )
            self.bar.start()
            self.task = self.bar.add_task("ingest", total=sum(self.sizes), events=0)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

    def position(self, report: IngestReport, path: Path) -> int:
        """Bytes of the logs read so far: whole files done, plus the plain part of this one."""
        while self._done_index < min(report.files_done, len(self.sizes)):
            self._done_bytes += self.sizes[self._done_index]
            self._done_index += 1
            self._plain_at_start = report.plain_bytes
        inside = 0 if is_compressed(path) else report.plain_bytes - self._plain_at_start
        current = self.sizes[self._done_index] if self._done_index < len(self.sizes) else 0
        return self._done_bytes + min(inside, current)

    def __call__(self, report: IngestReport, path: Path) -> None:
        if self.quiet:
            return
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=self.position(report, path), events=report.events)
            return
        now = time.monotonic()
        if now - self.last_line < LINE_SECONDS:
            return
        self.last_line = now
        click.echo(
            f"ingest: so far {report.events} events ({report.inserted} new) from "
            f"{report.files} files, {report.rate:,.0f} events/s",
            err=True,
        )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
