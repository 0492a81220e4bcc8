"""What `lcm doctor` says about a damaged database: what is left, and how to recover it.

The store reads the file without writing to it (see lcm_store_sqlite.damage); this
module only lays the report out and writes the recovery steps with the file's own
paths, so they can be pasted as they are.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from lcm_core.store.errors import DamageReport


def recovery_steps(path: str) -> list[str]:
    """The steps that recover a damaged SQLite memory file, written for this file.

    Salvage runs on a copy, never on the file itself: the sqlite3 shell writes a -wal
    and -shm beside what it opens. `.recover` needs a recent sqlite3 (the 3.40 shell of
    Debian 12 answers every file with "SQL logic error"); `.dump` ends a damaged file's
    script in ROLLBACK, which the `sed` turns into COMMIT. Either copies the full-text
    indexes as damaged as they were, so the rows go on through `lcm export` and
    `lcm import` into a fresh file, which builds its own indexes and is private.
    (tests/adapter/test_cli_damaged_store.py runs these steps as printed.)
    """
    stem = Path(path)

    def beside(suffix: str) -> str:
        return shlex.quote(str(stem.with_name(stem.stem + suffix)))

    file = shlex.quote(path)
    copy = shlex.quote(str(stem.with_name(stem.name + ".damaged")))
    scratch, export, new = (
        beside(".salvage.sqlite"),
        beside(".salvage"),
        beside(".recovered.sqlite"),
    )
    dump = (
        f"sqlite3 {copy} .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 {scratch}"
    )
    return [
        "stop every agent and lcm process that uses it (a DSH sidecar, hooks), so nothing writes",
        f"keep it as it is, and work on a copy: cp -p {file} {copy} (its -wal file too, if any)",
        "if you have a copy made by `lcm backup PATH`, check it (lcm --db COPY doctor) and use "
        "it: that is the whole memory as it was then",
        f"else salvage what SQLite can still read, from the copy: sqlite3 {copy} .recover "
        f'| sqlite3 {scratch} (an older sqlite3 whose .recover says "SQL logic error": {dump})',
        f"carry the rows into a fresh memory file: lcm --db {scratch} export --format jsonl "
        f"--out {export} && lcm --db {new} import {export}",
        f"check it, then point lcm at it: lcm --db {new} doctor",
    ]


def damage_data(report: DamageReport | None, url: str, message: str) -> dict[str, Any]:
    """`lcm doctor --json` for a damaged database."""
    data: dict[str, Any] = {
        "url": url,
        "state": "damaged",
        "error": message,
        "changed": False,
        "recover": recovery_steps(report.path if report else url),
    }
    if report is not None:
        data.update(
            path=report.path,
            reason=report.reason,
            bytes=report.size,
            header=report.header,
            readable=dict(report.readable),
            unreadable=dict(report.unreadable),
            checks=list(report.checks),
            side_files=list(report.side_files),
        )
    return data


def render_damage(data: dict[str, Any]) -> str:
    """The readable report: one fact a line, then the numbered steps."""
    lines = [
        f"database        {data.get('path', data['url'])}",
        f"state           damaged: {data.get('reason', data['error'])}",
    ]
    if "bytes" in data:
        lines.append(f"file            {data['bytes']:,} bytes: {data['header']}")
        rows = ", ".join(f"{t}={n}" for t, n in data["readable"].items() if n) or "no rows"
        lines.append(f"can be read     {rows}")
        reasons: dict[str, list[str]] = {}
        for table, why in data["unreadable"].items():
            reasons.setdefault(why, []).append(table)
        lines.extend(f"cannot be read  {', '.join(t)} ({why})" for why, t in reasons.items())
        lines.extend(f"check           {finding}" for finding in data["checks"])
        lines.extend(
            f"beside it       {side} (not read here: it may hold the newest writes)"
            for side in data["side_files"]
        )
    lines.append("lcm changed nothing in the file. To recover:")
    lines.extend(f"  {n}. {step}" for n, step in enumerate(data["recover"], start=1))
    return "\n".join(lines)
