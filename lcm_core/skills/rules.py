"""Deterministic rule classification and scope semantics, shared by skills and validation.

A rule's category comes from keyword cues in English and Chinese, weighted, plus the
heading it sits under; ties break in a fixed order. A scope names the parts of an
answer a rule (or a validation check) applies to — `body`, `quote`, `path`,
`explanation` — plus any path globs and tool names the rule mentions. `scope_map`
labels each character of an answer with one of those parts, so a check can exempt a
term that only occurs inside a quote or a path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from lcm_core.store.models import RULE_CATEGORIES
from lcm_core.text.lazy_regex import Regex, lazy_compile

SCOPE_KINDS: Final = ("body", "quote", "path", "explanation")
_KIND_CODE: Final = {kind: index for index, kind in enumerate(SCOPE_KINDS)}


def _cues(*patterns: str) -> tuple[Regex, ...]:
    return tuple(lazy_compile(p, re.IGNORECASE) for p in patterns)


# Each cue counts once; a category's score is its weight times the number of its cues hit
# (at most three). Safety and changing state weigh most: mislabelling either as mere
# style would hide a warning the model needs.
_WEIGHTS: Final = {
    "safety": 3.0,
    "current_state": 3.0,
    "style": 2.0,
    "workflow": 2.0,
    "reference": 2.0,
    "constraint": 1.0,
}
_TEXT_CUES: Final[dict[str, tuple[Regex, ...]]] = {
    "safety": _cues(
        r"\b(secrets?|passwords?|credentials?|api[ _-]?keys?|private keys?|ssh keys?|access tokens?)\b",
        r"rm -rf|\bforce[- ]push|--force\b|\bgit reset --hard\b",
        r"\b(destructive|irreversible|dangerous|unsafe|security|vulnerab\w*|leak\w*|pii)\b",
        r"\b(delete|drop (table|database)|wipe|truncate table|overwrite)\b",
        r"\b(production|prod)\b",
        r"\bsudo\b|chmod 777|\bpersonal data\b",
        r"密钥|密码|凭据|凭证|令牌|私钥",
        r"删除|销毁|清空|覆盖|强制推送|不可逆",
        r"生产环境|线上环境|危险|安全|泄露|泄漏|隐私|个人信息|敏感",
    ),
    "current_state": _cues(
        r"\b(currently|at the moment|right now|at present|as of|until further notice|for now)\b",
        r"\bcurrent (version|release|branch|status|value|price|rate|owner|maintainer|sprint|deadline|quota|limit|on-?call)\b",
        r"\b(latest|newest) (version|release|numbers?|data|figures?)\b",
        r"\b(is|are) now\b|\bnow (uses|runs|points|lives|is|has)\b",
        r"\b(today|this (week|month|quarter|sprint|year))\b",
        r"\b(temporarily|still (open|pending|broken|down))\b",
        r"当前|目前|现在|现阶段|截至|截止到|现状",
        r"最新(版本|数据|数字|发布)?|今天|本周|本月|本季度|近期",
        r"暂时|临时|实时|仍在|尚未",
    ),
    "style": _cues(
        r"\b(tone|style|formatting|format(ted)?|concise|brief|verbose|wording|phrasing|voice)\b",
        r"\b(naming|capitali[sz]\w*|title case|snake_case|camelcase|kebab-case|casing)\b",
        r"\b(markdown|bullets?|headings?|emoji|punctuation|indent\w*|line length|plain text)\b",
        r"\b(polite|friendly|formal|informal|jargon|active voice|passive voice)\b",
        r"\b(reply|answer|respond|write) in (english|chinese|the user's language)\b",
        r"\b(docstrings?|comments?|sentences?|paragraphs?)\b",
        r"风格|格式|语气|口吻|措辞|用词|排版",
        r"简洁|简短|命名|标点|标题|列表|表格|缩进|表情|段落|注释",
        r"中文回复|英文回复|礼貌|正式",
    ),
    "workflow": _cues(
        r"\b(first|then|next|afterwards?|finally|once|start by|begin by|followed by)\b",
        r"\b(before|after)\b",
        r"\b(run|execute|invoke|re-?run|repeat|iterate)\b",
        r"\b(commit|merge|deploy|build|install|open a (pr|pull request))\b",
        r"\bstep \d+\b|\bworkflow\b|\bprocedure\b",
        r"^(先|首先)|然后|接着|随后|之后|最后|第.步|步骤|流程|完成后|之前",
        r"运行|执行|提交|部署|构建|安装|调用",
    ),
    "reference": _cues(
        r"\b(see|refer to|consult|look up|for details|for more)\b",
        r"\b(documentation|docs|readme|wiki|manual|guide|spec(ification)?|cheat ?sheet)\b",
        r"https?://|\]\(",
        r"\b(examples?|templates?|reference)\b",
        r"参见|参考|参阅|详见|见附录",
        r"文档|链接|手册|指南|示例|模板",
    ),
    "constraint": _cues(
        r"\b(must|never|always|only|shall|should|exactly)\b",
        r"\b(do not|don't|cannot|can't|not allowed|forbidden|required|mustn't|shouldn't)\b",
        r"\b(at most|at least|no more than|no less than|maximum|minimum|exceed|limit(ed)? to)\b",
        r"必须|不得|禁止|不要|不能|只能|务必|切勿|严禁|不允许",
        r"至多|最多|至少|不超过|不少于|应当|应该|总是|始终",
    ),
}
# A heading names the kind of rules beneath it.
_HEADING_CUES: Final[dict[str, Regex]] = {
    "safety": lazy_compile(r"safety|security|danger|warning|guardrail|安全|危险|风险|警告", re.I),
    "current_state": lazy_compile(
        r"current|status|state of|right now|现状|当前|目前|近况|最新", re.I
    ),
    "style": lazy_compile(r"style|format|tone|writing|voice|风格|格式|语气|写作|排版", re.I),
    "reference": lazy_compile(
        r"reference|resources|see also|links|further reading|appendix|参考|资料|链接|附录|相关文档",
        re.I,
    ),
    "workflow": lazy_compile(
        r"workflow|steps|process|procedure|how to|usage|instructions|checklist|工作流|步骤|流程|用法|使用方法|操作",
        re.I,
    ),
    "constraint": lazy_compile(
        r"constraints?|rules|requirements|limits|do'?s and don'?ts|must|约束|规则|要求|限制|禁止",
        re.I,
    ),
}
# A prohibition names something not to do; the action verbs in it are not steps to take.
_PROHIBITION_RE: Final = lazy_compile(
    r"\b(never|do not|don't|must not|mustn't|should not|shouldn't|may not)\b|不要|禁止|不得|切勿|严禁|不允许",
    re.IGNORECASE,
)
HEADING_WEIGHT: Final = 2.5
ORDERED_WEIGHT: Final = 1.0
# On equal scores the more specific category wins; plain constraint is the fallback.
_TIE_ORDER: Final = ("safety", "current_state", "style", "reference", "workflow", "constraint")


def category_scores(text: str, heading: str = "", ordered: bool = False) -> dict[str, float]:
    """The weighted cue score of every category for one rule."""
    scores = dict.fromkeys(RULE_CATEGORIES, 0.0)
    for category, cues in _TEXT_CUES.items():
        hits = sum(1 for cue in cues if cue.search(text))
        scores[category] += _WEIGHTS[category] * min(hits, 3)
    if _PROHIBITION_RE.search(text):
        scores["workflow"] = 0.0
    # Only the innermost heading speaks for the rule; outer ones are too broad.
    inner = heading.rsplit(" > ", 1)[-1]
    for category, cue in _HEADING_CUES.items():
        if inner and cue.search(inner):
            scores[category] += HEADING_WEIGHT
            break
    if ordered:
        scores["workflow"] += ORDERED_WEIGHT
    return scores


def classify(text: str, heading: str = "", ordered: bool = False, imperative: bool = True) -> str:
    """The category of a rule: highest cue score, fixed tie order, a fallback when no cue hits."""
    scores = category_scores(text, heading, ordered)
    best = max(scores.values())
    if best <= 0:
        # A statement with no cue is background knowledge; an instruction is a constraint.
        return "constraint" if imperative else "reference"
    return next(c for c in _TIE_ORDER if scores[c] == best)


# --- paths, tools, scope of a rule ----------------------------------------------------

_CODE_SPAN_RE: Final = lazy_compile(r"`([^`\n]+)`")
_URL_RE: Final = lazy_compile(r"https?://[^\s)\]>\"'`，。；]+")
_EXTENSION_WORDS: Final = (
    "py md txt json yaml yml toml ini cfg sh bash zsh js mjs cjs ts tsx jsx css html sql csv "
    "tsv xml lock log rs go java kt c h cc cpp hpp rb php swift env conf pdf png jpg svg ipynb "
    "parquet sqlite db zst gz zip"
)
_EXTENSIONS: Final = frozenset(_EXTENSION_WORDS.split())
_PATH_TOKEN_RE: Final = lazy_compile(
    r"(?<![\w/.@:-])(?:~|\.{1,2})?/?[\w.*?\[\]{}@+-]+(?:/[\w.*?\[\]{}@+-]*)*"
)
# Tool names of DSH and Claude-Code-style hosts, recognised when written in backticks.
_TOOL_WORDS: Final = (
    "bash shell read write edit multiedit grep glob webfetch websearch notebookedit task "
    "todowrite read_file write_file edit_file apply_patch run_command"
)
_TOOL_NAMES: Final = frozenset(_TOOL_WORDS.split())
_TOOL_PHRASE_RE: Final = lazy_compile(
    r"`([A-Za-z][\w.-]*)`\s*(?:tool|工具)|(?:tool|工具)\s*`([A-Za-z][\w.-]*)`|"
    r"\b([A-Z][A-Za-z]+|[a-z]+_[a-z_]+)\s+tool\b|\b(mcp__[\w-]+__[\w-]+)\b"
)


def looks_like_path(token: str, *, quoted: bool = False) -> bool:
    """Whether a token names a file, folder or glob rather than being ordinary text."""
    token = token.strip()
    if not token or " " in token or "://" in token or len(token) > 300:
        return False
    if not any(ch.isalnum() for ch in token):
        return False
    if token.startswith(("./", "../", "~/")) or (token.startswith("/") and len(token) > 1):
        return True
    if "*" in token or (token.endswith("/") and len(token) > 1):
        return "/" in token or "." in token or token.startswith("*")
    if quoted and re.fullmatch(r"\.[A-Za-z][\w.-]*", token):
        return True  # a dotfile such as `.env` or `.gitignore`
    last = token.rstrip("/").rsplit("/", 1)[-1]
    stem, dot, ext = last.rpartition(".")
    if dot and stem and ext.lower() in _EXTENSIONS:
        # `Node.js` and `Next.js` are product names, not files.
        return quoted or "/" in token or not (ext.lower() in ("js", "ts") and stem[0].isupper())
    return quoted and "/" in token and not token.startswith("/")


def find_paths(text: str) -> list[tuple[int, int, str]]:
    """Paths and globs in text as (start, end, path): code spans first, then bare tokens."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for match in _CODE_SPAN_RE.finditer(text):
        if looks_like_path(match.group(1), quoted=True):
            found.append((match.start(), match.end(), match.group(1).strip()))
        taken.append((match.start(), match.end()))
    for match in _URL_RE.finditer(text):
        taken.append((match.start(), match.end()))
    for match in _PATH_TOKEN_RE.finditer(text):
        start = match.start()
        if any(a <= start < b for a, b in taken):
            continue
        token = match.group().rstrip(".,;:!?)")
        if looks_like_path(token):
            found.append((start, start + len(token), token))
    return sorted(found)


