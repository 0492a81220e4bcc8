"""A deterministic synthetic set shaped like real two-person chat (DESIGN.md section 9 format).

Each conversation is two named friends chatting over 15-25 days in short sessions, 300-900
turns. Both are user turns; each turn's text starts with the speaker's name ("Maya: ...")
and carries its session's date as `time`. Most turns are small talk (greetings, reactions,
questions back); personal facts are said in passing, some change later (a move, a new job,
a cancelled trip), and the facts' topic words recur in turns that do not hold them.
Questions name the person and use other words than their evidence, in three categories:
`single-fact`, `temporal` (answered by the evidence turn's date) and `multi-turn` (two or
three evidence turns). About a fifth of the conversations are Chinese or mixed
Chinese/English. The same seed gives byte-identical output.

    python benchmarks/gen_chat.py --out /tmp/chat.jsonl
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import string
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import chat_phrases as en_phrases
import chat_phrases_zh as zh_phrases

# (name, pronoun); some Chinese names written in Latin letters for English chats.
EN_NAMES = (
    ("Maya", "her"), ("Omar", "his"), ("Lena", "her"), ("Jamal", "his"), ("Priya", "her"),
    ("Diego", "his"), ("Hannah", "her"), ("Kofi", "his"), ("Sofia", "her"), ("Ravi", "his"),
    ("Chloe", "her"), ("Mateo", "his"), ("Aisha", "her"), ("Noah", "his"), ("Zara", "her"),
    ("Felix", "his"), ("Wei", "his"), ("Mei", "her"), ("Jun", "his"), ("Xiaoyu", "her"),
    ("Hao", "his"), ("Lin", "her"),
)  # fmt: skip
ZH_NAMES = (
    ("王芳", "her"), ("李伟", "his"), ("陈静", "her"), ("刘洋", "his"), ("赵敏", "her"),
    ("林晓", "her"), ("张磊", "his"), ("周婷", "her"), ("黄鑫", "his"), ("吴佳", "her"),
)  # fmt: skip
CATEGORIES = ("single-fact", "temporal", "multi-turn")


@dataclass(frozen=True)
class Person:
    """One of the two people in a conversation and the language they write in."""

    name: str
    pronoun: str
    phrases: ModuleType


@dataclass
class Fact:
    """A fact one person states in one or more turns, and the question that asks for it."""

    owner: int
    texts: list[str]
    sessions: list[int]
    question: str
    category: str
    evidence: list[int]  # indexes into texts
    echoes: list[str] = field(default_factory=list)  # its topic values, said elsewhere too
    turn_ids: list[str] = field(default_factory=list)


def kind_of(index: int) -> str:
    """Conversation language: one in ten Chinese, one in ten mixed, the rest English."""
    return {4: "zh", 9: "mixed"}.get(index % 10, "en")


def people(rng: random.Random, kind: str) -> tuple[Person, Person]:
    """Two distinct named people; a mixed chat pairs a Chinese writer with an English one."""
    if kind == "en":
        pairs = [(n, en_phrases) for n in rng.sample(EN_NAMES, 2)]
    elif kind == "zh":
        pairs = [(n, zh_phrases) for n in rng.sample(ZH_NAMES, 2)]
    else:
        pairs = [(rng.choice(ZH_NAMES), zh_phrases), (rng.choice(EN_NAMES), en_phrases)]
        rng.shuffle(pairs)
    a, b = (Person(name, pronoun, module) for (name, pronoun), module in pairs)
    return a, b


def session_dates(rng: random.Random) -> list[str]:
    """ISO dates of every session: 15-25 chat days, one to three sessions a day."""
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(330))
    dates: list[str] = []
    for _ in range(rng.randint(15, 25)):
        dates.extend([day.isoformat()] * rng.choice((1, 1, 2, 2, 3)))
        day += dt.timedelta(days=rng.choice((1, 1, 1, 2, 3)))
    return dates


def _values(rng: random.Random, person: Person) -> dict[str, str]:
    values = {key: rng.choice(options) for key, options in person.phrases.SLOTS.items()}
    values["name"] = person.name
    values["their"] = person.pronoun
    values["aunt"] = "aunt" if person.pronoun == "her" else "uncle"
    return values


def _slot_values(template: str, values: dict[str, str]) -> list[str]:
    """The values a template's own slots take (the person's name and pronouns left out)."""
    keys = [key for _, key, _, _ in string.Formatter().parse(template) if key]
    return [values[key] for key in keys if key not in {"name", "their", "aunt", "x"}]


def facts_of(rng: random.Random, owner: int, person: Person, sessions: int) -> list[Fact]:
    """The facts one person states, each placed in a session, with their questions."""
    p = person.phrases
    values = _values(rng, person)
    facts: list[Fact] = []
    for table, low, high, category in ((p.SINGLE, 10, 14, "single-fact"), (p.TEMPORAL, 6, 9, "temporal")):  # fmt: skip
        for variants, question in rng.sample(table, min(len(table), rng.randint(low, high))):
            template = rng.choice(variants)
            asked = rng.choice(question).format(**values)
            where = [rng.randrange(sessions)]
            fact = Fact(owner, [template.format(**values)], where, asked, category, [0])
            fact.echoes = _slot_values(template, values)
            facts.append(fact)
    for templates, pool, question in rng.sample(p.MULTI, min(len(p.MULTI), rng.randint(3, 5))):
        count = rng.randint(2, 3)
        texts = [t.format(x=x) for t, x in zip(rng.sample(templates, count), rng.sample(pool, count), strict=True)]  # fmt: skip
        where = sorted(rng.sample(range(sessions), count))
        asked = rng.choice(question).format(**values)
        fact = Fact(owner, texts, where, asked, "multi-turn", list(range(count)))
        fact.echoes = [text_value for text_value in pool if text_value in " ".join(texts)]
        facts.append(fact)
    half = sessions // 2
    for first, later, question, evidence in rng.sample(p.CHANGES, rng.randint(1, min(3, len(p.CHANGES)))):  # fmt: skip
        texts = [first.format(**values), later.format(**values)]
        where = [rng.randrange(half), rng.randrange(half, sessions)]
        category, ev = ("single-fact", [1]) if evidence == "later" else ("multi-turn", [0, 1])
        fact = Fact(owner, texts, where, rng.choice(question).format(**values), category, ev)
        fact.echoes = _slot_values(first + later, values)
        facts.append(fact)
    return facts


class _Chat:
    """Appends turns of one conversation and keeps their ids."""

    def __init__(self, conv_id: str, pair: tuple[Person, Person], rng: random.Random) -> None:
        self.conv_id, self.pair, self.rng = conv_id, pair, rng
        self.turns: list[dict[str, Any]] = []
        self.date = ""

    def say(self, who: int, text: str) -> str:
        person = self.pair[who]
        turn_id = f"{self.conv_id}-t{len(self.turns):03d}"
        self.turns.append(
            {"id": turn_id, "speaker": "user", "name": person.name,
             "text": f"{person.name}: {text}", "time": self.date}
        )  # fmt: skip
        return turn_id

    def pick(self, who: int, table: str) -> str:
        options: tuple[str, ...] = getattr(self.pair[who].phrases, table)
        return self.rng.choice(options).replace("{other}", self.pair[1 - who].name)

    def join(self, who: int, parts: list[str]) -> str:
        """Sentences as one message; no separator doubles a sentence's own punctuation."""
        text = parts[0]
        for part in parts[1:]:
            sep = self.pick(who, "SEP")
            text += (" " if text[-1] in "!?.！？。…" and sep.strip() else sep) + part
        return text

    def chatter(self, who: int, most: int) -> str:
        """One to `most` small-talk sentences, as people write several in one message."""
        count = self.rng.randint(1, most)
        lines = [self.pick(who, "SMALL_TALK") for _ in range(count)]
        return self.join(who, lines) + self.pick(who, "TAILS")

    def small_talk(self) -> None:
        """A message of small talk, a reaction, sometimes a question back and its answer."""
        a, b = (0, 1) if self.rng.random() < 0.5 else (1, 0)
        self.say(a, self.chatter(a, 4))
        reaction = self.pick(b, "REACTIONS")
        if self.rng.random() < 0.6:
            reaction = self.join(b, [reaction, self.chatter(b, 3)])
        self.say(b, reaction)
        if self.rng.random() < 0.4:
            self.say(b, self.pick(b, "BACK_QUESTIONS"))
            self.say(a, self.join(a, [self.pick(a, "BACK_ANSWERS"), self.chatter(a, 1)]))

    def echo(self, fact: Fact) -> None:
        """A fact's topic value mentioned in passing, without the fact, in its language."""
        owner, other = fact.owner, 1 - fact.owner
        same_language = self.pair[owner].phrases is self.pair[other].phrases
        a = other if same_language and self.rng.random() < 0.5 else owner
        text = self.pick(a, "ECHOES").replace("{v}", self.rng.choice(fact.echoes))
        if self.rng.random() < 0.5:
            text = self.join(a, [self.chatter(a, 1), text])
        self.say(a, text)
        self.say(1 - a, self.pick(1 - a, "REACTIONS"))

    def fact(self, fact: Fact, index: int) -> None:
        """The fact said in passing inside a longer message, then a reaction."""
        if index < 0:
            self.echo(fact)
            return
        owner, other = fact.owner, 1 - fact.owner
        if self.rng.random() < 0.5:
            self.say(other, self.pick(other, "PROMPTS"))
            parts = [self.pick(owner, "FACT_OPENERS") + fact.texts[index]]
        elif self.rng.random() < 0.7:
            parts = [self.chatter(owner, 2), fact.texts[index]]
        else:
            parts = [fact.texts[index]]
        if self.rng.random() < 0.6:
            parts.append(self.chatter(owner, 2))
        fact.turn_ids.append(self.say(owner, self.join(owner, parts)))
        reaction = self.pick(other, "REACTIONS")
        if self.rng.random() < 0.5:
            reaction += self.pick(other, "JOINER") + self.pick(other, "FOLLOW_UPS")
        if self.rng.random() < 0.3:
            reaction = self.join(other, [reaction, self.chatter(other, 1)])
        self.say(other, reaction)
        if self.rng.random() < 0.4:
            self.say(owner, self.pick(owner, "SHORT_REPLIES"))

    def session(self, date: str, items: list[tuple[Fact, int]], mean_talk: float) -> None:
        """Greeting, small talk around the session's facts, goodbye."""
        self.date = date
        first = self.rng.randrange(2)
        self.say(first, self.pick(first, "GREETINGS"))
        self.say(1 - first, self.pick(1 - first, "GREET_REPLIES"))
        for item in [*items, None]:
            # Every session holds at least one exchange of small talk before its goodbye.
            talk = round(self.rng.random() * 2 * mean_talk)
            for _ in range(max(talk, 1 if item is None and not items else 0)):
                self.small_talk()
            if item is not None:
                self.fact(*item)
        last = self.rng.randrange(2)
        self.say(last, self.pick(last, "CLOSINGS"))
        self.say(1 - last, self.pick(1 - last, "CLOSING_REPLIES"))


