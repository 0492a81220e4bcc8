"""The stats report as portable SQL (DuckDB and SQLite run the same text) and its shaping.

A backend supplies `run(sql, params) -> rows` and the relation each table is read from
(a table name, an attached file's table, or `read_parquet('...')`); `build_report` runs
every query and turns the rows into one JSON-ready dict with a stable order. The queries
use only what both engines share: GROUP BY, a recursive CTE, `json_each` and `->>`; two
also have a DuckDB-only text that unnests JSON arrays faster (same rows, see `Query`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lcm_core.store.models import SESSION_TABLES, TABLES

LONGEST_CHAINS: Final = 10
MAX_CHAIN: Final = 1000  # guards the walk against a cycle in damaged data

# Omission reasons carry numbers and ids ("needs 40 tokens, 12 of the budget 800 left");
# the report counts them by their wording with those replaced (see `reason_class`).
_REASON_PARTS: Final = (
    (re.compile(r"\bmem_[0-9A-Za-z_]+"), "<item>"),
    (re.compile(r"\bseq:\d+"), "<seq>"),
    (re.compile(r"-?\d+(?:\.\d+)?"), "N"),
)


def reason_class(reason: str | None) -> str:
    """An omission reason without its numbers and ids: the rule that left the entry out."""
    text = reason or "(none)"
    for pattern, stand_in in _REASON_PARTS:
        text = pattern.sub(stand_in, text)
    return text


_CHAIN_CTE: Final = f"""WITH RECURSIVE chain (head, session_id, id, depth) AS (
    SELECT m.id, m.session_id, m.id, 1 FROM {{memory_items}} AS m
    WHERE {{scope_m}} AND m.superseded_by IS NOT NULL AND m.id NOT IN (
        SELECT p.superseded_by FROM {{memory_items}} AS p WHERE p.superseded_by IS NOT NULL)
    UNION ALL
    SELECT c.head, c.session_id, m.superseded_by, c.depth + 1
    FROM chain AS c JOIN {{memory_items}} AS m ON m.id = c.id
    WHERE m.superseded_by IS NOT NULL AND c.depth < {MAX_CHAIN})"""


@dataclass(frozen=True, slots=True)
class Query:
    """One named statement; `{table}` names a relation, `{scope}`-style names a filter.

    `duckdb` is an optional DuckDB-only text giving the same rows faster: its `json_each`
    is a slow lateral join (110 ms over 10k logs), `unnest(from_json(...))` takes 22 ms.
    """

    name: str
    sql: str
    duckdb: str | None = None

    def text(self, dialect: str) -> str:
        """The statement for a dialect: "duckdb" takes the native variant when there is one."""
        return self.duckdb if dialect == "duckdb" and self.duckdb else self.sql


QUERIES: Final = (
    Query(
        "events_by_session_type",
        "SELECT session_id, type, count(*) AS n, min(seq) AS first_seq, max(seq) AS last_seq "
        "FROM {events} WHERE {scope} GROUP BY session_id, type ORDER BY session_id, type",
    ),
    Query(
        "sessions",
        "SELECT session_id, created_at, updated_at FROM {sessions} WHERE {scope} "
        "ORDER BY session_id",
    ),
    Query(
        "items",
        "SELECT session_id, kind, status, evidence_type, count(*) AS n FROM {memory_items} "
        "WHERE {scope} GROUP BY session_id, kind, status, evidence_type "
        "ORDER BY session_id, kind, status, evidence_type",
    ),
    Query(
        "chains",
        _CHAIN_CTE + " SELECT session_id, head, max(depth) AS length FROM chain "
        "GROUP BY session_id, head ORDER BY session_id, head",
    ),
    Query(
        "assembly_by_session",
        "SELECT session_id, count(*) AS n FROM {assembly_logs} WHERE {scope} "
        "GROUP BY session_id ORDER BY session_id",
    ),
    Query(
        "assembly_by_day",
        "SELECT substr(created_at, 1, 10) AS day, count(*) AS runs, sum(injected) AS injected, "
        "sum(used_tokens) AS used, sum(budget_tokens) AS budget, max(used_tokens) AS max_used "
        "FROM {assembly_logs} WHERE {scope} GROUP BY substr(created_at, 1, 10) ORDER BY day",
    ),
    Query(
        "omissions_by_day",
        "SELECT substr(a.created_at, 1, 10) AS day, o.value ->> '$.section' AS section, "
        "o.value ->> '$.reason' AS reason, count(*) AS n "
        "FROM {assembly_logs} AS a, json_each(a.omitted_json) AS o WHERE {scope_a} "
        "GROUP BY day, section, reason ORDER BY day, section, reason",
        "SELECT day, o.section AS section, o.reason AS reason, count(*) AS n FROM ("
        "SELECT substr(a.created_at, 1, 10) AS day, unnest(from_json(a.omitted_json, "
        """'[{{"section": "VARCHAR", "reason": "VARCHAR"}}]')) AS o """
        "FROM {assembly_logs} AS a WHERE {scope_a}) AS x "
        "GROUP BY day, section, reason ORDER BY day, section, reason",
    ),
    Query(
        "validation_runs",
        "SELECT count(*) AS runs, sum(1 - ok) AS failed, sum(blocked) AS blocked, "
        "sum(CASE WHEN errors_json <> '[]' THEN 1 ELSE 0 END) AS with_errors "
        "FROM {validation_logs} WHERE {scope}",
    ),
    Query(
        "violations_by_check",
        "SELECT v.value ->> '$.check' AS check_id, v.value ->> '$.type' AS check_type, "
        "count(*) AS n, count(DISTINCT l.id) AS runs FROM {validation_logs} AS l, "
        "json_each(l.violations_json) AS v WHERE {scope_l} "
        "GROUP BY check_id, check_type ORDER BY check_id, check_type",
        "SELECT v.check AS check_id, v.type AS check_type, count(*) AS n, "
        "count(DISTINCT id) AS runs FROM (SELECT l.id AS id, unnest(from_json(l.violations_json, "
        """'[{{"check": "VARCHAR", "type": "VARCHAR"}}]')) AS v """
        "FROM {validation_logs} AS l WHERE {scope_l}) AS x "
        "GROUP BY check_id, check_type ORDER BY check_id, check_type",
    ),
)


def totals_query() -> Query:
    """Row counts of every table, one UNION ALL statement."""
    parts = [
        f"SELECT '{t}' AS name, count(*) AS n FROM {{{t}}} WHERE "
        + ("{scope}" if t in SESSION_TABLES else "1 = 1")
        for t in TABLES
    ]
    return Query("totals", " UNION ALL ".join(parts))


def chain_members_query(heads: int) -> Query:
    """The items of the chains starting at `heads` given ids, oldest to newest."""
    marks = ", ".join("?" for _ in range(heads))
    return Query(
        "chain_members",
        _CHAIN_CTE + " SELECT c.head, c.depth, c.id, m.created_at, m.status, m.kind "
        f"FROM chain AS c JOIN {{memory_items}} AS m ON m.id = c.id WHERE c.head IN ({marks}) "
        "ORDER BY c.head, c.depth",
    )


def render(
    query: Query, relations: Mapping[str, str], session_id: str | None, dialect: str = "sql"
) -> tuple[str, list[Any]]:
    """The statement for these relations, with its session filter and parameters."""
    scopes = {
        key: "1 = 1" if session_id is None else f"{alias}session_id = ?"
        for key, alias in (("scope", ""), ("scope_a", "a."), ("scope_l", "l."), ("scope_m", "m."))
    }
    template = query.text(dialect)
    sql = template.format(**relations, **scopes)
    if session_id is None:
        return sql, []
    # Counted in the template, not the result: a relation's file path may hold a "?".
    return sql, [session_id] * sum(template.count(f"{{{key}}}") for key in scopes)


Runner = Callable[[str, Sequence[Any]], Sequence[Sequence[Any]]]


def run_all(
    run: Runner, relations: Mapping[str, str], session_id: str | None, dialect: str = "sql"
) -> dict[str, Any]:
    """Every query's rows by name (the chain members included)."""
    results: dict[str, Any] = {}
    for query in (totals_query(), *QUERIES):
        sql, params = render(query, relations, session_id, dialect)
        results[query.name] = [tuple(row) for row in run(sql, params)]
    heads = _longest(results["chains"])
    results["chain_members"] = []
    if heads:
        sql, params = render(chain_members_query(len(heads)), relations, session_id)
        found = run(sql, [*params, *(head for _, head, _ in heads)])
        results["chain_members"] = [tuple(row) for row in found]
    return results


