"""Text handling for extraction: sentences, clauses, noise filtering, content clean-up, scope."""

from __future__ import annotations

import re
from typing import Any, Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.query import query_signals
from lcm_core.text.tokens import CJK_CLASS

_CODE_FENCE: Final = lazy_compile(r"```.*?(?:```|$)", re.S)
# Lines that are code, logs or stack traces rather than prose.
_NOISE_LINE: Final = lazy_compile(
    r"""^\s*(?:Traceback\ \(most\ recent\ call\ last\)|File\ "[^"]*",\ line\ \d+|
    at\ [\w$.<>\[\]]+\s*\(|[\w.]*(?:Error|Exception|Warning)(?:\s*\[[^\]]*\])?:|
    \d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}|>>>|\$\ |\#!|<[/\w][^>]*>|
    (?:def|class|import|from\ \S+\ import|return|const|let|var|function|public|private|package)\s|
    [{}\[\]()];?\s*$)""",
    re.X,
)
_CODE_CHARS: Final = frozenset("{}();=<>[]$|\\")
_BULLET: Final = lazy_compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")
# Sentence ends: CJK and hard marks always, a Latin full stop only before a space.
_SENTENCE_SPLIT: Final = lazy_compile(r"(?<=[。！？；;!?])\s*|(?<=\.)\s+")
_ABBREVIATION: Final = lazy_compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|incl|excl|no|mr|dr|cf)\.)$", re.I
)
_CLAUSE_SPLIT: Final = lazy_compile(r"\s*[,，、]\s*|\s+[—–]\s+|\s+-\s+")
# Openers that carry no content: "also,", "and", "ok so", "另外，", "对了，".
_LEAD_FILLER: Final = lazy_compile(
    r"^(?:(?:also|and|so|ok(?:ay)? so|right|alright|all right|well|plus|oh and|but|then|btw|fyi|"
    r"hmm+|oh|ah|um+|uh|great|cool|nice)\b[\s,，:：—–-]*|"
    r"(?:另外|还有|对了|然后|那么|嗯|哦|啊)[\s,，:：—–-]*)+",
    re.IGNORECASE,
)
_TRAIL: Final = " \t.。!！;；,，:："
MAX_CONTENT_CHARS: Final = 500

_TOOLS: Final = (
    "git",
    "docker compose",
    "docker",
    "kubectl",
    "kubernetes",
    "k8s",
    "helm",
    "terraform",
    "npm",
    "pnpm",
    "yarn",
    "pip",
    "uv",
    "poetry",
    "conda",
    "pytest",
    "jest",
    "ruff",
    "black",
    "flake8",
    "mypy",
    "eslint",
    "prettier",
    "webpack",
    "vite",
    "cargo",
    "gradle",
    "maven",
    "redis",
    "postgresql",
    "postgres",
    "mysql",
    "sqlite",
    "lmdb",
    "kafka",
    "rabbitmq",
    "celery",
    "rq",
    "nginx",
    "grafana",
    "prometheus",
    "github actions",
    "buildkite",
    "jenkins",
    "s3",
    "rds",
    "cos",
    "vue",
    "react",
    "zustand",
    "redux",
    "django",
    "flask",
    "fastapi",
    "spring boot",
    "graphql",
    "clickhouse",
    "duckdb",
    "elasticsearch",
    "go",
    "python",
    "node",
    "typescript",
    "rust",
    "java",
)
_TOOL_RE: Final = lazy_compile(
    r"(?<![A-Za-z0-9_\-])(" + "|".join(re.escape(t) for t in _TOOLS) + r")(?![A-Za-z0-9_\-])",
    re.IGNORECASE,
)
_COMPONENT_EN: Final = lazy_compile(
    r"\b((?:[a-z][\w\-]*\s)?[a-z][\w\-]*)\s(service|module|component|endpoint|api|pipeline|job|"
    r"worker|server|client|database|cache|queue|frontend|backend|cli|library|package|page|table|"
    r"bucket|cluster|store|region)\b",
    re.IGNORECASE,
)
_COMPONENT_ZH: Final = lazy_compile(
    rf"([{CJK_CLASS}]{{1,4}}?(?:服务|模块|接口|系统|页面|数据库|缓存|队列|组件|表))"
)
# Words before a component noun that do not name it ("when the cache", "to the queue").
_COMPONENT_SKIP_TEXT: Final = """the a an our my your their its this that these those new each
    every any all some when whenever if unless until while with without for from in on at to
    of by per via into onto and or but is are was were be been use using than then"""
