"""The faces reach memory only through the core's use cases, `open_store` and `close`."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from lcm_core.store.ports import MemoryStore

ADAPTER = Path(__file__).resolve().parents[2] / "lcm_adapter"
# A face may end its own handle; everything else goes through `lcm_core.usecases`.
ALLOWED = frozenset({"close"})
PORT_METHODS = frozenset(
    name
    for name, member in inspect.getmembers(MemoryStore, inspect.isfunction)
    if not name.startswith("_")
)


def port_calls(source: str) -> list[tuple[int, str]]:
    """(line, method) of every call of a port method by name, on any receiver but `usecases`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            receiver = node.func.value
            through_core = isinstance(receiver, ast.Name) and receiver.id == "usecases"
            if name in PORT_METHODS and name not in ALLOWED and not through_core:
                found.append((node.lineno, name))
    return found


def test_the_port_has_methods_to_look_for() -> None:
    """The check knows the port: 58 methods (the role Protocols, keyed rows among them),
    among them the ones faces used to call."""
    assert {"purge_all", "search_events", "list_sessions", "stats", "list_rows"} <= PORT_METHODS
    assert len(PORT_METHODS) == 58


def test_the_check_catches_a_face_calling_the_store() -> None:
    """A face that calls a store method itself is reported with its line."""
    source = "def purge(store):\n    return store.purge_all()\n"
    assert port_calls(source) == [(2, "purge_all")]
    assert port_calls("store.close()\nusecases.export_rows(store, 'events')\n") == []


def test_no_face_calls_a_store_method() -> None:
    """No module of lcm_adapter calls a MemoryStore method but close()."""
    offenders = [
        f"{path.relative_to(ADAPTER.parent)}:{line}: {name}"
        for path in sorted(ADAPTER.rglob("*.py"))
        for line, name in port_calls(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
