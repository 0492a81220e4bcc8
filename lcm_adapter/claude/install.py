"""The hooks `lcm claude install` writes into a Claude Code settings file, and takes out again.

Claude Code reads `hooks` from `~/.claude/settings.json` (or a project's
`.claude/settings.json`): for each event a list of groups, each with an optional
`matcher` and a list of `{"type": "command", "command": ...}`. Our commands are the ones
that run `lcm ... hook EVENT`; installing replaces exactly those (so a rerun after a move
updates the paths and changes nothing else) and uninstalling removes only them, with any
group and event left empty. Every other key and hook of the file is kept as it was.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

# Claude Code event -> (our `lcm hook` event, matcher or None). SessionStart has no
# matcher so it runs for every source: startup, resume, clear and compact. Claude Code
# runs hooks one after another on the prompt's path, so only what memory needs is here
# (the tool hooks, `pre-tool-use` for preconditions, are added by hand when wanted).
# `Stop` can run before the turn's last reply is in the transcript; `SessionEnd` runs
# when the session ends and takes it in.
HOOKS: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("SessionStart", "session-start", None),
    ("UserPromptSubmit", "user-prompt-submit", None),
    ("PreCompact", "pre-compact", None),
    ("Stop", "stop", None),
    ("SessionEnd", "session-end", None),
)
SETTINGS_FILE: Final = "settings.json"
# The settings lcm's hooks read: memory shared by the sessions of one project.
HOOK_SETTINGS: Final[dict[str, Any]] = {"memory": {"scope": "project"}}
HOOK_SETTINGS_FILE: Final = "claude-code.json"


class SettingsFileError(ValueError):
    """The settings file cannot be edited safely; the message says why."""


# The hook client run as a script: `python -S .../lcm_adapter/claude/client.py`.
CLIENT_SCRIPT: Final = ("lcm_adapter", "claude", "client.py")


@dataclass(frozen=True, slots=True)
class HookCommand:
    """How Claude Code runs lcm: the program, the database and the settings file.

    `program` is the words that start a hook: `python -S <client.py>` (no site start-up,
    the fastest way to ask the warm server) or an `lcm` executable.
    """

    program: tuple[str, ...]
    db: str
    config: str | None = None

    def command(self, event: str) -> str:
        words = [*self.program, "--db", self.db]
        if self.config:
            words += ["--config", self.config]
        return shlex.join([*words, "hook", event])


def is_ours(command: Any) -> bool:
    """Whether a hook command runs lcm's hook (`lcm ... hook EVENT`, or the client script)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words or "hook" not in words[1:]:
        return False
    script = any(Path(word).parts[-3:] == CLIENT_SCRIPT for word in words[:3])
    return Path(words[0]).name == "lcm" or script


def read_settings(path: Path) -> dict[str, Any]:
    """The settings file as a JSON object ({} when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsFileError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise SettingsFileError(f"{path} is not valid JSON ({exc}); fix it first") from exc
    if not isinstance(value, dict):
        raise SettingsFileError(f"{path} holds a JSON {type(value).__name__}, not an object")
    hooks = value.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise SettingsFileError(f"{path}: `hooks` is not an object of lists; fix it first")
    return value


def _without_ours(groups: Sequence[Any]) -> list[Any]:
    kept: list[Any] = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, Mapping) else None
        if not isinstance(inner, list):
            kept.append(group)
            continue
        others = [h for h in inner if not (isinstance(h, Mapping) and is_ours(h.get("command")))]
        if len(others) == len(inner):
            kept.append(group)
        elif others:
            kept.append({**group, "hooks": others})
    return kept


def remove_hooks(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings without our hook commands; empty groups and events are dropped."""
    out = dict(settings)
    hooks = settings.get("hooks")
    if not isinstance(hooks, Mapping):
        return out
    cleaned = {event: _without_ours(groups) for event, groups in hooks.items()}
    cleaned = {event: groups for event, groups in cleaned.items() if groups}
    if cleaned:
        out["hooks"] = cleaned
    else:
        out.pop("hooks", None)
    return out


def add_hooks(settings: Mapping[str, Any], run: HookCommand) -> dict[str, Any]:
    """The settings with our hooks in place of any earlier ones, other hooks untouched."""
    out = remove_hooks(settings)
    hooks = {event: list(groups) for event, groups in (out.get("hooks") or {}).items()}
    for event, ours, matcher in HOOKS:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": run.command(ours)}]
        hooks.setdefault(event, []).append(group)
    out["hooks"] = hooks
    return out


def render(settings: Mapping[str, Any]) -> str:
    """The settings file's text: two-space JSON, non-ASCII kept, a final newline."""
    return json.dumps(settings, ensure_ascii=False, indent=2) + "\n"
