"""Replace secret-shaped strings with `[REDACTED:<kind>]` markers before text leaves the store.

The patterns look for shapes that ordinary prose and code do not have: provider key
prefixes, JWT triples, PEM private-key blocks, credentials inside URLs, and values
assigned to names such as `password` or `api_key`. Redaction is deterministic (a fixed
pattern order), idempotent (a marker is never matched again), and leaves every other
character where it was, so redacted exports still diff cleanly against plain ones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from lcm_core.text.lazy_regex import Regex, lazy_compile

MARKER_PREFIX: Final = "[REDACTED:"


def marker(kind: str) -> str:
    """The text that stands in for one secret of this kind."""
    return f"{MARKER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One secret shape; `group` is the part replaced (0 = the whole match)."""

    kind: str
    regex: Regex
    group: int = 0


def _p(kind: str, pattern: str, group: int = 0, flags: int = 0) -> SecretPattern:
    return SecretPattern(kind, lazy_compile(pattern, flags), group)


# Characters that may not touch a token on the left or right, so that a prefix such as
# `sk-` inside a longer word (`task-...`) is not taken for a key.
_L: Final = r"(?<![A-Za-z0-9_\-])"
_R: Final = r"(?![A-Za-z0-9_\-])"
# A value that is already a marker is left alone, which makes redaction idempotent.
_NOT_MARKER: Final = r"(?!\[REDACTED:)"

# Names whose assigned value is a secret, matched where a name ends (`DB_PASSWORD`,
# `aws_secret_access_key`); the `\b` after them keeps `max_tokens` or `token_budget` out.
# Only the end of the name is matched: scanning a name's prefix from every word start
# would be quadratic on text such as `a-a-a-...`.
_SECRET_NAMES: Final = (
    r"(?:passwd|password|passphrase|pwd|secret|secret[_\-]?key"
    r"|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret"
    r"|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|session[_\-]?token"
    r"|bearer[_\-]?token|token|credentials?)"
)

PATTERNS: Final[tuple[SecretPattern, ...]] = (
    # PEM private keys: the whole block, or (when the END line was cut off) the BEGIN
    # line and the base64 or header lines that follow it. The block may not run past the
    # next BEGIN line, which keeps a text of many unterminated blocks linear.
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?!-----BEGIN ).)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        flags=re.S,
    ),
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\r?\n[ \t]*(?:[A-Za-z0-9+/=]{4,}|(?:Proc-Type|DEK-Info|Comment):[^\n]*)"
        r"[ \t]*(?=\r?\n|$))*",
    ),
    _p("jwt", _L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _R),
    _p("anthropic_key", _L + r"sk-ant-[A-Za-z0-9_\-]{20,}" + _R),
    _p("openai_key", _L + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}" + _R),
    _p("openai_key", _L + r"sk-[A-Za-z0-9]{16,}T3BlbkFJ[A-Za-z0-9]{16,}" + _R),
    # Plain `sk-` keys (OpenAI's older form, DeepSeek and many compatible providers):
    # one unbroken run of letters and digits that holds at least one digit.
    _p("api_key", _L + r"sk-(?=[A-Za-z]*[0-9])[A-Za-z0-9]{20,}" + _R),
    _p("github_token", _L + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})" + _R),
    _p("gitlab_token", _L + r"glpat-[A-Za-z0-9_\-]{20,}" + _R),
    _p("slack_token", _L + r"xox[abposre]-[A-Za-z0-9\-]{10,}" + _R),
    _p("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}"),
    _p("stripe_key", _L + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _R),
    _p("google_api_key", _L + r"AIza[0-9A-Za-z_\-]{35}" + _R),
    _p("google_oauth_token", _L + r"ya29\.[0-9A-Za-z_\-]{20,}" + _R),
    _p("huggingface_token", _L + r"hf_[A-Za-z0-9]{30,}" + _R),
    _p("npm_token", _L + r"npm_[A-Za-z0-9]{36}" + _R),
    _p("pypi_token", _L + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}" + _R),
    _p("sendgrid_key", _L + r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}" + _R),
    _p("aws_access_key", _L + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _R),
    # `scheme://user:password@host`: only the password goes. The scheme's length is
    # bounded so that a long run of `a-a-a-...` is not rescanned from every word start.
    _p(
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@\"'<>\[\]]*:"
        + _NOT_MARKER
        + r"([^\s/@\"'<>]+)@",
        group=1,
    ),
    # `Authorization: Bearer <token>` or `Basic <base64>`, and a bare `Bearer <token>`
    # whose token looks generated (16+ characters with a digit).
    _p(
        "bearer",
        r"(?i:authorization)\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+"
        + _NOT_MARKER
        + r"([A-Za-z0-9._~+/=\-]{8,})",
        group=1,
    ),
    _p(
        "bearer",
        r"\b(?i:bearer)\s+" + _NOT_MARKER + r"((?=[A-Za-z._~+/=\-]*[0-9])[A-Za-z0-9._~+/=\-]{16,})",
        group=1,
    ),
    # `password = "two words"`: a quoted value of a secret name, spaces allowed.
    _p(
        "secret",
        r"(?i:" + _SECRET_NAMES + r")\b[\"']?\s*[:=]\s*([\"'])" + _NOT_MARKER + r"([^\"'\n]{4,})\1",
        group=2,
    ),
    # `password=hunter2`, `DB_PASSWORD: s3cr3t!`, `"api_key": abc...`: an unquoted value
    # of 6+ characters that is not just digits (so `token: 4096` stays).
    _p(
        "secret",
        r"(?i:"
        + _SECRET_NAMES
        + r")\b[\"']?\s*[:=]\s*"
        + _NOT_MARKER
        + r"((?![0-9]+(?:[\s\"',;]|$))[^\s\"',;]{6,})",
        group=1,
    ),
    # Chinese forms with an explicit colon or equals sign: `密码：Passw0rd!`, `令牌=abc123xyz`.
    _p(
        "secret",
        r"(?:密码|口令|密钥|私钥|令牌|访问令牌)\s*[:：=]\s*" + _NOT_MARKER + r"([!-~]{4,})",
        group=1,
    ),
)


def _apply(pattern: SecretPattern, text: str, counts: Counter[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        counts[pattern.kind] += 1
        if pattern.group == 0:
            return marker(pattern.kind)
        whole = match.group(0)
        start = match.start(pattern.group) - match.start(0)
        end = match.end(pattern.group) - match.start(0)
        return whole[:start] + marker(pattern.kind) + whole[end:]

    return pattern.regex.sub(replace, text)


def redact_counts(text: str) -> tuple[str, dict[str, int]]:
    """The text with every secret replaced, and how many of each kind were replaced."""
    counts: Counter[str] = Counter()
    if not text:
        return text, {}
    for pattern in PATTERNS:
        text = _apply(pattern, text, counts)
    return text, dict(sorted(counts.items()))


def redact(text: str) -> str:
    """The text with every secret-shaped string replaced by a `[REDACTED:<kind>]` marker."""
    return redact_counts(text)[0]


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, tuples); keys are kept."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value
