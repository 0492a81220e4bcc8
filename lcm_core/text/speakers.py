"""Who said a turn when a conversation is written as a chat log ("Emi: hey", "小明：好的").

People paste and keep conversations in that form, and multi-person transcripts are
stored that way: the speaker's name heads the turn. `speaker_of` reads that name;
`writes_names` and `chat_speakers` say which names are really speakers, not a "Note:",
"Error:" or "注意：" that heads an odd message: only turns more than half of which begin
with a name are written in that convention (the caller asks it of a sample that does not
depend on the question: a question about errors pools the "Error:" turns), and only a
name that heads more than one turn is a speaker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import per_text_cache

# A name of one to three words (letters first, no digits: "10:30" is a time), then a
# colon: an ASCII one followed by a space (not "http://"), or the full-width one.
_NAME: Final = r"[^\W\d_][\w'.-]{0,23}"
SPEAKER_RE: Final = lazy_compile(rf"\s*({_NAME}(?: {_NAME}){{0,2}})\s*(?::\s|：)")
# The share of turns that must begin with a name for the turns to be a chat log.
CHAT_LOG_SHARE: Final = 0.5
# A name must head at least this many of those turns to be a speaker.
SPEAKER_MIN_TURNS: Final = 2


@per_text_cache(maxsize=65_536)
def speaker_of(text: str) -> str | None:
    """The name that heads this turn ("Emi: ..." -> "Emi"), or None."""
    found = SPEAKER_RE.match(text)
    return found.group(1) if found else None


def writes_names(texts: Iterable[str]) -> bool:
    """True for a chat log: more than half of these turns begin with a name, and two
    names or more head several of them (a conversation has two sides; three "Error:"
    lines in a row are no conversation)."""
    heads = [speaker_of(text) for text in texts]
    named = [name for name in heads if name is not None]
    return len(named) > CHAT_LOG_SHARE * len(heads) and len(_repeated(named)) >= 2


def chat_speakers(texts: Iterable[str]) -> frozenset[str]:
    """The names that head more than one of these turns."""
    return _repeated(name for text in texts if (name := speaker_of(text)) is not None)


def _repeated(names: Iterable[str]) -> frozenset[str]:
    counts = Counter(names)
    return frozenset(name for name, count in counts.items() if count >= SPEAKER_MIN_TURNS)
