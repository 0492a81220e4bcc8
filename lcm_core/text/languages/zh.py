"""Chinese: particles and function characters whose bigrams carry no topic."""

from __future__ import annotations

from typing import Final

# A bigram holding one of these straddles a word edge or is grammar.
PARTICLES: Final[frozenset[str]] = frozenset("的了吗呢吧啊呀哦嘛")
# Pronoun and function pieces: a bigram made only of these carries no topic.
FUNCTION_CHARS: Final[frozenset[str]] = frozenset(
    "么是在和与及或也都就还又很我你他她它们这那个些哪什怎样"
)
# Words that speak of another day than the one they are said on (昨天 said on the 30th
# is the 29th).
RELATIVE_DAYS: Final[dict[str, int]] = {
    "前天": -2,
    "昨天": -1,
    "昨晚": -1,
    "昨日": -1,
    "后天": 2,
    "明天": 1,
    "明晚": 1,
    "明日": 1,
}
# Question and filler words, as whole bigrams.
STOP_BIGRAMS: Final[frozenset[str]] = frozenset(
    [
        "什么",
        "怎么",
        "为何",
        "是否",
        "多少",
        "哪里",
        "哪个",
        "哪些",
        "如何",
        "请问",
        "一下",
        "可以",
        "能否",
        "之前",
        "说过",
        "提到",
        "记得",
    ]
)


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


# Pieces that make a question ask about a rule, limit or liking (see `en.NORM_CUES`).
NORM_CUES: Final[tuple[str, ...]] = (
    "不能",
    "不可以",
    "可以",
    "应该",
    "不要",
    "别",
    "千万",
    "偏好",
    "喜欢",
    "禁止",
    "只能",
    "改喝",
    "上限",
    "最多",
    "最少",
    "不超过",
)
