"""The extraction's word lists as package data: loading a file and compiling a word list.

Vocabulary lives in `lcm_core/extraction/data/*.json` (one object per file, an `about`
string saying what it is for), so adding a word is a data change a test can check, not
a code change.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from lcm_core.text.lazy_regex import Regex, lazy_compile


@lru_cache(maxsize=8)
def load(name: str) -> dict[str, Any]:
    """The data file `name` (e.g. `standing_rules.json`), parsed once; it must be an object
    with an `about` string."""
    text = resources.files("lcm_core.extraction").joinpath("data", name).read_text("utf-8")
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("about"), str):
        raise ValueError(f"{name}: expected a JSON object with an 'about' string")
    return data


def words_pattern(entry: dict[str, Any]) -> Regex:
    """One pattern for a word list: Latin-script words (of either list) and `en_re`
    patterns at word bounds, other `zh` words and `zh_re` patterns anywhere; longer words are tried
    first. Case is ignored."""
    words = [w for w in (*entry.get("en", ()), *entry.get("zh", ())) if w]
    # A Latin word in a Chinese list ("print" among 打印调试) is still a word: "sprint" is
    # no print.
    english = sorted((w for w in words if w.isascii()), key=len, reverse=True)
    chinese = sorted((w for w in words if not w.isascii()), key=len, reverse=True)
    parts = [rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])" for w in english]
    parts += [rf"(?<![A-Za-z])(?:{w})(?![A-Za-z])" for w in entry.get("en_re", ())]
    parts += [re.escape(w) for w in chinese]
    parts += [f"(?:{w})" for w in entry.get("zh_re", ())]
    return lazy_compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)
