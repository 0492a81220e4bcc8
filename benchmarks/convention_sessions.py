"""One session of a `gen_conventions.py` dialogue: friendly messages with rules said in passing.

A session opens with a greeting and closes with a goodbye; between them, each of its rule
versions sits inside a longer message (one or two rules among friendly sentences), plus
small-talk messages up to the session's length. Fillers are slipped into any message with
room. Every user message gets a reply; a reply may ask a code question that the next user
message answers first (the answer is one-off advice, tagged as filler).
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import convention_talk as en_talk
import convention_talk_zh as zh_talk
from convention_rules import Decks, Version

TALK: dict[str, ModuleType] = {"en": en_talk, "zh": zh_talk}
MAX_PARTS = 5  # sentences of a message before no filler is added to it
QUESTION_CHANCE = 0.12  # of a reply ending in a code question


@dataclass
class Part:
    """One sentence of a user message; `tag` is rule, update, filler or empty."""

    text: str
    tag: str = ""
    version: Version | None = None
    kind: str = (
        ""  # a small-talk sentence's kind (news, story, praise, life): what the reply answers
    )


@dataclass
class Message:
    """A user message: its language, its role in the session and its sentences."""

    lang: str
    kind: str  # greet | rule | talk | close
    parts: list[Part] = field(default_factory=list)


def iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class SessionWriter:
    """Writes the sessions of one dialogue; holds its decks of fillers and questions."""

    def __init__(self, rng: random.Random, kind: str, split_fillers: dict[str, tuple[str, ...]],
                 persona: str, name: str, project: str) -> None:  # fmt: skip
        self.rng, self.kind, self.persona = rng, kind, persona
        self.name, self.project = name, project
        self.fillers = split_fillers
        self.questions = {lang: rng.sample(m.CODE_QA, len(m.CODE_QA)) for lang, m in TALK.items()}
        self.decks = Decks(rng)
        self.next_rule = 1

    def lang(self) -> str:
        """A message's language: the dialogue's, or either one in a mixed dialogue."""
        if self.kind == "mixed":
            return self.rng.choice(("en", "zh"))
        return self.kind

    def _draw(self, lang: str, side: str, table: str) -> str:
        """The next line of a table from its deck, so lines rarely repeat soon."""
        pool: Any = getattr(TALK[lang], side)
        for step in table.split("/"):  # "react/news": the news reactions
            pool = pool[step]
        line: str = self.decks.draw(f"{lang}/{side}/{table}", pool)
        return line.replace("{name}", self.name).replace("{project}", self.project)

    def _user(self, lang: str, table: str) -> str:
        return self._draw(lang, "USER" if self.persona == "agent" else "MENTOR", table)

    def _side(self, lang: str, table: str) -> str:
        return self._draw(lang, "AGENT" if self.persona == "agent" else "MENTEE", table)

    def _table(self, lang: str) -> dict[str, tuple[str, ...]]:
        side: dict[str, tuple[str, ...]] = (
            TALK[lang].AGENT if self.persona == "agent" else TALK[lang].MENTEE
        )
        return side

    def _talk(self, lang: str) -> Part:
        kind = self.rng.choice(("news", "story", "story", "praise", "life", "life"))
        return Part(self._draw(lang, "TALK", kind), kind=kind)

    def _rule_message(self, group: list[Version]) -> Message:
        """One or two rule sentences among zero to two friendly sentences on either side."""
        rng = self.rng
        lang = group[0].lang
        rules = [Part(v.text, "rule" if v.number == 1 else "update", v) for v in group]
        if len(rules) == 2 and rng.random() < 0.3:
            rules.insert(1, self._talk(lang))
        room = MAX_PARTS - len(rules)
        before = min(room, rng.choice((0, 1, 1, 2)))
        after = min(room - before, rng.choice((0, 1, 1, 2)) or (0 if before else 1))
        parts = [self._talk(lang) for _ in range(before)] + rules
        parts += [self._talk(lang) for _ in range(after)]
        return Message(lang, "rule", parts)

    def _filler(self, messages: list[Message]) -> None:
        """Slip one filler into a message with room (a new small-talk message if none has any)."""
        rng = self.rng
        room = [m for m in messages if len(m.parts) < MAX_PARTS]
        if not room:
            lang = self.lang()
            messages.insert(-1, Message(lang, "talk", [self._talk(lang)]))
            room = [messages[-2]]
        message = rng.choice(room)
        low = 1 if message.kind == "greet" else 0
        high = len(message.parts) - (1 if message.kind == "close" else 0)
        filler = self.decks.draw(f"{message.lang}/fillers", self.fillers[message.lang])
        message.parts.insert(rng.randint(low, max(low, high)), Part(filler, "filler"))

    def messages(self, groups: list[list[Version]], fillers: int, turns: int) -> list[Message]:
        """The session's user messages: greeting, rule and talk messages in any order, goodbye."""
        rng = self.rng
        greet_lang = self.lang()
        greet = Message(greet_lang, "greet", [Part(self._user(greet_lang, "greet"))])
        if self.persona != "agent" and rng.random() < 0.7:
            greet.parts.append(Part(self._user(greet_lang, "how")))
        middle = [self._rule_message(group) for group in groups]
        for _ in range(max(0, turns // 2 - 2 - len(middle))):
            lang = self.lang()
            middle.append(
                Message(lang, "talk", [self._talk(lang) for _ in range(rng.randint(1, 3))])
            )
        rng.shuffle(middle)
        close_lang = self.lang()
        close = Message(close_lang, "close", [Part(self._user(close_lang, "close"))])
        messages = [greet, *middle, close]
        for _ in range(fillers):
            self._filler(messages)
        return messages

    def _reply(self, message: Message, following: Message | None) -> str:
        """The mentee's or agent's answer, sometimes ending in a question the next message answers."""
        rng, lang = self.rng, message.lang
        if message.kind == "close":
            return self._side(lang, "close")
        if message.kind == "greet":
            lines = [self._side(lang, "greet")]
            chance = 0.4
        elif message.kind == "rule":
            said = [p.version for p in message.parts if p.version is not None]
            value = said[-1].value
            if value is not None and rng.random() < 0.3:
                forms = value.en if lang == "en" else value.zh
                echo = rng.choice(self._table(lang)["echo"])
                lines = [echo.replace("{v}", rng.choice(forms)[0])]
            else:
                lines = [self._side(lang, "ack")]
            chance = 0.15
        else:
            kinds = [p.kind for p in message.parts if p.kind] or ["story"]
            lines = [self._side(lang, f"react/{kinds[-1]}")]
            chance = 0.3
        if rng.random() < chance:
            lines.append(self._side(lang, "progress"))
        asked = self.questions[lang]
        if (
            following is not None
            and following.lang == lang
            and len(following.parts) < MAX_PARTS
            and asked
            and rng.random() < QUESTION_CHANCE
        ):
            question, answer = asked.pop()
            lines.append(question)
            following.parts.insert(0, Part(answer, "filler"))  # answered first thing next
        return (" " if lang == "en" else "").join(lines)

    def turns(self, messages: list[Message], start: dt.datetime) -> list[dict[str, Any]]:
        """The session's turns, user and assistant alternating, seconds to minutes apart."""
        rng = self.rng
        moment = start + dt.timedelta(seconds=rng.randint(3, 40))
        out: list[dict[str, Any]] = []
        for n, message in enumerate(messages):
            tags = []
            for position, part in enumerate(message.parts):
                if part.version is not None:
                    rule = part.version.rule
                    if not rule.ident:
                        rule.ident = f"r{self.next_rule}"
                        self.next_rule += 1
                    part.version.turn, part.version.position = len(out), position
                    tags.append({"tag": part.tag, "rule": rule.ident, "sentence": part.text})
                elif part.tag:
                    tags.append({"tag": part.tag, "sentence": part.text})
            text = (" " if message.lang == "en" else "").join(p.text for p in message.parts)
            out.append({"speaker": "user", "text": text, "time": iso(moment), "tags": tags})
            moment += dt.timedelta(seconds=rng.randint(15, 150))
            following = messages[n + 1] if n + 1 < len(messages) else None
            reply = self._reply(message, following)
            out.append({"speaker": "assistant", "text": reply, "time": iso(moment), "tags": []})
            moment += dt.timedelta(seconds=rng.randint(30, 300))
        return out
