"""Project identity: which sessions belong to one workspace, recorded per session.

A project is, in order: the id the user sets (`memory.project`, or `LCM_PROJECT` which
the adapter folds into it), the git top-level of the host's working directory, else
that directory itself. The top-level is found by reading `.git` upward from the
directory, without running git: a `.git` folder, or a `.git` file that says
`gitdir: ...` (a worktree or submodule), marks it. Paths are compared whole, so
`/work/app` and `/work/app2` are two projects.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Final

from lcm_core.clock import utc_now_iso
from lcm_core.store.models import Session
from lcm_core.store.ports import SessionStore

# A user-set id is prefixed so it can never equal a path another session recorded.
USER_PREFIX: Final = "id:"
# Folders climbed at most when looking for `.git` (a deep tree is never walked forever).
MAX_DEPTH: Final = 64
# Bytes of a `.git` file read to see whether it points to a git directory.
GITFILE_BYTES: Final = 4096
# Other sessions of a project read at a time, the most recently updated first (bounds the cost).
MAX_SESSIONS: Final = 50


def normalised_dir(cwd: str) -> str:
    """The absolute, normalised form of `cwd` (no trailing slash, no `..`), without touching disk."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(cwd)))


def git_top_level(cwd: str) -> str | None:
    """The nearest folder at or above `cwd` holding a `.git` folder or gitdir file, or None."""
    here = Path(normalised_dir(cwd))
    for folder in [here, *here.parents][:MAX_DEPTH]:
        marker = folder / ".git"
        try:
            if marker.is_dir():
                return str(folder)
            if marker.is_file():
                with marker.open("rb") as handle:
                    head = handle.read(GITFILE_BYTES)
                if head.lstrip().startswith(b"gitdir:"):
                    return str(folder)
        except OSError:
            continue  # unreadable: not a marker we can trust, keep climbing
    return None


def project_identity(cwd: str | None, configured: str = "") -> str | None:
    """The project id: the user's id, else the git top-level of `cwd`, else `cwd` itself.

    None when neither an id nor a directory is known (such a session shares with none).
    """
    chosen = configured.strip()
    if chosen:
        return f"{USER_PREFIX}{chosen}"
    if not cwd or not cwd.strip():
        return None
    return git_top_level(cwd) or normalised_dir(cwd)


def record_project(
    store: SessionStore,
    session_id: str,
    cwd: str | None,
    configured: str = "",
    *,
    clock: Callable[[], str] | None = None,
) -> Session:
    """Record the session's working directory and project; returns the stored session.

    A session keeps the project it was first given unless the user's id changes it, so
    a later event from another directory does not move its memory to another project.
    """
    current = store.get_session(session_id)
    project = project_identity(cwd, configured)
    folder = normalised_dir(cwd) if cwd and cwd.strip() else None
    if current is not None and current.project and not configured.strip():
        project, folder = current.project, current.cwd or folder
    if current is not None:
        folder = folder or current.cwd
        project = project or current.project
        if (current.cwd, current.project) == (folder, project):
            return current  # nothing new: no write
    elif project is None:
        return Session(session_id)  # nothing to record about an unknown session
    now = (clock or utc_now_iso)()
    base = current if current is not None else Session(session_id, created_at=now)
    updated = replace(base, cwd=folder, project=project, updated_at=now)
    store.upsert_session(updated)
    return updated


def project_of(store: SessionStore, session_id: str) -> str | None:
    """The project recorded for the session, or None."""
    session = store.get_session(session_id)
    return session.project if session is not None and session.project else None


def sibling_sessions(store: SessionStore, session_id: str) -> list[Session]:
    """The other sessions of the session's project, most recently updated first (capped)."""
    project = project_of(store, session_id)
    if project is None:
        return []
    same = [s for s in store.list_sessions() if s.project == project and s.session_id != session_id]
    return same[:MAX_SESSIONS]
