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

import difflib
import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Final

from lcm_core.text.languages.en import STOP_WORDS
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


# A question's Latin name-like words: a capital, then letters ("Kate", "Muhammad").
_NAME_WORD_RE: Final = lazy_compile(r"\b[A-Z][a-z]{2,23}\b")
# How alike a question's name must be to a speaker's to be a spelling of it (difflib's
# ratio, same first letter): "Muhammad" for "Muhhamed" and "Aqib" for "Akib" are 0.75,
# "Kate" for "Emi" 0.29.
SPELLING_RATIO: Final = 0.75
# A name said to someone, not of someone: after a greeting or thanks ("Hey Kate!",
# "谢谢红红"), between a comma and a mark ("…, Kate?"), or opening a message ("Kate, …",
# "红红，…"). The group is the name.
_LATIN: Final = r"([A-Z][a-z]{2,23})"
_HAN: Final = r"([\u4e00-\u9fff]{2,3})"
_HAN_RE: Final = lazy_compile(_HAN)
_VOCATIVE_RES: Final = (
    lazy_compile(
        rf"\b(?i:hi|hey|hello|thanks|thank you|bye|dear|morning|night|wow|oh|yes|to you),?\s+{_LATIN}\b"
    ),
    lazy_compile(rf",\s*{_LATIN}\s*[!?]"),
    lazy_compile(rf"^[^:：]{{1,30}}[:：]\s*{_LATIN},"),
    lazy_compile(rf"(?:嗨|你好|谢谢|哈喽|嘿|早安|晚安)[，,]?\s*{_HAN}(?=[，,！!。？?])"),
    lazy_compile(rf"^[^:：]{{1,30}}[:：]\s*{_HAN}[，,！!]"),
)
# Words a greeting is followed by that name no one: pronouns and "everyone".
_NOT_NAMES: Final = frozenset({"你们", "大家", "您们", "各位", "你啊", "你呀"})
# Times a name must be said to one speaker to be that speaker's name, and the share of
# them the other speaker must have said ("I'm Kate", said once by Emi herself, is not).
VOCATIVE_MIN: Final = 3
VOCATIVE_SHARE: Final = 0.9


@per_text_cache(maxsize=65_536)
def _vocatives(text: str) -> tuple[str, ...]:
    """The names this turn says to someone ("elise: Hey Kate!" -> "Kate")."""
    found = [m.group(1) for pattern in _VOCATIVE_RES for m in pattern.finditer(text)]
    return tuple(name for name in found if name not in _NOT_NAMES)


def named_speakers(
    question: str, texts: Iterable[str], speakers: Collection[str]
) -> frozenset[str]:
    """The speakers a question names by another name than the one heading their turns.

    Another spelling ("Muhammad" for "Muhhamed"), or, in a chat log of two speakers, the
    name one of them calls the other by: "Hey Kate!" and "Thanks Kate" said only by elise
    make "Kate" Emi's name. People type a friend's name, not the handle of the log.
    """
    firsts = {speaker: speaker.split()[0].casefold() for speaker in speakers}
    own = {word.casefold() for speaker in speakers for word in speaker.split()}
    found: set[str] = set()
    for word in sorted(set(_NAME_WORD_RE.findall(question))):
        folded = word.casefold()
        if folded in own or folded in STOP_WORDS:
            continue
        found.update(
            speaker
            for speaker, first in firsts.items()
            if first[0] == folded[0]
            and difflib.SequenceMatcher(None, folded, first).ratio() >= SPELLING_RATIO
        )
    if len(speakers) != 2:
        return frozenset(found)
    calls: dict[str, Counter[str]] = {}
    for text in texts:
        head = speaker_of(text)
        if head in firsts:
            for name in _vocatives(text):
                calls.setdefault(name, Counter())[head] += 1
    for name, by in sorted(calls.items()):
        if name.casefold() in own or not _says_name(question, name):
            continue
        caller, count = by.most_common(1)[0]
        if count >= VOCATIVE_MIN and count >= VOCATIVE_SHARE * sum(by.values()):
            found.update(speaker for speaker in speakers if speaker != caller)
    return frozenset(found)


def may_name(question: str) -> bool:
    """True when a question holds a word that could be a name (a capitalised word, Han)."""
    return bool(_NAME_WORD_RE.search(question) or _HAN_RE.search(question))


def _says_name(question: str, name: str) -> bool:
    """True when the question holds `name`: as a word (Latin), or anywhere (Chinese)."""
    if name.isascii():
        return re.search(rf"\b{re.escape(name)}\b", question) is not None
    return name in question
