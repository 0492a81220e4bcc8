"""Measure ways to serve substring search on DuckDB without extensions; prints a table.

Usage: python benchmarks/duckdb_search_options.py [--events 100000] [--runs 5]

Each option answers the same session-scoped query mix (terms from the core tokenizer)
over the same events, and must return the rows containing any term, case-insensitive.
Build time is the extra work at insert time; p50/p95 are per query, medians over runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
from search_corpus import make_corpus, query_terms

from lcm_core.text.tokens import tokenize

_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

Query = Callable[[duckdb.DuckDBPyConnection, str, Sequence[str]], list[Any]]


def _any(column: str, terms: Sequence[str], template: str) -> str:
    return " OR ".join(template.format(col=column) for _ in terms) or "FALSE"


def q_ilike(con: duckdb.DuckDBPyConnection, session: str, terms: Sequence[str]) -> list[Any]:
    """ILIKE '%term%' over the base table (escaping omitted: the mix has no wildcards)."""
    where = _any("text", terms, "{col} ILIKE ?")
    sql = f"SELECT session_id, seq FROM events WHERE session_id = ? AND ({where})"
    return con.execute(sql, [session, *(f"%{t}%" for t in terms)]).fetchall()


def q_lower(con: duckdb.DuckDBPyConnection, session: str, terms: Sequence[str]) -> list[Any]:
    """contains(lower(text), term) over the base table."""
    where = _any("lower(text)", terms, "contains({col}, ?)")
    sql = f"SELECT session_id, seq FROM events WHERE session_id = ? AND ({where})"
    return con.execute(sql, [session, *(t.lower() for t in terms)]).fetchall()


def q_folded(con: duckdb.DuckDBPyConnection, session: str, terms: Sequence[str]) -> list[Any]:
    """contains(folded, term) over a side table of lower-cased text kept at insert time."""
    where = _any("folded", terms, "contains({col}, ?)")
    sql = f"SELECT session_id, seq FROM events_folded WHERE session_id = ? AND ({where})"
    return con.execute(sql, [session, *(t.lower() for t in terms)]).fetchall()


def q_trigram(con: duckdb.DuckDBPyConnection, session: str, terms: Sequence[str]) -> list[Any]:
    """Trigram postings narrow the rows; contains() on the folded text confirms them."""
    found: set[tuple[str, int]] = set()
    for term in (t.lower() for t in terms):
        grams = sorted({term[i : i + 3] for i in range(len(term) - 2)})
        if not grams:
            rows = q_folded(con, session, [term])
        else:
            marks = ",".join("?" * len(grams))
            rows = con.execute(
                "SELECT f.session_id, f.seq FROM (SELECT session_id, seq FROM grams "
                f"WHERE session_id = ? AND gram IN ({marks}) GROUP BY session_id, seq "
                f"HAVING count(*) = {len(grams)}) AS c JOIN events_folded AS f "
                "USING (session_id, seq) WHERE contains(f.folded, ?)",
                [session, *grams, term],
            ).fetchall()
        found.update(rows)
    return sorted(found)


def q_tokens(con: duckdb.DuckDBPyConnection, session: str, terms: Sequence[str]) -> list[Any]:
    """Whole-token postings from the core tokenizer (finds tokens, not substrings)."""
    marks = ",".join("?" * len(terms)) or "NULL"
    return con.execute(
        f"SELECT DISTINCT session_id, seq FROM tokens WHERE session_id = ? AND token IN ({marks})",
        [session, *(t.lower() for t in terms)],
    ).fetchall()


def build(con: duckdb.DuckDBPyConnection, events: list[Any]) -> dict[str, float]:
    """Load the events and every side structure; returns seconds spent on each."""
    cols = {
        "session_id": [e.session_id for e in events],
        "seq": [e.seq for e in events],
        "text": [e.text for e in events],
    }
    con.execute(
        "CREATE TABLE events (session_id VARCHAR, seq BIGINT, text VARCHAR, PRIMARY KEY (session_id, seq))"
    )
    timings: dict[str, float] = {}
    start = time.perf_counter()
    con.execute(
        "INSERT INTO events SELECT unnest($1), unnest($2), unnest($3)",
        [cols["session_id"], cols["seq"], cols["text"]],
    )
    timings["base"] = time.perf_counter() - start
    start = time.perf_counter()
    con.execute(
        "CREATE TABLE events_folded AS SELECT session_id, seq, lower(text) AS folded FROM events"
    )
    timings["folded"] = time.perf_counter() - start
    start = time.perf_counter()
    con.execute(
        "CREATE TABLE grams AS SELECT DISTINCT session_id, seq, "
        "substr(folded, i::BIGINT, 3) AS gram FROM events_folded, "
        "range(1, greatest(length(folded) - 1, 1)) AS r(i) ORDER BY session_id, gram"
    )
    timings["trigram"] = time.perf_counter() - start
    start = time.perf_counter()
    rows = [(e.session_id, e.seq, tok) for e in events for tok in tokenize(e.text, limit=10_000)]
    con.execute("CREATE TABLE tokens (session_id VARCHAR, seq BIGINT, token VARCHAR)")
    con.execute(
        "INSERT INTO tokens SELECT unnest($1), unnest($2), unnest($3)",
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )
    timings["tokens"] = time.perf_counter() - start
    return timings


OPTIONS: dict[str, tuple[Query, str]] = {
    "ilike scan": (q_ilike, "base"),
    "contains(lower()) scan": (q_lower, "base"),
    "folded side table scan": (q_folded, "folded"),
    "trigram postings + verify": (q_trigram, "trigram"),
    "core-token postings*": (q_tokens, "tokens"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    corpus = make_corpus(args.events)
    terms = query_terms()
    session = corpus.sessions[len(corpus.sessions) // 2]
    with tempfile.TemporaryDirectory() as folder:
        con = duckdb.connect(str(Path(folder) / "options.duckdb"), config=_CONFIG)
        timings = build(con, corpus.events)
        size = Path(folder, "options.duckdb").stat().st_size
        con.execute("CHECKPOINT")
        reference = {tuple(t): set(q_folded(con, session, t)) for t in terms}
        print(f"{args.events} events, {len(terms)} queries on session {session}, {args.runs} runs")
        print(f"load: base {timings['base']:.2f}s; file {size / 1e6:.0f} MB after load")
        print(f"{'option':28} {'build s':>8} {'p50 ms':>8} {'p95 ms':>8}  same rows")
        for name, (query, built) in OPTIONS.items():
            p50s, p95s = [], []
            for _ in range(args.runs):
                laps = []
                for t in terms:
                    start = time.perf_counter()
                    query(con, session, t)
                    laps.append((time.perf_counter() - start) * 1000)
                laps.sort()
                p50s.append(statistics.median(laps))
                p95s.append(laps[min(len(laps) - 1, round(0.95 * (len(laps) - 1)))])
            same = all(set(query(con, session, t)) == reference[tuple(t)] for t in terms)
            cost = timings[built] if built != "base" else 0.0
            print(
                f"{name:28} {cost:8.2f} {statistics.median(p50s):8.2f} "
                f"{statistics.median(p95s):8.2f}  {'yes' if same else 'NO'}"
            )
        con.close()
    print("* whole tokens only: misses substrings, so it cannot serve the contract alone")


if __name__ == "__main__":
    main()
