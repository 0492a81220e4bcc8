"""`lcm demo`: ingest the bundled DSH session, then assemble the block its next step would get.

The session (package data, `data/demo_session.jsonl`) is a DSH 0.2.1 session log: a
coding session in English and Chinese with constraints, numbers with conditions, two
corrections, tool output carrying an injection attempt, and a compaction. It goes
through the same path as `lcm ingest` and a live pre-step; no network, host or model.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Final

from lcm_adapter.views import explain_data
from lcm_core.config import Config, deep_merge
from lcm_core.text.block_words import WORDS

DATA_PACKAGE: Final = "lcm_adapter.data"
# `assembly.language`'s values, as `lcm demo --language` takes them.
LANGUAGES: Final = ("auto", "zh", "en")
SESSION_FILE: Final = "demo_session.jsonl"
DB_FILE: Final = "memory.sqlite"


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What the demo did: where, how much it ingested, the block and its explanation."""

    db: str
    session_id: str
    events: int
    inserted: int
    issues: tuple[str, ...]
    message: dict[str, Any] | None
    explained: dict[str, Any] | None
    language: str = ""  # the language of the block's headings, `zh` or `en`

    @property
    def block(self) -> str:
        if self.message is None:
            return ""
        return "\n".join(str(part.get("text", "")) for part in self.message.get("content", []))

    def to_dict(self) -> dict[str, Any]:
        """The JSON view of `lcm demo --json` (no timings, so runs compare equal)."""
        return {
            "db": self.db,
            "session": self.session_id,
            "events": self.events,
            "inserted": self.inserted,
            "issues": list(self.issues),
            "injected": self.message is not None,
            "block": self.block,
            "message": self.message,
            "explain": self.explained,
        }


@contextmanager
def session_log() -> Iterator[Path]:
    """A file path of the bundled session log, valid inside the `with` block."""
    with resources.as_file(resources.files(DATA_PACKAGE).joinpath(SESSION_FILE)) as path:
        yield path


@contextmanager
def demo_database(db: str | None, keep: bool) -> Iterator[tuple[str, bool]]:
    """The database to build on and whether it is temporary.

    The one given is used as it is; else a new file in a private temp folder, which is
    removed on the way out (an error or Ctrl-C included) unless `keep`.
    """
    if db:
        yield db, False
        return
    folder = Path(tempfile.mkdtemp(prefix="lcm-demo-"))  # created mode 0700
    try:
        yield str(folder / DB_FILE), True
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def with_language(config: Config, language: str | None) -> Config:
    """The config with `assembly.language` set to `language` (unchanged when None)."""
    if language is None:
        return config
    values = deep_merge(config.values, {"assembly": {"language": language}})
    return replace(config, values=values)


def language_hint(setting: str, language: str) -> str:
    """Two lines: why the block's headings are in this language, and how to switch."""
    if not language:
        return ""
    names = {"zh": "Chinese", "en": "English"}
    other = "en" if language == "zh" else "zh"
    why = (
        f"the user writes {names[language]} here (assembly.language: auto)"
        if setting == "auto"
        else f"assembly.language is {setting}"
    )
    return (
        f"Headings are {names[language]}: {why}.\n"
        f"For {names[other]} headings: lcm demo --language {other}"
    )


def explore_commands(db: str, item_id: str | None) -> list[str]:
    """The exact commands that look at the demo's database afterwards."""
    base = f"lcm --db {shlex.quote(db)}"
    commands = [f"{base} status", f"{base} explain", f"{base} search 批大小"]
    if item_id:
        commands.append(f"{base} inspect {shlex.quote(item_id)}")
    return commands


def next_step(path: Path) -> tuple[str, dict[str, Any], int | None]:
    """The session id, the newest user message (what the next step answers) and its turn."""
    session_id = ""
    message: dict[str, Any] = {}
    turn: int | None = None
    current: int | None = None
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            data = row.get("data") or {}
            if row.get("type") == "session":
                session_id = str(row.get("id", ""))
            elif row.get("type") == "turn/start":
                current = data.get("turn")
            elif row.get("type") == "user/message" and data.get("source", {}).get("kind") == "user":
                message, turn = data, current
    return session_id, message, turn


def run_demo(url: str, config: Config) -> DemoResult:
    """Ingest the bundled session into the database `url` and run the next pre-step."""
    from lcm_adapter.dsh.ingest import IngestReport, ingest_file
    from lcm_adapter.runtime import MemoryRuntime

    runtime = MemoryRuntime.open(url, config)
    try:
        report = IngestReport()
        with session_log() as path:
            ingest_file(runtime, path, report)
            session_id, last_user, turn = next_step(path)
        message = runtime.pre_step(session_id, [last_user], turn, 1)
        explained = explain_data(runtime.store, session_id, runtime.config)
        return DemoResult(
            db=url,
            session_id=session_id,
            events=report.events,
            inserted=report.inserted,
            issues=tuple(str(issue) for issue in report.issues),
            message=message,
            explained=explained,
            language=_block_language(message),
        )
    finally:
        runtime.close()


def _block_language(message: dict[str, Any] | None) -> str:
    """`zh` or `en`: the language whose header the block starts with ("" when none)."""
    text = "\n".join(str(part.get("text", "")) for part in (message or {}).get("content", []))
    for language, words in WORDS.items():
        if text.startswith(words.header.split("\n", 1)[0]):
            return language
    return ""
