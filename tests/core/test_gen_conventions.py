"""benchmarks/gen_conventions.py: the convention dialogues keep the shape issue 36's scorer relies on."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli as lcm_main
from lcm_core.text.tokens import CJK_RE

Dialogue = dict[str, Any]
_STOP_TEXT = """a an the and or but of to in on at for with from by is are be it its this that as
    so if all each every any your you we our me my i into per not no than then one two write
    implement create build make function class python"""
STOP = frozenset(_STOP_TEXT.split())
# Quoted stretches, numbers and identifier-like tokens: what varies inside one template.
VARYING = re.compile(r"['\"`“”][^'\"`“”]*['\"`“”]|[\w@/$¥.,-]*\d[\w@/$¥.,-]*|@\w+")


@pytest.fixture(scope="module")
def gen(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("gen_conventions")


@pytest.fixture(scope="module")
def logs(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("convention_logs")


@pytest.fixture(scope="module")
def dev(gen: ModuleType) -> list[Dialogue]:
    return list(gen.generate(dialogues=200, seed=3, split="dev"))


@pytest.fixture(scope="module")
def test_split(gen: ModuleType) -> list[Dialogue]:
    return list(gen.generate(dialogues=60, seed=3, split="test"))


def _time(text: str) -> dt.datetime:
    assert text.endswith("Z"), text
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def _has_cjk(text: str) -> bool:
    return any(CJK_RE.match(char) for char in text)


def _rule_sentences(dialogue: Dialogue) -> list[tuple[str, str]]:
    """(rule id, sentence) of every rule and update tag of the dialogue."""
    return [
        (tag["rule"], tag["sentence"])
        for session in dialogue["sessions"]
        for turn in session["turns"]
        for tag in turn["tags"]
        if tag["tag"] in ("rule", "update")
    ]


def test_same_arguments_give_byte_identical_files(gen: ModuleType, tmp_path: Path) -> None:
    first, second, other, test = (tmp_path / f"{n}.jsonl" for n in "abcd")
    gen.main(["--out", str(first), "--dialogues", "4", "--seed", "11"])
    gen.main(["--out", str(second), "--dialogues", "4", "--seed", "11"])
    gen.main(["--out", str(other), "--dialogues", "4", "--seed", "12"])
    gen.main(["--out", str(test), "--dialogues", "4", "--seed", "11", "--split", "test"])
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    assert first.read_bytes() != test.read_bytes()
    lines = first.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "conv-000",
        "conv-001",
        "conv-002",
        "conv-003",
    ]
    assert list(json.loads(lines[0])) == [
        "id",
        "language",
        "project",
        "sessions",
        "request",
        "rules",
    ]


def test_a_dialogue_depends_only_on_seed_split_and_index(gen: ModuleType) -> None:
    few = list(gen.generate(dialogues=2, seed=5, split="test"))
    more = list(gen.generate(dialogues=5, seed=5, split="test"))
    assert few == more[:2]
    with pytest.raises(ValueError, match="unknown split"):
        gen.dialogue(0, 5, "train")


def test_two_hundred_dialogues_are_distinct_projects(dev: list[Dialogue]) -> None:
    assert len(dev) == 200
    assert len({d["id"] for d in dev}) == 200
    assert len({d["project"] for d in dev}) == 200
    assert all(re.fullmatch(r"/home/dev/projects/[a-z0-9-]+", d["project"]) for d in dev)
    session_ids = [s["id"] for d in dev for s in d["sessions"]]
    assert len(set(session_ids)) == len(session_ids)


def test_sessions_are_days_apart_and_end_with_one_request(dev: list[Dialogue]) -> None:
    for d in dev:
        *talk, last = d["sessions"]
        assert 10 <= len(talk) <= 15, d["id"]
        starts = [_time(s["start"]) for s in d["sessions"]]
        assert all(b - a >= dt.timedelta(days=1) for a, b in itertools.pairwise(starts)), d["id"]
        for session in talk:
            turns = session["turns"]
            assert 8 <= len(turns) <= 40, (d["id"], len(turns))
            assert [t["speaker"] for t in turns] == ["user", "assistant"] * (len(turns) // 2)
            times = [_time(session["start"])] + [_time(t["time"]) for t in turns]
            gaps = [b - a for a, b in itertools.pairwise(times)]
            assert all(dt.timedelta(seconds=1) <= g <= dt.timedelta(minutes=10) for g in gaps)
        assert [t["speaker"] for t in last["turns"]] == ["user"]
        assert last["turns"][0]["text"] == d["request"] and last["turns"][0]["tags"] == []


def test_rules_types_updates_and_fillers_per_dialogue(dev: list[Dialogue]) -> None:
    for d in dev:
        versions: dict[str, list[dict[str, Any]]] = {}
        for entry in d["rules"]:
            versions.setdefault(entry["rule"], []).append(entry)
        types = [entries[0]["type"] for entries in versions.values()]
        assert 5 <= len(types) == len(set(types)) <= 12, d["id"]
        for rule, entries in versions.items():
            assert {e["type"] for e in entries} == {entries[0]["type"]}
            assert [e["version"] for e in entries] == list(range(1, len(entries) + 1))
            assert [e["in_force"] for e in entries] == [False] * (len(entries) - 1) + [True]
            sessions = [e["session"] for e in entries]
            assert sessions == sorted(set(sessions)), "each update comes in a later session"
            assert len({e["value"] for e in entries}) == len(entries), (d["id"], rule)
            assert len(entries) <= 5
        assert sum(3 <= len(e) <= 5 for e in versions.values()) >= 3, d["id"]
        assert [(e["session"], e["turn"]) for e in d["rules"]] == sorted(
            (e["session"], e["turn"]) for e in d["rules"]
        )
        fillers = [
            tag
            for s in d["sessions"]
            for t in s["turns"]
            for tag in t["tags"]
            if tag["tag"] == "filler"
        ]
        assert len(fillers) >= 10 and all("rule" not in tag for tag in fillers), d["id"]


def test_tags_and_show_strings_point_at_their_turns(dev: list[Dialogue]) -> None:
    for d in dev:
        tagged: Counter[tuple[str, int, int, str]] = Counter()
        for n, session in enumerate(d["sessions"]):
            for m, turn in enumerate(session["turns"]):
                for tag in turn["tags"]:
                    assert tag["sentence"] and tag["sentence"] in turn["text"], (d["id"], n, m)
                    assert turn["speaker"] == "user"
                    if tag["tag"] != "filler":
                        tagged[(tag["rule"], n, m, tag["tag"])] += 1
        said = Counter(
            (e["rule"], e["session"], e["turn"], "rule" if e["version"] == 1 else "update")
            for e in d["rules"]
        )
        assert tagged == said, d["id"]
        for e in d["rules"]:
            text = d["sessions"][e["session"]]["turns"][e["turn"]]["text"]
            assert e["show"] and all(s in text for s in e["show"]), (d["id"], e)


def test_a_shown_value_names_one_rule(dev: list[Dialogue]) -> None:
    """A version's key show string is in no other rule's sentence and in no filler or talk."""
    for d in dev:
        sentences = _rule_sentences(d)
        others = []
        for session in d["sessions"]:
            for turn in session["turns"]:
                if turn["speaker"] == "user":
                    rest = turn["text"]
                    for tag in turn["tags"]:
                        if tag["tag"] != "filler":
                            rest = rest.replace(tag["sentence"], " ")
                    others.append(rest)
        for e in d["rules"]:
            key = e["show"][0].lower()
            assert not any(key in s.lower() for rule, s in sentences if rule != e["rule"]), (
                d["id"],
                e,
            )
            assert not any(key in text.lower() for text in others), (d["id"], e)
        keys = {(e["rule"], e["version"]): e["show"][0].lower() for e in d["rules"]}
        for a, key_a in keys.items():
            for b, key_b in keys.items():
                assert a == b or key_a not in key_b, (d["id"], key_a, key_b)


def test_language_mix_and_cross_language_updates(dev: list[Dialogue]) -> None:
    counts = Counter(d["language"] for d in dev)
    assert counts == {"en": 140, "zh": 30, "mixed": 30}
    for d in dev:
        user = [t["text"] for s in d["sessions"] for t in s["turns"] if t["speaker"] == "user"]
        chinese = sum(_has_cjk(text) for text in user)
        if d["language"] == "en":
            assert chinese == 0, d["id"]
        elif d["language"] == "zh":
            assert chinese == len(user), d["id"]
        else:
            assert 0.2 * len(user) < chinese < 0.8 * len(user), d["id"]
            by_rule: dict[str, set[bool]] = {}
            for rule, sentence in _rule_sentences(d):
                by_rule.setdefault(rule, set()).add(_has_cjk(sentence))
            assert any(len(kinds) == 2 for kinds in by_rule.values()), d["id"]
            # Chinese rules about English identifiers.
            assert any(
                _has_cjk(s) and re.search(r"[A-Za-z_@]{2,}", s) for _, s in _rule_sentences(d)
            )


def test_the_request_shares_no_words_with_most_rules(dev: list[Dialogue]) -> None:
    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP}

    for d in dev:
        asked = words(d["request"])
        sentences = [s for _, s in _rule_sentences(d)]
        sharing = sum(bool(asked & words(s)) for s in sentences)
        assert sharing <= 0.3 * len(sentences), (d["id"], d["request"])


def test_dev_and_test_share_no_template(
    benchmark_script: Callable[[str], ModuleType], dev: list[Dialogue], test_split: list[Dialogue]
) -> None:
    for name in ("convention_phrases", "convention_phrases_zh"):
        splits = benchmark_script(name).SPLITS
        for key, dev_pool in splits["dev"].items():
            test_pool = splits["test"][key]
            if key == "phrases":
                for family, phrases in dev_pool.items():
                    assert not set(phrases) & set(test_pool[family]), (name, family)
            else:
                assert not set(dev_pool) & set(test_pool), (name, key)

    def shapes(data: list[Dialogue]) -> tuple[set[str], set[str]]:
        rules, fillers = set(), set()
        for d in data:
            for s in d["sessions"]:
                for t in s["turns"]:
                    for tag in t["tags"]:
                        if tag["tag"] == "filler":
                            fillers.add(tag["sentence"])
                        else:
                            rules.add(VARYING.sub("<v>", tag["sentence"]))
        return rules, fillers

    dev_rules, dev_fillers = shapes(dev[:60])
    test_rules, test_fillers = shapes(test_split)
    code_answers = {
        a for m in ("convention_talk", "convention_talk_zh") for _, a in benchmark_script(m).CODE_QA
    }
    assert len(dev_rules) > 300 and len(test_rules) > 300
    assert not dev_rules & test_rules
    assert not (dev_fillers & test_fillers) - code_answers
    assert {d["request"] for d in dev}.isdisjoint(d["request"] for d in test_split)


def _events(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as con:
        return con.execute(
            "SELECT session_id, type, text FROM events ORDER BY session_id, seq"
        ).fetchall()


def test_logs_ingest_into_one_project(
    dev: list[Dialogue], logs: ModuleType, tmp_path: Path
) -> None:
    chosen = [next(d for d in dev if d["language"] == kind) for kind in ("en", "zh", "mixed")]
    for d in chosen:
        paths = logs.write_logs(d, tmp_path / "logs")
        assert [p.name for p in paths] == sorted(p.name for p in paths)
        assert len(paths) == len(d["sessions"])
        db = tmp_path / f"{d['id']}.sqlite"
        runner = CliRunner()
        done = runner.invoke(
            lcm_main,
            ["--db", str(db), "ingest", "--json", "--quiet", str(tmp_path / "logs" / d["id"])],
        )
        assert done.exit_code == 0, done.output
        report = json.loads(done.output)
        assert report["issues"] == [] and report["sessions"] == len(d["sessions"])
        stored = _events(db)
        messages = Counter((sid, text) for sid, kind, text in stored if kind.endswith("/message"))
        wanted = Counter((s["id"], t["text"]) for s in d["sessions"] for t in s["turns"])
        assert messages == wanted
        with sqlite3.connect(db) as con:
            projects = con.execute("SELECT DISTINCT project FROM sessions").fetchall()
        assert projects == [(d["project"],)]
        status = runner.invoke(lcm_main, ["--db", str(db), "status", "--json"])
        assert status.exit_code == 0, status.output
        assert d["project"] in status.output
        again = runner.invoke(
            lcm_main, ["--db", str(db), "ingest", "--json", "--quiet", str(paths[0].parent)]
        )
        assert json.loads(again.output)["inserted"] == 0


def test_log_events_run_forward_and_close_answered_turns(
    dev: list[Dialogue], logs: ModuleType
) -> None:
    d = dev[0]
    for session in d["sessions"]:
        events = logs.session_events(session)
        assert [e["seq"] for e in events] == list(range(len(events)))
        times = [e["time"] for e in events]
        assert times == sorted(times) and len(set(times)) == len(times)
        kinds = Counter(e["type"] for e in events)
        users = sum(t["speaker"] == "user" for t in session["turns"])
        assert kinds["turn/start"] == kinds["user/message"] == users
        assert kinds["turn/end"] == kinds["assistant/message"] == len(session["turns"]) - users
    last = logs.session_events(d["sessions"][-1])
    assert [e["type"] for e in last] == ["turn/start", "user/message"]


def test_logs_cli_writes_the_chosen_dialogues_and_refuses_bad_lines(
    gen: ModuleType, logs: ModuleType, tmp_path: Path
) -> None:
    dataset = tmp_path / "conv.jsonl"
    gen.main(["--out", str(dataset), "--dialogues", "3", "--seed", "2"])
    out = tmp_path / "logs"
    assert logs.main(["--dataset", str(dataset), "--out", str(out), "--ids", "conv-001"]) == 0
    assert [p.name for p in out.iterdir()] == ["conv-001"]
    sessions = json.loads(dataset.read_text(encoding="utf-8").splitlines()[1])["sessions"]
    names = sorted(p.name for p in (out / "conv-001").iterdir())
    assert names == [f"{n:02d}.jsonl" for n in range(len(sessions))]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "conv-000"\n', encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        logs.main(["--dataset", str(bad), "--out", str(tmp_path / "other")])
    assert stopped.value.code == 2
    assert not (tmp_path / "other").exists()
