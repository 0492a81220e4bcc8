"""Claude Code's context size as its environment and hook input say it -> HostWindow.

A hook runs in Claude Code's environment, so what the user set there is read as is:
`CLAUDE_CODE_AUTO_COMPACT_WINDOW` (the window auto-compaction works in, in tokens) and
`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (the percentage of it at which Claude Code compacts).
Without the first, the window follows the model (the hook input's `model`, else
`ANTHROPIC_MODEL`): a `[1m]` suffix is the 1M window, any other model Claude Code's
default 200 000. Nothing said about either gives None: the budget stays the setting.
Malformed values are ignored; nothing here raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from lcm_core.assembly.budget import HostWindow

WINDOW_VAR: Final = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
PERCENT_VAR: Final = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
MODEL_VAR: Final = "ANTHROPIC_MODEL"
DEFAULT_WINDOW: Final = 200_000
LONG_WINDOW: Final = 1_000_000
LONG_SUFFIX: Final = "[1m]"


def claude_host_window(environ: Mapping[str, str], payload: Mapping[str, Any]) -> HostWindow | None:
    """The host window a hook call can read; None when Claude Code says nothing of it."""
    model = _model(payload) or environ.get(MODEL_VAR, "").strip()
    window = _whole(environ.get(WINDOW_VAR))
    percent = _percent(environ.get(PERCENT_VAR))
    said: list[str] = []
    if window is not None:
        said.append(WINDOW_VAR)
    elif model.lower().endswith(LONG_SUFFIX):
        window = LONG_WINDOW
        said.append(model)
    elif model or percent is not None:
        window = DEFAULT_WINDOW
        said.append(f"{model}, default window" if model else "default window")
    else:
        return None
    compact_at = None
    if percent is not None:
        compact_at = math.floor(window * percent / 100) or None
        said.append(f"{PERCENT_VAR} {percent:g}")
    source = f"Claude Code ({'; '.join(said)})"
    return HostWindow(context_tokens=window, compact_at_tokens=compact_at, source=source)


def _model(payload: Mapping[str, Any]) -> str:
    """The model id of the hook input (a string, or an object with an `id`)."""
    value = payload.get("model")
    if isinstance(value, Mapping):
        value = value.get("id")
    return value.strip() if isinstance(value, str) else ""


def _whole(text: str | None) -> int | None:
    """A positive token count written as a whole number ("200000", "200_000")."""
    if not text:
        return None
    cleaned = text.strip().replace("_", "")
    if not cleaned.isdigit():
        return None
    value = int(cleaned)
    return value if value > 0 else None


def _percent(text: str | None) -> float | None:
    """A percentage above 0 and at most 100."""
    if not text:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 < value <= 100 else None
