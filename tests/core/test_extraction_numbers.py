"""Numbers with units, comparators and conditions, in English, Chinese and mixed text."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.text.conditions import find_conditions
from lcm_core.text.numbers import chinese_number, parse_quantities


def only(text: str) -> dict[str, Any]:
    """The single quantity of `text`, as stored."""
    found = [q for q in parse_quantities(text) if not q.negated]
    assert len(found) == 1, found
    return found[0].to_dict()


def test_english_limit_keeps_unit_comparator_and_condition() -> None:
    """a ceiling stated with a condition keeps all three, as the spec's example does."""
    got = only("keep p95 under 200 ms when the cache is warm")
    assert (got["value"], got["unit"], got["comparator"]) == (200, "ms", "<=")
    assert got["conditions"] == ["when the cache is warm"]
    assert got["raw"] == "200 ms"


def test_chinese_budget_keeps_tax_condition() -> None:
    """预算不超过3000元（含税） keeps 3000, 元, the ceiling and the tax condition."""
    got = only("预算不超过3000元（含税）")
    assert (got["value"], got["unit"], got["comparator"]) == (3000, "元", "<=")
    assert got["conditions"] == ["含税"]


@pytest.mark.parametrize(
    ("text", "value", "unit", "comparator"),
    [
        ("uptime of 99.9%", 99.9, "%", None),
        ("测试覆盖率至少要达到80%", 80, "%", ">="),
        ("百分之五的用户", 5, "%", None),
        ("about 40k daily active users", 40_000, "daily active users", "~"),
        ("2M requests a day", 2_000_000, "requests", None),
        ("用户量3万", 30_000, None, None),
        ("预算1.5万元", 15_000, "元", None),
        ("税后月薪不低于两万五", 25_000, None, ">="),
        ("重试三次", 3, "次", None),
        ("端口改为８０８０", 8080, "port", None),
        ("响应体控制在 1MB 以内", 1, "MB", "<="),
        ("错误率要低于0.1%", 0.1, "%", "<"),
        ("at least 2 reviewers", 2, "reviewers", ">="),
        ("more than 1000 pending jobs", 1000, "pending jobs", ">"),
        ("costs $50 per month", 50, "USD", None),
        ("a 3.5x speedup", 3.5, "x", None),
        ("1,000 API calls", 1000, "API calls", None),
        ("the max upload size is 10 MB", 10, "MB", "<="),
        ("cap each worker at 2 GB of RAM", 2, "GB", "<="),
        ("并发数最多50个", 50, "个", "<="),
        ("过期时间设成10分钟", 10, "min", None),
        ("timeout 45 seconds", 45, "s", None),
        ("5m timeout", 5, "min", None),
    ],
)
def test_values_units_and_comparators(
    text: str, value: float, unit: str | None, comparator: str | None
) -> None:
    """each phrasing gives its value in base units, its canonical unit and comparator."""
    got = only(text)
    assert (got["value"], got["unit"], got["comparator"]) == (value, unit, comparator)


@pytest.mark.parametrize(
    ("text", "low", "high", "unit"),
    [
        ("batch size between 32 and 64", 32, 64, None),
        ("2-4 GB of memory", 2, 4, "GB"),
        ("每次3到5个", 3, 5, "个"),
        ("10~20ms", 10, 20, "ms"),
    ],
)
def test_ranges(text: str, low: float, high: float, unit: str | None) -> None:
    """a range is one quantity with its low value, its high end and comparator `between`."""
    got = only(text)
    assert (got["value"], got["max"], got["unit"], got["comparator"]) == (
        low,
        high,
        unit,
        "between",
    )


@pytest.mark.parametrize(
    "text",
    [
        "released on 2026-11-30",
        "2026年11月30日上线",
        "meet at 16:00 CET",
        "每天凌晨两点重置",
        "夜间0点到6点",
        "upgrade to Python 3.11",
        "前端用的是Vue 3",
        "Target Node 20 for the build",
        "version v2.3.0",
        "connect to 10.0.0.1:5432",
        "see issue #123",
        "p95 and p99 on S3 in e2e tests",
        "migration 0042_trgm_products.py",
        "store timestamps as ISO 8601",
        "`retries = 3` in the config",
        "统一用一下这个函数",
        "千万不要删",
    ],
)
def test_not_quantities(text: str) -> None:
    """dates, clock times, versions, addresses, identifiers, code and words are no numbers."""
    assert parse_quantities(text) == []


