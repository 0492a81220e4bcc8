"""Secret redaction: every secret of the corpus is replaced, ordinary text is left alone.

Also properties: redaction never raises, is idempotent and deterministic, leaves text
without ASCII letters and digits (Chinese prose and punctuation) untouched, and catches a
secret whatever ordinary text surrounds it. Adversarial inputs must not make it slow.
"""

from __future__ import annotations

import pytest
import rel_support as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_redaction_corpus import ORDINARY, SECRETS, Secret

from lcm_core.text.redact import marker, redact, redact_counts, redact_value

EXAMPLES = rs.scaled(300, 3_000)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
# Chinese, kana, full-width and ASCII punctuation, spaces: prose without Latin letters.
PROSE_CHAR = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.sampled_from(list("，。：；？！、（）“”《》 \n\t-=:;,.!?()[]{}<>/@'\"")),
)
SEPARATORS = st.sampled_from([" ", "\n", "：", "，", "。 ", "\t", " (", ") "])


def test_the_corpus_is_big_enough() -> None:
    """The corpus holds at least 35 secrets over 15 kinds and 40 ordinary texts."""
    assert len(SECRETS) >= 35
    assert len({secret.kind for secret in SECRETS}) >= 15
    assert len(ORDINARY) >= 40


@pytest.mark.parametrize("secret", SECRETS, ids=[f"{s.kind}-{i}" for i, s in enumerate(SECRETS)])
def test_every_secret_of_the_corpus_is_replaced(secret: Secret) -> None:
    """The secret value is gone and a marker of its kind stands where it was."""
    assert secret.value in secret.text, "the corpus entry must contain its secret"
    out, counts = redact_counts(secret.text)
    rs.bump("redaction.secrets")
    rs.bump("redaction.secrets_missed", int(secret.value in out))
    assert secret.value not in out
    assert marker(secret.kind) in out
    assert counts.get(secret.kind, 0) >= 1


@pytest.mark.parametrize("text", ORDINARY, ids=[f"ordinary-{i}" for i in range(len(ORDINARY))])
def test_ordinary_text_is_left_alone(text: str) -> None:
    """Text that only looks a little like a secret comes back unchanged."""
    out = redact(text)
    rs.bump("redaction.ordinary")
    rs.bump("redaction.ordinary_changed", int(out != text))
    assert out == text


def test_redact_value_walks_rows_and_keeps_keys() -> None:
    """Every string inside a row is redacted; keys and non-strings stay as they were."""
    secret = SECRETS[0]
    row = {"text": secret.text, "n": 3, "tags": [secret.text, None], "meta": {"k": secret.text}}
    out = redact_value(row)
    assert out["n"] == 3 and out["tags"][1] is None
    assert secret.value not in repr(out)
    assert set(out) == set(row) and set(out["meta"]) == {"k"}


@SETTINGS
@given(text=st.text(ANY_CHAR, max_size=300))
def test_any_text_redacts_idempotently_and_deterministically(text: str) -> None:
    """Redaction never raises, a second pass changes nothing, and two runs agree."""
    rs.bump("hypothesis.redact_any_text.examples")
    once = redact(text)
    assert redact(once) == once
    assert redact(text) == once


@SETTINGS
@given(text=st.text(PROSE_CHAR, max_size=300))
def test_prose_without_latin_letters_or_digits_is_untouched(text: str) -> None:
    """Chinese prose and punctuation never lose a character."""
    rs.bump("hypothesis.redact_prose_untouched.examples")
    assert redact(text) == text


@SETTINGS
@given(
    index=st.integers(min_value=0, max_value=len(SECRETS) - 1),
    before=st.text(PROSE_CHAR, max_size=40),
    after=st.text(PROSE_CHAR, max_size=40),
    left=SEPARATORS,
    right=SEPARATORS,
)
def test_a_secret_is_caught_whatever_surrounds_it(
    index: int, before: str, after: str, left: str, right: str
) -> None:
    """A corpus secret pasted inside arbitrary prose is still replaced."""
    rs.bump("hypothesis.redact_secret_in_prose.examples")
    secret = SECRETS[index]
    out = redact(before + left + secret.text + right + after)
    assert secret.value not in out


# Pieces the patterns react to, for texts that make a regex engine work hard.
PIECES = st.sampled_from(
    ["a", "-", ".", ":", "/", "@", "=", "_", " ", "\n", "eyJ", "sk-", "password", "://", "Bearer "]
)


@settings(SETTINGS, max_examples=rs.scaled(50, 1_000))
@given(pieces=st.lists(PIECES, min_size=200, max_size=1_000))
def test_texts_of_pattern_pieces_redact_idempotently(pieces: list[str]) -> None:
    """Long texts built from the patterns' own pieces redact, twice the same."""
    rs.bump("hypothesis.redact_pattern_pieces.examples")
    once = redact("".join(pieces))
    assert redact(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "password=" * 20_000,
        "-----BEGIN PRIVATE KEY-----\n" + "A" * 200_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 5_000,
        "https://" + "a:" * 50_000 + "@",
        "Authorization: Bearer " * 10_000,
        "sk-" + "a" * 200_000,
        "eyJ" + "a" * 100_000 + ".eyJ" + "b" * 100_000,
        "密码：" * 30_000,
        ("x" * 64 + "\n") * 5_000,
        "a-" * 50_000,
        "a." * 50_000,
        "eyJa." * 20_000,
        "a-b" * 30_000 + "://",
    ],
    ids=[
        "assign",
        "pem-unterminated",
        "pem-begins",
        "url",
        "bearer",
        "sk",
        "jwt",
        "zh",
        "lines",
        "dashed-word",
        "dotted-word",
        "jwt-pieces",
        "long-scheme",
    ],
)
def test_adversarial_inputs_finish(text: str) -> None:
    """Inputs built to provoke backtracking are redacted and stay idempotent."""
    once = redact(text)
    assert redact(once) == once
