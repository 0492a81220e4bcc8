"""Open a store from a URL through the `lcm.stores` entry points, never by naming a backend."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from lcm_core.store.errors import StoreUnavailableError
from lcm_core.store.ports import MemoryStore, SupportsScratch

ENTRY_POINT_GROUP: Final = "lcm.stores"
# Frozen reference rankings for `lcm bench retrieval` that need a backend's engine.
REFERENCE_GROUP: Final = "lcm.bench_references"
# Which extra brings the backend for a scheme, for the install hint.
_EXTRAS: Final = {"duckdb": "duckdb", "postgresql": "postgres", "postgres": "postgres"}
_DISTRIBUTION: Final = "long-conversation-memory"


@dataclass(frozen=True, slots=True)
class StoreURL:
    """A parsed store URL: the backend scheme and the location it understands."""

    scheme: str
    location: str  # a file path, or ":memory:"


def parse_store_url(url: str) -> StoreURL:
    """Split `scheme:///path`, `:memory:` or a bare path (which means SQLite)."""
    text = str(url).strip()
    if not text:
        raise StoreUnavailableError(
            "empty database URL: give a path, sqlite:///PATH or duckdb:///PATH"
        )
    if text == ":memory:":
        return StoreURL("sqlite", ":memory:")
    scheme, sep, rest = text.partition("://")
    if not sep or "/" in scheme or "\\" in scheme or len(scheme) < 2:
        return StoreURL("sqlite", text)
    scheme = scheme.lower()
    # `sqlite:///abs/path` carries an absolute path after the third slash, while
    # `sqlite://rel/path` and `sqlite:///:memory:` keep what follows the scheme.
    location = rest[1:] if rest.startswith("/:memory:") else rest
    if location.startswith("//"):
        # `sqlite:////abs` (one slash too many) still means /abs, never a `//` path.
        location = "/" + location.lstrip("/")
    if not location:
        raise StoreUnavailableError(f"database URL {text!r} names no path")
    return StoreURL(scheme, location or ":memory:")


def store_url(scheme: str, location: str | Path) -> str:
    """The URL a store shows: `scheme:///absolute/path` (three slashes), or `:memory:`."""
    if str(location) == ":memory:":
        return f"{scheme}:///:memory:"
    return f"{scheme}://{os.path.abspath(Path(location).expanduser())}"


def entry_points(group: str) -> dict[str, str]:
    """An entry-point group of the installed distributions: name -> `module:attribute`.

    Reads each `*.dist-info/entry_points.txt` on sys.path itself: importing and scanning with
    importlib.metadata cost ~30 ms, a seventh of a Claude Code hook's whole run. As there, the
    first distribution of a name on sys.path wins; within a group, the first entry of a name.
    """
    found: dict[str, str] = {}
    seen: set[str] = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            distribution = name.partition("-")[0].partition(".")[0].lower().replace("_", "-")
            if distribution in seen:
                continue
            seen.add(distribution)
            try:
                text = Path(folder or ".", name, "entry_points.txt").read_text("utf-8")
            except OSError:
                continue
            for entry, target in _group_lines(text, group):
                found.setdefault(entry, target)
    return found


def _group_lines(text: str, group: str) -> list[tuple[str, str]]:
    """The `name = target` lines of one `[group]` section of an entry_points.txt."""
    lines: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line == f"[{group}]"
        elif inside and "=" in line and not line.startswith(("#", ";")):
            name, _, target = line.partition("=")
            lines.append((name.strip(), target.strip()))
    return lines


def load_entry_point(target: str) -> Any:
    """Import what `module:attribute.path [extra]` names."""
    module, _, attribute = target.partition("[")[0].strip().partition(":")
    loaded: Any = importlib.import_module(module.strip())
    for part in attribute.strip().split("."):
        if part:
            loaded = getattr(loaded, part)
    return loaded


def available_backends() -> dict[str, Callable[..., Any]]:
    """The installed backends by scheme."""
    return {
        name: partial(load_entry_point, target)
        for name, target in entry_points(ENTRY_POINT_GROUP).items()
    }


def open_store(url: str) -> MemoryStore:
    """Open the store a URL names; a missing backend gets an install hint, not a traceback."""
    parsed = parse_store_url(url)
    loaders = available_backends()
    loader = loaders.get(parsed.scheme)
    if loader is None:
        extra = _EXTRAS.get(parsed.scheme)
        if extra is not None:
            raise StoreUnavailableError(
                f"the {parsed.scheme} backend is not installed: "
                f"pip install '{_DISTRIBUTION}[{extra}]'"
            )
        known = ", ".join(sorted(loaders)) or "none"
        raise StoreUnavailableError(
            f"no storage backend for {parsed.scheme!r} (installed: {known})"
        )
    try:
        factory = loader()
    except ImportError as exc:
        extra = _EXTRAS.get(parsed.scheme, parsed.scheme)
        raise StoreUnavailableError(
            f"the {parsed.scheme} backend cannot load ({exc}): "
            f"pip install '{_DISTRIBUTION}[{extra}]'"
        ) from exc
    store: MemoryStore = factory(parsed.location)
    return store


def scratch_store(store: MemoryStore) -> MemoryStore:
    """An empty throwaway store to derive into: of the store's own kind when its backend
    can open one in memory (SQLite, DuckDB), else the core's in-memory reference store
    (a server backend has no private in-memory twin). Either follows the one contract,
    so what is derived there does not depend on which it is."""
    if isinstance(store, SupportsScratch):
        return store.scratch()
    from lcm_core.store.memory import InMemoryStore  # only re-extraction needs it

    return InMemoryStore()


def reference_rankers() -> dict[str, Callable[[], Any]]:
    """Installed frozen reference rankings for the retrieval bench, by name, ready to build."""
    found: dict[str, Callable[[], Any]] = {}
    for name, target in sorted(entry_points(REFERENCE_GROUP).items()):
        try:
            found[name] = load_entry_point(target)
        except ImportError:
            continue  # its backend's extra is not installed: the bench runs without it
    return found
