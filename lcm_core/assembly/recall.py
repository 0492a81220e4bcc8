"""Whether a step asks about the conversation's past: what was said, decided or set.

Only such a step earns the insufficient-evidence statement when memory holds nothing
for it; a step that merely works on ("let's look at the next file") does not, or the
host's history fills with blocks that say only that there is no evidence. The test is
deliberately plain: a recall request ("remind me", "提醒我"), or a question (a question
mark or an interrogative word) that carries a past or reference cue ("did we", "last
time", "之前", "说过", "定的"). Chinese and English alike; no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from lcm_core.extraction.clauses import sentences
from lcm_core.extraction.correct import correction_cue
from lcm_core.retrieval.ranked import Omission
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.query import numbers_in
from lcm_core.text.tokens import per_text_cache

# Asking for what memory should hold, question or not.
_RECALL_RE: Final = lazy_compile(
    r"\b(?:remind me|do you remember|you remember|recall|what we (?:said|decided|agreed|set)"
    r"|as (?:we|i) (?:said|discussed|agreed))\b"
    r"|提醒我|还记得|你记得|回忆一下|我们(?:之前|刚才|上次)?(?:说|定|约定|决定|商量)的",
    re.IGNORECASE,
)
_QUESTION_RE: Final = lazy_compile(
    r"[?？]|\b(?:what|which|when|where|who|whom|whose|why|how|did|was|were|had|is|are|do|does)\b"
    r"|什么|多少|哪|谁|几|吗|呢|怎么|是否|有没有",
    re.IGNORECASE,
)
# Words that point back at earlier turns or at something the user set.
_PAST_RE: Final = lazy_compile(
    r"\b(?:did|was|were|had|earlier|before|previously|last time|ago|again|already|"
    r"decided|agreed|said|told|mentioned|set|picked|chose|chosen|settled|promised|"
    r"discussed|noted|asked|our|we)\b"
    r"|之前|以前|先前|刚才|上次|上回|当时|原来|早先|过去|说过|提过|提到|讲过|定过|定的|"
    r"决定|约定|商量|设定|要求过|来着|我们的|咱们",
    re.IGNORECASE,
)


def asks_about_past(text: str) -> bool:
    """True when the step asks what was said, decided or set earlier in the conversation."""
    if not text or not text.strip():
        return False
    if _RECALL_RE.search(text):
        return True
    return bool(_QUESTION_RE.search(text)) and bool(_PAST_RE.search(text))


@per_text_cache(maxsize=1024)  # every step of a turn asks it of the same message
def replaced_values(text: str) -> tuple[str, ...]:
    """Numbers the step's own text says are replaced: "6432" in "5433, not 6432".

    The host may append the user's message to its log only after the step's pre-step
    ran, so extraction has not yet superseded the old item; the block must still not
    show the value the user is correcting as current. Only numbers count: a replaced
    word ("instead of Redis") may be named by other, still valid items.
    """
    found: list[str] = []
    for sentence in sentences(text or ""):
        cue = correction_cue(sentence)
        for value in cue.replaced if cue is not None else ():
            found.extend(n for n in numbers_in(value) if n not in found)
    return tuple(found)


def mentions(text: str, numbers: tuple[str, ...]) -> str | None:
    """The first of `numbers` that `text` holds as a whole number ("6432", not "64320")."""
    held = set(numbers_in(text))
    return next((n for n in numbers if n in held), None)


@dataclass(slots=True)
class HeldBack:
    """Keeps entries whose content holds a replaced number out, with the reason why."""

    replaced: tuple[str, ...]
    omitted: list[Omission] = field(default_factory=list)

    def __call__(self, section: str, ref: str, content: str) -> bool:
        """True when the entry may be shown; otherwise its omission is recorded."""
        value = mentions(content, self.replaced) if self.replaced else None
        if value is not None:
            reason = f"holds {value}, which this step's own message replaces"
            self.omitted.append(Omission(section, ref, reason))
        return value is None
