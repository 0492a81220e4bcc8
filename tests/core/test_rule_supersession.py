"""A later standing rule on the same subject replaces the earlier one, in any language and
any session of the project; rules on other subjects never replace each other."""

from __future__ import annotations

from collections.abc import Callable

from lcm_core.extraction.rulebook import read_index
from lcm_core.extraction.standing import rule_key
from lcm_core.retrieval.standing import rules_in_force
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.memory_store import InMemoryStore

Say = Callable[..., list[Event]]


def rules(store: MemoryStore, session: str, *statuses: str) -> list[MemoryItem]:
    wanted = statuses or ("active",)
    return [i for i in store.list_items(session, statuses=wanted) if rule_key(i.scope)]


def contents(items: list[MemoryItem]) -> list[str]:
    return sorted(i.content for i in items)


def test_a_rule_updated_three_times_leaves_only_the_last_in_force(say: Say) -> None:
    """'_a' -> '_x' -> '_p': the last is active, each earlier one superseded with its row."""
    store = InMemoryStore()
    say(
        store,
        "s",
        "End method names with '_a'.",
        "Let's change that: end method names with '_x'.",
        "From now on end method names with '_p' instead of '_x'.",
    )
    assert contents(rules(store, "s")) == ["From now on end method names with '_p' instead of '_x'"]
    old = rules(store, "s", "superseded")
    assert len(old) == 2 and all(i.superseded_by for i in old)
    for item in old:
        events = [row.event for row in store.list_memory_events(memory_id=item.id)]
        assert events == ["created", "superseded"]


def test_a_chinese_correction_replaces_an_english_rule_and_the_reverse(say: Say) -> None:
    """The subject key is the same in both languages."""
    store = InMemoryStore()
    say(
        store,
        "s",
        "Use a batch size of 1000 rows for the extractor.",
        "不对，批大小应该是500，不是1000。",
    )
    assert contents(rules(store, "s")) == ["批大小应该是500，不是1000"]
    say(
        store,
        "t",
        "请始终给每个方法写文档字符串。",
        "Actually, add docstrings to every method in English.",
    )
    assert contents(rules(store, "t")) == ["add docstrings to every method in English"]


def test_rules_on_different_subjects_never_replace_each_other(say: Say) -> None:
    """Prefix and suffix, methods and functions, docstrings and decorators stay side by side."""
    store = InMemoryStore()
    say(
        store,
        "s",
        "Start function names with 'f_'.",
        "End function names with '_z'.",
        "Start method names with 'm_'.",
        "Add docstrings to every method.",
        "Always add the @timer decorator to methods.",
        "预算不超过3000元（含税）。",
    )
    assert len(rules(store, "s")) == 6 and rules(store, "s", "superseded") == []


def test_a_later_session_of_the_project_replaces_the_rule_of_an_earlier_one(say: Say) -> None:
    """Across sessions: the old session's rule is superseded by the new session's."""
    store = InMemoryStore()
    say(store, "one", "Always start variable names with 'x_'.", day=0)
    say(store, "two", "以后变量名改成以 'y_' 开头。", day=3)
    (old,) = rules(store, "one", "superseded")
    (new,) = rules(store, "two")
    assert old.superseded_by == new.id and old.id in new.supersedes
    assert [r.content for r in rules_in_force(store, "two", project=True)] == [new.content]
    # Session scope: the first session's rule in force is the one that replaced it.
    assert [r.id for r in rules_in_force(store, "one", project=False)] == [new.id]


def test_sessions_captured_out_of_order_keep_the_rule_said_last(say: Say) -> None:
    """The later statement wins by when it was said, not by when it was captured."""
    store = InMemoryStore()
    say(store, "late", "From now on end method names with '_p'.", day=5)
    say(store, "early", "End method names with '_a'.", day=1)
    (kept,) = rules(store, "late")
    (older,) = rules(store, "early", "superseded")
    assert kept.content.endswith("'_p'") and older.superseded_by == kept.id
    events = [row.event for row in store.list_memory_events(memory_id=older.id)]
    assert events == ["created", "superseded"]
    assert [r.id for r in rules_in_force(store, "early", project=True)] == [kept.id]


def test_another_project_is_never_touched(say: Say) -> None:
    """A rule of another project's session stays in force there."""
    store = InMemoryStore()
    say(store, "mine", "Always start variable names with 'x_'.", cwd="/w/app")
    say(store, "theirs", "Always start variable names with 'q_'.", cwd="/w/other", day=2)
    assert len(rules(store, "mine")) == 1 and len(rules(store, "theirs")) == 1
    assert [r.session_id for r in rules_in_force(store, "mine", project=True)] == ["mine"]


def test_an_additive_rule_keeps_the_earlier_one(say: Say) -> None:
    """'Also import X' adds a module; it does not replace the first."""
    store = InMemoryStore()
    say(store, "s", "Always import the 'hashlib' module.", "Also always import 'locale' as well.")
    assert len(rules(store, "s")) == 2


def test_a_rule_naming_no_element_replaces_the_one_rule_of_its_topic(say: Say) -> None:
    """'use @count_calls instead' replaces the decorator rule there is."""
    store = InMemoryStore()
    say(
        store,
        "s",
        "Always add the @timer decorator to methods.",
        "From now on use @count_calls instead.",
    )
    assert contents(rules(store, "s")) == ["From now on use @count_calls instead"]


def test_each_session_keeps_an_index_of_its_rules_in_force(say: Say) -> None:
    """The index lists the rules in force, and is rewritten when they change."""
    store = InMemoryStore()
    say(store, "s", "Hello there!")
    assert read_index(store, "s") == []
    say(store, "s", "End method names with '_a'.")
    (first,) = rules(store, "s")
    assert read_index(store, "s") == [first.id]
    say(store, "s", "Actually, end method names with '_b'.")
    (second,) = rules(store, "s")
    assert read_index(store, "s") == [second.id]
