"""The standing rules section: every step gets the rules in force, whatever its words."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.render import rule_entry_of_item
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.extraction.control import set_pin
from lcm_core.extraction.standing import rule_key
from lcm_core.retrieval.shown import Shown
from lcm_core.store.models import Event
from lcm_core.testing.builders import make_item
from lcm_core.testing.memory_store import InMemoryStore
from lcm_core.text.block_words import EN, ZH

Say = Callable[..., list[Event]]
SESSION_SCOPE = load_config({"assembly": {"language": "en"}})
PROJECT_SCOPE = load_config({"memory": {"scope": "project"}, "assembly": {"language": "en"}})
TITLE = EN.section_titles["standing"]


def section(text: str, name: str = "standing", words: object = EN) -> str:
    """The lines of one section of a block ('' when it has none)."""
    titles = words.section_titles  # type: ignore[attr-defined]
    if titles[name] not in text:
        return ""
    body = text.split(titles[name], 1)[1]
    return body.split("\n## ", 1)[0]


def test_a_step_sharing_no_word_with_the_rules_still_gets_them(say: Say) -> None:
    """'Write a linked list class' brings back the naming and docstring conventions."""
    store = InMemoryStore()
    say(store, "s", "Always end method names with '_p'.", "Add docstrings to every function.")
    say(store, "s", *(f"Filler turn {n} about the weather." for n in range(6)))
    result = assemble(store, "s", config=SESSION_SCOPE, query="Write a linked list class in Python")
    rules = section(result.text)
    assert "'_p'" in rules and "docstrings to every function" in rules
    assert {"rule naming/method/suffix", "rule docstrings/function"} <= {
        line.split("] ", 1)[1].split(":", 1)[0] for line in rules.splitlines() if "[mem " in line
    }


def test_a_step_with_nothing_relevant_gets_the_rules_and_nothing_else(say: Say) -> None:
    """No insufficient-evidence notice, no quotes: only the rules section."""
    store = InMemoryStore()
    say(store, "s", "Always start variable names with 'x_'.")
    say(store, "s", *(f"Some unrelated remark number {n}." for n in range(5)))
    result = assemble(store, "s", config=SESSION_SCOPE, query="Implement merge sort")
    assert result.injected
    assert [s["name"] for s in result.sections] == ["standing"]


def test_project_scope_brings_the_rules_of_the_other_sessions(say: Say) -> None:
    """A new session of the project gets the rules set earlier, latest version only."""
    store = InMemoryStore()
    say(store, "one", "End method names with '_a'.", "Always import the 'hashlib' module.", day=0)
    say(store, "two", "以后方法名改成以 '_p' 结尾。", day=2)
    say(store, "new", "Write a linked list class in Python.", day=5)
    text = assemble(store, "new", config=PROJECT_SCOPE, query="Write a linked list class").text
    rules = section(text)
    assert "'_p'" in rules and "hashlib" in rules and "'_a'" not in rules
    notice = section(text, "notice")
    assert "'_a'" in notice and "old value" in notice
    assert all("'_a'" not in line or "old value" in line for line in text.splitlines())
    # Session scope: the new session has no rules of its own.
    alone = assemble(store, "new", config=SESSION_SCOPE, query="Write a linked list class").text
    assert section(alone) == ""


def test_a_replaced_value_is_shown_only_as_old(say: Say) -> None:
    """The rule is shown without the value it says is replaced; the old rule is in the notice."""
    store = InMemoryStore()
    say(
        store,
        "s",
        "Start function names with 'x_'.",
        "From now on start function names with 'y_' instead of 'x_'.",
    )
    text = assemble(store, "s", config=SESSION_SCOPE, query="Implement a stack").text
    rules = section(text)
    assert "'y_'" in rules and "'x_'" not in rules
    assert "'x_'" in section(text, "notice")


def test_pinned_rules_come_first_then_the_newest(say: Say) -> None:
    """Pins lead in pin order; the rest go newest first."""
    store = InMemoryStore()
    say(store, "s", "Start function names with 'f_'.", day=0)
    say(store, "s", "Add docstrings to every method.", day=1)
    say(store, "s", "Always add the @timer decorator to methods.", day=2)
    rules = {rule_key(i.scope): i for i in store.list_items("s") if rule_key(i.scope)}
    set_pin(store, rules["naming/function/prefix"].id, True)
    text = section(assemble(store, "s", config=SESSION_SCOPE, query="Implement a queue").text)
    order = [
        line.split(" rule ", 1)[1].split(":", 1)[0] for line in text.splitlines() if "[mem " in line
    ]
    assert order == ["naming/function/prefix", "decorator/method", "docstrings/method"]


def test_rules_beyond_their_share_are_left_out_with_the_reason(say: Say) -> None:
    """The section keeps to `assembly.rulesShare` of the budget; the rest is omitted."""
    store = InMemoryStore()
    say(
        store,
        "s",
        *(
            f"Always start {element} names with '{element[0]}{n}_'."
            for n, element in enumerate(
                ("variable", "function", "method", "class", "attribute", "argument", "constant")
            )
        ),
    )
    small = load_config(
        {"assembly": {"language": "en", "rulesShare": 0.1, "softBudgetTokens": 600}}
    )
    result = assemble(store, "s", config=small, query="Implement a heap")
    kept = [s for s in result.sections if s["name"] == "standing"]
    assert kept and kept[0]["tokens"] <= 60
    reasons = [o.reason for o in result.omitted if o.section == "standing"]
    assert reasons and all("rules share 60" in r for r in reasons)


def test_rules_already_in_context_are_not_repeated_until_a_compaction(say: Say) -> None:
    """A rule an earlier block still in context lists is left out; after a compaction
    (nothing counts as shown any more) it is restated."""
    store = InMemoryStore()
    say(store, "s", "End method names with '_p'.")
    first = assemble(store, "s", config=SESSION_SCOPE, query="Implement a trie")
    (rule_id,) = [i for i in first.item_ids]
    again = assemble(
        store,
        "s",
        config=SESSION_SCOPE,
        query="Implement a trie",
        shown=Shown(items=frozenset({rule_id})),
    )
    assert TITLE not in again.text
    assert any(o.ref == rule_id and "earlier memory block" in o.reason for o in again.omitted)
    restated = assemble(store, "s", config=SESSION_SCOPE, query="Implement a trie", shown=Shown())
    assert "'_p'" in section(restated.text)


def test_a_rule_still_on_screen_is_not_restated(say: Say) -> None:
    """While the user's own message is in the step's messages, the rule is not repeated."""
    store = InMemoryStore()
    (event,) = say(store, "s", "以后方法名都以 '_p' 结尾。")
    messages = [StepMessage("user", event.text, "user")]
    result = assemble(store, "s", messages, load_config(), query="写一个链表类")
    assert ZH.section_titles["standing"] not in result.text
    assert any(o.section == "standing" and "visible" in o.reason for o in result.omitted)


def test_a_rule_that_names_its_old_value_shows_only_the_new_one(say: Say) -> None:
    """ "From now on, ask `Tomasz` … instead of Aiko": the new reviewer stays in the rule's
    words ("from now on … to" is no from-X-to-Y), the old one is only in the notice; a
    Chinese correction of a timeout shows 60 秒 and not 30 秒 in its line or conditions."""
    store = InMemoryStore()
    say(store, "s", "Please always get every PR reviewed by `Aiko` in this codebase.", day=0)
    say(store, "s", "From now on, ask `Tomasz` to review pull requests instead of Aiko.", day=1)
    say(store, "s", "请求超时是 30 秒。", day=2)
    say(store, "s", "不对，请求超时改成 60 秒，不是 30 秒。", day=3)
    text = assemble(store, "s", config=SESSION_SCOPE, query="Write a CSV parser").text
    rules = section(text)
    (review,) = [line for line in rules.splitlines() if "rule code-review" in line]
    assert "ask `Tomasz` to review pull requests" in review and "Aiko" not in review
    timeout = rules.split("rule timeout", 1)[1].split("\n- ", 1)[0]
    assert "60 秒" in timeout and "30" not in timeout
    notice = section(text, "notice")
    assert "Aiko" in notice and "30 秒" in notice


def test_a_rules_conditions_name_no_old_value() -> None:
    """A condition kept from the rule's sentence ("after 60 seconds now instead of 30s")
    is shown without the value it says is replaced."""
    item = make_item(
        "s",
        "Retry the upload after 60 seconds now instead of 30s",
        kind="constraint",
        scope={"rule": "retries"},
        conditions=("after 60 seconds now instead of 30s", "per upload"),
    )
    entry = rule_entry_of_item(item, 400, words=EN)
    assert entry.splitlines()[1] == "  conditions: after 60 seconds now; per upload"
    assert "30s" not in entry


@pytest.mark.parametrize(
    ("old", "new", "shown", "gone"),
    [
        (
            "Please always get every PR reviewed by `Priya`.",
            "`Priya` was a mistake on my part, so please have Kwame review your pull requests.",
            "have Kwame review your pull requests",
            "Priya",
        ),
        (
            "Always apply `@validate` to each function.",
            "Stop using `@validate` and apply `@trace` to each function.",
            "apply `@trace` to each function",
            "@validate",
        ),
        (
            "Keep method names in snake_case.",
            "Let's switch the casing of method names from snake_case to `camelCase`.",
            "`camelCase`",
            "snake_case",
        ),
        (
            "The API server listens on port 3845.",
            "We had 3845 before, but you reach the API server through port 4076 now.",
            "port 4076",
            "3845",
        ),
        (
            "Always run pycodestyle as the linter.",
            "Let's switch the linter from pycodestyle to `pyright`.",
            "`pyright`",
            "pycodestyle",
        ),
        (
            "以后缩进都用四个空格。",
            "四个空格 不要了，以后缩进换成 两个空格。",
            "两个空格",
            "四个空格",
        ),
        (
            "日志统一用 structlog 记录。",
            "之前说的日志库不算了，现在日志统一用 logbook 记录。",
            "logbook",
            "structlog",
        ),
    ],
)
def test_a_rule_that_retires_its_old_value_in_words_shows_the_new_one_only(
    say: Say, old: str, new: str, shown: str, gone: str
) -> None:
    """ "X was a mistake, so …", "Stop using X and …", "from X to Y", "之前说的…不算了，现在…":
    the rule's line says the new value; the old one is in the notice, marked old."""
    store = InMemoryStore()
    say(store, "s", old, day=0)
    say(store, "s", new, day=1)
    text = assemble(store, "s", config=SESSION_SCOPE, query="Write a queue class").text
    rules = section(text)
    assert shown in rules and gone not in rules
    assert gone in section(text, "notice")
