"""Chinese: particles and function characters whose bigrams carry no topic.

The word lists are package data (`data/zh.json`, read and checked by
`lcm_core.text.languages.vocabulary` at import); the rule that uses them is code.
"""

from __future__ import annotations

from typing import Final

from lcm_core.text.languages.vocabulary import WordFile

_FILE: Final = WordFile.read("zh.json")

# A bigram holding one of these straddles a word edge or is grammar.
PARTICLES: Final[frozenset[str]] = _FILE.chars("particles")
# Pronoun and function pieces: a bigram made only of these carries no topic.
FUNCTION_CHARS: Final[frozenset[str]] = _FILE.chars("function_chars")
# Words that speak of another day than the one they are said on (昨天 said on the 30th
# is the 29th).
RELATIVE_DAYS: Final[dict[str, int]] = _FILE.day_offsets("relative_days")
# Question and filler words, as whole bigrams.
STOP_BIGRAMS: Final[frozenset[str]] = frozenset(_FILE.words("stop_bigrams"))


def is_stop_bigram(gram: str) -> bool:
    """True for a CJK bigram that says nothing about a topic: a stop word, one that starts
    with a particle (了个, 的是), or one made only of function characters and particles.

    A word followed by a particle keeps its bigram (报了, 目的): the particle marks aspect
    or possession, and dropping the bigram lost the word ("张磊报了哪些班？" had no term
    but the name left).
    """
    return (
        gram in STOP_BIGRAMS
        or gram[0] in PARTICLES
        or all(ch in FUNCTION_CHARS or ch in PARTICLES for ch in gram)
    )


# Pieces that make a question ask about a rule, limit or liking (see `en.NORM_CUES`),
# matched as substrings.
NORM_CUES: Final[tuple[str, ...]] = _FILE.words("norm_cues")
