"""Whether a text asks something: a question mark, a Chinese question word or particle,
or an English question opener. Shared by extraction (a question is no memory) and
retrieval (a stored statement holding all of a question's words answers it)."""

from __future__ import annotations

import re
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import per_text_cache

QUESTION_END: Final = lazy_compile(r"[?？]\s*[\"'”』」)）]*\s*$|[吗呢][\s。！!]*$")
ZH_QUESTION_WORDS: Final = lazy_compile(
    r"什么|怎么|为什么|如何|哪|是否|能不能|可不可以|有没有|请问"
)
# An English question begins with a question word or an auxiliary ("When did ...").
_EN_OPENER: Final = lazy_compile(
    r"^\W*(?:what|when|where|who|whom|whose|which|why|how|did|do|does|is|are|was|were|"
    r"can|could|will|would|should|has|have|had)\b",
    re.IGNORECASE,
)


@per_text_cache(maxsize=4_096)
def asks(text: str) -> bool:
    """True when `text` is a question: it ends as one, holds a Chinese question word, or
    begins with an English question word or auxiliary."""
    stripped = text.strip()
    return bool(
        QUESTION_END.search(stripped)
        or ZH_QUESTION_WORDS.search(stripped)
        or _EN_OPENER.search(stripped)
    )
