"""The validation check types: one function per type, each over one answer text.

Every check reads its settings from one `validation.checks` entry and returns a
`CheckOutcome`; nothing here raises for bad settings or a failing user script — those
become errors on the outcome. A `scope` on a check names the parts of the answer it
looks at (see `rules_classify.scope_map`): `"scope": ["body"]` exempts quotes, paths
and parenthesised explanations.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from lcm_core.skills.rules import in_scope, scope_map, scope_targets
from lcm_core.text.query import canonical_number
from lcm_core.text.tokens import sha256_hex

DEFAULT_NUMBER_WINDOW: Final = 80
MAX_VIOLATIONS_PER_CHECK: Final = 20
# A number written in the answer; digits inside identifiers (p95, v2, S3) are not numbers.
_NUMBER_TOKEN_RE: Final = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:[.,]\d+)*")
_ASCII_WORD: Final = re.compile(r"[A-Za-z0-9_]")


@dataclass(slots=True)
class CheckOutcome:
    """What one check found: violations as plain dicts, errors as lines, and whether it ran."""

    ran: bool = True
    deterministic: bool = True
    violations: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What a check may need besides the text: where scripts live and what is being checked."""

    script_dir: Path | None = None
    session_id: str = ""
    event_seq: int | None = None


def check_id(check: dict[str, Any], index: int) -> str:
    """The check's own id, or `<type>#<index>` when it has none."""
    value = check.get("id")
    return (
        str(value)
        if isinstance(value, str | int) and str(value)
        else f"{check.get('type')}#{index}"
    )