def find_tools(text: str) -> list[str]:
    """Tool names a rule mentions: `X` tool, X tool, tool `X`, mcp__server__tool, or a known name in backticks."""
    names: list[str] = []
    for match in _TOOL_PHRASE_RE.finditer(text):
        name = next(group for group in match.groups() if group)
        if name.casefold() not in {"the", "this", "that", "a", "any", "each", "every"}:
            names.append(name)
    for match in _CODE_SPAN_RE.finditer(text):
        if match.group(1).strip().casefold() in _TOOL_NAMES:
            names.append(match.group(1).strip())
    return _unique(names)


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value.casefold() not in seen:
            seen.add(value.casefold())
            kept.append(value)
    return kept


_EXEMPT_EN: Final = (
    r"(?:except|unless|outside(?: of)?|other than|apart from|excluding|not (?:in|inside|within))"
)
_EXEMPT_OK_EN: Final = r"(?:are|is) (?:fine|ok|okay|allowed|exempt|excluded)"
_PART_WORDS: Final = {
    "quote": (r"quot\w*|citations?|cited text", r"引用|引文|引号"),
    "path": (r"paths?|file ?names?|urls?|links?", r"路径|文件名|网址|链接"),
    "explanation": (r"explanations?|parenthe\w+|notes?", r"解释|说明|括号|注释"),
}
_ZH_EXEMPT: Final = r"(?:除外|例外|不算|不受此限|可以保留|不在此列|不计)"


