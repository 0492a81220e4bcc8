"""What `lcm status` shows before any memory exists: where it will live and how to start.

A fresh install has no database yet, and a read command must not create one, so
status explains the next steps instead of failing (or leaving an empty file behind).
A database that holds no session (never used, or after `lcm purge --all`) gets the same
screen and the same exit code 0: it is not an error to have no memory yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lcm_adapter.paths import dsh_home


def first_run_data(database: Path | str, *, exists: bool = False) -> dict[str, Any]:
    """The first-run screen as data (`--json` prints it as it is); `exists` when the
    database is there but holds no session."""
    sessions = dsh_home() / "sessions"
    return {
        "database": str(database),
        "exists": exists,
        "next_steps": [
            {
                "what": "try it on a bundled session (a temporary database)",
                "command": "lcm demo",
            },
            {
                "what": "connect DeepSeek Harness; memory starts with the next session",
                "command": "lcm dsh install",
            },
            {
                "what": "backfill the DSH sessions you already have (read-only)",
                "command": f"lcm ingest {sessions}",
            },
            {
                "what": "connect Claude Code; memory starts with its next session",
                "command": "lcm claude install",
            },
            {
                "what": "another MCP client",
                "command": "see docs/cli.md (lcm mcp)",
            },
        ],
    }


def render_first_run(data: dict[str, Any]) -> str:
    """The readable first-run screen: plain lines, so it reads the same on any terminal."""
    width = max(len(step["command"]) for step in data["next_steps"])
    lines = [
        "long-conversation-memory: no memory yet",
        f"database: {data['database']}",
        "          (it holds no session yet: the first captured event adds one)"
        if data["exists"]
        else "          (not created yet: the first captured event creates it)",
        "",
        "next steps:",
    ]
    lines += [f"  {s['command']:<{width}}  {s['what']}" for s in data["next_steps"]]
    return "\n".join(lines)
