"""The profile patch that loads the plugin: rendered, and merged into a user's patch file.

A DSH profile's user layer, `$DSH_HOME/profiles/<profile>/cordis.patch.yml`, is a YAML
list that people edit by hand. We own one block in it, fenced by two marker comments,
and touch nothing else: a rerun replaces the block, a fresh file gets one, an empty
`[]` list becomes the block. Anything we cannot edit safely by text (a non-empty flow
list, or an unfenced row with our id) is refused with one clear line. Strings are
written as JSON, which YAML reads as double-quoted scalars, so no YAML library is
needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lcm_adapter.files import write_text_atomic

ROW_ID: Final = "long-conversation-memory"
BEGIN: Final = f"# >>> {ROW_ID}: managed by `lcm dsh install`; rerun it rather than editing"
END: Final = f"# <<< {ROW_ID}"
PATCH_FILE: Final = "cordis.patch.yml"
COMMANDS_PACKAGE: Final = "@deepseek-ai/dsh-commands"
# Inside our block when it took the place of a fresh profile's empty list, so that
# `lcm dsh uninstall` can put the list back.
REPLACED_EMPTY: Final = "# (this block replaced the profile's empty list; uninstall restores it)"
_NEW_FILE_HEADER: Final = (
    "# Your patch layer for this dsh profile, applied after every bundle layer.\n"
)
_OUR_ROW: Final = re.compile(rf"^\s*(-\s+)?id:\s*[\"']?{re.escape(ROW_ID)}[\"']?\s*$")
_EMPTY_FLOW: Final = re.compile(r"^\s*\[\s*\]\s*(#.*)?$")


class PatchError(ValueError):
    """The existing patch file cannot be edited safely; the message says why."""


@dataclass(frozen=True, slots=True)
class PluginRow:
    """What the patch row says: the plugin file, the Python to run, the database."""

    plugin: Path
    python: str
    db: str | None = None
    with_commands: bool = False
    settings: Mapping[str, Any] | None = None


def patch_path(dsh_home: Path, profile: str) -> Path:
    """`<dsh_home>/profiles/<profile>/cordis.patch.yml`; the profile name must be plain."""
    if not profile or profile in (".", "..") or "/" in profile or "\\" in profile:
        raise PatchError(f"invalid profile name {profile!r}")
    return dsh_home / "profiles" / profile / PATCH_FILE


def render_block(row: PluginRow) -> str:
    """Our fenced block: one `insert` entry, plus the commands service when asked."""
    lines = [BEGIN, "- insert:"]
    if row.with_commands:
        lines += ["    - id: commands", f"      name: {json.dumps(COMMANDS_PACKAGE)}"]
    lines += [
        f"    - id: {ROW_ID}",
        f"      name: {json.dumps(str(row.plugin), ensure_ascii=False)}",
        "      config:",
        f"        python: {json.dumps(row.python, ensure_ascii=False)}",
    ]
    if row.db:
        lines.append(f"        db: {json.dumps(row.db, ensure_ascii=False)}")
    if row.settings:
        # JSON is a YAML flow mapping; sorted keys keep a rerun byte-identical.
        text = json.dumps(dict(row.settings), ensure_ascii=False, sort_keys=True)
        lines.append(f"        settings: {text}")
    lines.append(END)
    return "\n".join(lines) + "\n"


def _content_lines(text: str) -> list[str]:
    """The lines that are neither blank nor comments."""
    return [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def merge(existing: str | None, block: str) -> str:
    """The patch file with our block in it; raises `PatchError` when that is unsafe."""
    if existing is None or not existing.strip():
        return _NEW_FILE_HEADER + block
    lines = existing.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == END]
    if starts or ends:
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            raise PatchError(
                "the lcm block markers in the patch file are damaged; fix them by hand"
            )
        _refuse_foreign_row(lines, skip=range(starts[0], ends[0] + 1))
        old_block = lines[starts[0] : ends[0] + 1]
        if any(line.rstrip("\r\n") == REPLACED_EMPTY for line in old_block):
            block = _marked(block)
        return "".join(lines[: starts[0]]) + block + "".join(lines[ends[0] + 1 :])
    _refuse_foreign_row(lines)
    content = _content_lines(existing)
    if not content:
        return _with_newline(existing) + block
    if len(content) == 1 and _EMPTY_FLOW.match(content[0]):
        # `[]` is the empty list a fresh profile holds; our block list replaces it.
        index = next(i for i, line in enumerate(lines) if _EMPTY_FLOW.match(line))
        return "".join(lines[:index]) + _marked(block) + "".join(lines[index + 1 :])
    if not content[0].startswith("-"):
        raise PatchError(
            "the patch file is not a block-style YAML list (`- ...` rows); add the lcm row by hand "
            "(see `lcm dsh install --print`)"
        )
    return _with_newline(existing) + block


def _marked(block: str) -> str:
    return block.replace(BEGIN + "\n", f"{BEGIN}\n{REPLACED_EMPTY}\n", 1)


def unmerge(existing: str) -> str | None:
    """The patch file without our block: what `install` added, and only that.

    None when the file holds nothing but what `install` wrote into a new file (the
    caller removes the file); a block that replaced the empty list `[]` gives it back.
    The text comes back unchanged when there is no block; damaged markers raise.
    """
    lines = existing.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == END]
    if not starts and not ends:
        return existing
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise PatchError("the lcm block markers in the patch file are damaged; fix them by hand")
    block = lines[starts[0] : ends[0] + 1]
    restored = "[]\n" if any(line.rstrip("\r\n") == REPLACED_EMPTY for line in block) else ""
    rest = "".join(lines[: starts[0]]) + restored + "".join(lines[ends[0] + 1 :])
    return None if rest == _NEW_FILE_HEADER else rest


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _refuse_foreign_row(lines: list[str], skip: range = range(0)) -> None:
    for index, line in enumerate(lines):
        number = index + 1
        if index in skip:
            continue
        if _OUR_ROW.match(line.rstrip("\r\n")) and not line.lstrip().startswith("#"):
            raise PatchError(
                f"line {number} of the patch file already has an unmanaged `{ROW_ID}` row; "
                "remove it, then rerun `lcm dsh install`"
            )


def write_patch(path: Path, text: str) -> bool:
    """Write atomically, keeping the old file's mode; False when nothing changed."""
    return write_text_atomic(path, text)
