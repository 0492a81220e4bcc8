"""`lcm ingest`: backfill DSH session logs into the memory database, read-only and idempotent.

A path may be one log file, a session folder, or a whole `$DSH_HOME/sessions` tree.
Each log's header line names its session; its events go through the same capture
path as the live plugin (insert-or-ignore on `(session_id, seq)`), in batches, so a
second run adds nothing and the events table matches what live capture wrote. A
damaged line or frame is reported with its file and line and the rest is still read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lcm_adapter.dsh.logread import (
    Damage,
    Line,
    MissingZstdError,
    decode_line,
    is_compressed,
    read_lines,
)
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.capture.events import CaptureReport

BATCH: Final = 2000
# Log file names of DSH 0.1 (`session.jsonl`) and 0.2 (`session.v4.jsonl`), plain or zstd.
LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zstd", ".jsonl.zst")


class IngestError(ValueError):
    """A path given on the command line cannot be ingested at all."""


@dataclass(frozen=True, slots=True)
class Issue:
    """Something that could not be read or stored, with where it was."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"


@dataclass(slots=True)
class IngestReport:
    """Totals of one ingest run."""

    files: int = 0
    sessions: set[str] = field(default_factory=set)
    lines: int = 0
    events: int = 0
    inserted: int = 0
    duplicates: int = 0
    issues: list[Issue] = field(default_factory=list)
    seconds: float = 0.0
    skipped: list[Skipped] = field(default_factory=list)
    files_done: int = 0
    plain_bytes: int = 0  # bytes of plain-text log lines read (progress within a file)
    # Lines kept with bytes that were not UTF-8 read as U+FFFD: noted, not failures.
    repaired: list[Issue] = field(default_factory=list)
    replaced_bytes: int = 0

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "sessions": len(self.sessions),
            "lines": self.lines,
            "events": self.events,
            "inserted": self.inserted,
            "duplicates": self.duplicates,
            "issues": [str(issue) for issue in self.issues],
            "skipped": [str(skip) for skip in self.skipped],
            "repaired": [str(note) for note in self.repaired],
            "replaced_bytes": self.replaced_bytes,
            "seconds": round(self.seconds, 3),
            "events_per_second": round(self.rate, 1),
        }


Progress = Callable[[IngestReport, Path], None]


def is_log_file(path: Path) -> bool:
    """A log by its name: `*.jsonl`, `*.jsonl.zst` or `*.jsonl.zstd`."""
    return path.name.endswith(LOG_SUFFIXES)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file under a folder that was not read as a session log, and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(slots=True)
class Discovery:
    """The logs to read, in a stable order, and the files passed over with the reason."""

    files: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def not_a_session_log(path: Path, *, headerless: bool = False) -> str | None:
    """Why a file is not a DSH session log (its first line must be the header); None if it is.

    With `headerless`, a log whose first line is already an event envelope (its header
    lost) passes too: its folder names the session. That is for a file named on the
    command line; a folder's files need their header.
    """
    try:
        first = next(read_lines(path, []), None)
    except MissingZstdError:
        return None  # read it anyway: the ingest reports the missing package once per file
    except (OSError, ValueError) as exc:
        return f"cannot read: {getattr(exc, 'strerror', None) or exc}"
    if first is None:
        return "empty"
    try:
        value = json.loads(decode_line(first.data)[0])
    except ValueError:
        return "first line is not JSON"
    if isinstance(value, dict) and value.get("type") == "session" and value.get("id"):
        return None
    if headerless and _is_envelope(value):
        return None
    return "first line is not a DSH session line"


