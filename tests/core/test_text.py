"""Text primitives: what gets stored, hashed, tokenised and counted."""

from __future__ import annotations

from lcm_core.text.tokens import (
    clamp_text,
    estimate_tokens,
    fingerprint,
    normalize_text,
    stable_item_id,
    tokenize,
)


def test_normalize_removes_what_no_store_can_hold() -> None:
    assert normalize_text("a\x00b\ud800c\r\nd\re ") == "ab\ufffdc\nd\ne"
    assert normalize_text("预算\u3000不超过") == "预算\u3000不超过"


def test_tokenize_latin_words_and_cjk_bigrams_in_reading_order() -> None:
    tokens = tokenize("Keep p95 under 200 ms; 预算不超过3000元 in src/app.py")
    assert tokens == [
        "keep", "p95", "under", "200", "ms", "预算", "算不", "不超", "超过", "3000", "元",
        "in", "src", "app.py",
    ]  # fmt: skip


def test_tokenize_drops_single_latin_letters_and_caps_the_count() -> None:
    assert tokenize("a b cd") == ["cd"]
    assert len(tokenize(" ".join(f"w{i}" for i in range(500)))) == 160


def test_estimate_tokens_follows_the_cjk_and_latin_rates() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("预算不超") == 3  # ceil(4 / 1.6)
    assert estimate_tokens("预算 abcd") == 3  # ceil(2 / 1.6 + 5 / 4)


def test_clamp_flags_only_when_something_was_cut() -> None:
    assert clamp_text("x" * 10, 10) == ("x" * 10, False)
    assert clamp_text("x" * 11, 10) == ("x" * 10, True)


def test_stable_ids_ignore_case_and_spacing_but_not_kind_or_session() -> None:
    a = stable_item_id("s1", "fact", "Use  port 8080")
    assert a == stable_item_id("s1", "fact", "use port 8080")
    assert a.startswith("mem_") and len(a.split("_")[2]) == 16
    assert a != stable_item_id("s2", "fact", "use port 8080")
    assert a != stable_item_id("s1", "decision", "use port 8080")
    assert fingerprint("预算 3000 元") != fingerprint("预算 5000 元")
