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

from lcm_core.extraction.correct import stops_using, strip_replaced
from lcm_core.extraction.idioms import describes, rule_words
from lcm_core.extraction.values import affix_aspect
from lcm_core.extraction.vocab import load, words_pattern
from lcm_core.text.languages import en
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.tokens import tokenize

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
# A clause told by someone about what they did ("I renamed …", "我把函数名改成了 …"), in
# the past: "we now give attribute names …" states a convention.
_NARRATOR: Final = lazy_compile(
    r"(?:i|we|he|she|they|you)\s+(?:just\s+|already\s+)?(?:[a-z]+ed|made|wrote|did|gave|took|"
    r"went|had|was|were|used to|put in|set up|kept)\b|[我你他她](?:们)?(?:把|已经|刚才|之前|昨天)",
    re.IGNORECASE,
)
# Words a label before a colon may have ("Quick convention note: …").
_LABEL_WORDS: Final = 12
# How far after a setting's name its value may be, in characters.
_VALUE_WITHIN: Final = 32
_VALUE_BEFORE: Final = 3
# An identifier's affix said bare: "dev-", "feat/", "_x" (a quoted one is masked).
_AFFIX: Final = lazy_compile(
    r"(?<![\w/@-])(?:[A-Za-z][A-Za-z0-9]{0,9}[_/-](?![\w/-])|_[A-Za-z0-9]{1,10}(?![\w-]))"
)
# A labelled constraint's key: its content words, at most this many.
_KEY_WORDS: Final = 4
_CONTENT_WORD: Final = lazy_compile(r"[A-Za-z][A-Za-z0-9.+#-]+")
_RULE_WORDS: Final = frozenset({"never", "always", "must", "only", "use", "ever", "any"})
_DIGITS: Final = lazy_compile(r"(?<![A-Za-z_])[0-9０-９]")
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
    stated: bool = False  # a setting's value stated as a fact ("the timeout is 60s")

    @property
    def key(self) -> str:
        parts = [self.topic, self.element, self.aspect, "-".join(self.qualifiers)]
        return "/".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class _Topic:
    """One subject a rule may govern, as the data file declares it."""

    key: str
    words: Regex
    element: bool = False  # the key adds the code element the clause names
    needs_number: bool = False  # a mention counts only with a number in the clause
    qualified: bool = False  # the key adds the qualifier words the clause holds
    setting: bool = False  # a plain statement of its value is a rule


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """The data file, compiled: one pattern per word list."""

    elements: tuple[tuple[str, Regex], ...]
    zh_named: tuple[tuple[str, str], ...]
    element_names: frozenset[str]
    name_words: Regex
    aspects: tuple[tuple[str, Regex], ...]
    case_style: Regex
    topics: tuple[_Topic, ...]
    qualifiers: tuple[tuple[str, Regex], ...]
    value_topics: tuple[tuple[str, Regex], ...]
    opener: Regex
    standing: Regex
    lasting: Regex
    deictic: Regex
    convention: Regex
    instruction: Regex
    convention_verb: Regex
    action_verb: Regex
    additive: Regex
    revision: Regex
    retired: Regex
    descriptive: Regex
    reminder: Regex
    labelled: Regex
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
        case_style=words_pattern(naming["aspects"]["case"]),
        topics=tuple(
            _Topic(
                key=topic["key"],
                words=words_pattern(topic),
                element=bool(topic.get("element")),
                needs_number=bool(topic.get("needs_number")),
                qualified=bool(topic.get("qualifiers")),
                setting=bool(topic.get("setting")),
            )
            for topic in topics["order"]
        ),
        qualifiers=tuple(
            (name, words_pattern(entry))
            for name, entry in topics["qualifier_words"].items()
            if name != "about"
        ),
        value_topics=tuple(
            (key, lazy_compile(pattern, re.IGNORECASE))
            for key, pattern in topics["value_topics"].items()
            if key != "about"
        ),
        opener=lazy_compile(
            "(?:" + "|".join((*raw["display"]["en_re"], *raw["display"]["zh_re"])) + ")+",
            re.IGNORECASE,
        ),
        standing=words_pattern(cues["standing"]),
        lasting=words_pattern(cues["lasting"]),
        deictic=words_pattern(cues["deictic"]),
        convention=words_pattern(cues["convention"]),
        instruction=words_pattern(cues["instruction"]),
        convention_verb=_first_word(cues["imperatives"]["convention"]),
        action_verb=_first_word(cues["imperatives"]["action"]),
        additive=words_pattern(cues["additive"]),
        revision=words_pattern(cues["revision"]),
        retired=words_pattern(cues["retired"]),
        descriptive=words_pattern(cues["descriptive"]),
        reminder=words_pattern(cues["reminder"]),
        labelled=words_pattern(cues["labelled"]),
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
    if not talk.strip() or vocab.reminder.search(talk):
        return None
    # What the clause says is replaced ("— we're retiring '_c'", "，`_n` 那套不用了") is
    # the old value, not what the rule governs: a clause of nothing else sets none.
    talk = strip_replaced(talk)
    if not talk.strip() or stops_using(talk):
        return None  # "Scratch `@x`", "不要再用 `camelCase` 了": the old value, retired
    text = masked(talk)
    numbered = _has_quantity(talk)
    subject = _subject(text, numbered, vocab, talk) or _by_value(clause, text, vocab)
    if subject is None and vocab.labelled.search(talk) and kind in RULE_KINDS:
        subject = _labelled_subject(vocab.labelled.sub("", talk))  # "约束：不要使用 Redis"
    if subject is None:
        return None
    # A naming convention states itself ("方法名以 'm_' 开头"), unless someone narrates it;
    # so does a setting's value ("the batch size is 250 rows", "请求超时是 60 秒").
    lead = _label_free(_LEAD.sub("", text))
    naming = subject.topic == "naming" and not _NARRATOR.match(lead)
    valued = _states_value(text, subject.topic, vocab)
    setting = kind in (None, "fact") and (valued or _names_value(text, subject.topic, vocab))
    # "He always forgets his keys" describes; "the release has to be ready by March 24"
    # sets a deadline, though it reads like a duty someone has.
    if describes(clause) and not valued:
        return None
    if not naming and not setting and not _instructs(text, kind, vocab):
        return None
    additive = vocab.additive.search(text) is not None
    stated = setting and not naming and not _instructs(text, kind, vocab)
    return RuleSubject(
        subject.topic, subject.element, subject.aspect, subject.qualifiers, additive, stated
    )


