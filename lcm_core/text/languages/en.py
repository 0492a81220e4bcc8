"""English: function words, question words and chat filler that say nothing about a topic.

The word lists are package data (`data/en.json`, read and checked by
`lcm_core.text.languages.vocabulary` at import); the pattern pieces are code.
"""

from __future__ import annotations

from typing import Final

from lcm_core.text.languages.vocabulary import WordFile

_FILE: Final = WordFile.read("en.json")

STOP_WORDS: Final[frozenset[str]] = frozenset(_FILE.words("stop_words", lower=True))

# Where an English word starts and ends in a pattern: `\b` fails between Han and Latin.
WORD_START: Final = r"(?<![A-Za-z])"
WORD_END: Final = r"(?![A-Za-z])"

# Words for another day than the one they are said on, and which day (-1: the day before).
RELATIVE_DAYS: Final[dict[str, int]] = _FILE.day_offsets("relative_days")

# Clitics cut off a word before it is matched, the first that fits: Anna's -> anna.
CLITICS: Final[tuple[str, ...]] = _FILE.words("clitics", lower=True)

# Words that make a question ask about a rule, limit or liking rather than an event.
NORM_CUES: Final[frozenset[str]] = frozenset(_FILE.words("norm_cues", lower=True))