def _exemption_re(part: str) -> Regex:
    en, zh = _PART_WORDS[part]
    return lazy_compile(
        rf"{_EXEMPT_EN}\b[^.;。；]{{0,40}}\b(?:{en})\b"
        rf"|\b(?:{en})\b[^.;。；]{{0,30}}\b{_EXEMPT_OK_EN}"
        rf"|(?:{zh})[^。；.;]{{0,12}}{_ZH_EXEMPT}"
        rf"|除(?:了)?[^。；.;]{{0,12}}(?:{zh})",
        re.IGNORECASE,
    )


_EXEMPTION_RES: Final = {part: _exemption_re(part) for part in _PART_WORDS}


def rule_scope(text: str) -> dict[str, Any]:
    """The scope a rule states: parts of an answer it covers, and paths and tools it names."""
    targets = [
        kind for kind in SCOPE_KINDS if kind == "body" or not _EXEMPTION_RES[kind].search(text)
    ]
    if re.search(r"\bonly in the (?:body|main text)\b|仅限正文|只在正文", text, re.IGNORECASE):
        targets = ["body"]
    return {
        "targets": targets,
        "paths": _unique(path for _, _, path in find_paths(text)),
        "tools": find_tools(text),
    }


def scope_targets(scope: Any) -> tuple[str, ...]:
    """The answer parts a scope covers; anything unusable means all of them."""
    if isinstance(scope, dict):
        scope = scope.get("targets")
    if isinstance(scope, str):
        scope = [scope]
    if isinstance(scope, list | tuple):
        kinds = tuple(k for k in SCOPE_KINDS if k in scope)
        if kinds:
            return kinds
    return SCOPE_KINDS


