"""The schema walk every SQL backend takes on open, and its opening steps, written once.

A backend lists its steps as (target version, statements); this module decides
whether a file must move (refusing one newer than this lcm), parses the stored
version, and gives the statements in order with the stamps that record each step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from lcm_core.store.errors import SchemaVersionError, StoreOpenError
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.store.queries import Query

Steps = Iterable[tuple[int, Sequence[str]]]


def opening(close: Callable[[], object], *steps: Callable[[], object]) -> None:
    """Run a new connection's opening steps (checks, settings, migration) in order; when
    one fails, close the connection before its error goes on, so no handle leaks."""
    try:
        for step in steps:
            step()
    except BaseException:
        close()
        raise


def database_file(path: Path) -> None:
    """Make `path` ready to hold a database file: a folder there is refused, and a missing
    parent folder is created readable by the owner only (0700)."""
    if path.is_dir():
        raise StoreOpenError(f"{path}: is a folder, not a database file")
    if not path.parent.exists():
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreOpenError(f"{path}: cannot create its folder ({exc.strerror})") from exc


def parse_version(label: str, value: object | None) -> int:
    """The stored schema version (0 when none is stored); a non-number is an open error."""
    try:
        return 0 if value is None else int(str(value))
    except ValueError as exc:
        raise StoreOpenError(f"{label}: schema version {value!r} is not a number") from exc


def needs_migration(label: str, version: int) -> bool:
    """Whether a file at `version` must move; one newer than this lcm is refused."""
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{label}: schema v{version} is newer than this lcm understands "
            f"(v{SCHEMA_VERSION}); upgrade long-conversation-memory"
        )
    return version != SCHEMA_VERSION


def migration_plan(version: int, steps: Steps, now: str) -> list[Query]:
    """Every statement from `version` to `SCHEMA_VERSION`, each step stamped in meta."""
    plan: list[Query] = []
    for target, statements in steps:
        if target <= version:
            continue
        plan.extend((statement, ()) for statement in statements)
        plan.append(
            (
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (f"migration.v{target}", now),
            )
        )
    plan.append(
        ("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    )
    return plan
