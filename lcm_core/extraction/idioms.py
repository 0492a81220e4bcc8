"""Rule words used in passing talk, blanked before a clause is read for a constraint.

People chatting say "always", "never", "must", "don't" and "should" all the time
without setting any rule: "that must have been exhausting", "my cousins always make me
laugh", "I don't know", "you should try it", "别担心", "他总是忘记带钥匙". Read as cues,
they made nine in ten lines of a chat between people a `constraint` (measured on the
chat corpus, `benchmarks/extraction_quality.py`), and the block then told the model
that chatter was a standing rule. Each pattern here is one such use; what it matches is
blanked, and the rest of the clause is read as before, so "Don't worry, and never leave
the trail after dark" still sets its rule.

Kept as rules on purpose: imperatives ("Always text me when you get home", "Never
commit to main"), modal rules ("uploads must stay under 5 GB", "every PR must have a
reviewer"), and rules phrased as how things are done ("releases are never cut from
main", "passwords are never logged").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from lcm_core.extraction.vocab import load, words_pattern
from lcm_core.text.languages import en
from lcm_core.text.lazy_regex import Regex, lazy_compile

_B: Final = en.WORD_START
_E: Final = en.WORD_END
_PEOPLE: Final = r"(?:i|we|you|they|he|she|it|that|this|people|everyone|everybody|nobody)"
_OWNED: Final = r"(?:my|our|your|his|her|their|the)\s+[a-z]+"
# A past participle: "are never logged / cut / sent" states a rule as practice.
_PARTICIPLE: Final = (
    r"(?:[a-z]+(?:ed|en|wn)|cut|set|put|run|made|kept|sent|built|left|done|hit|shut|read|sold|"
    r"told|paid|held|found|spent|bought|brought|taught)"
)
# A contraction's apostrophe, straight or curly ("it's", "it’s").
_APOSTROPHES: Final = "'\u2019"
_A: Final = f"[{_APOSTROPHES}]"

# Each use is (words one of which it holds, the pattern): a clause is matched only against
# the patterns whose words it holds, so a step pays for a few short searches, not for
# every pattern at every position.
_Use = tuple[tuple[str, ...], str]
_MUST: Final = ("must",)
_SHOULD: Final = ("should",)
_NOT: Final = ("don", "do not", "didn", "did not", "never")
_OFTEN: Final = ("always", "never")
_STOP: Final = ("stop",)

_ENGLISH: Final[tuple[_Use, ...]] = (
    # Epistemic "must": a guess about what happened or how someone feels.
    (
        ("must", "should"),
        rf"(?:must|should)(?:{_A}ve|\s+have)\s+(?:been|[a-z]+(?:ed|en|wn|ght))",
    ),
    (_MUST, rf"must\s+(?:say|admit){_E}"),
    (
        _MUST,
        rf"(?:you|it|that|this|he|she|they)(?:{_A}re|{_A}s)?\s+must\s+be\s+(?:so|such|really|"
        r"very|pretty|quite|super|nice|fun|hard|tough|tiring|exhausting|tired|exciting|amazing|"
        r"great|lovely|wonderful|awesome|cool|interesting|difficult|stressful|scary|proud|happy|"
        rf"sad|relieved|excited|busy|crazy|beautiful){_E}",
    ),
    (_MUST, rf"(?:that|this)\s+must\s+be\s+(?:the|a|an|where|why|what|how){_E}"),
    # Not knowing, not minding, reassuring.
    (
        _NOT,
        rf"{_PEOPLE}\s+(?:don{_A}t|do not|didn{_A}t|did not|never)\s+(?:even\s+|usually\s+)?"
        rf"(?:know|knew|think|thought|remember|recall|understand|believe|mind|care|get|see|feel|"
        rf"expect|doubt|have|need|miss|want|wanna|mean|agree){_E}",
    ),
    # A hedge says how things are for the speaker: "I don't really eat fish".
    (
        _NOT,
        rf"{_PEOPLE}\s+(?:don{_A}t|do not|didn{_A}t|did not)\s+(?:really|exactly|usually){_E}",
    ),
    (_NOT, rf"(?:don{_A}t|do not)\s+(?:you\s+)?(?:worry|be sorry|mention it){_E}"),
    (_NOT, r"never\s+mind"),
    # "Always" and "never" as how often something happened or how things are.
    (
        _OFTEN,
        rf"(?:have|has|had|[a-z]*{_A}ve|[a-z]*{_A}d|would|will|[a-z]*{_A}ll)\s+(?:always|never){_E}",
    ),
    (
        _OFTEN,
        rf"(?:always|never)\s+(?:been|had|seen|heard|thought|tried|known|knew|wanted|felt|loved|"
        rf"liked|enjoyed|imagined|expected|realized|dreamed|noticed|understood|met|visited|gone|"
        rf"went|gotten|seems?|seemed){_E}",
    ),
    (
        _OFTEN,
        rf"(?:i|we|you)\s+(?:almost\s+)?(?:always|never)\s+(?:think|feel|wonder|look forward|love|"
        rf"like|enjoy|forget|end up|get|got|find|hear|want|wanted|joked|looked|lose|see){_E}",
    ),
    # Advice between friends, hedged intentions, and set phrases.
    (_SHOULD, rf"(?:maybe|perhaps|probably)\s+(?:i|we|you)\s+should{_E}"),
    (_SHOULD, rf"i\s+should{_E}"),
    (
        _SHOULD,
        rf"(?:you|we)\s+should\s+(?:definitely\s+|really\s+|totally\s+|def\s+)?(?:try|check|go|"
        rf"visit|watch|see|come|give|get|read|listen|stop by|swing by|join|taste){_E}",
    ),
    (
        ("have to", "got to"),
        rf"(?:i|you)(?:{_A}ve)?\s+(?:have|got)\s+to\s+(?:say|admit|agree|tell you|confess|laugh|"
        rf"try|see|check|visit|watch|taste|meet|hear|read|tell me|show me|let me){_E}",
    ),
    (
        ("have to",),
        rf"(?:would|might|may|could|will|[a-z]+{_A}d|[a-z]+{_A}ll|ill|kind of|sort of|do)\s+have"
        rf"\s+to{_E}",
    ),
    # An opinion, not a rule: "I think he should do it", "I feel like it should stay savory".
    (
        _SHOULD,
        rf"(?:i think|i feel like|i guess|i believe|in my opinion)(?:\s+[a-z{_APOSTROPHES}]+){{0,6}}?"
        rf"\s+(?:should|shouldn{_A}t|should not){_E}",
    ),
    (_SHOULD, rf"(?:it|that|this)\s+should\s+(?:work|be fine|be ok|be okay|be good|be fun){_E}"),
    # "... to make sure it works", "... will ensure a good trip": a purpose, not a rule.
    (
        ("make sure", "ensure"),
        rf"(?:to|will|would|can|could|helps?(?:\s+to)?)\s+(?:make sure|ensure){_E}",
    ),
    (
        _STOP,
        rf"(?:can{_A}t|cannot|couldn{_A}t|could not|won{_A}t|didn{_A}t|wouldn{_A}t)\s+stop{_E}",
    ),
    (_STOP, rf"stop(?:ped)?\s+by{_E}"),
    (_STOP, rf"non-?stop{_E}"),
)
_CHINESE: Final[tuple[_Use, ...]] = (
    # 别担心, 不要太累了, 不用客气: care and comfort, not prohibitions. Said alone: "别着急合并"
    # (don't rush the merge) is a rule.
    (
        ("别", "不要", "不用"),
        r"(?:别|不要|不用)(?:太)?(?:担心|着急|客气|难过|紧张|介意|在意|害怕|伤心|生气|累|辛苦)"
        r"(?=[\s，。！？,.!?~]|$|了|啊|呀|哦|嘛|慢慢)",
    ),
    # 你真应该去试试, 这部电影必须看: advice between friends.
    (("应该",), r"(?:真|真的)?应该(?:去)?(?:试试|尝尝|看看|来)"),
    (("必须",), r"必须(?:去)?(?:看|试试|尝尝|吃|听|来)"),
    # Set phrases: 必须的 (of course), 别提了 (don't ask), 不要不要 (no no).
    (("必须的", "别提了", "不要不要"), r"必须的|别提了|不要不要"),
    # 我应该早点睡的, 我妈说我应该多运动: the speaker's own hedge, like "I should".
    (("应该",), r"我(?!们)[^\s，。；！？,;!?]{0,4}?应该"),
)
# How someone or something is, said with a rule word: a statement of fact, not a rule.
_ENGLISH_DESCRIBING: Final[tuple[_Use, ...]] = (
    # Others' habits and duties: "they don't have free time", "the alternator has to be
    # replaced".
    (
        ("don", "do not", "doesn", "does not", "have to", "has to"),
        rf"(?:they|he|she|people|everyone|everybody|{_OWNED}|that|who|which)\s+(?:don{_A}t|do not|"
        rf"doesn{_A}t|does not|have to|has to){_E}",
    ),
    # "Always" and "never" after a copula, unless a participle follows ("are never logged"
    # is a rule), or after someone else: "the library is never quiet", "it always rains".
    (
        _OFTEN,
        rf"(?:am|is|are|was|were|[a-z]+{_A}[msre]+)\s+(?:always|never){_E}"
        rf"(?!\s+{_PARTICIPLE}{_E})",
    ),
    (
        _OFTEN,
        rf"(?:they|he|she|it|{_OWNED}|people|everyone|everybody|that|who|which)\s+"
        rf"(?:always|never){_E}",
    ),
    (_OFTEN, rf"(?:always|never)\s+has{_E}"),
)
_CHINESE_DESCRIBING: Final[tuple[_Use, ...]] = (
    # 总是 / 永远 / 始终 describing someone or something: 他总是忘记, 天气总是很好.
    (
        ("总是", "永远", "始终"),
        r"(?:他|她|它|我妈|我爸|妈妈|爸爸|这|那|我(?!们))(?:[^\s，。；！？,;!?]{0,4}?)"
        r"(?:总是|永远|始终)",
    ),
    (("总是", "永远", "始终"), r"(?:总是|永远|始终)(?=很|那么|这么|让|忘|记不住|想起|觉得|排)"),
    # 要 as "will" or "about to" says what is coming: 明天要考试, 我们要搬去合肥了.
    (("要",), r"(?:今天|明天|后天|今晚|明早|下周|下个?月|明年|马上|快|就)要"),
    (("要",), r"(?<![不别需一])要[^\s，。；！？,;!?]{0,8}了(?=[\s，。；！？,;!?~]|$)"),
)


@dataclass(frozen=True, slots=True)
class _Compiled:
    """One use: the words that must be in a clause before its pattern is tried."""

    words: tuple[str, ...]
    pattern: Regex


def _compiled(english: tuple[_Use, ...], chinese: tuple[_Use, ...]) -> tuple[_Compiled, ...]:
    uses = [(words, f"{_B}(?:{p})") for words, p in english] + list(chinese)
    return tuple(_Compiled(words, lazy_compile(p, re.IGNORECASE)) for words, p in uses)


_DESCRIBING: Final = _compiled(_ENGLISH_DESCRIBING, _CHINESE_DESCRIBING)
_NOT_RULES: Final = _compiled(_ENGLISH, _CHINESE) + _DESCRIBING


def _held(uses: tuple[_Compiled, ...], clause: str) -> list[Regex]:
    """The patterns of the uses whose words the clause holds (case aside)."""
    folded = clause.lower()
    return [use.pattern for use in uses if any(word in folded for word in use.words)]


# Friendly phrases a mentor or a friend says with rule words ("don't hesitate to reach
# out", "有问题随时找我"), kept as data: `data/friendly_talk.json`.
_FRIENDLY: Final = words_pattern(load("friendly_talk.json"))


def rule_words(clause: str) -> str:
    """The clause with the rule words of passing talk blanked, to be read for rule cues."""
    for pattern in _held(_NOT_RULES, clause):
        clause = pattern.sub(" ", clause)
    return _FRIENDLY.sub(" ", clause)


def describes(clause: str) -> bool:
    """True when a rule word says how someone or something is ("he always forgets his keys")."""
    return any(pattern.search(clause) for pattern in _held(_DESCRIBING, clause))