def _is_envelope(value: Any) -> bool:
    """A DSH event line: a type, and a seq (or a packed row's seq0)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and (isinstance(value.get("seq"), int) or isinstance(value.get("seq0"), int))
    )


def discover(paths: Iterable[Path]) -> Discovery:
    """The session logs under the given paths, each once, and the files passed over.

    A file named directly is read whatever its name, when its first line is a DSH
    `session` line or an event (a log that lost its header); an empty file or one that
    is not a session log is skipped with the reason, so it never leaves an empty database
    behind. In a folder every `*.jsonl`, `*.jsonl.zst` and `*.jsonl.zstd` whose first
    line is a DSH `session` line is a log; every other file is skipped with the reason.
    """
    found = Discovery()
    seen: dict[Path, None] = {}
    for path in paths:
        if path.is_file():
            reason = not_a_session_log(path, headerless=True)
            if reason is None:
                seen[path] = None
            else:
                found.skipped.append(Skipped(str(path), reason))
        elif path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if not candidate.is_file() or candidate in seen:
                    continue
                reason = (
                    not_a_session_log(candidate)
                    if is_log_file(candidate)
                    else "not a .jsonl, .jsonl.zst or .jsonl.zstd file"
                )
                if reason is None:
                    seen[candidate] = None
                else:
                    found.skipped.append(Skipped(str(candidate), reason))
        else:
            raise IngestError(f"no such file or folder: {path}")
    found.files = list(seen)
    return found


def ingest_paths(
    runtime: MemoryRuntime, paths: Iterable[Path], progress: Progress | None = None
) -> IngestReport:
    """Ingest every log found under `paths`; never writes to the logs."""
    found = discover(paths)
    report = ingest_files(runtime, found.files, progress)
    report.skipped = found.skipped
    return report


def ingest_files(
    runtime: MemoryRuntime,
    files: Iterable[Path],
    progress: Progress | None = None,
    report: IngestReport | None = None,
) -> IngestReport:
    """Ingest these log files, in order, into one report (`report`, when given, is filled
    as batches commit, so a caller stopped by Ctrl-C knows exactly what was stored)."""
    report = IngestReport() if report is None else report
    started = time.perf_counter()
    for path in files:
        ingest_file(runtime, path, report, progress, started)
        report.files_done += 1
    report.seconds = time.perf_counter() - started
    return report


def _parsed(path: Path, lines: Iterator[Line], report: IngestReport) -> Iterator[tuple[int, Any]]:
    """JSON values of the lines; unparseable lines become issues, repaired ones notes."""
    plain = not is_compressed(path)
    for line in lines:
        report.lines += 1
        if plain:
            report.plain_bytes += len(line.data) + 1
        text, replaced = decode_line(line.data)
        try:
            value = json.loads(text)
        except ValueError:
            reason = (
                "truncated last line (the log may still be being written)"
                if not line.complete
                else "line is not valid JSON"
            )
            report.issues.append(Issue(str(path), line.number, reason))
            continue
        if replaced:
            report.replaced_bytes += replaced
            note = f"{replaced} bytes that are not UTF-8 read as U+FFFD; the line is kept"
            report.repaired.append(Issue(str(path), line.number, note))
        yield line.number, value


def ingest_file(
    runtime: MemoryRuntime,
    path: Path,
    report: IngestReport,
    progress: Progress | None = None,
    started: float | None = None,
) -> None:
    """Ingest one log file into `report`."""
    damage: list[Damage] = []
    report.files += 1
    session_id: str | None = None
    batch: list[Any] = []
    numbers: list[int] = []
    t0 = time.perf_counter() if started is None else started
    try:
        for number, value in _parsed(path, read_lines(path, damage), report):
            if session_id is None:
                session_id, is_header = _session_of(path, value)
                if is_header and isinstance(value.get("cwd"), str):
                    runtime.note_cwd(session_id, value["cwd"])  # the session's project
                if not is_header:
                    report.issues.append(
                        Issue(
                            str(path),
                            number,
                            f"no session header; using folder name {session_id!r}",
                        )
                    )
                else:
                    continue
            elif isinstance(value, dict) and value.get("type") == "session":
                continue  # a repeated header carries no event
            batch.append(value)
            numbers.append(number)
            if len(batch) >= BATCH:
                _flush(runtime, path, session_id, batch, numbers, report)
                if progress is not None:
                    report.seconds = time.perf_counter() - t0
                    progress(report, path)
    except MissingZstdError as exc:
        report.issues.append(Issue(str(path), None, str(exc)))
    except OSError as exc:
        report.issues.append(Issue(str(path), None, f"cannot read: {exc.strerror or exc}"))
    if session_id is not None and batch:
        _flush(runtime, path, session_id, batch, numbers, report)
    report.issues.extend(Issue(str(path), d.line, d.reason) for d in damage)
    if progress is not None:
        report.seconds = time.perf_counter() - t0
        progress(report, path)


def _session_of(path: Path, value: Any) -> tuple[str, bool]:
    """The session id from a header line, else the log's folder name; and whether it was a header."""
    if isinstance(value, dict) and value.get("type") == "session":
        ident = value.get("id")
        if isinstance(ident, str) and ident:
            return ident, True
    return path.parent.name, False


def _flush(
    runtime: MemoryRuntime,
    path: Path,
    session_id: str,
    batch: list[Any],
    numbers: list[int],
    report: IngestReport,
) -> None:

    def count(capture: CaptureReport) -> None:
        # Counted when the batch commits, before extraction runs: a Ctrl-C during
        # extraction must not make a committed batch look lost.
        report.sessions.add(session_id)
        report.events += capture.rows  # a packed chunk row counts as the events it holds
        report.inserted += capture.inserted
        report.duplicates += capture.duplicates

    capture = runtime.on_events(session_id, batch, committed=count)
    for problem in capture.errors:
        line = numbers[problem.index] if 0 <= problem.index < len(numbers) else None
        report.issues.append(Issue(str(path), line, problem.reason))
    batch.clear()
    numbers.clear()
