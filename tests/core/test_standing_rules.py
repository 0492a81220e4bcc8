"""Standing rules: which user statements set one, and the subject key that names what it governs."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from lcm_core.extraction.candidates import extract_text
from lcm_core.extraction.standing import compatible, parse_key, rule_key, vocabulary


def rules_of(text: str) -> list[tuple[str, str]]:
    """(subject key, content) of every rule one user message sets."""
    return [(c.rule.key, c.content) for c in extract_text(text).candidates if c.rule is not None]


def keys_of(text: str) -> list[str]:
    return [key for key, _ in rules_of(text)]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Always start variable names with 'x_'.", "naming/variable/prefix"),
        ("End method names with '_p'.", "naming/method/suffix"),
        (
            "One of the conventions we follow is to end attribute names with '_j'.",
            "naming/attribute/suffix",
        ),
        ("Include a single digit in your function argument names.", "naming/argument/digit"),
        ("Remember to use CamelCase for class names.", "naming/class/case"),
        ("Add docstrings to every method.", "docstrings/method"),
        ("Make sure to always add the '@timer' decorator to your methods.", "decorator/method"),
        ("I want you to always import the 'hashlib' module.", "import"),
        ("Use type hints in all your functions.", "annotations/function"),
        ("Always include try statements in your functions.", "error-handling/function"),
        ("Please use Vim as your IDE.", "editor"),
        ("Use GitHub Copilot as your coding assistant.", "assistant"),
        ("I prefer tabs for indentation.", "indentation"),
        ("Use a batch size of 1000 rows for the extractor.", "batch-size"),
        ("以后方法名都以 '_p' 结尾。", "naming/method/suffix"),
        ("我们的规范是变量名一律以 'v_' 开头。", "naming/variable/prefix"),
        ("请始终给每个函数写文档字符串。", "docstrings/function"),
        ("预算不超过3000元（含税）。", "budget"),
        ("不要再用 print 调试了，用 logging。", "logging"),
        ("提交信息用中文。", "commit-messages"),
        ("以后 class names 都用 CamelCase。", "naming/class/case"),
        # A setting stated as a fact is a rule; "import job" is no import convention.
        ("Each import job handles 500 rows at a time.", "batch-size"),
        ("一次导入 250 行。", "batch-size"),
        ("每一层缩进是 2 个空格。", "indentation"),
        ("Please stick to three spaces per level.", "indentation"),
        ("Please always run `pyright` on the code before every push.", "linter"),
        ("The norm around here is to work in Kate.", "editor"),
        ("最后期限是 4月26日。", "deadline"),
        ("我们最多能花 20500元 税前。", "budget"),
        ("Our team agreement is that we pull in `uuid` at the start of each module.", "import"),
        ("The spending ceiling is ¥27,000 before tax.", "budget"),
        ("函数定义上方必须加一行 @cache_result。", "decorator/function"),
        ("以后一行最多 100 个字符。", "line-length"),
        # A mentor's ways of saying "this is how we work here".
        (
            "Double-check that you start each method body with a docstring, "
            "reviewers will flag it otherwise.",
            "docstrings/method",
        ),
        (
            "Since this trips up most newcomers: we apply `@cache_result` to each method.",
            "decorator/method",
        ),
        ("新人最容易忽略这点：我们每个函数配一段文档字符串。", "docstrings/function"),
        # An editor whose name is a person's or an everyday word: quoted, or worked in.
        ("The norm around here is to work in Kate.", "editor"),
        ("好的，以后用 `Kate`。", "editor"),
        ("From now on, do your coding in Zed.", "editor"),
        # 'annotate' names type annotations before what code it annotates.
        ("Annotate every function signature.", "annotations/function"),
        ("大家默认每次 push 之前先跑一遍 `pyflakes`，你也照着来。", "linter"),
    ],
)
def test_a_standing_rule_gets_the_key_of_what_it_governs(text: str, key: str) -> None:
    """English, Chinese and mixed rules name their subject the same way."""
    assert keys_of(text) == [key]


@pytest.mark.parametrize(
    "text",
    [
        "Have a great rest of your day, and don't hesitate to reach out.",
        "We can't work in a bubble, you know.",
        "Never stop learning.",
        "Always remember that it's okay to make mistakes.",
        "Make sure you take care of yourself this week.",
        "You should definitely check out that conference next month.",
        "I always say coffee first, code second.",
        "有问题随时找我。",
        "一定要注意休息，别太累了。",
        "Add a docstring to this method please.",
        "Now write the S3 uploader with retries.",
        "I added docstrings to every method yesterday.",
        "别忘了只读副本的约束。",
        "Don't forget the naming convention we agreed on.",
        "I must work in Berlin on Mondays.",
        "我在期限内完成了。",
        "顺便记一些关于命名和排版的次要说明。",
        "Double-check that you drink enough water today.",
        "大家默认周五下午放松一下。",
        # A person named like an editor, in a chat between people (REALTALK's Kate).
        "elise: Great talking to you Kate as always, it's so nice to have such talks.",
        "I always work in Kate's team on Fridays.",
        "凯特和 Kate 每次都聊得很开心。",
        "We watched the eclipse every night from the roof.",
        "I don't need to pressure myself to annotate every time I read.",
        "I like to annotate books in the margins every time.",
    ],
)
def test_friendly_talk_one_offs_and_reminders_set_no_rule(text: str) -> None:
    """Pleasantries, advice, one-off requests, narration and pointers back are not rules."""
    assert keys_of(text) == []


def test_friendly_talk_yields_no_item_at_all() -> None:
    """A mentor's sign-off is no constraint either (it would be restated as one)."""
    for text in ("Don't hesitate to reach out if anything comes up.", "有问题随时找我，别客气。"):
        assert extract_text(text).candidates == ()


