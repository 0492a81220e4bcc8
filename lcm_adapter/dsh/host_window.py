"""DSH's context size as the plugin reads it (model window, compaction settings) -> HostWindow.

The plugin sends what DSH says, unchanged: the routed model's `contextWindow` and
`defaultMaxTokens`, the request's `maxTokens`, and the compaction service's `auto`,
`thresholdRatio` and `headroomTokens` (a per-model policy already applied). The
threshold is worked out the way `dsh-compaction-basic` 0.2.1 does it: `floor(min(window
x thresholdRatio, window - reserved output - headroom))`. Anything missing or malformed
leaves that figure out; nothing here raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from lcm_core.assembly.budget import HostWindow

# DSH's compaction engines by class name, as its patch files name their rows.
_ENGINES: Final = {"BasicCompactionEngine": "compaction-basic"}


def dsh_host_window(facts: Any) -> HostWindow | None:
    """The host window of one pre-step's `host` facts; None when DSH said nothing usable."""
    if not isinstance(facts, Mapping):
        return None
    window = _count(facts.get("contextWindow"))
    if window is None:
        return None
    compaction = facts.get("compaction")
    threshold = None
    engine = "DSH"
    if isinstance(compaction, Mapping) and compaction.get("auto") is not False:
        ratio = _ratio(compaction.get("thresholdRatio"))
        if ratio is not None:
            reserved = _count(facts.get("maxTokens")) or _count(facts.get("defaultMaxTokens")) or 0
            headroom = _count(compaction.get("headroomTokens")) or 0
            by_ratio = window * ratio
            pressure = window - reserved - headroom
            threshold = math.floor(min(by_ratio, pressure) if pressure > 0 else by_ratio)
            name = compaction.get("engine")
            name = _ENGINES.get(name, name) if isinstance(name, str) and name else "compaction"
            engine = f"DSH {name}"
    model = facts.get("model")
    source = f"{engine} ({model})" if isinstance(model, str) and model else engine
    return HostWindow(context_tokens=window, compact_at_tokens=threshold or None, source=source)


def _ratio(value: Any) -> float | None:
    """A share above 0 and at most 1, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and 0 < value <= 1 else None


def _count(value: Any) -> int | None:
    """A positive whole number of tokens, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return None