_COMPONENT_SKIP: Final = frozenset(_COMPONENT_SKIP_TEXT.split())
_ENVIRONMENTS: Final = lazy_compile(
    r"(?<![A-Za-z])(production|prod|staging|development|dev|local|ci)(?![A-Za-z])|"
    r"(生产环境|测试环境|预发环境|开发环境|本地|线上)",
    re.IGNORECASE,
)
_FILE_RE: Final = lazy_compile(
    r"(?<![\w/])[\w\-]+(?:\.[\w\-]+)*\.(?:py|ts|tsx|js|jsx|json|ya?ml|toml|md|sql|go|rs|java|kt|"
    r"rb|php|sh|cfg|ini|env|lock|txt|csv|html|css|vue|c|h|cpp|hpp|swift|xml|conf)\b"
)
_DIR_RE: Final = lazy_compile(r"(?<![\w/])[A-Za-z_][\w.\-]*(?:/[\w.\-]+)*/(?=\s|$|[,.;，。、])")


def sentences(text: str) -> list[str]:
    """Prose sentences of a message; code blocks, logs and stack traces are left out."""
    out: list[str] = []
    for line in _CODE_FENCE.sub("\n", text).split("\n"):
        if _is_noise(line):
            continue
        line = _BULLET.sub("", line).strip()
        pending = ""
        for piece in _SENTENCE_SPLIT.split(line):
            piece = (pending + " " + piece).strip() if pending else piece.strip()
            pending = ""
            if _ABBREVIATION.search(piece):
                pending = piece
                continue
            if piece:
                out.append(piece)
        if pending:
            out.append(pending)
    return out


def _is_noise(line: str) -> bool:
    if not line.strip():
        return True
    if line.startswith(("    ", "\t")) or _NOISE_LINE.match(line):
        return True
    code = sum(1 for ch in line if ch in _CODE_CHARS)
    return code >= 4 and code / max(len(line), 1) > 0.08


def clauses(sentence: str) -> list[str]:
    """Comma-level pieces of a sentence, for sentences that state two different things."""
    return [piece for piece in _CLAUSE_SPLIT.split(sentence) if piece.strip()]


def clean_content(text: str) -> str:
    """The clause as a memory: filler openers and trailing punctuation removed, length capped."""
    cleaned = _LEAD_FILLER.sub("", text.strip()).strip(_TRAIL)
    if len(cleaned) > MAX_CONTENT_CHARS:
        cleaned = cleaned[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
    return cleaned


def scope_of(text: str) -> dict[str, Any]:
    """Where a memory applies: paths and files, tools, components and environments named."""
    # Full query signals are costly; only text with a path separator can hold a path.
    paths = list(query_signals(text).paths) if ("/" in text or "\\" in text) else []
    for pattern in (_FILE_RE, _DIR_RE):
        for match in pattern.finditer(text):
            if not any(match.group() in p for p in paths):
                paths.append(match.group())
    tools = _unique(m.group(1).casefold() for m in _TOOL_RE.finditer(text))
    components = _unique(_components(text))
    environments = _unique(
        (m.group(1) or m.group(2)).casefold() for m in _ENVIRONMENTS.finditer(text)
    )
    scope: dict[str, Any] = {}
    for key, values in (
        ("paths", _unique(paths)),
        ("tools", tools),
        ("components", components),
        ("environments", environments),
    ):
        if values:
            scope[key] = values
    return scope


def _components(text: str) -> list[str]:
    found: list[str] = []
    for match in _COMPONENT_EN.finditer(text):
        words = [w for w in match.group(1).split() if w.casefold() not in _COMPONENT_SKIP]
        if words:
            found.append(" ".join([*words, match.group(2)]).casefold())
    found.extend(m.group(1) for m in _COMPONENT_ZH.finditer(text))
    return found


def _unique(values: Any) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))