def _label_free(text: str) -> str:
    """The clause after a short label and its colon ("Update: use tabs" -> "use tabs")."""
    head, colon, rest = text.partition(":")
    if colon and rest.strip() and len(head.split()) <= _LABEL_WORDS:
        return rest.strip()
    return text


def _states_value(text: str, key: str, vocab: _Vocabulary) -> bool:
    """Whether the clause gives a setting's value right after naming it ("the batch size is
    250 rows", "预算是 500 元"); "2025 年度预算表在共享盘里" names a year, not a budget."""
    topic = next((t for t in vocab.topics if t.key == key and t.setting), None)
    found = topic.words.search(text) if topic is not None else None
    if found is None:
        return False
    after = text[found.end() : found.end() + _VALUE_WITHIN]
    # Or right before it, as Chinese says it: "跑在 8612 端口上".
    before = text[max(0, found.start() - _VALUE_BEFORE) : found.start()]
    return any(bool(_DIGITS.search(part) or _HAN_NUMBER.search(part)) for part in (after, before))


def _names_value(text: str, key: str, vocab: _Vocabulary) -> bool:
    """Whether the clause names a value right after the topic it speaks of ("for the
    function decorator, the new answer is `@memoize`")."""
    topic = next((t for t in vocab.topics if t.key == key), None)
    found = topic.words.search(text) if topic is not None else None
    if found is None:
        return False
    after = text[found.end() : found.end() + 2 * _VALUE_WITHIN]
    return _MASK.strip() in after  # quoted or backticked; "-k" after pytest is a flag


def _has_quantity(clause: str) -> bool:
    """Whether the clause states a number (500, port 2011, ¥2,500, 7月17日, 三百元), not a
    digit inside a name (S3, p95)."""
    return bool(_DIGITS.search(clause) or _HAN_NUMBER.search(clause))


def _instructs(text: str, kind: str | None, vocab: _Vocabulary) -> bool:
    """Whether the clause tells how work is to be done, now and later."""
    if vocab.convention.search(text):
        return True
    if kind is not None and kind not in RULE_KINDS and kind != "fact":
        return False
    # "Don't touch this file", "today use the old port": one thing, one moment ("from
    # today" makes it last).
    lasting = vocab.lasting.search(text) is not None
    if vocab.deictic.search(text) and not vocab.standing.search(text) and not lasting:
        return False
    # "超过500行时副本延迟会超过2秒", "日志服务用的是 Loki" tell what happens or is: their
    # descriptive words are no instruction ("用的是" holds "用"), only another cue is.
    told = vocab.descriptive.sub(" ", text)
    cued = vocab.instruction.search(told) is not None
    if told != text and not cued:
        return False
    if kind in RULE_KINDS:
        return True
    # No obligation cue: an instruction ("remember to …", "请…"), or an imperative first:
    # a convention's verb ("End method names with …"), or an action's with a standing
    # word ("add docstrings to every method"; "write the uploader" is a one-off).
    # "Every" alone narrates as well as it rules.
    if cued or lasting:
        return True
    lead = _label_free(_LEAD.sub("", text))
    if vocab.convention_verb.match(lead):
        return True
    return vocab.action_verb.match(lead) is not None and vocab.standing.search(text) is not None