def test_a_rule_inside_friendly_talk_is_found_and_only_it() -> None:
    """A rule said in passing in a long friendly message is the message's one rule."""
    message = (
        "Hi Alex! Great to see you again, and nice work on the pull request. "
        "One thing before I forget: end method names with '_p' from now on. "
        "Anyway, how was the hiking trip? Don't hesitate to reach out if you get stuck."
    )
    ((key, content),) = rules_of(message)
    assert key == "naming/method/suffix" and content.endswith(
        "end method names with '_p' from now on"
    )


def test_two_rules_in_one_sentence_are_two_rules() -> None:
    """Each clause with its own subject is its own rule, in either language."""
    assert keys_of(
        "From now on, start function names with 'y_' instead of 'x_', and keep using "
        "CamelCase for classes."
    ) == ["naming/function/prefix", "naming/class/case"]
    assert keys_of("方法名以 'm_' 开头，每个方法都要有文档字符串。") == [
        "naming/method/prefix",
        "docstrings/method",
    ]


def test_a_quoted_value_is_never_read_as_a_word() -> None:
    """'test_' is the prefix, not a test; '@retry' is the decorator, not a retry count."""
    assert keys_of("Start function names with 'test_'.") == ["naming/function/prefix"]
    assert keys_of("From now on use @count_calls instead.") == ["decorator"]


def test_the_rule_key_is_stored_in_the_scope() -> None:
    """The candidate's scope carries the key, which `rule_key` reads back."""
    (candidate,) = extract_text("Always end method names with '_p'.").candidates
    assert rule_key(candidate.scope) == "naming/method/suffix"
    assert rule_key({}) == "" and rule_key({"rule": 3}) == ""


def test_compatible_keys_need_the_same_topic_aspect_and_qualifiers() -> None:
    """A key naming no element fits one that does, and fewer qualifiers fit more; different
    subjects (or qualifiers each side lacks) never meet."""
    assert compatible("decorator", "decorator/method")
    assert compatible("naming/prefix", "naming/function/prefix")
    assert not compatible("naming/function/prefix", "naming/function/suffix")
    assert not compatible("naming/function/prefix", "naming/method/prefix")
    assert compatible("port", "port/admin-server") and compatible("port/api", "port/api-server")
    assert not compatible("port/database-staging", "port/database-production")
    assert not compatible("docstrings/method", "decorator/method")
    assert not compatible("", "")
    assert parse_key("port/database-staging").qualifiers == ("database", "staging")
    assert parse_key("naming/method/suffix").element == "method"


def test_the_vocabulary_is_package_data_that_checks_itself() -> None:
    """Every topic has English and Chinese words and every element of the order has words."""
    raw = json.loads(
        resources.files("lcm_core.extraction")
        .joinpath("data", "standing_rules.json")
        .read_text("utf-8")
    )
    assert sorted(raw["elements"]["order"]) == sorted(raw["elements"]["words"])
    for topic in raw["topics"]["order"]:
        assert topic["en"] and topic["zh"], topic["key"]
    assert len(vocabulary().topics) == len(raw["topics"]["order"])
