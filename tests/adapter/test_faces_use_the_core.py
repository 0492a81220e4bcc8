"""The faces read the store freely but change it only through the core (its write policy)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from lcm_core.store.ports import MemoryStore

ADAPTER = Path(__file__).resolve().parents[2] / "lcm_adapter"
PORT_METHODS = frozenset(
    name
    for name, member in inspect.getmembers(MemoryStore, inspect.isfunction)
    if not name.startswith("_")
)
# A read changes nothing, so a face may call it on the store; a face may end its own handle.
READ_PREFIXES = ("get_", "list_", "find_", "count_", "search_", "max_")
READS = frozenset(
    {"schema_version", "stats", "export_rows", "integrity_check"}
    | {name for name in PORT_METHODS if name.startswith(READ_PREFIXES)}
)
WRITES = PORT_METHODS - READS - {"close"}


def core_names(tree: ast.Module) -> frozenset[str]:
    """The names a module binds to something imported from lcm_core (`usecases`, `control`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lcm_core"):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(
                alias.asname or alias.name.split(".")[0]
                for alias in node.names
                if alias.name.startswith("lcm_core")
            )
    return frozenset(names)


def port_writes(source: str) -> list[tuple[int, str]]:
    """(line, method) of every call of a writing port method, on any receiver but the core's."""
    tree = ast.parse(source)
    core = core_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            receiver = node.func.value
            through_core = isinstance(receiver, ast.Name) and receiver.id in core
            if name in WRITES and not through_core:
                found.append((node.lineno, name))
    return found


def test_the_port_has_methods_to_look_for() -> None:
    """The check knows the port: 58 methods (the role Protocols, keyed rows among them),
    each a read or a write, the writes among them the ones faces used to call."""
    assert {"purge_all", "purge_session", "set_meta", "transaction", "put_row"} <= WRITES
    assert {"search_events", "list_sessions", "stats", "list_rows", "get_meta"} <= READS
    assert len(PORT_METHODS) == 58 and len(WRITES) == 27


def test_the_check_catches_a_face_writing_to_the_store() -> None:
    """A face that changes the store itself is reported with its line; reads are not."""
    source = "def purge(store):\n    return store.purge_all()\n"
    assert port_writes(source) == [(2, "purge_all")]
    assert port_writes("store.close()\nstore.list_sessions()\nstore.stats('s1')\n") == []


def test_the_check_lets_a_face_call_the_core_by_a_port_name() -> None:
    """`control.forget_event` is the core's forget (tombstones, scrub), not the port's."""
    core = "from lcm_core.extraction import control\ncontrol.forget_event(store, 's1', 3)\n"
    assert port_writes(core) == []
    assert port_writes("control.forget_event(store, 's1', 3)\n") == [(1, "forget_event")]


def test_no_face_writes_to_the_store_itself() -> None:
    """No module of lcm_adapter calls a MemoryStore method that changes the store."""
    offenders = [
        f"{path.relative_to(ADAPTER.parent)}:{line}: {name}"
        for path in sorted(ADAPTER.rglob("*.py"))
        for line, name in port_writes(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
