"""Where lcm keeps its data by default: under DSH's home, or Claude Code's for a user without DSH.

`$DSH_HOME/long-conversation-memory/memory.sqlite` (DSH_HOME defaults to `~/.dsh`) for a
DSH user, and `$CLAUDE_CONFIG_DIR/long-conversation-memory/memory.sqlite` (default
`~/.claude`) for someone who has only Claude Code. A database that exists wins over a
home that exists, so the default never moves once memory has been written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

DATA_FOLDER = "long-conversation-memory"
DB_FILE = "memory.sqlite"


def dsh_home() -> Path:
    """`$DSH_HOME`, else `~/.dsh`."""
    value = os.environ.get("DSH_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".dsh"


def claude_home() -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`: where Claude Code keeps settings and transcripts."""
    value = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".claude"


def default_db_path() -> Path:
    """The database used when none is named (`--db`, `$LCM_DB`).

    In order: DSH's database if it exists, Claude Code's if it exists, DSH's if DSH is set
    up (`$DSH_HOME` set or its folder present), Claude Code's if its home exists, else DSH's.
    """
    dsh = dsh_home() / DATA_FOLDER / DB_FILE
    claude = claude_home() / DATA_FOLDER / DB_FILE
    if _present(dsh) or (not _present(claude) and _dsh_set_up()):
        return dsh
    if _present(claude) or _present(claude_home(), folder=True):
        return claude
    return dsh


def _dsh_set_up() -> bool:
    return bool(os.environ.get("DSH_HOME", "").strip()) or _present(dsh_home(), folder=True)


def _present(path: Path, *, folder: bool = False) -> bool:
    """Whether `path` is there; one this user may not look into counts as there (the
    command then says it cannot read it), so choosing a default never raises."""
    try:
        return path.is_dir() if folder else path.exists()
    except PermissionError:
        return True
    except OSError:
        return False


def db_given(db: str | None) -> bool:
    """Whether the user named a database (`--db` or `$LCM_DB`) rather than taking the default."""
    return any(c and c.strip() for c in (db, os.environ.get("LCM_DB")))


# Store URL schemes whose location is a file on this machine.
FILE_SCHEMES: Final = ("sqlite", "duckdb")


def missing_database(url: str) -> Path | None:
    """The file a store URL names when it does not exist yet; None for one that does, or memory.

    Read commands check this first, so a typo in `--db` never leaves a new file behind.
    """
    from lcm_core.store.errors import StoreError
    from lcm_core.store.registry import parse_store_url

    try:
        parsed = parse_store_url(url)
    except StoreError:
        return None  # opening it gives the one-line error
    location = parsed.location
    # Only the embedded backends name a file; a server URL is checked by connecting.
    if location == ":memory:" or parsed.scheme not in FILE_SCHEMES:
        return None
    path = Path(location).expanduser()
    return None if path.exists() else path


def resolve_db_url(db: str | None) -> str:
    """The database to use: `--db`, else `$LCM_DB`, else `default_db_path()`."""
    for candidate in (db, os.environ.get("LCM_DB")):
        if candidate and candidate.strip():
            return candidate.strip()
    return str(default_db_path())
