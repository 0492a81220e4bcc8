"""English: function words, question words and chat filler that say nothing about a topic."""

from __future__ import annotations

from typing import Final

# Generic English function words and conversational filler, not fitted to any data set.
_STOP_TEXT: Final = """
    a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't down during each else ever few for from further get gets
    got had hadn't has hasn't have haven't having he he'd he's her here here's hers herself
    him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let let's like me more most much must mustn't my myself no nor not now of off ok
    okay on once one only or other ought our ours ourselves out over own please same shall
    shan't she she'd she's should shouldn't so some still such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've
    this those though through thus to too under until up upon us very was wasn't we we'd
    we'll we're we've were weren't what what's when when's where where's whether which
    while who who's whom whose why why's will with won't would wouldn't yeah yes yet you
    you'd you'll you're you've your yours yourself yourselves hi hey hello thanks thank
    oh um uh hmm really maybe again tell know remember recall said say says mentioned
"""
STOP_WORDS: Final[frozenset[str]] = frozenset(_STOP_TEXT.split())

# Where an English word starts and ends in a pattern: `\b` fails between Han and Latin.
WORD_START: Final = r"(?<![A-Za-z])"
WORD_END: Final = r"(?![A-Za-z])"

# Words that speak of another day than the one they are said on, and which day:
# "Yesterday we made pasta", said on the 30th, is about the 29th.
RELATIVE_DAYS: Final[dict[str, int]] = {
    "the day before yesterday": -2,
    "yesterday": -1,
    "last night": -1,
    "the day after tomorrow": 2,
    "tomorrow": 1,
}

# Clitics cut off a word before it is matched: Anna's -> anna, they're -> they.
CLITICS: Final = ("'s", "'re", "'ve", "'ll", "'d", "'m", "n't")

# Words that make a question ask about a rule, limit or liking rather than an event:
# "what should I avoid", "how early can ...", "what do I have instead of ...".
NORM_CUES: Final[frozenset[str]] = frozenset(
    [
        "should",
        "shouldn't",
        "can",
        "can't",
        "cannot",
        "avoid",
        "instead",
        "prefer",
        "preferred",
        "allowed",
        "never",
        "always",
        "must",
        "mustn't",
        "rather",
        "limit",
        "maximum",
        "minimum",
    ]
)
