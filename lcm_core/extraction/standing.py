"""Standing rules: which user statements govern future work, and what each one governs.

A standing rule is an instruction that lasts: a convention ("end method names with
'_p'", "我们的规范是方法名以 '_p' 结尾"), a standing constraint ("never push to main", "预算
不超过3000元（含税）") or a standing preference ("I prefer tabs for indentation"). It gets
a **subject key** naming what it governs (`naming/method/suffix`, `docstrings/method`,
`decorator`, `import`, `budget`, `port/database-staging`), derived from the words of the
clause through a bilingual vocabulary (`data/standing_rules.json`), so an English rule
and its Chinese correction get the same key. A later rule with a compatible key replaces
the earlier one (`compatible`); keys of different subjects never meet.

Friendly talk with rule words ("don't hesitate to reach out", "有问题随时找我"), plans,
advice and one-off requests are not rules: a clause becomes one only when it instructs
(an obligation cue, a convention cue, an imperative verb first) and names a subject the
vocabulary knows. Everything here is a pure function of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from lcm_core.extraction.idioms import describes, rule_words
from lcm_core.extraction.vocab import load, words_pattern
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.numbers import parse_quantities

# The key of the scope field a rule's subject key is stored under.
RULE_SCOPE_KEY: Final = "rule"
# Kinds a clause must state (or a convention cue must give) to become a rule.
RULE_KINDS: Final = frozenset({"constraint", "decision", "preference"})
_DATA_FILE: Final = "standing_rules.json"
# A quoted value, a backticked name or a decorator: masked before words are matched, so
# the value "'test_'" never reads as the word "test".
_VALUE: Final = lazy_compile(
    r"(?<![A-Za-z0-9])'[^'\n]{1,40}'(?![A-Za-z0-9])|\"[^\"\n]{1,40}\"|`[^`\n]{1,40}`|"
    r"“[^”\n]{1,40}”|‘[^’\n]{1,40}’|「[^」\n]{1,40}」|(?<![\w@])@[A-Za-z_][\w.]*"
)
_MASK: Final = " ⟨v⟩ "
# A clause told by someone about what they did ("I renamed …", "我把函数名改成了 …").
_NARRATOR: Final = lazy_compile(
    r"(?:i|we|he|she|they|you)\b(?!\s+(?:should|must|need|have to|want you))|[我你他她](?!们的规范)",
    re.IGNORECASE,
)
_HAN_NUMBER: Final = lazy_compile(r"[一二两三四五六七八九十百千万]+(?:元|块|个|秒|分钟|行|条|次)")
_LEAD: Final = lazy_compile(
    r"^\s*(?:(?:also|and|so|oh|ok(?:ay)?|now|then|just|but|plus|remember|one more thing|"
    r"another thing|last thing|btw|by the way|anyway|please|pls|kindly|from now on|going forward|"
    r"moving forward|in the future|in future|for future reference)\b[\s,:;—–-]*)*",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class RuleSubject:
    """What a rule governs: a topic, and the code element, naming aspect or qualifiers."""

    topic: str
    element: str = ""
    aspect: str = ""
    qualifiers: tuple[str, ...] = ()
    additive: bool = False

    @property
    def key(self) -> str:
        parts = [self.topic, self.element, self.aspect, "-".join(self.qualifiers)]
        return "/".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """The data file, compiled: one pattern per word list."""

    elements: tuple[tuple[str, Regex], ...]
    zh_named: tuple[tuple[str, str], ...]
    element_names: frozenset[str]
    name_words: Regex
    aspects: tuple[tuple[str, Regex], ...]
    topics: tuple[tuple[str, bool, bool, bool, Regex], ...]  # key, element, number, qualifiers
    qualifiers: tuple[tuple[str, Regex], ...]
    value_topics: tuple[tuple[str, Regex], ...]
    standing: Regex
    deictic: Regex
    convention: Regex
    instruction: Regex
    convention_verb: Regex
    action_verb: Regex
    additive: Regex
    descriptive: Regex
    reminder: Regex
    named_en: Regex


@lru_cache(maxsize=1)
def vocabulary() -> _Vocabulary:
    """The vocabulary of `data/standing_rules.json`, checked and compiled once."""
    raw = load(_DATA_FILE)
    elements = raw["elements"]
    words = elements["words"]
    order = elements["order"]
    if sorted(order) != sorted(words):
        raise ValueError(f"{_DATA_FILE}: elements.order and elements.words name other elements")
    naming = raw["naming"]
    topics = raw["topics"]
    cues = raw["cues"]
    english_element_words = sorted(
        (w for name in order for w in words[name].get("en", ())), key=len, reverse=True
    )
    # "method names", "function argument names", "names of your variables".
    named_en = lazy_compile(
        r"(?<![A-Za-z])(" + "|".join(re.escape(w) for w in english_element_words) + r")"
        r"(?:'s)?\s+(?:names?|naming)(?![A-Za-z])|(?<![A-Za-z])names?\s+of\s+(?:(?:all|your|the|"
        r"our|any|each|every)\s+)*(" + "|".join(re.escape(w) for w in english_element_words) + ")",
        re.IGNORECASE,
    )
    return _Vocabulary(
        elements=tuple((name, words_pattern(words[name])) for name in order),
        zh_named=tuple(sorted(elements["zh_named"].items(), key=lambda kv: -len(kv[0]))),
        element_names=frozenset(order),
        name_words=words_pattern(naming["name_words"]),
        aspects=tuple((name, words_pattern(entry)) for name, entry in naming["aspects"].items()),
        topics=tuple(
            (
                topic["key"],
                bool(topic.get("element")),
                bool(topic.get("needs_number")),
                bool(topic.get("qualifiers")),
                words_pattern(topic),
            )
            for topic in topics["order"]
        ),
        qualifiers=tuple(
            (word.casefold(), words_pattern({"en": [word]} if word.isascii() else {"zh": [word]}))
            for word in (*topics["qualifier_words"]["en"], *topics["qualifier_words"]["zh"])
        ),
        value_topics=tuple(
            (key, lazy_compile(pattern))
            for key, pattern in topics["value_topics"].items()
            if key != "about"
        ),
        standing=words_pattern(cues["standing"]),
        deictic=words_pattern(cues["deictic"]),
        convention=words_pattern(cues["convention"]),
        instruction=words_pattern(cues["instruction"]),
        convention_verb=_first_word(cues["imperatives"]["convention"]),
        action_verb=_first_word(cues["imperatives"]["action"]),
        additive=words_pattern(cues["additive"]),
        descriptive=words_pattern(cues["descriptive"]),
        reminder=words_pattern(cues["reminder"]),
        named_en=named_en,
    )


def _first_word(verbs: list[str]) -> Regex:
    """A clause that starts with one of `verbs`."""
    body = "|".join(re.escape(v) for v in sorted(verbs, key=len, reverse=True))
    return lazy_compile(rf"^(?:{body})(?![A-Za-z'])", re.IGNORECASE)


def masked(text: str) -> str:
    """The text with quoted values, backticked names and decorators masked."""
    return _VALUE.sub(_MASK, text)


def rule_subject(clause: str, kind: str | None) -> RuleSubject | None:
    """The subject of the standing rule a user clause sets, or None when it sets none.

    `kind` is what the extraction rules read in the clause (None: no cue); a convention
    cue ("we follow", "我们的规范") makes a rule of a clause without one.
    """
    return _rule_subject(clause.strip(), kind)


@lru_cache(maxsize=16_384)
def _rule_subject(clause: str, kind: str | None) -> RuleSubject | None:
    vocab = vocabulary()
    # Friendly talk first: its rule words set nothing ("don't hesitate to reach out").
    talk = rule_words(clause)
    if not talk.strip() or describes(clause) or vocab.reminder.search(talk):
        return None
    text = masked(talk)
    subject = _subject(text, _has_quantity(clause), vocab) or _by_value(clause, text, vocab)
    if subject is None:
        return None
    # A naming convention states itself ("方法名以 'm_' 开头"), unless someone narrates it.
    naming = subject.topic == "naming" and not _NARRATOR.match(_LEAD.sub("", text))
    if not naming and not _instructs(text, kind, vocab):
        return None
    additive = vocab.additive.search(text) is not None
    return RuleSubject(subject.topic, subject.element, subject.aspect, subject.qualifiers, additive)


def _has_quantity(clause: str) -> bool:
    """Whether the clause states a number (500, 3000元, 两千元), not a digit inside a name (S3)."""
    return any(not q.negated for q in parse_quantities(clause)) or bool(_HAN_NUMBER.search(clause))


def _instructs(text: str, kind: str | None, vocab: _Vocabulary) -> bool:
    """Whether the clause tells how work is to be done, now and later."""
    if vocab.convention.search(text):
        return True
    if kind is not None and kind not in RULE_KINDS and kind != "fact":
        return False
    # "Don't touch this file", "today use the old port": one thing, one moment.
    if vocab.deictic.search(text) and not vocab.standing.search(text):
        return False
    cued = vocab.instruction.search(text) is not None
    # "超过500行时副本延迟会超过2秒" tells what happens; only a cue makes it a rule.
    if vocab.descriptive.search(text) and not cued:
        return False
    if kind in RULE_KINDS:
        return True
    # No obligation cue: an instruction ("remember to …", "请…"), or an imperative first:
    # a convention's verb ("End method names with …"), or an action's with a standing
    # word ("add docstrings to every method"; "write the uploader" is a one-off).
    # "Every" alone narrates as well as it rules.
    if cued:
        return True
    lead = _LEAD.sub("", text)
    if vocab.convention_verb.match(lead):
        return True
    return vocab.action_verb.match(lead) is not None and vocab.standing.search(text) is not None


def _subject(text: str, has_number: bool, vocab: _Vocabulary) -> RuleSubject | None:
    """The naming rule or topic the clause speaks of, most specific reading first."""
    aspect = next((name for name, pattern in vocab.aspects if pattern.search(text)), "")
    element = _element(text, vocab)
    if aspect and (element or vocab.name_words.search(text)):
        return RuleSubject("naming", element, aspect)
    for key, with_element, needs_number, qualified, pattern in vocab.topics:
        found = pattern.search(text)
        if found is None or (needs_number and not has_number):
            continue
        rest = text[: found.start()] + " " + text[found.end() :]
        qualifiers = _qualifiers(rest, vocab) if qualified else ()
        return RuleSubject(key, element if with_element else "", "", qualifiers)
    return None


def _by_value(clause: str, text: str, vocab: _Vocabulary) -> RuleSubject | None:
    """The topic a value's shape names when no word does ("use @count_calls instead")."""
    for key, pattern in vocab.value_topics:
        if pattern.search(clause):
            return RuleSubject(key, _element(text, vocab))
    return None


