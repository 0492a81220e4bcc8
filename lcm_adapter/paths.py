"""Where lcm keeps its data by default: `$DSH_HOME/long-conversation-memory/memory.sqlite`."""

from __future__ import annotations

import os
from pathlib import Path

DATA_FOLDER = "long-conversation-memory"
DB_FILE = "memory.sqlite"


def dsh_home() -> Path:
    """`$DSH_HOME`, else `~/.dsh`."""
    value = os.environ.get("DSH_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".dsh"


def default_db_path() -> Path:
    return dsh_home() / DATA_FOLDER / DB_FILE


def resolve_db_url(db: str | None) -> str:
    """The database to use: `--db`, else `$LCM_DB`, else the default file under DSH_HOME."""
    for candidate in (db, os.environ.get("LCM_DB")):
        if candidate and candidate.strip():
            return candidate.strip()
    return str(default_db_path())