def scope_note(scope: dict[str, Any]) -> str:
    """A short human note for a scope; empty when the rule covers everything and names nothing."""
    parts: list[str] = []
    targets = scope_targets(scope)
    if targets != SCOPE_KINDS:
        parts.append("applies to " + "/".join(targets))
    paths: Sequence[str] = scope.get("paths") or ()
    tools: Sequence[str] = scope.get("tools") or ()
    if paths:
        parts.append("paths " + ", ".join(paths))
    if tools:
        parts.append("tools " + ", ".join(tools))
    return "; ".join(parts)


# --- which part of an answer each character belongs to --------------------------------

_FENCE_BLOCK_RE: Final = lazy_compile(r"^\s{0,3}(```|~~~).*?(?:^\s{0,3}\1[^\n]*$|\Z)", re.M | re.S)
_BLOCKQUOTE_RE: Final = lazy_compile(r"^\s{0,3}>.*$", re.M)
_QUOTED_RE: Final = lazy_compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|《[^》\n]*》')
_PAREN_RE: Final = lazy_compile(r"\([^()\n]*\)|（[^（）\n]*）")
_NOTE_LINE_RE: Final = lazy_compile(
    r"^\s*(?:note|explanation|why)\s*:.*$|^\s*(?:注|说明|解释)[:：].*$", re.M | re.I
)


def scope_map(text: str) -> bytes:
    """One code per character: 0 body, 1 quote, 2 path, 3 explanation (see `SCOPE_KINDS`).

    Earlier kinds of marking win over later ones: a fenced block or block quote is a
    quote even if it holds a path; a path inside parentheses is a path.
    """
    codes = bytearray(len(text))
    marked = bytearray(len(text))

    def mark(start: int, end: int, kind: str) -> None:
        code = _KIND_CODE[kind]
        for i in range(start, end):
            if not marked[i]:
                codes[i], marked[i] = code, 1

    for match in _FENCE_BLOCK_RE.finditer(text):
        mark(match.start(), match.end(), "quote")
    for match in _BLOCKQUOTE_RE.finditer(text):
        mark(match.start(), match.end(), "quote")
    for match in _CODE_SPAN_RE.finditer(text):
        kind = "path" if looks_like_path(match.group(1), quoted=True) else "quote"
        mark(match.start(), match.end(), kind)
    for match in _URL_RE.finditer(text):
        mark(match.start(), match.end(), "path")
    for match in _QUOTED_RE.finditer(text):
        mark(match.start(), match.end(), "quote")
    for start, end, _ in find_paths(text):
        mark(start, end, "path")
    for match in _NOTE_LINE_RE.finditer(text):
        mark(match.start(), match.end(), "explanation")
    for match in _PAREN_RE.finditer(text):
        mark(match.start(), match.end(), "explanation")
    return bytes(codes)


def in_scope(codes: bytes, start: int, targets: Sequence[str]) -> bool:
    """Whether the character at `start` lies in one of the target parts."""
    if start >= len(codes):
        return "body" in targets
    return SCOPE_KINDS[codes[start]] in targets