def _element(text: str, vocab: _Vocabulary) -> str:
    """The code element the clause is about: the one whose names it speaks of, else the first."""
    named = vocab.named_en.search(text)
    if named is not None:
        word = (named.group(1) or named.group(2) or "").casefold()
        for name, pattern in vocab.elements:
            if pattern.fullmatch(word):
                return name
    for han, name in vocab.zh_named:
        if re.search(re.escape(han) + r"(?:的)?(?:名|命名)", text):
            return name
    return next((name for name, pattern in vocab.elements if pattern.search(text)), "")


def _qualifiers(text: str, vocab: _Vocabulary) -> tuple[str, ...]:
    """The words that tell this setting from others of its kind, sorted, each once."""
    return tuple(sorted({word for word, pattern in vocab.qualifiers if pattern.search(text)}))


def parse_key(key: str) -> RuleSubject:
    """A stored subject key back as its parts (the inverse of `RuleSubject.key`)."""
    topic, *rest = key.split("/")
    vocab = vocabulary()
    aspects = {name for name, _ in vocab.aspects}
    element = aspect = ""
    qualifiers: tuple[str, ...] = ()
    for part in rest:
        if part in vocab.element_names and not element:
            element = part
        elif topic == "naming" and part in aspects:
            aspect = part
        elif part:
            qualifiers = tuple(part.split("-"))
    return RuleSubject(topic, element, aspect, qualifiers)


def compatible(first: str, second: str) -> bool:
    """Whether two subject keys govern the same thing: same topic, aspect and qualifiers,
    and the same code element when both name one ("decorator" fits `decorator/method`;
    "port" does not fit `port/admin-server`: a generic setting may be another one)."""
    if not first or not second:
        return False
    if first == second:
        return True
    a, b = parse_key(first), parse_key(second)
    if a.topic != b.topic or a.aspect != b.aspect:
        return False
    if a.element and b.element and a.element != b.element:
        return False
    return a.qualifiers == b.qualifiers


def rule_key(scope: dict[str, Any]) -> str:
    """The subject key a stored item's scope carries, "" for an item that is no rule."""
    value = scope.get(RULE_SCOPE_KEY)
    return value if isinstance(value, str) else ""
