"""What every export shares: the manifest, private files and folders, and row redaction."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lcm_core.store.errors import StoreError

FORMATS: Final = ("duckdb", "parquet", "jsonl")
MANIFEST_NAME: Final = "export.json"
MANIFEST_KIND: Final = "lcm-export"
# Free-text columns a redacted export rewrites; every `*_json` column is rewritten too.
TEXT_COLUMNS: Final = {
    "events": ("text",),
    "archive": ("text",),
    "memory_items": ("content",),
    "task_state": ("goal",),
    "skill_versions": ("content",),
    "rules": ("text",),
    "pending_extraction": ("last_error",),
}


class ExportError(StoreError):
    """An export that cannot be written or read; the message is one line."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """`export.json` of a Parquet or JSONL folder: what it holds and at which schema."""

    format: str
    schema_version: int
    session: str | None = None
    redacted: bool = False
    tables: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": MANIFEST_KIND,
            "format": self.format,
            "schema_version": self.schema_version,
            "session": self.session,
            "redacted": self.redacted,
            "tables": dict(self.tables),
        }


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    """Write `export.json` (0600) into the folder."""
    path = folder / MANIFEST_NAME
    with open_private(path) as handle:
        handle.write(json.dumps(manifest.to_dict(), ensure_ascii=False, indent=2) + "\n")
    return path


def read_manifest(folder: Path) -> Manifest:
    """The manifest of an export folder; a missing or foreign one is an `ExportError`."""
    path = Path(folder) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExportError(f"{folder}: not an lcm export (no readable {MANIFEST_NAME})") from exc
    except ValueError as exc:
        raise ExportError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("kind") != MANIFEST_KIND:
        raise ExportError(f"{path}: not an lcm export manifest")
    if data.get("format") not in ("parquet", "jsonl"):
        raise ExportError(f"{path}: unknown export format {data.get('format')!r}")
    try:
        version = int(data["schema_version"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ExportError(f"{path}: records no schema version") from exc
    tables = data.get("tables")
    return Manifest(
        format=str(data["format"]),
        schema_version=version,
        session=data.get("session"),
        redacted=bool(data.get("redacted")),
        tables={str(k): int(v) for k, v in tables.items()} if isinstance(tables, dict) else {},
    )


def private_folder(path: Path) -> Path:
    """Create a folder (and missing parents) readable by the owner only."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    except OSError as exc:
        raise ExportError(f"{path}: cannot create folder ({exc.strerror or exc})") from exc
    return path


def open_private(path: Path) -> Any:
    """A new UTF-8 text file with mode 0600 from the start; an existing file is an error."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ExportError(f"{path}: cannot create file ({exc.strerror or exc})") from exc
    return os.fdopen(fd, "w", encoding="utf-8", newline="\n")


def _dumps(value: Any) -> str:
    """The stores' canonical JSON, so an unchanged value keeps its bytes."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def load_redactor() -> Callable[[str], str]:
    """`lcm_core.text.redact.redact`, or an `ExportError` when this install has no redaction."""
    try:
        from lcm_core.text.redact import redact
    except ImportError as exc:
        raise ExportError(
            "--redact is not available: lcm_core.text.redact is not installed"
        ) from exc
    return redact


def redacted_rows(
    table: str, rows: Iterable[dict[str, Any]], redact: Callable[[str], str]
) -> Iterator[dict[str, Any]]:
    """Rows with secrets replaced in free-text and JSON columns; other columns untouched."""
    plain = TEXT_COLUMNS.get(table, ())
    for row in rows:
        out = dict(row)
        for name, value in row.items():
            if not isinstance(value, str) or not value:
                continue
            if name in plain:
                out[name] = redact(value)
            elif name.endswith("_json"):
                out[name] = _redact_json(value, redact)
        yield out


def _redact_json(text: str, redact: Callable[[str], str]) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return redact(text)
    cleaned = _walk(value, redact)
    return text if cleaned == value else _dumps(cleaned)


def _walk(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _walk(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, redact) for item in value]
    return value


def counted(
    rows: Iterable[dict[str, Any]], on_rows: Callable[[int], None] | None, every: int = 5000
) -> Iterator[dict[str, Any]]:
    """Pass rows through, telling `on_rows` how many went by every `every` rows and at the end."""
    pending = 0
    for row in rows:
        yield row
        pending += 1
        if pending >= every and on_rows is not None:
            on_rows(pending)
            pending = 0
    if pending and on_rows is not None:
        on_rows(pending)
