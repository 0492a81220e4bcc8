"""What a face asks of memory that is more than one store call: each takes a store, returns data.

A use case here composes several steps or holds a decision (which session, which scope,
whether a write probe may run); a plain read goes to the port itself and a plain core
step (`lcm_core.extraction.control`'s forget and pin) is called where it lives. A face
reads the port freely but changes the store only through the core, which holds the write
policy; `tests/adapter/test_faces_use_the_core.py` holds the adapter to that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from lcm_core.capture.project import sibling_sessions
from lcm_core.config import Config, deep_merge, load_config
from lcm_core.extraction import control
from lcm_core.extraction.control import Remembered
from lcm_core.extraction.standing import rule_key
from lcm_core.retrieval.rank import rank_items
from lcm_core.retrieval.ranked import RankedItem
from lcm_core.retrieval.said import said_dates
from lcm_core.retrieval.standing import rules_in_force
from lcm_core.store.errors import StoreError
from lcm_core.store.models import EventHit, Session
from lcm_core.store.ports import (
    AdminStore,
    EventStore,
    MemoryStore,
    SupportsIntrospection,
    SupportsServerReport,
)
from lcm_core.text.query import query_signals, search_terms

REF_TEXT_CHARS: Final = 80
T = TypeVar("T")
COMPACTION_TYPES: Final = (
    "compaction/start",
    "compaction/summary",
    "compaction/end",
    "compaction/prune",
)


class NoSessionError(LookupError):
    """The store has no such session, or no session at all."""


# --- sessions ------------------------------------------------------------------------
def has_session(store: MemoryStore, session_id: str) -> bool:
    """Whether the store knows the session (a row in `sessions` or any event)."""
    return store.get_session(session_id) is not None or store.max_event_seq(session_id) is not None


def pick_session(store: MemoryStore, session: str | None) -> str:
    """The session given (it must exist), else the most recently updated one."""
    if session:
        if not has_session(store, session):
            raise NoSessionError(f"no session {session!r} in {store.url}")
        return session
    sessions = store.list_sessions()
    if not sessions:
        raise NoSessionError(
            f"no sessions in {store.url} yet: run `lcm demo` or `lcm ingest PATH` first"
        )
    return sessions[0].session_id


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    """A session's project as `status` shows it: id, folder, scope and its sessions."""

    project: str | None
    cwd: str | None
    scope: str
    sessions: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "cwd": self.cwd,
            "scope": self.scope,
            "sessions": list(self.sessions),
        }


def project_summary(store: MemoryStore, session_id: str, config: Config) -> ProjectSummary:
    """The session's project, folder, `memory.scope` and the project's sessions (this one first)."""
    session = store.get_session(session_id)
    others = tuple(s.session_id for s in sibling_sessions(store, session_id))
    return ProjectSummary(
        session.project if session is not None else None,
        session.cwd if session is not None else None,
        config.memory.scope,
        (session_id, *others) if session is not None and session.project else (session_id,),
    )


SCOPES: Final = ("session", "project", "all")


def with_scope(config: Config, scope: str) -> Config:
    """The config with `memory.scope` set (a face's `--scope`); "all" is not a pre-step scope."""
    if scope not in ("session", "project"):
        raise ValueError(f"scope must be session or project, not {scope!r}")
    return load_config(deep_merge(dict(config.values), {"memory": {"scope": scope}}))


def sessions_with_compaction(store: EventStore, sessions: Sequence[Session]) -> int:
    """How many of these sessions hold any host compaction event."""
    return sum(
        1
        for session in sessions
        if store.list_events(session.session_id, types=COMPACTION_TYPES, limit=1)
    )


# --- search and explain ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SearchResult:
    """Ranked active items for a query, then raw events holding its search terms."""

    session_id: str
    query: str
    terms: tuple[str, ...]
    items: tuple[RankedItem, ...]
    events: tuple[EventHit, ...]


def search(
    store: MemoryStore,
    session_id: str,
    query: str,
    config: Config,
    limit: int,
    scope: str | None = None,
) -> SearchResult:
    """What `search` shows: the ranking assembly would use, and the matching raw events.

    `scope` is `session` (this session), `project` (also the durable items and the raw
    events of the other sessions of its project, as a project-scope pre-step sees them)
    or `all` (every session of the store, each ranked on its own and merged by score);
    None takes `memory.scope`.
    """
    scope = scope or config.memory.scope
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    signals = query_signals(query)
    terms = search_terms(signals)
    if scope == "all":
        return _search_all(store, session_id, query, config, limit)
    ranking = rank_items(store, session_id, signals, with_scope(config, scope))
    sessions = [session_id]
    if scope == "project":
        sessions += [s.session_id for s in sibling_sessions(store, session_id)]
    hits: list[EventHit] = []
    for one in sessions if terms else []:
        hits += store.search_events(one, terms, limit=limit)
    return SearchResult(session_id, query, terms, ranking.selected[:limit], tuple(hits[:limit]))


