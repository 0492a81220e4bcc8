"""Which rules a dialogue of `gen_conventions.py` holds, their versions, and each version's sentence.

A dialogue draws 5-12 rule types; three to five of them are updated two to four times
and up to two more once. Values never contain one another (nor any other value of the
dialogue), so a value found in a block names one version. A version's sentence is a
frame around a phrase of its family, in its own language and the dialogue's split.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import convention_phrases as en_phrases
import convention_phrases_zh as zh_phrases
from convention_types import KEYWORD_VALUES, RULE_TYPES, SERVICES, TARGETS, RuleType, Value
from convention_types import value_pool as _value_pool

PHRASES: dict[str, ModuleType] = {"en": en_phrases, "zh": zh_phrases}
MARK = re.compile(r"\[\[(.+?)\]\]")
# Share of updates that name the value they replace.
NAMES_OLD = 0.6


class Decks:
    """Shuffled decks of a dialogue's lines: a line comes back only once its deck is used up."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.decks: dict[str, list[Any]] = {}

    def draw(self, key: str, pool: Sequence[Any]) -> Any:
        deck = self.decks.get(key)
        if not deck:
            deck = self.decks[key] = self.rng.sample(list(pool), len(pool))
        return deck.pop()


@dataclass
class Version:
    """One version of a rule: its value, language, session and, once written, sentence and turn."""

    rule: Rule
    number: int
    value: Value | None
    session: int
    lang: str
    text: str = ""
    show: tuple[str, ...] = ()
    turn: int = -1
    position: int = -1  # the sentence's place in its message (orders two rules of one turn)


@dataclass
class Rule:
    """A rule type in one dialogue and its versions, oldest first; `ident` is set in time order."""

    type: RuleType
    versions: list[Version] = field(default_factory=list)
    ident: str = ""


def _clashes(value: Value, taken: list[str]) -> bool:
    """Whether any form of `value` contains, or is contained in, a string already taken."""
    mine = [text.lower() for text in value.texts()]
    return any(a in b or b in a for a in mine for b in taken)


def _fits(rule_type: RuleType, chosen: list[Rule]) -> bool:
    """One rule per keyword family (they show the same word); at most two naming rules per target."""
    family = rule_type.family
    if family.keyword and any(r.type.family is family for r in chosen):
        return False
    if family.name.startswith("naming/"):
        same = Counter(r.type.target for r in chosen if r.type.family.name.startswith("naming/"))
        return same[rule_type.target] < 2
    return True


def _values(pool: list[Value], wanted: int, taken: list[str]) -> list[Value]:
    """Up to `wanted` values of the pool that clash with nothing taken nor with each other."""
    picked: list[Value] = []
    for value in pool:
        if len(picked) == wanted:
            break
        if not _clashes(value, taken + [t.lower() for v in picked for t in v.texts()]):
            picked.append(value)
    return picked


def plan_rules(rng: random.Random, split: str, start: dt.date, sessions: int) -> list[Rule]:
    """The dialogue's rules with their versions' values and sessions (languages set later)."""
    count = rng.randint(5, 12)
    heavy, light = rng.randint(3, 5), rng.randint(0, 2)
    chosen: list[Rule] = []
    taken: list[str] = []
    for rule_type in rng.sample(RULE_TYPES, len(RULE_TYPES)):
        if len(chosen) == count:
            break
        if not _fits(rule_type, chosen):
            continue
        updated = sum(len(r.versions) >= 3 for r in chosen)
        once = sum(len(r.versions) == 2 for r in chosen)
        if rule_type.family.keyword:
            if count - len(chosen) <= heavy - updated:
                continue  # the places left are for rules that change
            rule = Rule(rule_type)
            rule.versions = [Version(rule, 1, None, 0, "")]
            chosen.append(rule)
            continue
        pool = _value_pool(rule_type, rng, split, start)
        if updated < heavy:
            wanted = 1 + rng.randint(2, 4)
        elif once < light:
            wanted = 2
        else:
            wanted = 1
        values = _values(pool, wanted, taken)
        if not values or (updated < heavy and len(values) < 3):
            continue
        rule = Rule(rule_type)
        rule.versions = [Version(rule, n, v, 0, "") for n, v in enumerate(values, start=1)]
        taken.extend(t.lower() for v in values for t in v.texts())
        chosen.append(rule)
    for rule in chosen:
        _place(rng, rule, sessions)
    return chosen


def _place(rng: random.Random, rule: Rule, sessions: int) -> None:
    """Sessions of a rule's versions: a changing rule starts early, updates come later, one a session."""
    count = len(rule.versions)
    first = rng.randrange(sessions // 2) if count > 1 else rng.randrange(sessions)
    later = sorted(rng.sample(range(first + 1, sessions), count - 1))
    for version, where in zip(rule.versions, [first, *later], strict=True):
        version.session = where


def _forms(value: Value, lang: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return value.en if lang == "en" else value.zh


def _words(rule_type: RuleType, lang: str) -> dict[str, str]:
    """The target or service words a phrase of this type is filled with."""
    if rule_type.target in TARGETS:
        one, many, zh = TARGETS[rule_type.target]
        return {"{t}": one, "{ts}": many} if lang == "en" else {"{t}": zh, "{ts}": zh}
    if rule_type.target in SERVICES:
        en, zh = SERVICES[rule_type.target]
        return {"{svc}": en if lang == "en" else zh}
    return {}


def _fill(template: str, fields: dict[str, str]) -> str:
    for key, text in fields.items():
        template = template.replace(key, text)
    return template


def write_version(rng: random.Random, decks: Decks, version: Version, split: str) -> None:
    """Give a version its sentence and the strings a block must contain to show it.

    Frames come from the dialogue's decks, so two rules of one message, and most rules of
    one dialogue, are framed differently.
    """
    rule_type, lang = version.rule.type, version.lang
    table = PHRASES[lang].SPLITS[split]
    family = rule_type.family
    fields = _words(rule_type, lang)
    show: list[str] = []
    if version.value is not None:
        text, value_show = rng.choice(_forms(version.value, lang))
        fields["{v}"] = text
        show.extend(value_show)
    phrase = rng.choice(table["phrases"][family.name])
    if isinstance(phrase, tuple):
        parts = {"{s}": _fill(phrase[0], fields), "{p}": _fill(phrase[1], fields)}
    else:
        parts = {"{c}" if family.constraint else "{do}": _fill(phrase, fields)}
    prefix = "constraint_" if family.constraint else ""
    old = version.rule.versions[version.number - 2].value if version.number > 1 else None
    if version.number == 1:
        kind = f"{prefix}frames"
    elif old is not None and rng.random() < NAMES_OLD:
        kind = f"{prefix}update_old"
        parts["{old}"] = rng.choice(_forms(old, lang))[0]
    else:
        kind = f"{prefix}update"
    topic = family.topic_en if lang == "en" else family.topic_zh
    parts["{topic}"] = _fill(topic, fields)
    sentence = _fill(decks.draw(f"{lang}/{kind}", table[kind]), parts)
    show.extend(MARK.findall(sentence))
    version.text = MARK.sub(r"\1", sentence)
    version.show = tuple(show)


def value_of(version: Version) -> str:
    """The version's recorded value: the canonical value, or what a keyword rule asks for."""
    if version.value is not None:
        return version.value.canonical
    return KEYWORD_VALUES[version.rule.type.family.name]
