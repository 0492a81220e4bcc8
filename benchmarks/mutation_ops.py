"""Mutants of one Python source file: small changes in its code and inside its SQL strings.

Each mutant replaces one span of the source with other text. Python mutations flip
comparison, boolean and arithmetic operators, constants, `max`/`min`, `is`/`is not`,
force an `if`/`while` condition true or false, and delete a call statement. SQL
mutations (only inside string literals that read as SQL) flip `=`/`!=` and `AND`/`OR`,
make a condition always true, reverse an ORDER BY, change a LIMIT, swap `OR REPLACE`
and `OR IGNORE`, make an upsert keep the old value, and swap a column for another
column of a table that has it. Docstrings are never mutated.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mutant:
    """One change: replace source[start:end] with `new`; `key` names it stably."""

    path: str
    key: str
    op: str
    line: int
    start: int
    end: int
    old: str
    new: str

    def apply(self, source: str) -> str:
        """The source with this mutant's change made."""
        assert source[self.start : self.end] == self.old, self.key
        return source[: self.start] + self.new + source[self.end :]


_PY_OPS = {
    "==": "!=",
    "!=": "==",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "+": "-",
    "-": "+",
}
_PY_NAMES = {"and": "or", "or": "and", "True": "False", "False": "True", "max": "min", "min": "max"}
_SQL_HINT = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|ORDER BY|LIMIT|VALUES)\b| = \?| IN \("
)
_TABLE_NAME = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN) (\w+)")
# Where a condition may start: after WHERE, AND, OR, ON, or at the start of a fragment.
_COND_START = r"(?:(?<=WHERE )|(?<=AND )|(?<= OR )|(?<= ON )|(?<=\")|(?<='))"
_IDENT = r"[A-Za-z_][\w.]*"

# (operator name, pattern, replacement) applied inside SQL strings; a replacement may be
# a callable taking the match.
_SQL_RULES: list[tuple[str, str, object]] = [
    ("sql-eq", r"(?<=\s)=(?=\s)", "!="),
    ("sql-ne", r"(?<=\s)!=(?=\s)", "="),
    ("sql-lt", r"(?<=\s)<(?=\s)", "<="),
    ("sql-le", r"(?<=\s)<=(?=\s)", "<"),
    ("sql-gt", r"(?<=\s)>(?=\s)", ">="),
    ("sql-ge", r"(?<=\s)>=(?=\s)", ">"),
    ("sql-and", r"\bAND\b", "OR"),
    ("sql-or", r"(?<!INSERT )\bOR\b(?! (REPLACE|IGNORE)\b)", "AND"),
    (
        "sql-true",
        rf"{_COND_START}{_IDENT} (=|!=|<=|>=|<|>|LIKE|IN) (\?|\(|'|{_IDENT})",
        "1 = 1 OR {0}",
    ),
    ("sql-not", r"\bNOT (?=EXISTS|IN\b|NULL)", ""),
    ("sql-isnull", r"\bIS NOT NULL\b", "IS NULL"),
    ("sql-desc", r"\bDESC\b", "ASC"),
    ("sql-asc", rf"(?<=ORDER BY ){_IDENT}(?! (ASC|DESC)\b)", "{0} DESC"),
    ("sql-limit", r"\bLIMIT \?", "LIMIT ? + 1"),
    ("sql-limit-off", r"\bLIMIT \?", "LIMIT -1 + 0 * ?"),
    ("sql-replace", r"\bOR REPLACE\b", "OR IGNORE"),
    ("sql-ignore", r"\bOR IGNORE\b", "OR REPLACE"),
    ("sql-insert-ignore", r"\bINSERT INTO\b", "INSERT OR IGNORE INTO"),
    ("sql-keep-old", r"(?<== )excluded\.(\w+)", "{1}"),
    ("sql-max", r"\bMAX\(", "MIN("),
    ("sql-count", r"\bCOUNT\(\*\)", "(COUNT(*) + 1)"),
    ("sql-number", r"(?<![\w?.])\d+(?![\w.])", None),  # n -> n + 1
]


def _docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, column) where each docstring literal starts."""
    starts: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                starts.add((first.lineno, first.col_offset))
    return starts


def _line_offsets(source: str) -> list[int]:
    """Offset of the first character of each line (index 0 is line 1)."""
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _functions(tree: ast.AST) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function, outermost first."""
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _owner(functions: list[tuple[int, int, str]], line: int) -> str:
    """The innermost function or class holding `line`, or `<module>`."""
    best = "<module>"
    for first, last, name in functions:
        if first <= line <= last:
            best = name
    return best


def column_map(schema_source: str) -> dict[str, list[str]]:
    """Table name -> column names, read from the CREATE TABLE statements of a schema file."""
    tables: dict[str, list[str]] = {}
    for match in re.finditer(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\n\)", schema_source, re.S):
        columns = []
        for line in match.group(2).splitlines():
            word = re.match(r"\s*(\w+)\s+[A-Z]", line)
            if word and word.group(1) not in {"PRIMARY", "UNIQUE", "FOREIGN", "CHECK"}:
                columns.append(word.group(1))
        tables[match.group(1)] = columns
    return tables


def _column_swap(tables: dict[str, list[str]], names: list[str], column: str) -> str | None:
    """Another column of the first of `names` (tables the code names) that has `column`."""
    for name in names:
        columns = tables.get(name, [])
        if column in columns and len(columns) > 1:
            return columns[(columns.index(column) + 1) % len(columns)]
    return None


