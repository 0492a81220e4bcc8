"""Parse a SKILL.md file: a small YAML-subset frontmatter, then rule candidates from the body.

Pure functions over text; nothing here touches storage. The frontmatter reader knows
just enough YAML for skill headers (plain, quoted and block scalars, lists, one level of
nesting, comments) and reports anything else as malformed rather than guessing, because
a half-read header would give a skill the wrong name or an empty description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile

FrontValue = str | list[str] | dict[str, str]

_KEY_RE: Final = lazy_compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$")
_LIST_ITEM_RE: Final = lazy_compile(r"^-(?:\s+(.*)|\s*)$")
_FENCE_RE: Final = lazy_compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING_RE: Final = lazy_compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET_RE: Final = lazy_compile(
    r"^(\s*)([-*+]|\d{1,3}[.)]|\(\d{1,3}\)|（\d{1,3}）|[一二三四五六七八九十]{1,3}、)\s+(.*)$"
)
_TASK_BOX_RE: Final = lazy_compile(r"^\[[ xX]\]\s+")
_RULE_LINE_RE: Final = lazy_compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_EMPHASIS_RE: Final = lazy_compile(r"(\*\*|__)(.+?)\1")
_SPACE_RE: Final = lazy_compile(r"\s+")
# A sentence ends at . ! ? followed by space, or at Chinese full stops and semicolons.
_SENTENCE_END_RE: Final = lazy_compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?](?=\s)|[。！？；]"
)

# Frontmatter keys as written in the wild, mapped to the field they fill.
KEY_ALIASES: Final[dict[str, str]] = {
    "name": "name",
    "description": "description",
    "when-to-use": "when_to_use",
    "when_to_use": "when_to_use",
    "whentouse": "when_to_use",
    "when": "when_to_use",
    "invocation": "invocation",
    "invoke": "invocation",
}
MAX_RULE_CHARS: Final = 600

# Words that open an imperative sentence in English instructions.
_IMPERATIVE_WORDS: Final = """
    always never do don't dont use run check verify prefer avoid ensure make keep write read
    call ask include add remove return set follow only start stop open create delete update
    put place format cite quote list mention explain report confirm test commit push install
    build respond answer reply limit wrap split name document log record treat tell give
    show skip leave try be stay state mark link refer see consult look search review compare
    save send copy move rename append attach cross-check double-check re-run rerun escalate
    summarize summarise describe note sort group label tag pin lock stage merge rebase
    deploy release publish notify warn flag convert translate measure count round
"""
_IMPERATIVE_VERBS: Final = frozenset(_IMPERATIVE_WORDS.split())
_MODAL_RE: Final = lazy_compile(
    r"\b(must|should|shall|never|always|do not|don't|need to|needs to|have to|has to|"
    r"is required|are required|mustn't|shouldn't|may not|cannot|can't|is forbidden|"
    r"are forbidden|not allowed)\b",
    re.IGNORECASE,
)
# Openings of a Chinese instruction (please, must, never, first, use, avoid, ...).
_ZH_IMPERATIVE_WORDS: Final = "请 务必 必须 不要 禁止 切勿 始终 总是 永远 先 首先 然后 最后 使用 避免 确保 保持 检查 运行 确认 "
_ZH_IMPERATIVE_WORDS2: Final = (
    "优先 只 仅 不得 严禁 勿 应 需要 记得 注意 参见 参考 查看 每次 提交 写 用"
)
_ZH_IMPERATIVE_START: Final = tuple((_ZH_IMPERATIVE_WORDS + _ZH_IMPERATIVE_WORDS2).split())
_ZH_MODAL_RE: Final = lazy_compile(
    r"必须|不得|禁止|不要|不能|务必|切勿|应当|应该|需要|严禁|不允许|只能|仅限|一律"
)


class SkillParseError(ValueError):
    """A SKILL.md that cannot be read safely; `line` is 1-based, 0 when not tied to a line."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True, slots=True)
