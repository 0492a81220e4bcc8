"""A lazily compiled pattern answers exactly as `re.compile` would, in either language."""

from __future__ import annotations

import re

import pytest

from lcm_core.text.lazy_regex import lazy_compile

TEXT = "预算不超过3000元（含税）; budget under 3000 USD, port 5432 不是 6432"
PATTERNS = [
    (r"\d+", 0),
    (r"(?P<n>\d+)\s*(元|usd)", re.IGNORECASE),
    (r"[㐀-䶿一-鿿]+", 0),
    (r"不是\s*(\d+)", 0),
]


@pytest.mark.parametrize(("source", "flags"), PATTERNS)
def test_every_method_matches_the_compiled_pattern(source: str, flags: int) -> None:
    eager = re.compile(source, flags)
    for lazy in (lazy_compile(source, flags), lazy_compile(source, flags)):
        found = lazy.search(TEXT)
        expected = eager.search(TEXT)
        assert (found and found.span()) == (expected and expected.span())
        assert lazy.findall(TEXT) == eager.findall(TEXT)
        assert [m.span() for m in lazy.finditer(TEXT, 3)] == [
            m.span() for m in eager.finditer(TEXT, 3)
        ]
        assert lazy.sub("#", TEXT) == eager.sub("#", TEXT)
        assert lazy.subn("#", TEXT, 1) == eager.subn("#", TEXT, 1)
        assert lazy.split(TEXT) == eager.split(TEXT)
        assert bool(lazy.match(TEXT)) == bool(eager.match(TEXT))
        assert bool(lazy.fullmatch("3000")) == bool(eager.fullmatch("3000"))


def test_source_is_readable_before_use_and_use_binds_the_compiled_methods() -> None:
    lazy = lazy_compile(r"含税|tax", re.IGNORECASE)
    # Patterns are built from other patterns' sources without compiling them.
    assert (lazy.pattern, lazy.flags) == (r"含税|tax", re.IGNORECASE)
    assert "search" not in vars(lazy)
    assert lazy.search("incl. TAX")
    assert vars(lazy)["search"].__self__ is lazy.compiled()


def test_compile_all_compiles_what_exists_and_keeps_nothing_alive() -> None:
    """The sidecar compiles every pattern at start; a pattern made inside a call is let go."""
    import gc

    from lcm_core.text import lazy_regex

    kept = lazy_compile(r"预算\s*\d+")
    assert "search" not in vars(kept)
    assert lazy_regex.compile_all() >= 1
    assert vars(kept)["search"].__self__ is kept.compiled()
    before = len(lazy_regex._CREATED)
    for _ in range(50):
        assert lazy_compile(r"端口 \d+").search("端口 8080")
    gc.collect()
    assert len(lazy_regex._CREATED) == before