def _subject(text: str, has_number: bool, vocab: _Vocabulary, raw: str = "") -> RuleSubject | None:
    """The naming rule or topic the clause speaks of, most specific reading first.

    `raw` is the clause with its values: a case style in quotes (`camelCase`) is the
    naming aspect it names.
    """
    aspect = next((name for name, pattern in vocab.aspects if pattern.search(text)), "")
    if not aspect and raw and vocab.case_style.search(raw):
        aspect = "case"
    if not aspect and raw and vocab.name_words.search(text):
        aspect = affix_aspect(raw)  # "the new answer for attribute names is _ib": a suffix
    element = _element(text, vocab)
    # A naming rule speaks of names ("method names", "方法名") or gives the value ("prefix
    # methods with 'm_'"); "start slowly with beginner classes" does neither.
    if aspect and vocab.name_words.search(text):
        return RuleSubject("naming", element, aspect)
    # A tool's name in backticks is the topic's own word ("run `flake8` before a push").
    found = _topic(text, element, has_number, vocab) or (
        _topic(raw, element, has_number, vocab) if raw else None
    )
    # Without a word for names, a value and an element still make a naming rule
    # ("prefix methods with 'm_'", "CamelCase for classes"), unless a topic is named
    # ("每个文件开头导入 `statistics`" imports; 开头 is where, not a prefix).
    valued = _MASK.strip() in text or aspect == "case" or _AFFIX.search(text) is not None
    if found is None and aspect and element and valued:
        return RuleSubject("naming", element, aspect)
    return found


def _topic(text: str, element: str, has_number: bool, vocab: _Vocabulary) -> RuleSubject | None:
    """The first topic of the vocabulary the clause speaks of."""
    for topic in vocab.topics:
        found = topic.words.search(text)
        if found is None or (topic.needs_number and not has_number):
            continue
        rest = text[: found.start()] + " " + text[found.end() :]
        qualifiers = _qualifiers(rest, vocab) if topic.qualified else ()
        return RuleSubject(topic.key, element if topic.element else "", "", qualifiers)
    return None


def _labelled_subject(rest: str) -> RuleSubject | None:
    """A labelled constraint's subject when no topic names it: its content words (Latin
    words, else Chinese bigrams), so only the same constraint said again meets it."""
    latin = sorted(
        {w.casefold() for w in _CONTENT_WORD.findall(rest)} - en.STOP_WORDS - _RULE_WORDS
    )
    words = latin or sorted({t for t in tokenize(rest) if not t.isascii()})
    return RuleSubject("constraint", qualifiers=tuple(words[:_KEY_WORDS])) if words else None


def _by_value(clause: str, text: str, vocab: _Vocabulary) -> RuleSubject | None:
    """The topic a value's shape names when no word does ("use @count_calls instead")."""
    for key, pattern in vocab.value_topics:
        if pattern.search(clause):
            topic = next((t for t in vocab.topics if t.key == key), None)
            element = _element(text, vocab) if topic is not None and topic.element else ""
            return RuleSubject(key, element)
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
        if re.search(re.escape(han) + r"(?:的)?(?:名|命名|起名|取名)", text):
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
    """Whether two subject keys govern the same thing: same topic and aspect, the same code
    element when both name one ("decorator" fits `decorator/method`), and qualifiers of
    which one side's hold the other's (`port/api` fits `port/api-server`)."""
    if not first or not second:
        return False
    if first == second:
        return True
    a, b = parse_key(first), parse_key(second)
    if a.topic != b.topic or a.aspect != b.aspect:
        return False
    if a.element and b.element and a.element != b.element:
        return False
    # "the API server" and "API 服务", "p95 延迟" and "接口延迟": one set of qualifiers holds
    # the other. "staging database" and "prod database" hold words the other lacks.
    mine, theirs = set(a.qualifiers), set(b.qualifiers)
    return mine <= theirs or theirs <= mine


def shown_words(content: str) -> str:
    """A rule's words as the rules section shows them: without the opener that only says a
    rule follows ("One of the conventions we follow is to …", "我们的规范是…"), marked '…'."""
    cut = vocabulary().opener.match(content)
    if cut is None or cut.end() >= len(content):
        return content
    return "…" + content[cut.end() :].lstrip(" ,，:：")


def retires(clause: str) -> bool:
    """Whether a clause has a word marking a value as the old one ("phase out", "弃用")."""
    return vocabulary().retired.search(clause) is not None


def says_revision(text: str) -> bool:
    """Whether a message has a word that changes a value ("replaces", "no more", "换成")."""
    return vocabulary().revision.search(text) is not None


def rule_key(scope: dict[str, Any]) -> str:
    """The subject key a stored item's scope carries, "" for an item that is no rule."""
    value = scope.get(RULE_SCOPE_KEY)
    return value if isinstance(value, str) else ""
