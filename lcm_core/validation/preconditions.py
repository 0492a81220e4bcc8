"""File-operation preconditions: allow or deny a tool call before it runs.

Each `validation.preconditions` entry is `{id?, pathPattern, mustExist | mustNotExist,
tools?, reason?}`. It applies to a tool call when the call names a path (under one of
the usual argument keys) that matches `pathPattern`, and — if `tools` is given — the
tool's name is one of them (case-insensitive). Then `mustExist` denies when that path
does not exist (editing a file that is not there), `mustNotExist` denies when it does
(overwriting a file that must be created fresh). The first deny in config order wins.
Relative paths resolve against `base_dir` (the session's working folder); patterns
match the path relative to it, or the absolute path for an absolute pattern.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.text.tokens import glob_match

# Argument keys under which file tools of DSH, Claude Code and MCP servers pass a path.
PATH_ARG_KEYS: Final = (
    "path",
    "file_path",
    "filePath",
    "filename",
    "file",
    "target_file",
    "targetFile",
    "notebook_path",
    "destination",
    "dest",
    "paths",
)


@dataclass(frozen=True, slots=True)
class PreconditionDecision:
    """Allow, or deny with a reason naming the precondition; config problems ride along."""

    allow: bool
    reason: str | None = None
    precondition: str | None = None
    errors: tuple[str, ...] = ()

    def to_host(self) -> dict[str, str]:
        """The `tools/pre-execute` answer: `{kind: allow}` or `{kind: deny, reason}`."""
        if self.allow:
            return {"kind": "allow"}
        return {"kind": "deny", "reason": self.reason or "denied by a memory precondition"}


def paths_in_args(args: Any) -> list[str]:
    """The path strings a tool call names, in argument-key order, without repeats."""
    if not isinstance(args, Mapping):
        return []
    found: list[str] = []
    for key in PATH_ARG_KEYS:
        value = args.get(key)
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str) and item.strip() and item not in found:
                found.append(item)
    return found


def _forms(raw: str, base: Path) -> tuple[Path, str, str]:
    """The resolved path, its form relative to base (or absolute), and its absolute form."""
    candidate = Path(raw.strip()).expanduser()
    absolute = Path(os.path.normpath(candidate if candidate.is_absolute() else base / candidate))
    try:
        relative = absolute.relative_to(base).as_posix()
    except ValueError:
        relative = absolute.as_posix()
    return absolute, relative, absolute.as_posix()


def _rule_problem(rule: Any) -> str | None:
    if not isinstance(rule, dict):
        return f"expected an object, got {type(rule).__name__}"
    if not isinstance(rule.get("pathPattern"), str) or not rule["pathPattern"].strip():
        return "needs a 'pathPattern'"
    must, must_not = rule.get("mustExist") is True, rule.get("mustNotExist") is True
    if must == must_not:
        return "needs exactly one of mustExist: true or mustNotExist: true"
    tools = rule.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, str) for t in tools)
    ):
        return "'tools' must be a list of tool names"
    return None


def check_preconditions(
    config: Config, tool: str, args: Any, *, base_dir: str | Path | None = None
) -> PreconditionDecision:
    """Decide one tool call against `validation.preconditions`; never raises."""
    errors: list[str] = []
    try:
        rules = config.validation.preconditions
        paths = paths_in_args(args)
        if not rules or not paths:
            return PreconditionDecision(True)
        base = Path(os.path.normpath(Path(base_dir or os.getcwd()).expanduser().absolute()))
        folded_tool = str(tool).casefold()
        for index, rule in enumerate(rules):
            name = (
                str(rule.get("id") or f"precondition#{index}")
                if isinstance(rule, dict)
                else f"precondition#{index}"
            )
            problem = _rule_problem(rule)
            if problem is not None:
                errors.append(f"{name}: {problem}; skipped")
                continue
            tools = rule.get("tools")
            if tools and folded_tool not in {t.casefold() for t in tools}:
                continue
            pattern = rule["pathPattern"].strip()
            for raw in paths:
                absolute, relative, full = _forms(raw, base)
                target = full if pattern.startswith("/") else relative
                if not glob_match(pattern, target):
                    continue
                exists = absolute.exists()
                if rule.get("mustExist") is True and not exists:
                    why = f"{relative} must already exist before {tool} (pattern {pattern})"
                elif rule.get("mustNotExist") is True and exists:
                    why = f"{relative} must not exist before {tool} (pattern {pattern})"
                else:
                    continue
                custom = rule.get("reason")
                reason = (
                    f"precondition {name}: {custom if isinstance(custom, str) and custom else why}"
                )
                return PreconditionDecision(False, reason, name, tuple(errors))
    except Exception as exc:  # a broken rule must not stop the host's tool call
        errors.append(f"preconditions failed: {type(exc).__name__}: {exc}")
    return PreconditionDecision(True, errors=tuple(errors))
