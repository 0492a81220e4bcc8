"""Writing a user's own file (a DSH profile patch, Claude Code's settings) without tearing it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str, *, new_mode: int = 0o644) -> bool:
    """Write through a temporary file and a rename, keeping the old file's mode.

    A reader sees the old file or the new one, never half of it; False when the file
    already holds exactly `text` (nothing is written then). The folder is created.
    """
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = None
    if old == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if old is not None else new_mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
