"""A deterministic set of multi-session convention dialogues: development data of issue 36.

Each dialogue is one software project: a mentor (or a user) and a mentee (or a coding
agent) over 10-15 sessions a few days apart, 8-40 turns each, most of it friendly talk.
5-12 coding conventions and project constraints are said in passing inside longer
messages; three to five of them are updated two to four times in later sessions, often
naming the old value, in a mixed dialogue sometimes in the other language. Ten or more
fillers sound like rules and are not. A last, new session asks for code in words most
rules do not share. About 70% of dialogues are English, 15% Chinese, 15% mixed.

`--split dev` is for tuning, `--split test` states the same rule types in other words
(no rule, update, filler or request template is shared). The same arguments give
byte-identical output; dialogue i depends only on (seed, split, i).

    python benchmarks/gen_conventions.py --out /tmp/conventions.jsonl --dialogues 200

One JSON object per line: `id`, `language` (en | zh | mixed), `project` (the cwd of every
session), `sessions` (in time order, the last being the request session; each `id`,
`start`, `turns` of `speaker`, `text`, `time`, `tags`), `request`, and `rules`: one entry
per rule version in time order (`rule`, `type`, `version`, `value`, `show`, `session`,
`turn`, `in_force`). `session` and `turn` are 0-based indexes into `sessions` and its
`turns`. A tag is `{"tag": "rule" | "update" | "filler", "rule"?, "sentence"}`, the
sentence being an exact substring of its turn's text; `show` holds the strings a memory
block must contain for that version to be there.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from convention_rules import PHRASES, Decks, Rule, Version, plan_rules, value_of, write_version
from convention_sessions import TALK, SessionWriter, iso

SPLITS = ("dev", "test")
SLUG_HEADS = ("ledger", "pantry", "tide", "orbit", "harbor", "atlas", "maple", "ember",
              "quill", "beacon", "cobalt", "fern", "granite", "lumen", "nimbus", "pixel",
              "relay", "sable", "tally", "vector")  # fmt: skip
SLUG_TAILS = ("sync", "api", "board", "hub", "tracker", "scheduler", "notes", "cache", "bot",
              "pipeline", "studio", "forms", "maps", "pay", "reports", "search", "shop",
              "stats", "vault", "works")  # fmt: skip


def language_of(index: int) -> str:
    """Three in twenty dialogues are Chinese, three mixed, the rest English."""
    return {3: "zh", 10: "zh", 16: "zh", 6: "mixed", 13: "mixed", 19: "mixed"}.get(index % 20, "en")


def project_slug(index: int, seed: int, split: str) -> str:
    """A project name no other dialogue of the same seed and split has."""
    names = [f"{head}-{tail}" for head in SLUG_HEADS for tail in SLUG_TAILS]
    random.Random(f"projects-{seed}-{split}").shuffle(names)
    lap = index // len(names)
    return names[index % len(names)] + (f"-{lap + 1}" if lap else "")


def _languages(rng: random.Random, kind: str, rules: list[Rule]) -> None:
    """Each version's language; a mixed dialogue has at least one update across languages."""
    for rule in rules:
        for version in rule.versions:
            version.lang = kind if kind != "mixed" else rng.choice(("en", "zh"))
    if kind == "mixed":
        changed = [r for r in rules if len(r.versions) > 1]
        if not any(len({v.lang for v in r.versions}) > 1 for r in changed):
            last = rng.choice(changed).versions[-1]
            last.lang = "zh" if last.lang == "en" else "en"


def _groups(rng: random.Random, versions: list[Version]) -> list[list[Version]]:
    """The session's versions as messages: now and then two of one language in one message."""
    rng.shuffle(versions)
    groups: list[list[Version]] = []
    for version in versions:
        last = groups[-1] if groups else None
        if last and len(last) == 1 and last[0].lang == version.lang and rng.random() < 0.3:
            last.append(version)
        else:
            groups.append([version])
    return groups


def _session_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _rules_list(rules: list[Rule]) -> list[dict[str, Any]]:
    versions = sorted(
        (v for r in rules for v in r.versions), key=lambda v: (v.session, v.turn, v.position)
    )
    return [
        {
            "rule": v.rule.ident,
            "type": v.rule.type.key,
            "version": v.number,
            "value": value_of(v),
            "show": list(v.show),
            "session": v.session,
            "turn": v.turn,
            "in_force": v.number == len(v.rule.versions),
        }
        for v in versions
    ]


def dialogue(index: int, seed: int = 0, split: str = "dev") -> dict[str, Any]:
    """One dialogue, from its own random stream."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use dev or test")
    rng = random.Random(f"conventions-{seed}-{split}-{index}")
    kind = language_of(index)
    persona = "agent" if rng.random() < 0.3 else "mentor"
    name = rng.choice(
        TALK["zh"].NAMES if kind == "zh" else TALK["en"].NAMES[-4:] if kind == "mixed" else TALK["en"].NAMES
    )  # fmt: skip
    slug = project_slug(index, seed, split)
    day = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randrange(300))
    count = rng.randint(10, 15)
    rules = plan_rules(rng, split, day, count)
    _languages(rng, kind, rules)
    decks = Decks(rng)
    for rule in rules:
        for version in rule.versions:
            write_version(rng, decks, version, split)
    fillers = {lang: module.SPLITS[split]["fillers"] for lang, module in PHRASES.items()}
    writer = SessionWriter(rng, kind, fillers, persona, name, slug)
    # Ten to fifteen fillers over the sessions (code answers come on top).
    per_session = [0] * count
    for _ in range(rng.randint(10, 15)):
        per_session[rng.randrange(count)] += 1
    sessions: list[dict[str, Any]] = []
    moment = dt.datetime.combine(day, dt.time(rng.randint(8, 17), rng.choice((0, 15, 30, 45))))
    for n in range(count):
        here = [v for r in rules for v in r.versions if v.session == n]
        messages = writer.messages(_groups(rng, here), per_session[n], 2 * rng.randint(4, 20))
        sessions.append(
            {"id": _session_id(rng), "start": iso(moment), "turns": writer.turns(messages, moment)}
        )
        moment = dt.datetime.combine(
            moment.date() + dt.timedelta(days=rng.randint(2, 5)),
            dt.time(rng.randint(8, 17), rng.choice((0, 10, 20, 30, 40, 50))),
        )
    lang = writer.lang()
    request = rng.choice(PHRASES[lang].SPLITS[split]["requests"])
    asked = moment + dt.timedelta(seconds=rng.randint(5, 60))
    turn = {"speaker": "user", "text": request, "time": iso(asked), "tags": []}
    sessions.append({"id": _session_id(rng), "start": iso(moment), "turns": [turn]})
    return {
        "id": f"conv-{index:03d}",
        "language": kind,
        "project": f"/home/dev/projects/{slug}",
        "sessions": sessions,
        "request": request,
        "rules": _rules_list(rules),
    }


def generate(dialogues: int = 200, seed: int = 0, split: str = "dev") -> Iterator[dict[str, Any]]:
    """The dataset, one dialogue at a time."""
    for index in range(dialogues):
        yield dialogue(index, seed, split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output JSONL file (default: stdout)")
    parser.add_argument("--dialogues", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=SPLITS, default="dev")
    args = parser.parse_args(argv)
    if args.dialogues < 1:
        parser.error("--dialogues must be at least 1")
    lines = (
        json.dumps(d, ensure_ascii=False) for d in generate(args.dialogues, args.seed, args.split)
    )
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