def test_replaced_value_is_marked_negated() -> None:
    """the value after "not" / "而不是" is the one replaced, flagged so items can drop it."""
    found = parse_quantities("use port 8080, not 3000")
    assert [(q.value, q.unit, q.negated) for q in found] == [
        (8080, "port", False),
        (3000, None, True),
    ]
    zh = parse_quantities("用8个副本，而不是6个")
    assert [(q.value, q.negated) for q in zh] == [(8, False), (6, True)]


def test_conditions_go_to_the_number_of_their_clause() -> None:
    """two limits with two conditions in one sentence each keep their own condition."""
    found = parse_quantities("under 200 ms when the cache is warm, 800 ms with a cold cache")
    assert [(q.value, q.conditions) for q in found] == [
        (200, ("when the cache is warm",)),
        (800, ("with a cold cache",)),
    ]


def test_condition_clause_without_numbers_covers_all() -> None:
    """a separate condition clause ("During the migration window, …") covers every number."""
    got = only("During the migration window, writes can be paused for at most 15 minutes.")
    assert got["conditions"] == ["During the migration window"]
    assert (got["value"], got["unit"], got["comparator"]) == (15, "min", "<=")


def test_number_inside_a_condition_does_not_own_it() -> None:
    """ "unless the endpoint returns 410" qualifies the retries, not the 410 inside it."""
    found = parse_quantities("Retry up to 5 times, unless the endpoint returns 410.")
    by_value = {q.value: q.conditions for q in found}
    assert by_value[5] == ("unless the endpoint returns 410",)
    assert by_value[410] == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("接口响应时间必须控制在200毫秒以内（缓存命中的情况下）", "缓存命中的情况下"),
        ("在弱网环境下，首屏加载时间不能超过3秒", "在弱网环境下"),
        ("如果是大促期间，限流阈值提高到每秒5000次", "如果是大促期间"),
        ("错误率要低于0.1%，按5分钟窗口统计", "按5分钟窗口统计"),
        ("CI 里跑测试的时候 timeout 设成 10 分钟", "跑测试的时候"),
        ("税后月薪不低于两万五", "税后"),
        ("The API rate limit is 100 requests per minute", "per minute"),
        ("Memory must stay below 512 MB on the Raspberry Pi build", "on the Raspberry Pi build"),
        ("Aim for 99.9% uptime measured monthly", "measured monthly"),
    ],
)
def test_conditions_in_both_languages(text: str, expected: str) -> None:
    """Chinese and English condition markers attach their clause to the number."""
    conditions = [c for q in parse_quantities(text) for c in q.conditions]
    assert any(expected in c for c in conditions), conditions


def test_check_if_is_not_a_condition() -> None:
    """ "check if …" asks something; it is not a condition on a value."""
    texts = [c.text for c in find_conditions("check if the file exists before upload")]
    assert texts == ["before upload"]


@pytest.mark.parametrize(
    ("chars", "value"),
    [
        ("十五", 15),
        ("三十五", 35),
        ("一百零五", 105),
        ("一百二", 120),
        ("三千五", 3500),
        ("两万五", 25_000),
        ("三百万", 3_000_000),
        ("两", 2),
    ],
)
def test_chinese_numerals(chars: str, value: int) -> None:
    """Chinese numerals read as people say them, including "两万五" for 25000."""
    assert chinese_number(chars) == value


@pytest.mark.parametrize("chars", ["千万", "万", "一二", "abc"])
def test_not_chinese_numerals(chars: str) -> None:
    """words made of numeral characters ("千万", "by all means") are not amounts."""
    assert chinese_number(chars) is None


def test_output_is_stable() -> None:
    """the same sentence always gives byte-identical stored numbers."""
    text = "p95 不超过 200ms（缓存命中时），cold start up to 5 s"
    first = [q.to_dict() for q in parse_quantities(text)]
    assert first == [q.to_dict() for q in parse_quantities(text)]
    assert [tuple(d) for d in first] == [
        ("raw", "value", "unit", "comparator", "max", "conditions")
    ] * 2


def test_function_words_do_not_leak_into_conditions_or_components() -> None:
    """`per batch when the cache is warm`: two clean conditions and no `when cache` component."""
    from lcm_core.extraction.run import extract_text

    found = extract_text("Keep p95 export latency under 200 ms per batch when the cache is warm")
    (candidate,) = found.candidates
    assert candidate.conditions == ("per batch", "when the cache is warm")
    assert "components" not in candidate.scope