class SkillDoc:
    """A parsed skill file: header fields, the raw header map, and the Markdown body."""

    name: str
    description: str
    when_to_use: str
    invocation: str
    body: str
    body_line: int
    meta: dict[str, FrontValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RuleCandidate:
    """A line of the body that reads as a rule, before classification."""

    text: str
    line: int
    heading: str = ""
    ordered: bool = False
    imperative: bool = True


# --- frontmatter ----------------------------------------------------------------------


def _unquote(raw: str, line: int) -> str:
    value = raw.strip()
    if value[:1] == '"':
        match = re.match(r'"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$', value)
        if match is None:
            raise SkillParseError("unterminated or trailing text after a double-quoted value", line)
        return _unescape(match.group(1))
    if value[:1] == "'":
        match = re.match(r"'((?:[^']|'')*)'\s*(?:#.*)?$", value)
        if match is None:
            raise SkillParseError("unterminated or trailing text after a single-quoted value", line)
        return match.group(1).replace("''", "'")
    # A plain scalar ends at a comment marker preceded by a space.
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def _unescape(text: str) -> str:
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "", "0": ""}

    def swap(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u"):
            return chr(int(code[1:], 16))
        return escapes.get(code, code)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", swap, text)


_FLOW_ITEM_RE: Final = lazy_compile(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,'"]*)\s*(,|$)""")


def _flow_list(raw: str, line: int) -> list[str]:
    inner = raw.strip()
    if not inner.endswith("]"):
        raise SkillParseError("unterminated [ list", line)
    items: list[str] = []
    body, position = inner[1:-1], 0
    while position < len(body):
        match = _FLOW_ITEM_RE.match(body, position)
        if match is None or match.end() == position:
            raise SkillParseError("cannot read the [ list", line)
        if match.group(1).strip():
            items.append(_unquote(match.group(1), line))
        position = match.end()
    return items


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _block_scalar(lines: list[tuple[int, str]], style: str) -> str:
    """The text of a `|` or `>` block: literal keeps line breaks, folded joins lines."""
    texts = [text for _, text in lines]
    depth = min((_indent(t) for t in texts if t.strip()), default=0)
    stripped = [t[depth:] if t.strip() else "" for t in texts]
    if style.startswith("|"):
        return "\n".join(stripped).strip("\n")
    paragraphs = "\n".join(stripped).strip("\n").split("\n\n")
    return "\n".join(" ".join(p.split()) for p in paragraphs)


def parse_frontmatter(text: str) -> tuple[dict[str, FrontValue], str, int]:
    """Split a skill file into its header map, its body and the body's first line number."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillParseError("missing frontmatter: the file must start with a '---' line", 1)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise SkillParseError("frontmatter is not closed by a '---' line", 1)
    values: dict[str, FrontValue] = {}
    i = 1
    while i < end:
        number, raw = i + 1, lines[i]
        if not raw.strip() or raw.lstrip().startswith("#"):
            i += 1
            continue
        if _indent(raw):
            raise SkillParseError("unexpected indentation", number)
        match = _KEY_RE.match(raw)
        if match is None:
            raise SkillParseError(f"expected 'key: value', got {raw.strip()[:40]!r}", number)
        key, rest = match.group(1), (match.group(2) or "").strip()
        if key in values:
            raise SkillParseError(f"duplicate key {key!r}", number)
        # The lines that belong to this key: indented ones (and blanks between them).
        j = i + 1
        while j < end and (not lines[j].strip() or _indent(lines[j]) > 0):
            j += 1
        nested = [(k + 1, lines[k]) for k in range(i + 1, j)]
        while nested and not nested[-1][1].strip():
            nested.pop()
        values[key] = _value(rest, nested, number)
        i = j
    return values, "\n".join(lines[end + 1 :]), end + 2


def _value(rest: str, nested: list[tuple[int, str]], number: int) -> FrontValue:
    if rest[:1] in ("|", ">") and re.fullmatch(r"[|>][+-]?\d?\s*(#.*)?", rest):
        return _block_scalar(nested, rest)
    if rest.startswith("["):
        if nested:
            raise SkillParseError("a [ list must fit on one line", number)
        return _flow_list(rest, number)
    if rest.startswith("{"):
        raise SkillParseError("inline {mappings} are not supported", number)
    if rest:
        value = _unquote(rest, number)
        if nested:
            if rest[:1] in ("'", '"'):
                raise SkillParseError("indented text after a quoted value", nested[0][0])
            # A plain scalar may wrap onto indented lines; YAML folds them with spaces.
            value = " ".join([value, *(t.strip() for _, t in nested if t.strip())])
        return value
    content = [(n, t) for n, t in nested if t.strip() and not t.lstrip().startswith("#")]
    if not content:
        return ""
    # The first nested line decides: a list of `- item` lines or a `key: value` mapping.
    if _LIST_ITEM_RE.match(content[0][1].strip()):
        items: list[str] = []
        for n, t in content:
            match = _LIST_ITEM_RE.match(t.strip())
            if match is None:
                raise SkillParseError(f"expected '- item', got {t.strip()[:40]!r}", n)
            items.append(_unquote(match.group(1) or "", n))
        return items
    mapping: dict[str, str] = {}
    for n, t in content:
        inner = _KEY_RE.match(t.strip())
        if inner is None:
            raise SkillParseError(f"expected 'key: value', got {t.strip()[:40]!r}", n)
        mapping[inner.group(1)] = _unquote(inner.group(2) or "", n)
    return mapping


def _as_text(value: FrontValue | None, key: str) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(v for v in value if v)
    if isinstance(value, dict):
        raise SkillParseError(f"{key} must be text, not a mapping")
    return value


def parse_skill(text: str, *, fallback_name: str) -> SkillDoc:
    """Read a whole SKILL.md; raises `SkillParseError` when it is malformed."""
    values, body, body_line = parse_frontmatter(text)
    fields: dict[str, str] = {}
    for key, value in values.items():
        target = KEY_ALIASES.get(key.lower().replace("_", "-")) or KEY_ALIASES.get(key.lower())
        if target is not None and target not in fields:
            fields[target] = _as_text(value, key).strip()
    if isinstance(values.get("name"), list):
        raise SkillParseError("name must be one line of text")
    name = fields.get("name") or fallback_name
    if not name or "\n" in name or len(name) > 200:
        raise SkillParseError("the skill has no usable name")
    return SkillDoc(
        name=name,
        description=fields.get("description", ""),
        when_to_use=fields.get("when_to_use", ""),
        invocation=fields.get("invocation", ""),
        body=body,
        body_line=body_line,
        meta=values,
    )


# --- body -> rule candidates ----------------------------------------------------------


def clean_rule_text(text: str) -> str:
    """Rule text as shown: emphasis markers dropped, spacing collapsed, length bounded."""
    text = _EMPHASIS_RE.sub(r"\2", text)
    text = _SPACE_RE.sub(" ", text).strip()
    if len(text) > MAX_RULE_CHARS:
        text = text[: MAX_RULE_CHARS - 1].rstrip() + "…"
    return text


def is_imperative(sentence: str) -> bool:
    """Whether a sentence reads as an instruction (English or Chinese)."""
    # A leading tag such as `[P1]` or `[1]` does not change what the sentence asks.
    text = re.sub(r"^\[[^\]]{1,12}\]\s*", "", sentence.strip()).lstrip("*_>`\"'“「 ")
    if not text:
        return False
    if text.startswith(_ZH_IMPERATIVE_START) or _ZH_MODAL_RE.search(text):
        return True
    first = re.split(r"[\s,:;]", text, maxsplit=1)[0].casefold().strip("*_`")
    return first in _IMPERATIVE_VERBS or _MODAL_RE.search(text) is not None


def _join(parts: list[str]) -> str:
    """Join wrapped lines: with a space between Latin words, directly between CJK."""
    out = ""
    for part in parts:
        part = part.strip()
        if out and part and not (_is_wide(out[-1]) and _is_wide(part[0])):
            out += " "
        out += part
    return out


def _is_wide(char: str) -> bool:
    return (
        "\u2e80" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef" or "\u3000" <= char <= "\u303f"
    )


def _sentences(parts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Split a paragraph (its lines with numbers) into sentences with their start lines."""
    text, starts = "", []
    for number, part in parts:
        piece = part.strip()
        if text and not (_is_wide(text[-1]) and _is_wide(piece[:1] or "a")):
            text += " "
        starts.append((len(text), number))
        text += piece
    found: list[tuple[int, str]] = []
    begin = 0
    for match in [*_SENTENCE_END_RE.finditer(text), None]:
        stop = match.end() if match is not None else len(text)
        sentence = text[begin:stop].strip()
        if sentence:
            offset = begin + (len(text[begin:stop]) - len(text[begin:stop].lstrip()))
            line = max(n for pos, n in starts if pos <= offset)
            found.append((line, sentence))
        begin = stop
    return found


def rule_candidates(body: str, first_line: int) -> list[RuleCandidate]:
    """List items anywhere, and imperative sentences of paragraphs under a heading."""
    found: list[RuleCandidate] = []
    headings: list[tuple[int, str]] = []
    lines = body.split("\n")
    fence: str | None = None
    in_comment = False
    item: tuple[int, int, bool, list[str]] | None = None  # line, indent, ordered, parts
    paragraph: list[tuple[int, str]] = []

    def heading() -> str:
        return " > ".join(text for _, text in headings)

    def flush() -> None:
        nonlocal item, paragraph
        if item is not None:
            text = clean_rule_text(_TASK_BOX_RE.sub("", _join(item[3])))
            if len(text) >= 2:
                found.append(RuleCandidate(text, item[0], heading(), item[2], is_imperative(text)))
            item = None
        if paragraph and headings:
            for number, sentence in _sentences(paragraph):
                text = clean_rule_text(sentence)
                if len(text) >= 4 and is_imperative(text):
                    found.append(RuleCandidate(text, number, heading(), False, True))
        paragraph = []

    for index, raw in enumerate(lines):
        number = first_line + index
        stripped = raw.strip()
        fence_match = _FENCE_RE.match(raw)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            continue
        if fence_match:
            flush()
            fence = fence_match.group(1)
            continue
        if in_comment or stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            flush()
            continue
        heading_match = _HEADING_RE.match(raw)
        if heading_match:
            flush()
            level = len(heading_match.group(1))
            headings = [(lvl, t) for lvl, t in headings if lvl < level]
            headings.append((level, clean_rule_text(heading_match.group(2))))
            continue
        if not stripped or stripped.startswith("|") or _RULE_LINE_RE.match(raw):
            flush()
            continue
        bullet = _BULLET_RE.match(raw.replace("\t", "    "))
        if bullet:
            flush()
            ordered = bullet.group(2)[0] not in "-*+"
            item = (number, len(bullet.group(1)), ordered, [bullet.group(3)])
            continue
        if item is not None:
            item[3].append(stripped)  # an indented or lazy continuation of the item
            continue
        paragraph.append((number, stripped.lstrip("> ").strip()))
    flush()
    return found
