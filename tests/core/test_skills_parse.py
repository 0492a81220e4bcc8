"""The SKILL.md reader: the YAML-subset header, rule candidates from the body, classification cues."""

from __future__ import annotations

import pytest

from lcm_core.skills.parse import SkillParseError, is_imperative, parse_skill, rule_candidates
from lcm_core.skills.rules import classify, find_paths, rule_scope, scope_map, scope_targets


def header(text: str) -> str:
    return "---\n" + text + "\n---\nbody\n"


def test_header_reads_plain_quoted_block_and_list_values() -> None:
    """Plain, double- and single-quoted, literal, folded and list values all read as YAML would."""
    doc = parse_skill(
        header(
            "name: demo  # trailing comment\n"
            'description: "Line one\\nsays \\"hi\\" \\u4e2d"\n'
            "when-to-use: >\n  folded over\n  two lines\n"
            "invocation: |\n  /demo\n  --fast\n"
            "tags: [a, 'b, c', \"d\"]\n"
            "owners:\n  - 张三\n  - li\n"
            "metadata:\n  version: '2'"
        ),
        fallback_name="folder",
    )
    assert doc.name == "demo"
    assert doc.description == 'Line one\nsays "hi" 中'
    assert doc.when_to_use == "folded over two lines"
    assert doc.invocation == "/demo\n--fast"
    assert doc.meta["tags"] == ["a", "b, c", "d"]
    assert doc.meta["owners"] == ["张三", "li"]
    assert doc.meta["metadata"] == {"version": "2"}
    assert doc.body == "body\n" and doc.body_line == 17


def test_missing_name_falls_back_to_the_folder_name() -> None:
    """A header without `name` takes the skill folder's name; aliases such as when_to_use are read."""
    doc = parse_skill(header("description: x\nwhen_to_use: always"), fallback_name="folder")
    assert (doc.name, doc.when_to_use) == ("folder", "always")


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("# no header\n- a rule\n", "missing frontmatter", 1),
        ("---\nname: x\n- a rule\n", "not closed", 1),
        (header("name: x\nname: y"), "duplicate key", 3),
        (header("  name: x"), "unexpected indentation", 2),
        (header("description: 'quoted'\n  more text"), "indented text after a quoted value", 3),
        (header("description this has no colon"), "expected 'key: value'", 2),
        (header("description: 'unclosed"), "single-quoted", 2),
        (header("description: {a: 1}"), "not supported", 2),
        (header("name: [a, b]"), "one line of text", 0),
        (header("description:\n  - a\n  b: c"), "expected '- item'", 4),
    ],
)
def test_malformed_headers_raise_with_a_line(text: str, message: str, line: int) -> None:
    """Each kind of broken header is named, with the line it was found on."""
    with pytest.raises(SkillParseError, match=message) as caught:
        parse_skill(text, fallback_name="folder")
    assert caught.value.line == line


def test_rule_candidates_cover_lists_and_imperative_paragraphs_under_headings() -> None:
    """List items anywhere, imperative sentences under headings, code and tables skipped, lines kept."""
    body = (
        "Intro paragraph. Use this before any heading.\n"  # line 10: no heading yet
        "\n"
        "## Steps\n"
        "\n"
        "1. Run the build,\n"
        "   then read its log.\n"  # continuation of the item on line 14
        "- [x] 检查配置\n"
        "  文件是否存在。\n"
        "\n"
        "This tool is fast. Always pass `--check` first. 不要跳过测试。\n"
        "\n"
        "```bash\n"
        "- not a rule inside a fence\n"
        "```\n"
        "| - | table |\n"
        "<!-- - hidden -->\n"
        "- **Bold** rule text\n"
    )
    found = rule_candidates(body, 10)
    assert [(c.line, c.text, c.heading, c.ordered) for c in found] == [
        (14, "Run the build, then read its log.", "Steps", True),
        (16, "检查配置文件是否存在。", "Steps", False),
        (19, "Always pass `--check` first.", "Steps", False),
        (19, "不要跳过测试。", "Steps", False),
        (26, "Bold rule text", "Steps", False),
    ]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Always cite sources.", True),
        ("[P1] Keep the runbook current.", True),
        ("The API must return JSON.", True),
        ("This skill keeps history readable.", False),
        ("请使用中文回复。", True),
        ("回复时不得使用表情符号。", True),
        ("这个技能用于整理周报。", False),
    ],
)
def test_imperative_detection(sentence: str, expected: bool) -> None:
    """Instructions in English and Chinese are told apart from descriptions."""
    assert is_imperative(sentence) is expected


@pytest.mark.parametrize(
    ("text", "heading", "category"),
    [
        ("Never paste API keys into the chat.", "", "safety"),
        ("删除生产环境数据前必须先备份。", "", "safety"),
        ("The current release branch is release/2.4.", "", "current_state"),
        ("目前的负责人是王五。", "", "current_state"),
        ("Use sentence case for headings.", "", "style"),
        ("回复语气保持礼貌、简洁。", "", "style"),
        ("First run the linter, then the tests.", "", "workflow"),
        ("See docs/deploy.md for the checklist.", "", "reference"),
        ("Only touch one module per change.", "", "constraint"),
        ("The owner is the platform team.", "Status", "current_state"),
        ("不要在周五下午执行部署。", "", "constraint"),
    ],
)
def test_classifier_cues(text: str, heading: str, category: str) -> None:
    """Keyword cues (and a heading) decide the category; a prohibition is not a workflow step."""
    assert classify(text, heading) == category


def test_rule_scope_reads_exemptions_paths_and_tools() -> None:
    """Quote and path exemptions in English and Chinese, globs, dotfiles and tool names."""
    assert rule_scope("Avoid 'basically' outside of quotations.")["targets"] == [
        "body",
        "path",
        "explanation",
    ]
    assert rule_scope("不要出现内部代号，引用和路径除外。")["targets"] == ["body", "explanation"]
    assert rule_scope("禁止出现 TODO，文件名除外。")["targets"] == ["body", "quote", "explanation"]
    scope = rule_scope(
        "Run `ruff` on src/**/*.py and `.env.example` with the `Bash` tool, never mcp__fs__write."
    )
    assert scope["paths"] == ["src/**/*.py", ".env.example"]
    assert scope["tools"] == ["Bash", "mcp__fs__write"]
    assert rule_scope("Node.js 20 is required.")["paths"] == []


def test_scope_map_labels_quotes_paths_and_explanations() -> None:
    """Every character gets one part: quotes, code spans, URLs, paths and parentheses are marked."""
    text = 'A "q" (e) src/a.py `x y` https://h.io/p 「引」 body'
    codes = scope_map(text)
    kinds = {text[i]: codes[i] for i in range(len(text)) if text[i] in "Aqe/xh引b"}
    assert kinds == {"A": 0, "q": 1, "e": 3, "/": 2, "x": 1, "h": 2, "引": 1, "b": 0}
    assert [p for _, _, p in find_paths(text)] == ["src/a.py"]
    assert scope_targets("quote") == ("quote",)
    assert scope_targets({"targets": ["path", "body"]}) == ("body", "path")
    assert scope_targets(None) == ("body", "quote", "path", "explanation")
