"""docs/ranking.md's generated part: the formula (`scoring`'s docstring) and the signals table.

`python -m lcm_core.retrieval.reference --write` rewrites the page between its
`<!-- ranking -->` markers; `--check` exits 1 when it differs (`tox -e lint` runs it, and
tests/core/test_ranking_reference.py does). The prose around the markers is the page's own.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Final

from lcm_core.config.declare import camel, declared
from lcm_core.config.reference import page_command
from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval import lifts, project, retriever, scoring
from lcm_core.retrieval.signals import SIGNALS, STAGES
from lcm_core.text import relevance, tokens

PAGE: Final = Path("docs") / "ranking.md"
COMMAND: Final = "python -m lcm_core.retrieval.reference --write"
SOURCE: Final = "lcm_core/retrieval/scoring.py and signals.py"
_START: Final = (
    f"<!-- ranking: written by `{COMMAND}` from {SOURCE}; change them, not this part -->"
)
_END: Final = "<!-- /ranking -->"
_BLOCK: Final = re.compile(r"<!-- ranking\b[^>]*-->\n.*?<!-- /ranking -->", re.DOTALL)


# The constants the formula names, and where each is declared: the page shows their values.
CONSTANTS: Final = (
    (retriever, ("TURN_POOL", "ITEM_POOL", "CONTEXT_POOL", "EPISODE_SEQS")),
    (relevance, ("IDF_FLOOR", "MIN_SCOPE_ROWS", "BRIDGE_WEIGHT", "CONCEPT_WEIGHT")),
    (tokens, ("BM25_K1", "BM25_B")),
    (lifts, ("CHAT_LOG_WINDOW",)),
    (project, ("PROJECT_FACTOR", "ITEMS_PER_SESSION")),
    (
        scoring,
        (
            "KIND_PRIOR",
            "EVIDENCE_PRIOR",
            "UNKNOWN_PRIOR",
            "EXACT_HITS_CAP",
            "SUPERSESSION_PENALTY",
            "FLOOR_BUDGET_TOKENS",
            "FLOOR_RATIO_CAP",
        ),
    ),
)


def render() -> str:
    """The generated block: the formula, the signals by stage, then the constants."""
    defaults = {
        entry.attribute: entry.default for entry in declared("retrieval", RetrievalSettings)
    }
    lines = [_START, "", "## The formula", "", inspect.getdoc(scoring) or "", ""]
    lines += ["## The signals", ""]
    lines += [f"- **{stage}**: {what}" for stage, what in STAGES.items()]
    lines += ["", "| signal | stage | moves | setting (default) | what it does | switched off |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for signal in sorted(SIGNALS, key=lambda s: list(STAGES).index(s.stage)):
        setting = (
            f"`retrieval.{camel(signal.setting)}` ({defaults[signal.setting]})"
            if signal.setting
            else "none"
        )
        cells = [f"`{signal.name}`", signal.stage, signal.applies, setting, signal.does, signal.off]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", "## The constants", "", "| constant | value | declared in |"]
    lines.append("| --- | --- | --- |")
    for module, names in CONSTANTS:
        for name in names:
            value = getattr(module, name)
            shown = (
                ", ".join(f"{k} {v}" for k, v in value.items())
                if isinstance(value, dict)
                else value
            )
            lines.append(f"| `{name}` | {shown} | `{module.__name__}` |")
    lines += ["", _END]
    return "\n".join(lines) + "\n"


def refreshed(page_text: str) -> str:
    """The page with its generated block replaced by what the declarations give now."""
    if not _BLOCK.search(page_text):
        raise ValueError(f"{PAGE}: no <!-- ranking --> ... <!-- /ranking --> block")
    return _BLOCK.sub(lambda _: render().rstrip("\n"), page_text, count=1)


def main(argv: list[str] | None = None) -> int:
    """`--check`: 1 when docs/ranking.md is stale; `--write`: bring it up to date."""
    return page_command(argv, PAGE, refreshed, COMMAND, SOURCE, "lcm_core.retrieval.reference")


if __name__ == "__main__":
    sys.exit(main())
