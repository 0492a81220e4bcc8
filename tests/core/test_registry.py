"""`open_store(url)`: every URL form reaches the right backend through entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

from lcm_core.store.errors import StoreUnavailableError
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.store.registry import open_store, parse_store_url


@pytest.mark.parametrize(
    ("url", "scheme", "location"),
    [
        ("/tmp/m.sqlite", "sqlite", "/tmp/m.sqlite"),
        ("relative/m.sqlite", "sqlite", "relative/m.sqlite"),
        (":memory:", "sqlite", ":memory:"),
        ("sqlite:///tmp/m.sqlite", "sqlite", "/tmp/m.sqlite"),
        ("sqlite:///:memory:", "sqlite", ":memory:"),
        ("duckdb:///data/m.duckdb", "duckdb", "/data/m.duckdb"),
        ("DUCKDB:///x.duckdb", "duckdb", "/x.duckdb"),
        ("sqlite:////tmp/m.sqlite", "sqlite", "/tmp/m.sqlite"),
        ("duckdb://///data/m.duckdb", "duckdb", "/data/m.duckdb"),
    ],
)
def test_parse_store_url(url: str, scheme: str, location: str) -> None:
    parsed = parse_store_url(url)
    assert (parsed.scheme, parsed.location) == (scheme, location)


def test_empty_url_is_a_clear_error() -> None:
    with pytest.raises(StoreUnavailableError, match="empty"):
        parse_store_url("  ")


def test_open_store_bare_path_and_sqlite_url(tmp_path: Path) -> None:
    for url in (str(tmp_path / "a.sqlite"), f"sqlite:///{tmp_path / 'b.sqlite'}", ":memory:"):
        store = open_store(url)
        try:
            assert store.schema_version() == SCHEMA_VERSION
        finally:
            store.close()


def test_unknown_scheme_names_the_installed_backends() -> None:
    with pytest.raises(StoreUnavailableError, match="sqlite"):
        open_store("mysql://localhost/db")


def test_missing_duckdb_extra_gets_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import lcm_core.store.registry as registry

    original = registry.available_backends
    monkeypatch.setattr(
        registry,
        "available_backends",
        lambda: {k: v for k, v in original().items() if k != "duckdb"},
    )
    with pytest.raises(
        StoreUnavailableError, match=r"pip install 'long-conversation-memory\[duckdb\]'"
    ):
        open_store("duckdb:///tmp/x.duckdb")


def test_missing_postgres_extra_gets_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import lcm_core.store.registry as registry

    original = registry.available_backends
    monkeypatch.setattr(
        registry,
        "available_backends",
        lambda: {k: v for k, v in original().items() if not k.startswith("postgres")},
    )
    for url in ("postgresql://ann@db.example/lcm", "postgres://ann@db.example/lcm"):
        with pytest.raises(
            StoreUnavailableError, match=r"pip install 'long-conversation-memory\[postgres\]'"
        ):
            open_store(url)


def test_a_third_party_backend_is_found_through_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend another package installs (its dist-info names an `lcm.stores` entry) opens
    from its URL scheme, with no change to lcm."""
    package = tmp_path / "lcm_store_memo"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from lcm_core.store.memory import InMemoryStore\n"
        "def open_memo(location):\n    return InMemoryStore()\n",
        encoding="utf-8",
    )
    info = tmp_path / "lcm_store_memo-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text(
        "[console_scripts]\nmemo = lcm_store_memo:main\n\n"
        "[lcm.stores]\nmemo = lcm_store_memo:open_memo\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import lcm_core.store.registry as registry

    assert registry.entry_points("lcm.stores")["memo"] == "lcm_store_memo:open_memo"
    store = open_store("memo:///anything")
    try:
        assert type(store).__name__ == "InMemoryStore"
    finally:
        store.close()


def test_the_entry_point_reader_agrees_with_importlib_metadata() -> None:
    """The registry's own reader finds the same backends and references as the standard one."""
    from importlib.metadata import entry_points as standard

    import lcm_core.store.registry as registry

    for group in (registry.ENTRY_POINT_GROUP, registry.REFERENCE_GROUP):
        expected = {ep.name: ep.value for ep in standard(group=group)}
        assert registry.entry_points(group) == expected