def build_report(
    run: Runner, relations: Mapping[str, str], session_id: str | None, dialect: str = "sql"
) -> dict[str, Any]:
    """The whole stats report: run every query (in `dialect`) and shape the rows."""
    return shape(run_all(run, relations, session_id, dialect), session_id)


def _longest(chains: Sequence[Sequence[Any]]) -> list[tuple[str, str, int]]:
    ordered = sorted(
        ((str(s), str(h), int(n)) for s, h, n in chains), key=lambda c: (-c[2], c[0], c[1])
    )
    return ordered[:LONGEST_CHAINS]


def _count_map(pairs: Sequence[tuple[Any, int]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, n in pairs:
        counts[str(key)] = counts.get(str(key), 0) + int(n)
    return dict(sorted(counts.items()))


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _sessions(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per session seen in any table, most recently updated first, then by id."""
    found: dict[str, dict[str, Any]] = {}

    def row(sid: Any) -> dict[str, Any]:
        empty: dict[str, Any] = {"session": str(sid), "created_at": None, "updated_at": None}
        empty.update(events=0, memory_items=0, assembly_logs=0, types={})
        empty.update(first_seq=None, last_seq=None)
        return found.setdefault(str(sid), empty)

    for sid, created, updated in results["sessions"]:
        row(sid).update(created_at=created, updated_at=updated)
    for sid, etype, n, first, last in results["events_by_session_type"]:
        entry = row(sid)
        entry["types"][str(etype)] = int(n)
        entry["events"] += int(n)
        firsts = [int(first)] + ([entry["first_seq"]] if entry["first_seq"] is not None else [])
        lasts = [int(last)] + ([entry["last_seq"]] if entry["last_seq"] is not None else [])
        entry["first_seq"], entry["last_seq"] = min(firsts), max(lasts)
    for sid, _kind, _status, _evidence, n in results["items"]:
        row(sid)["memory_items"] += int(n)
    for sid, n in results["assembly_by_session"]:
        row(sid)["assembly_logs"] = int(n)
    ordered = sorted(found.values(), key=lambda r: r["session"])
    ordered.sort(key=lambda r: r["updated_at"] or "", reverse=True)
    return ordered


def shape(results: Mapping[str, Any], session_id: str | None) -> dict[str, Any]:
    """Turn the rows of `run_all` into the report dict (sorted, integers, no floats but means)."""
    events = results["events_by_session_type"]
    items = results["items"]
    sessions = _sessions(results)
    return {
        "session": session_id,
        "totals": {str(name): int(n) for name, n in results["totals"]},
        "sessions": sessions,
        "events_by_type": _count_map([(t, n) for _, t, n, _, _ in events]),
        "memory_items": _items(items),
        "supersession": _supersession(results["chains"], results["chain_members"]),
        "assembly": _assembly(results["assembly_by_day"], results["omissions_by_day"]),
        "validation": _validation(results["validation_runs"], results["violations_by_check"]),
    }


def _items(rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    combos: dict[tuple[str, str, str], int] = {}
    for _, kind, status, evidence, n in rows:
        key = (str(kind), str(status), str(evidence))
        combos[key] = combos.get(key, 0) + int(n)
    return {
        "total": sum(combos.values()),
        "by_kind": _count_map([(k[0], n) for k, n in combos.items()]),
        "by_status": _count_map([(k[1], n) for k, n in combos.items()]),
        "by_evidence_type": _count_map([(k[2], n) for k, n in combos.items()]),
        "by_kind_status_evidence": [
            {"kind": k, "status": s, "evidence_type": e, "count": n}
            for (k, s, e), n in sorted(combos.items())
        ],
    }


def _supersession(
    chains: Sequence[Sequence[Any]], members: Sequence[Sequence[Any]]
) -> dict[str, Any]:
    by_length = _count_map([(int(n), 1) for _, _, n in chains])
    steps: dict[str, list[dict[str, Any]]] = {}
    for head, _depth, item_id, created, status, kind in members:
        steps.setdefault(str(head), []).append(
            {"id": item_id, "created_at": created, "status": status, "kind": kind}
        )
    return {
        "chains": len(chains),
        "items_in_chains": sum(int(n) for _, _, n in chains),
        "by_length": [
            {"length": int(k), "chains": v}
            for k, v in sorted(by_length.items(), key=lambda kv: int(kv[0]))
        ],
        "longest": [
            {"session": sid, "length": n, "items": steps.get(head, [])}
            for sid, head, n in _longest(chains)
        ],
    }


def _assembly(days: Sequence[Sequence[Any]], found: Sequence[Sequence[Any]]) -> dict[str, Any]:
    classes: dict[tuple[str, str, str], int] = {}
    for day, section, reason, n in found:
        key = (str(day), str(section), reason_class(reason))
        classes[key] = classes.get(key, 0) + int(n)
    omissions = [(*key, n) for key, n in sorted(classes.items())]
    by_day = [
        {
            "day": day,
            "runs": _int(runs),
            "injected": _int(injected),
            "used_tokens": _int(used),
            "budget_tokens": _int(budget),
            "mean_used_tokens": round(_int(used) / _int(runs), 1) if _int(runs) else 0.0,
            "max_used_tokens": _int(max_used),
        }
        for day, runs, injected, used, budget, max_used in days
    ]
    return {
        "runs": sum(d["runs"] for d in by_day),
        "injected": sum(d["injected"] for d in by_day),
        "used_tokens": sum(d["used_tokens"] for d in by_day),
        "budget_tokens": sum(d["budget_tokens"] for d in by_day),
        "by_day": by_day,
        "omissions": {
            "total": sum(int(n) for *_, n in omissions),
            "by_reason": _count_map([(reason, n) for _, _, reason, n in omissions]),
            "by_day": [
                {"day": day, "section": section, "reason": reason, "count": int(n)}
                for day, section, reason, n in omissions
            ],
        },
    }


def _validation(runs: Sequence[Sequence[Any]], checks: Sequence[Sequence[Any]]) -> dict[str, Any]:
    total, failed, blocked, with_errors = runs[0] if runs else (0, 0, 0, 0)
    return {
        "runs": _int(total),
        "failed": _int(failed),
        "blocked": _int(blocked),
        "with_errors": _int(with_errors),
        "violations": sum(int(n) for _, _, n, _ in checks),
        "by_check": [
            {"check": check, "type": kind, "violations": int(n), "runs": int(r)}
            for check, kind, n, r in checks
        ],
    }