def conversation(index: int, seed: int) -> dict[str, Any]:
    """One conversation and its questions, from its own random stream."""
    rng = random.Random(f"{seed}-{index}")
    kind = kind_of(index)
    pair = people(rng, kind)
    dates = session_dates(rng)
    facts = facts_of(rng, 0, pair[0], len(dates)) + facts_of(rng, 1, pair[1], len(dates))
    placed: list[list[tuple[Fact, int]]] = [[] for _ in dates]
    for fact in facts:
        for n, where in enumerate(fact.sessions):
            placed[where].append((fact, n))
        # Index -1: the fact's topic value comes up again in another session.
        for _ in range(rng.choice((0, 1, 1, 2)) if fact.echoes else 0):
            placed[rng.randrange(len(dates))].append((fact, -1))
    for items in placed:
        rng.shuffle(items)
    said = sum(len(session) for session in placed)
    # Small-talk exchanges (about 2.8 turns each) fill the rest of the target length.
    target = rng.randint(380, 860)
    slots = said + len(dates)
    mean_talk = max(0.0, (target - 4 * len(dates) - 3 * said) / (2.8 * slots))
    chat = _Chat(f"chat-{kind}-{index:02d}", pair, rng)
    for date, items in zip(dates, placed, strict=True):
        chat.session(date, items, mean_talk)
    ordered = sorted(facts, key=lambda f: (f.turn_ids[-1], f.question))
    questions = [
        {
            "id": f"{chat.conv_id}-q{n:02d}",
            "question": fact.question,
            "evidence": [fact.turn_ids[i] for i in fact.evidence],
            "category": fact.category,
        }
        for n, fact in enumerate(ordered)
    ]
    return {"id": chat.conv_id, "turns": chat.turns, "questions": questions}


def generate(conversations: int = 10, seed: int = 2026) -> Iterator[dict[str, Any]]:
    """The dataset, one conversation at a time; conversation i depends only on (seed, i)."""
    for index in range(conversations):
        yield conversation(index, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output JSONL file (default: stdout)")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    lines = (
        json.dumps(conv, ensure_ascii=False, sort_keys=True)
        for conv in generate(args.conversations, args.seed)
    )
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
