"""What `lcm status` shows before any memory exists: where it will live and how to start.

A fresh install has no database yet, and a read command must not create one, so
status explains the next steps instead of failing (or leaving an empty file behind).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lcm_adapter.paths import dsh_home


def first_run_data(database: Path) -> dict[str, Any]:
    """The first-run screen as data (`--json` prints it as it is)."""
    sessions = dsh_home() / "sessions"
    return {
        "database": str(database),
        "exists": False,
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
        "          (not created yet: the first captured event creates it)",
        "",
        "next steps:",
    ]
    lines += [f"  {s['command']:<{width}}  {s['what']}" for s in data["next_steps"]]
    return "\n".join(lines)