def _search_all(
    store: MemoryStore, session_id: str, query: str, config: Config, limit: int
) -> SearchResult:
    """Every session searched on its own, items merged best first (ties by session, id)."""
    signals = query_signals(query)
    terms = search_terms(signals)
    plain = with_scope(config, "session")
    items: list[RankedItem] = []
    hits: list[EventHit] = []
    for session in store.list_sessions():
        items += rank_items(store, session.session_id, signals, plain).selected
        if terms:
            hits += store.search_events(session.session_id, terms, limit=limit)
    items.sort(key=lambda r: (-round(r.score, 9), r.item.session_id, r.item.id))
    return SearchResult(session_id, query, terms, tuple(items[:limit]), tuple(hits[:limit]))


def describe_refs(store: MemoryStore, session_id: str, refs: Sequence[str]) -> dict[str, str]:
    """A short text for each item id or `seq:N` ref, so a person sees what a ref stands for."""
    out: dict[str, str] = {}
    for ref in dict.fromkeys(refs):
        text: str | None = None
        if ref.startswith("mem_"):
            item = store.get_item(ref)
            text = item.content if item is not None else None
        elif ref.startswith("seq:") and ref[4:].lstrip("-").isdigit():
            event = store.get_event(session_id, int(ref[4:]))
            text = f"{event.type}: {event.text}" if event is not None else None
        if text:
            flat = " ".join(text.split())
            out[ref] = flat if len(flat) <= REF_TEXT_CHARS else flat[: REF_TEXT_CHARS - 1] + "…"
    return out


# --- standing rules ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StandingRule:
    """A user's rule in force as a face shows it: what it governs, its words, where and when."""

    id: str
    key: str
    content: str
    session_id: str
    said: str | None


def standing_rules(store: MemoryStore, session_id: str, *, project: bool) -> list[StandingRule]:
    """The rules every step of the session restates (its project's too with `project`), in
    the block's order: pinned first, then the newest."""
    found = rules_in_force(store, session_id, project=project)
    said = said_dates(store, session_id, found)
    return [
        StandingRule(
            item.id, rule_key(item.scope), item.content, item.session_id, said.get(item.id)
        )
        for item in found
    ]


# --- people in control (forget and pin are lcm_core.extraction.control's) ------------------
def remember(
    store: MemoryStore,
    session_id: str,
    text: str,
    kind: str | None = None,
    actor: str = "user",
) -> Remembered:
    """Store the user's own words as a `user_explicit` item with a manual source event."""
    if store.get_session(session_id) is None:
        store.upsert_session(Session(session_id, origin="manual"))
    return control.remember(store, session_id, text, kind, actor=actor)


# --- purge, health -------------------------------------------------------------------------
def purge(store: AdminStore, session_id: str | None) -> dict[str, int]:
    """Delete one session's rows, or every row but meta (None); rows deleted per table."""
    return store.purge_all() if session_id is None else store.purge_session(session_id)


class _ProbeRollback(Exception):
    """Raised inside the write probe so its transaction never commits."""


@dataclass(frozen=True, slots=True)
class Health:
    """What `doctor` learns from the store itself."""

    url: str
    schema_version: int
    problems: tuple[str, ...]
    counts: dict[str, int]
    # A database server's own report (connection, extensions, privileges), if it has one.
    server: dict[str, Any] | None = None
    # A file's layout as generic tools see it (tables, triggers, FTS), if the store says.
    layout: dict[str, Any] | None = None


# The tables whose full-text index sqlite-utils and Datasette should find (schema v3).
SEARCHABLE: Final = ("events", "memory_items")


def health(store: MemoryStore) -> Health:
    """Integrity problems, a write probe (rolled back), the schema version and the counts."""
    problems = list(store.integrity_check())
    # A damaged file is not written to, not even by a probe that rolls back.
    probe = _write_probe(store) if not problems else None
    if probe:
        problems.append(probe)
    server = store.server_report() if isinstance(store, SupportsServerReport) else None
    if server is not None:
        problems.extend(str(p) for p in server.get("problems", ()))
    layout = store.introspect() if isinstance(store, SupportsIntrospection) else None
    if layout is not None:
        fts = layout.get("fts", {})
        problems.extend(
            f"{table}: sqlite-utils and Datasette find no full-text index"
            for table in SEARCHABLE
            if not fts.get(table)
        )
    return Health(store.url, store.schema_version(), tuple(problems), store.stats(), server, layout)


def _write_probe(store: MemoryStore) -> str | None:
    """Whether the store takes writes (a read-only file or folder loses new memory)."""
    try:
        with store.transaction():
            store.set_meta("doctor.write_probe", "1")
            raise _ProbeRollback
    except _ProbeRollback:
        return None
    except StoreError as exc:
        return f"cannot write: {exc}"


# --- host cursors -----------------------------------------------------------------------------


def capture_and_advance(store: MemoryStore, key: str, value: str, capture: Callable[[], T]) -> T:
    """Capture, then save the reader's new position, in one transaction: both or neither."""
    with store.transaction():
        result = capture()
        store.set_meta(key, value)
    return result
