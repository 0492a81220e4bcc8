"""The settings reference: docs/settings.md's tables, written from the declarations.

`python -m lcm_core.config.reference --write` rewrites the part of the page between its
`<!-- settings -->` markers from `lcm_core.config.sections`; `--check` exits 1 when the
page differs from what the declarations give (`tox -e lint` runs it, and
tests/core/test_settings_reference.py does in the default environment). The prose around
the markers is the page's own and is left alone.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from lcm_core.config.declare import Limit, Section, Setting, declared
from lcm_core.config.sections import SECTIONS

PAGE: Final = Path("docs") / "settings.md"
COMMAND: Final = "python -m lcm_core.config.reference --write"
_START: Final = (
    "<!-- settings: written by `python -m lcm_core.config.reference --write` from "
    "lcm_core/config/sections.py; change a setting there, not in these tables -->"
)
_END: Final = "<!-- /settings -->"
_BLOCK: Final = re.compile(r"<!-- settings\b[^>]*-->\n.*?<!-- /settings -->", re.DOTALL)


def render(sections: Mapping[str, type[Section]] | None = None) -> str:
    """The generated block: one table per section, in declaration order, markers included."""
    lines = [_START, ""]
    for key, section in (SECTIONS if sections is None else sections).items():
        lines += [f"### {f'`{key}`' if key else 'Top level'}", "", _summary(section), ""]
        lines += ["| key | default | accepts | what it does |", "| --- | --- | --- | --- |"]
        lines += [_row(entry) for entry in declared(key, section)]
        lines.append("")
    lines.append(_END)
    return "\n".join(lines) + "\n"


def _summary(section: type) -> str:
    """A section's docstring summary without its "`key.*`: " lead."""
    first = inspect.cleandoc(section.__doc__ or "").split("\n\n")[0]
    text = re.sub(r"^`[\w.*]+`:\s*", "", " ".join(first.split()))
    return text[:1].upper() + text[1:]


def _row(entry: Setting) -> str:
    cells = [f"`{entry.path}`", f"`{_shown(entry.default)}`", _accepts(entry.limit), entry.help]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _shown(value: Any) -> str:
    """A default as a user writes it: JSON for flags, lists and the empty string."""
    if isinstance(value, bool | list) or value == "":
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _accepts(limit: Limit) -> str:
    if limit.choices is not None:
        return "one of " + ", ".join(f"`{choice}`" for choice in limit.choices)
    if limit.kind is bool:
        return "true or false"
    if limit.kind is list:
        return "a list"
    if limit.kind is str:
        return "a string"
    kind = "a number" if isinstance(limit.kind, tuple) else "an integer"
    if limit.low is None or limit.high is None:
        return kind
    return f"{kind}, {_number(limit.low)} to {_number(limit.high)}"


def _number(value: float) -> str:
    """A bound as the docs write numbers: `5 000 000` for an integer, `0.5` for a float."""
    if isinstance(value, int):
        return f"{value:,}".replace(",", " ")
    return f"{value:g}"


def refreshed(page_text: str) -> str:
    """The page with its generated block replaced by what the declarations give now."""
    if not _BLOCK.search(page_text):
        raise ValueError(f"{PAGE}: no <!-- settings --> ... <!-- /settings --> block")
    return _BLOCK.sub(lambda _: render().rstrip("\n"), page_text, count=1)


def main(argv: list[str] | None = None) -> int:
    """`--check`: 1 when docs/settings.md is stale; `--write`: bring it up to date."""
    return page_command(
        argv, PAGE, refreshed, COMMAND, "lcm_core/config/sections.py", "lcm_core.config.reference"
    )


def page_command(
    argv: list[str] | None,
    page: Path,
    refresh: Callable[[str], str],
    command: str,
    source: str,
    prog: str,
) -> int:
    """A generated page's `--check` (exit 1 when stale) or `--write`, for any such page."""
    parser = argparse.ArgumentParser(prog=prog, description=f"{page}: written from {source}")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the page's tables")
    parser.add_argument("--page", type=Path, default=page, help=f"the page ({page})")
    args = parser.parse_args(argv)
    try:
        text = args.page.read_text(encoding="utf-8")
        wanted = refresh(text)
    except (OSError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if args.write:
        if wanted != text:
            args.page.write_text(wanted, encoding="utf-8")
        return 0
    if wanted != text:
        print(f"{args.page} is out of date with {source}; run: {command}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
