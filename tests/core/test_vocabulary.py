"""The language packs' word lists are package data, checked entry by entry when read.

A malformed entry in `lcm_core/text/languages/data/*.json` stops the import with one line
naming the file, the list and the entry; the shipped files read clean, are what the
language modules expose, and are shipped by the package-data glob.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from lcm_core.text.languages import bridge, en, zh
from lcm_core.text.languages.vocabulary import DATA_DIR, VocabularyError, WordFile
from lcm_core.text.stemming import stem

ROOT = Path(__file__).resolve().parents[2]


def _shipped(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((Path(DATA_DIR) / name).read_text(encoding="utf-8"))
    return data


def _broken(tmp_path: Path, name: str, change: Any) -> Path:
    """A copy of a shipped file with one change applied to its parsed object."""
    data = _shipped(name)
    change(data)
    (tmp_path / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return tmp_path


def _error(folder: Path, name: str, read: Any) -> str:
    with pytest.raises(VocabularyError) as raised:
        read(WordFile.read(name, folder=str(folder)))
    message = str(raised.value)
    assert "\n" not in message and message.startswith(str(folder / name) + ": ")
    return message[len(str(folder / name)) + 2 :]


def _insert_pair(index: int, pair: list[str]) -> Any:
    return lambda d: d["pairs"]["pairs"].insert(index, pair)


def _read_pairs(file: WordFile) -> Any:
    return file.pairs("pairs")


@pytest.mark.parametrize(
    ("name", "change", "read", "expected"),
    [
        (
            "en.json",
            lambda d: d["stop_words"]["words"].insert(3, 42),
            lambda f: f.words("stop_words", lower=True),
            "stop_words[3]: 42 is not a word (a non-empty trimmed string)",
        ),
        (
            "en.json",
            lambda d: d["stop_words"]["words"].append("Maybe"),
            lambda f: f.words("stop_words", lower=True),
            "stop_words[220]: 'Maybe' is not lower case (text is folded before matching)",
        ),
        (
            "en.json",
            lambda d: d["norm_cues"]["words"].append("avoid"),
            lambda f: f.words("norm_cues", lower=True),
            "norm_cues[18]: 'avoid' is listed already, at norm_cues[2]",
        ),
        (
            "en.json",
            lambda d: d["clitics"]["words"].append(" 's"),
            lambda f: f.words("clitics"),
            'clitics[7]: " \'s" is not a word (a non-empty trimmed string)',
        ),
        (
            "en.json",
            lambda d: d["relative_days"]["days"].update({"yesterday": "-1"}),
            lambda f: f.day_offsets("relative_days"),
            "relative_days['yesterday']: '-1' is not a whole number of days",
        ),
        (
            "en.json",
            lambda d: d.pop("clitics"),
            lambda f: f.words("clitics"),
            "clitics: expected an object with an 'about' string",
        ),
        (
            "en.json",
            lambda d: d["stop_words"].update({"words": "a an the"}),
            lambda f: f.words("stop_words"),
            "stop_words: expected 'words' to be a JSON array",
        ),
        (
            "zh.json",
            lambda d: d["particles"].update({"chars": "的了 吗"}),
            lambda f: f.chars("particles"),
            "particles[2]: ' ' is a space or listed already",
        ),
        (
            "zh.json",
            lambda d: d["function_chars"].update({"chars": "我你我"}),
            lambda f: f.chars("function_chars"),
            "function_chars[2]: '我' is a space or listed already",
        ),
        (
            "zh.json",
            lambda d: d["relative_days"]["days"].update({"明天": True}),
            lambda f: f.day_offsets("relative_days"),
            "relative_days['明天']: True is not a whole number of days",
        ),
        (
            "zh.json",
            lambda d: d["stop_bigrams"]["words"].append("什么"),
            lambda f: f.words("stop_bigrams"),
            "stop_bigrams[17]: '什么' is listed already, at stop_bigrams[0]",
        ),
        (
            "bridge.json",
            _insert_pair(0, ["zebra", "斑马"]),
            _read_pairs,
            "pairs[1]: ['account', '账号'] is out of order or repeated (after ['zebra', '斑马'])",
        ),
        (
            "bridge.json",
            _insert_pair(1, ["account", "账号"]),
            _read_pairs,
            "pairs[1]: ['account', '账号'] is out of order or repeated (after ['account', '账号'])",
        ),
        (
            "bridge.json",
            _insert_pair(0, ["aa", "端口8080"]),
            _read_pairs,
            "pairs[0]: '端口8080' is empty or holds a Latin letter, digit or space",
        ),
        (
            "bridge.json",
            _insert_pair(0, ["Account", "账号"]),
            _read_pairs,
            "pairs[0]: 'Account' is not lower-case English words",
        ),
        (
            "bridge.json",
            _insert_pair(0, ["aa", "账号", "账户"]),
            _read_pairs,
            "pairs[0]: ['aa', '账号', '账户'] is not an [english, chinese] pair of strings",
        ),
    ],
)
def test_a_malformed_entry_names_the_file_and_entry(
    tmp_path: Path, name: str, change: Any, read: Any, expected: str
) -> None:
    assert _error(_broken(tmp_path, name, change), name, read) == expected


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: d["concepts"]["groups"].append({"asks": ["Hobby"], "finds": ["fun"]}),
            ".asks: expected lower-case trimmed words, each once",
        ),
        (
            lambda d: d["concepts"]["groups"].append({"asks": ["x"], "finds": ["a", "a"]}),
            ".finds: expected lower-case trimmed words, each once",
        ),
        (
            lambda d: d["concepts"]["groups"].append({"asks": ["x"]}),
            ": expected an object with 'asks' and 'finds'",
        ),
    ],
)
def test_a_malformed_concept_group_names_its_place(
    tmp_path: Path, change: Any, expected: str
) -> None:
    count = len(_shipped("concepts.json")["concepts"]["groups"])
    folder = _broken(tmp_path, "concepts.json", change)
    error = _error(folder, "concepts.json", lambda f: f.groups("concepts"))
    assert error == f"concepts[{count}]{expected}"


def test_a_file_that_is_not_a_word_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "en.json").write_text('{"stop_words": []', encoding="utf-8")
    assert _error(tmp_path, "en.json", lambda f: f).startswith("not JSON (")
    (tmp_path / "en.json").write_text('["a", "the"]', encoding="utf-8")
    assert _error(tmp_path, "en.json", lambda f: f) == (
        "expected a JSON object with an 'about' string"
    )
    assert _error(tmp_path, "missing.json", lambda f: f).startswith("cannot read it (")


def test_the_shipped_files_are_what_the_modules_expose() -> None:
    """Each module reads its lists from its file: the data, not a copy in code, is used."""
    english, chinese = _shipped("en.json"), _shipped("zh.json")
    assert frozenset(english["stop_words"]["words"]) == en.STOP_WORDS
    assert tuple(english["clitics"]["words"]) == en.CLITICS
    assert english["relative_days"]["days"] == en.RELATIVE_DAYS
    assert frozenset(chinese["particles"]["chars"]) == zh.PARTICLES
    assert tuple(chinese["norm_cues"]["words"]) == zh.NORM_CUES
    assert bridge.pairs() == tuple(map(tuple, _shipped("bridge.json")["pairs"]["pairs"]))


def test_the_bridge_file_drives_query_expansion() -> None:
    """A pair of the file, both ways: 'budget' searches 预算 and 端口 searches 'port'."""
    assert ["budget", "预算"] in _shipped("bridge.json")["pairs"]["pairs"]
    assert "预算" in bridge.translations("what is our budget?", [stem("budget")])
    assert "port" in bridge.translations("端口是多少？", [])


def test_every_data_file_is_shipped_by_the_package_data_glob() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["lcm_core.text.languages"]
    files = sorted(p.name for p in Path(DATA_DIR).glob("*"))
    assert files == ["bridge.json", "concepts.json", "en.json", "zh.json"]
    for name in files:
        assert any(fnmatch.fnmatch(f"data/{name}", glob) for glob in globs), name