def _strings(value: Any) -> list[str] | None:
    """A string or a list of non-empty strings; None when the setting is unusable."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    return None


def _term_re(term: str, check: dict[str, Any]) -> re.Pattern[str]:
    # Whole-word matching only where the term starts or ends with a Latin letter or digit;
    # CJK has no word boundaries, so a Chinese term matches as a plain substring.
    whole = check.get("wholeWord", True) is not False
    pattern = re.escape(term)
    if whole and _ASCII_WORD.match(term[0]):
        pattern = r"(?<![A-Za-z0-9_])" + pattern
    if whole and _ASCII_WORD.match(term[-1]):
        pattern += r"(?![A-Za-z0-9_])"
    return re.compile(pattern, 0 if check.get("caseSensitive") is True else re.IGNORECASE)


def _occurrences(
    text: str, codes: bytes, targets: tuple[str, ...], regex: re.Pattern[str]
) -> tuple[int, int]:
    """How many matches fall inside the scope, and how many the scope exempts."""
    inside = exempt = 0
    for match in regex.finditer(text):
        if in_scope(codes, match.start(), targets):
            inside += 1
        else:
            exempt += 1
    return inside, exempt


def required_terms(text: str, check: dict[str, Any], ctx: CheckContext) -> CheckOutcome:
    """Each listed term must appear at least `minCount` times (default 1) inside the scope."""
    terms = _strings(check.get("terms"))
    minimum = check.get("minCount", 1)
    if terms is None or not isinstance(minimum, int) or isinstance(minimum, bool) or minimum < 1:
        return CheckOutcome(
            ran=False,
            errors=["needs 'terms' (text or a list of text) and a positive integer 'minCount'"],
        )
    targets, codes = scope_targets(check.get("scope")), scope_map(text)
    outcome = CheckOutcome()
    for term in terms:
        count, _ = _occurrences(text, codes, targets, _term_re(term, check))
        if count < minimum:
            outcome.violations.append(
                {
                    "term": term,
                    "count": count,
                    "min": minimum,
                    "message": f'required term "{term}" appears {count} time(s); at least {minimum} needed',
                }
            )
    return outcome


def forbidden_terms(text: str, check: dict[str, Any], ctx: CheckContext) -> CheckOutcome:
    """No listed term may appear inside the scope; occurrences the scope exempts are counted apart."""
    terms = _strings(check.get("terms"))
    if terms is None:
        return CheckOutcome(ran=False, errors=["needs 'terms' (text or a list of text)"])
    targets, codes = scope_targets(check.get("scope")), scope_map(text)
    outcome = CheckOutcome()
    for term in terms:
        count, exempt = _occurrences(text, codes, targets, _term_re(term, check))
        if count:
            outcome.violations.append(
                {
                    "term": term,
                    "count": count,
                    "exempt": exempt,
                    "message": f'forbidden term "{term}" appears {count} time(s) in {"/".join(targets)}',
                }
            )
    return outcome


def _number_specs(check: dict[str, Any]) -> list[tuple[str, list[str], int]] | None:
    window = check.get("window", DEFAULT_NUMBER_WINDOW)
    raw = check.get("numbers", [])
    if "number" in check:
        raw = [{"value": check["number"], "conditions": check.get("conditions")}]
    if (
        not isinstance(raw, list)
        or not isinstance(window, int)
        or isinstance(window, bool)
        or window < 0
    ):
        return None
    specs: list[tuple[str, list[str], int]] = []
    for entry in raw:
        if not isinstance(entry, dict):
            return None
        value, conditions = entry.get("value"), _strings(entry.get("conditions"))
        own_window = entry.get("window", window)
        if (
            not isinstance(value, str | int | float)
            or isinstance(value, bool)
            or conditions is None
        ):
            return None
        if not isinstance(own_window, int) or isinstance(own_window, bool) or own_window < 0:
            return None
        specs.append((canonical_number(str(value)), conditions, own_window))
    return specs


def numbers_with_conditions(text: str, check: dict[str, Any], ctx: CheckContext) -> CheckOutcome:
    """A configured number must have its conditions within `window` characters; forbidden numbers must not appear."""
    specs = _number_specs(check)
    forbidden = check.get("forbiddenNumbers", [])
    forbidden_list: list[str] | None = None
    if isinstance(forbidden, list) and all(isinstance(v, str | int | float) for v in forbidden):
        forbidden_list = [str(v) for v in forbidden if str(v)]
    if specs is None or forbidden_list is None or not (specs or forbidden_list):
        return CheckOutcome(
            ran=False,
            errors=[
                "needs 'numbers' as [{value, conditions, window?}] and/or a 'forbiddenNumbers' list"
            ],
        )
    targets, codes = scope_targets(check.get("scope")), scope_map(text)
    banned = {canonical_number(v) for v in forbidden_list}
    folded = text.casefold()
    outcome = CheckOutcome()
    for match in _NUMBER_TOKEN_RE.finditer(text):
        if not in_scope(codes, match.start(), targets):
            continue
        value = canonical_number(match.group())
        if value in banned:
            outcome.violations.append(
                {
                    "number": value,
                    "offset": match.start(),
                    "message": f"forbidden number {value} appears",
                }
            )
        for wanted, conditions, window in specs:
            if value != wanted:
                continue
            around = folded[max(0, match.start() - window) : match.end() + window]
            missing = [c for c in conditions if c.casefold() not in around]
            if missing:
                outcome.violations.append(
                    {
                        "number": value,
                        "offset": match.start(),
                        "missing": missing,
                        "message": f"number {value} lacks {', '.join(missing)} within {window} characters",
                    }
                )
    return outcome


# --- user scripts -----------------------------------------------------------------------

# Loaded modules by (resolved path, mtime, size): an edited script is loaded again.
_SCRIPT_CACHE: dict[tuple[str, int, int], ModuleType] = {}


def resolve_script(script_dir: Path | None, value: Any) -> tuple[Path | None, str | None]:
    """The script file a check names, or why it is refused; only files inside `script_dir` load."""
    if script_dir is None:
        return None, "script checks are disabled: validation.scriptDir is not set"
    if not isinstance(value, str) or not value.strip():
        return None, "needs 'path': a .py file inside validation.scriptDir"
    root = script_dir.resolve()
    candidate = Path(value).expanduser()
    path = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not path.is_relative_to(root):
        return (
            None,
            f"script {value!r} is outside validation.scriptDir ({root.as_posix()}); refused",
        )
    if path.suffix != ".py" or not path.is_file():
        return None, f"script {value!r} is not a .py file in validation.scriptDir"
    return path, None


def _load(path: Path) -> ModuleType:
    stat = path.stat()
    key = (path.as_posix(), stat.st_mtime_ns, stat.st_size)
    module = _SCRIPT_CACHE.get(key)
    if module is None:
        name = "lcm_user_check_" + sha256_hex(key[0])[:12]
        import importlib.util  # only a rule with a check script needs the loader

        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path.name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling inside the script need this
        spec.loader.exec_module(module)
        _SCRIPT_CACHE[key] = module
    return module


def _declared_deterministic(
    check: dict[str, Any], module: ModuleType, func: Callable[..., Any]
) -> bool:
    # Only an explicit True counts: a semantic judgement must never pass for a program check.
    marks = (
        check.get("deterministic"),
        getattr(module, "deterministic", None),
        getattr(module, "DETERMINISTIC", None),
    )
    return any(mark is True for mark in (*marks, getattr(func, "deterministic", None)))


def _script_violations(result: Any) -> list[dict[str, Any]] | None:
    """Read what a script returned; None when the shape is not understood."""
    if result is None or result is True:
        return []
    if result is False:
        return [{"message": "script check failed"}]
    if isinstance(result, str):
        return [{"message": result}] if result else []
    if isinstance(result, dict):
        if result.get("ok") is True and not result.get("violations"):
            return []
        found = _script_violations(result.get("violations") or [])
        if found is None:
            return None
        return found or [{"message": str(result.get("message") or "script check failed")}]
    if isinstance(result, list | tuple):
        items: list[dict[str, Any]] = []
        for entry in result:
            if isinstance(entry, str):
                items.append({"message": entry})
            elif isinstance(entry, dict):
                items.append(
                    {
                        "message": str(entry.get("message", "script check failed")),
                        **{
                            k: v
                            for k, v in entry.items()
                            if k != "message" and isinstance(v, str | int | float | bool)
                        },
                    }
                )
            else:
                return None
        return items
    return None


def script(text: str, check: dict[str, Any], ctx: CheckContext) -> CheckOutcome:
    """Run a user function `check(text, context)` from a module inside `validation.scriptDir`."""
    path, refusal = resolve_script(ctx.script_dir, check.get("path"))
    if path is None:
        return CheckOutcome(ran=False, deterministic=False, errors=[refusal or "refused"])
    name = check.get("function", "check")
    try:
        module = _load(path)
        func = getattr(module, str(name), None)
        if not callable(func):
            return CheckOutcome(
                ran=False, deterministic=False, errors=[f"{path.name} has no function {name!r}"]
            )
        deterministic = _declared_deterministic(check, module, func)
        context = {"session_id": ctx.session_id, "event_seq": ctx.event_seq, "check": dict(check)}
        takes_context = len(inspect.signature(func).parameters) >= 2
        result = func(text, context) if takes_context else func(text)
    except (Exception, SystemExit) as exc:  # a user script must never take the host down
        return CheckOutcome(
            ran=False,
            deterministic=False,
            errors=[f"{path.name} raised {type(exc).__name__}: {exc}"],
        )
    violations = _script_violations(result)
    if violations is None:
        return CheckOutcome(
            ran=False,
            deterministic=False,
            errors=[
                f"{path.name} returned {type(result).__name__}; expected bool, text, list or dict"
            ],
        )
    return CheckOutcome(
        deterministic=deterministic, violations=violations[:MAX_VIOLATIONS_PER_CHECK]
    )


CHECKS: Final[dict[str, Callable[[str, dict[str, Any], CheckContext], CheckOutcome]]] = {
    "required_terms": required_terms,
    "forbidden_terms": forbidden_terms,
    "numbers_with_conditions": numbers_with_conditions,
    "script": script,
}