def _raw(
    path: str, source: str, tables: dict[str, list[str]]
) -> Iterator[tuple[str, int, int, str]]:
    """(operator, start offset, end offset, new text) for every change in `source`."""
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    docstrings = _docstring_starts(tree)
    functions = _functions(tree)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    decorators = {d.lineno for node in ast.walk(tree) for d in getattr(node, "decorator_list", [])}
    for index, tok in enumerate(tokens):
        if tok.start[0] in decorators:
            continue  # dataclass options and the like: not behaviour the store has
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        before = tokens[index - 1].string if index else ""
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if tok.type == tokenize.OP and tok.string in _PY_OPS:
            if tok.string in "+-" and before in {"(", ",", "=", "["}:
                continue  # a sign or an unpacking, not arithmetic
            yield f"py{tok.string}", start, end, _PY_OPS[tok.string]
        elif tok.type == tokenize.NAME and tok.string in _PY_NAMES:
            yield f"py-{tok.string}", start, end, _PY_NAMES[tok.string]
        elif tok.type == tokenize.NAME and tok.string == "not" and before == "is":
            yield "py-is-not", start, end + 1, ""
        elif tok.type == tokenize.NAME and tok.string == "is" and after == "None":
            yield "py-is", start, end, "is not"
        elif tok.type == tokenize.NAME and tok.string == "not" and before != "is" and after != "in":
            yield "py-not", start, end + 1, ""
        elif tok.type == tokenize.NUMBER and tok.string.isdigit():
            yield "py-number", start, end, str(int(tok.string) + 1)
        elif tok.type == tokenize.STRING and tok.start not in docstrings:
            # Tables the statement or its function names decide which columns may swap.
            lines = source.splitlines()
            first, last = next(
                ((a, b) for a, b, _ in reversed(functions) if a <= tok.start[0] <= b),
                (tok.start[0], tok.end[0]),
            )
            names = _TABLE_NAME.findall(tok.string) + _TABLE_NAME.findall(
                "\n".join(lines[first - 1 : last])
            )
            yield from _sql(tok.string, start, tables, names)
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and ast.unparse(node.test) != "TYPE_CHECKING":
            test_start = offsets[node.test.lineno - 1] + node.test.col_offset
            test_end = offsets[(node.test.end_lineno or 1) - 1] + (node.test.end_col_offset or 0)
            for value in ("True", "False"):
                yield f"py-if-{value.lower()}", test_start, test_end, value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            stmt_start = offsets[node.lineno - 1] + node.col_offset
            stmt_end = offsets[(node.end_lineno or 1) - 1] + (node.end_col_offset or 0)
            yield "py-delete-call", stmt_start, stmt_end, "pass"


def _sql(
    literal: str, base: int, tables: dict[str, list[str]], names: list[str]
) -> Iterator[tuple[str, int, int, str]]:
    """Changes inside one string literal that reads as SQL."""
    if not _SQL_HINT.search(literal):
        return
    for op, pattern, replacement in _SQL_RULES:
        for match in re.finditer(pattern, literal):
            if replacement is None:
                new = str(int(match.group(0)) + 1)
            else:
                groups = [match.group(0), *(g or "" for g in match.groups())]
                new = str(replacement).format(*groups)
            yield op, base + match.start(), base + match.end(), new
    for match in re.finditer(r"(?<![\w.{])[a-z_]+(?![\w(])", literal):
        other = _column_swap(tables, names, match.group(0))
        if other is not None:
            yield "sql-column", base + match.start(), base + match.end(), other


def mutants(path: str, source: str, tables: dict[str, list[str]]) -> list[Mutant]:
    """Every mutant of `source` that still compiles, keyed `path:owner:op:n`."""
    functions = _functions(ast.parse(source))
    offsets = _line_offsets(source)
    found: list[Mutant] = []
    seen: dict[tuple[str, str], int] = {}
    for op, start, end, new in _raw(path, source, tables):
        old = source[start:end]
        if old == new:
            continue
        line = next(i for i, offset in enumerate(offsets) if offset > start)
        owner = _owner(functions, line)
        n = seen.get((owner, op), 0)
        seen[(owner, op)] = n + 1
        mutant = Mutant(path, f"{path}:{owner}:{op}:{n}", op, line, start, end, old, new)
        try:
            compile(mutant.apply(source), path, "exec")
        except SyntaxError:
            continue
        found.append(mutant)
    return found


def statement_lines(source: str, line: int) -> tuple[range, bool]:
    """Lines of the innermost statement holding `line` (a compound one's header only).

    The flag says whether that statement sits inside a function: a module- or
    class-level statement runs at import, so line coverage cannot select its tests.
    """
    tree = ast.parse(source)
    best: ast.stmt | None = None
    in_function = False

    def visit(node: ast.AST, inside: bool) -> None:
        nonlocal best, in_function
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and child.lineno <= line <= (child.end_lineno or 0):
                best, in_function = child, inside
                visit(child, inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))
            elif not isinstance(child, ast.stmt):
                visit(child, inside)

    visit(tree, False)
    if best is None:
        return range(line, line + 1), False
    last = best.end_lineno or best.lineno
    body = getattr(best, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        last = max(best.lineno, body[0].lineno - 1)
    return range(best.lineno, last + 1), in_function
