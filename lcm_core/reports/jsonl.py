"""JSONL export with the stdlib only: one `<table>.jsonl` per table, streamed row by row."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from lcm_core.reports.files import ExportError, open_private

_FLUSH_ROWS: Final = 2000


def row_line(row: dict[str, Any]) -> str:
    """One row as one line: columns in table order, UTF-8 text kept readable."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows to a new 0600 file, a bounded batch of lines at a time; returns the count."""
    count = 0
    lines: list[str] = []
    with open_private(path) as handle:
        for row in rows:
            lines.append(row_line(row))
            count += 1
            if len(lines) >= _FLUSH_ROWS:
                handle.write("\n".join(lines) + "\n")
                lines.clear()
        if lines:
            handle.write("\n".join(lines) + "\n")
    return count


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of one exported table, in file order."""
    try:
        with Path(path).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise ExportError(f"{path}:{number}: not a JSON line ({exc})") from exc
                if not isinstance(row, dict):
                    raise ExportError(f"{path}:{number}: expected an object per line")
                yield row
    except OSError as exc:
        raise ExportError(f"{path}: cannot read ({exc.strerror or exc})") from exc
