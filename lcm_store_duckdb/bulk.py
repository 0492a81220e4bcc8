"""Rows into DuckDB fast: chunks of dicts become Arrow record batches that DuckDB scans.

Measured (benchmarks/analytics_bench.py --load-options: 200k exported events into the
keyed events table, a loaded 2-core machine): `executemany` ~500 rows/s; `INSERT ...
SELECT unnest($1::T[]), ...` over column lists ~64k (DuckDB converts Python lists value
by value); Arrow batches ~130k; a NumPy object-array frame ~165k. NumPy loads a little
faster, but only Arrow streams: a `RecordBatchReader` over a generator feeds one
`COPY ... TO`, so a Parquet file of any size is written with one chunk in memory. One
conversion serves both paths, and the load is not the bottleneck of an export (reading
the source's rows is).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

import duckdb

from lcm_core.store.errors import StoreError, StoreUnavailableError
from lcm_core.store.matching import fold
from lcm_core.store.models import TABLES
from lcm_store_duckdb.search import trigram_count

CHUNK_ROWS: Final = 10_000
# Tables whose ids come from a sequence, which must move past the loaded ids.
SEQUENCE_TABLES: Final = ("memory_events", "skill_versions", "assembly_logs", "validation_logs")
# The search side table each content table feeds: (side table, key columns, text column).
SIDE_TABLES: Final = {
    "events": ("events_search", ("session_id", "seq"), "text"),
    "memory_items": ("memory_search", ("id", "session_id"), "content"),
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table as DuckDB declares it."""

    name: str
    type: str


def arrow() -> Any:
    """The `pyarrow` module, or a one-line hint to install the extra that brings it."""
    try:
        import pyarrow
    except ImportError as exc:
        raise StoreUnavailableError(
            "export and stats need pyarrow: pip install 'long-conversation-memory[duckdb]'"
        ) from exc
    return pyarrow


def table_columns(raw: duckdb.DuckDBPyConnection, table: str) -> tuple[Column, ...]:
    """The columns of one table of the current database, in declaration order."""
    found = raw.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
        "current_database() AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
        (table,),
    ).fetchall()
    return tuple(Column(str(name), str(kind)) for name, kind in found)


def known_table(table: str) -> bool:
    """True for the tables of schema v2 (the only names interpolated into SQL here)."""
    return table in TABLES


def chunks(
    rows: Iterable[dict[str, Any]], size: int = CHUNK_ROWS
) -> Iterator[list[dict[str, Any]]]:
    """The rows in lists of at most `size`."""
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def arrow_schema(columns: Iterable[Column]) -> Any:
    """The Arrow schema of a table: VARCHAR as string, integers as int64."""
    pa = arrow()
    kinds = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int64()}
    return pa.schema([(c.name, kinds.get(c.type, pa.string())) for c in columns])


def to_batch(table: str, schema: Any, chunk: list[dict[str, Any]]) -> Any:
    """One Arrow record batch of a chunk; a value of the wrong type is a one-line error."""
    pa = arrow()
    arrays = []
    for field in schema:
        values = [row.get(field.name) for row in chunk]
        try:
            arrays.append(pa.array(values, type=field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            message = str(exc).splitlines()[0]
            raise StoreError(f"{table}.{field.name}: cannot store value ({message})") from exc
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def insert_chunk(
    raw: duckdb.DuckDBPyConnection,
    table: str,
    columns: tuple[Column, ...],
    chunk: list[dict[str, Any]],
) -> int:
    """Insert one chunk (and its search rows); columns absent from the rows take defaults."""
    present = tuple(c for c in columns if c.name in chunk[0])
    names = ", ".join(f'"{c.name}"' for c in present)
    verb = "INSERT OR REPLACE" if table == "meta" else "INSERT"
    _scan(
        raw,
        f"{verb} INTO {table} ({names}) SELECT {names} FROM lcm_chunk",
        to_batch(table, arrow_schema(present), chunk),
    )
    side = SIDE_TABLES.get(table)
    if side is not None:
        name, keys, text_column = side
        columns_sql = ", ".join((*keys, "folded", "grams"))
        sql = f"INSERT INTO {name} ({columns_sql}) SELECT {columns_sql} FROM lcm_chunk"
        _scan(raw, sql, _side_batch(keys, text_column, chunk))
    return len(chunk)


def _scan(raw: duckdb.DuckDBPyConnection, sql: str, batch: Any) -> None:
    """Run one statement that reads the batch as `lcm_chunk`."""
    raw.register("lcm_chunk", batch)
    try:
        raw.execute(sql)
    finally:
        raw.unregister("lcm_chunk")


def _side_batch(keys: tuple[str, ...], text_column: str, chunk: list[dict[str, Any]]) -> Any:
    """The search side rows of a chunk: keys, case-folded text, length in trigrams."""
    pa = arrow()
    texts = [row.get(text_column) or "" for row in chunk]
    arrays = [pa.array([row[key] for row in chunk]) for key in keys]
    arrays.append(pa.array([fold(text) for text in texts], pa.string()))
    arrays.append(pa.array([trigram_count(text) for text in texts], pa.int64()))
    return pa.RecordBatch.from_arrays(arrays, names=[*keys, "folded", "grams"])


def advance_sequence(raw: duckdb.DuckDBPyConnection, table: str) -> None:
    """Move `<table>_id` past the largest loaded id, so later inserts do not collide."""
    row = raw.execute(f"SELECT max(id) FROM {table}").fetchone()
    top = 0 if row is None or row[0] is None else int(row[0])
    nxt = raw.execute(f"SELECT nextval('{table}_id')").fetchone()
    current = int(nxt[0]) if nxt else 0
    if current < top:
        raw.execute(f"SELECT max(nextval('{table}_id')) FROM range(?)", (top - current,))


def copy_rows_to_parquet(
    raw: duckdb.DuckDBPyConnection,
    table: str,
    columns: tuple[Column, ...],
    rows: Iterable[dict[str, Any]],
    target: str,
) -> int:
    """Stream rows into one Parquet file through a single COPY; returns the row count."""
    pa = arrow()
    schema = arrow_schema(columns)
    reader = pa.RecordBatchReader.from_batches(
        schema, (to_batch(table, schema, chunk) for chunk in chunks(rows))
    )
    # One thread: the Python producer is the bottleneck anyway, and each extra thread
    # holds another row group in flight (peak RSS 385 MB against 236 MB at 1M events).
    raw.execute("SET threads = 1")
    raw.register("lcm_stream", reader)
    try:
        row = raw.execute(
            f"COPY (SELECT * FROM lcm_stream) TO {target} (FORMAT parquet)"
        ).fetchone()
    finally:
        raw.unregister("lcm_stream")
        raw.execute("RESET threads")
    return int(row[0]) if row else 0
