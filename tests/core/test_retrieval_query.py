"""Query signals: what retrieval reads from a step's task text."""

from __future__ import annotations

from lcm_core.text.query import (
    MAX_SEARCH_TERMS,
    can_narrow,
    evidence_terms,
    exact_hits,
    numbers_in,
    query_signals,
    search_terms,
    substring_stem,
)
from lcm_core.text.tokens import MAX_QUERY_TOKENS


def test_latin_words_and_cjk_bigrams_become_tokens() -> None:
    """Latin words of two or more characters and CJK bigrams are tokens, in reading order."""
    signals = query_signals("Deploy 到 生产环境 a b")
    assert signals.tokens == ("deploy", "到", "生产", "产环", "环境")


def test_tokens_are_capped_at_160() -> None:
    """A very long task text yields at most 160 tokens."""
    text = " ".join(f"word{i}x" for i in range(400))
    assert len(query_signals(text).tokens) == MAX_QUERY_TOKENS


def test_exact_terms_keep_identifiers_versions_and_acronyms() -> None:
    """Identifiers, versions, dotted names and acronyms are exact terms; plain words are not."""
    signals = query_signals("Set user_id in node.js v2.1 on the GPU with maxRetries please")
    assert signals.exact_terms == ("user_id", "node.js", "v2.1", "GPU", "maxRetries")


def test_numbers_are_whole_and_canonical() -> None:
    """Numbers come out whole, thousands separators dropped; digits inside words are not numbers."""
    assert query_signals("budget 3,000 EUR, 2.5 days, w123, 预算3000元").numbers == (
        "3000",
        "2.5",
    )
    assert numbers_in("2023 and 3") == ("2023", "3")


def test_paths_posix_relative_and_windows() -> None:
    """Absolute, home, relative-with-extension and drive paths are found, trailing punctuation cut."""
    text = "edit src/app/main.py, then /etc/hosts. Also ~/notes/todo.md and C:\\Users\\me\\a.txt"
    assert query_signals(text).paths == (
        "src/app/main.py",
        "/etc/hosts",
        "~/notes/todo.md",
        "C:\\Users\\me\\a.txt",
    )


def test_a_fraction_or_unit_is_not_a_path() -> None:
    """`km/h` and `and/or` are not paths."""
    assert query_signals("speed in km/h and/or mph").paths == ()


def test_quoted_phrases_in_several_quote_styles() -> None:
    """Straight, curly, CJK corner and backtick quotes give phrases; apostrophes do not."""
    text = "he said \"phase two\" and “the blue car”, 「西湖边」, `make test`; don't it's"
    assert query_signals(text).phrases == ("phase two", "the blue car", "西湖边", "make test")


def test_empty_and_junk_text_give_empty_signals() -> None:
    """Empty, whitespace and punctuation-only text yields no signals and no search terms."""
    for text in ("", "   ", "?!…", "\x00\ud800"):
        signals = query_signals(text)
        assert search_terms(signals) == ()


def test_search_terms_drop_words_that_cannot_narrow() -> None:
    """Function words, particles, single characters and digit fragments are not searched."""
    signals = query_signals("What did we say about the Lisbon budget of 3,000? 我们的预算是多少呢")
    terms = search_terms(signals)
    assert "lisbon" in terms and "budget" in terms and "3000" in terms and "预算" in terms
    for dropped in ("what", "did", "we", "the", "000", "我们", "的预", "呢"):
        assert dropped not in terms


def test_search_terms_put_exact_signals_first_and_are_capped() -> None:
    """Phrases, paths, exact terms and numbers come before plain tokens; the list is capped."""
    signals = query_signals('plain words first then "quoted bit" and src/a/b.py ' * 3)
    terms = search_terms(signals)
    assert terms[:2] == ("quoted bit", "src/a/b.py")
    long = query_signals(" ".join(f"topic{i}z" for i in range(200)))
    assert len(search_terms(long)) == MAX_SEARCH_TERMS


def test_can_narrow() -> None:
    """Only terms that can tell rows apart are worth sending to the store."""
    assert not can_narrow("the") and not can_narrow("7") and not can_narrow("吗")
    assert not can_narrow("是的") and not can_narrow("我们")
    assert can_narrow("42") and can_narrow("tram") and can_narrow("西湖")


def test_evidence_terms_are_numbers_paths_and_phrases() -> None:
    """Raw evidence is searched for exact numbers, paths and phrases only."""
    signals = query_signals('the Lisbon budget was 3000 in "phase two", see docs/plan.md; 5 kids')
    assert evidence_terms(signals) == ("phase two", "docs/plan.md", "3000")


def test_exact_hits_need_whole_numbers() -> None:
    """A number hits only a whole number: 30 does not hit 300, 3,000 hits 3000."""
    signals = query_signals("is it 30 or 3,000 for PROJ-7")
    assert exact_hits("we paid 300 then 3000 for proj-7", signals) == ("PROJ-7", "3000")
    assert exact_hits("nothing here", signals) == ()


def test_plural_and_tense_forms_search_by_their_stem() -> None:
    """`guests` is searched as `guest` (so it finds "guest list"); short stems are not cut."""
    assert (
        substring_stem("guests") == "guest"
        and substring_stem("booked") == "book"
        and substring_stem("shopping") == "shop"
    )
    assert (
        substring_stem("class") == "class"
        and substring_stem("thing") == "thing"
        and substring_stem("预算") == "预算"
    )
    terms = search_terms(query_signals("How many guests did we invite?"))
    assert "guest" in terms and "guests" not in terms


def test_a_huge_task_text_is_read_at_its_start_and_end() -> None:
    """a pasted megabyte keeps the instruction at either end and bounded signals."""
    from lcm_core.text.query import MAX_QUERY_CHARS, query_signals

    text = "请检查预算 budget check " + "filler line 123\n" * 70_000 + " then deploy to staging"
    signals = query_signals(text)
    assert len(signals.text) <= MAX_QUERY_CHARS + 3
    assert "预算" in signals.tokens and "staging" in signals.tokens
