"""Opening a PostgreSQL store: the owner migrates, tenants cannot, newer schemas are refused."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pg_server
import psycopg
import pytest

from lcm_core.store.errors import SchemaVersionError, StoreError, StoreOpenError
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.testing.builders import make_event
from lcm_store_postgres import PostgresMemoryStore
from lcm_store_postgres.schema import MIGRATIONS, VERSION_TABLE


def _versions(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM lcm_schema")}


def test_first_open_by_the_owner_creates_schema_v3(pg: pg_server.Server) -> None:
    """a new database gets every table, the version and one row per migration."""
    url = pg_server.fresh_database(pg)
    store = PostgresMemoryStore(url)
    try:
        assert store.schema_version() == SCHEMA_VERSION and store.integrity_check() == []
    finally:
        store.close()
    versions = _versions(url)
    assert versions["schema"] == str(SCHEMA_VERSION)
    assert {"migration.v1", "migration.v2", "migration.v3"} <= set(versions)


def test_a_tenant_cannot_create_the_schema(pg: pg_server.Server) -> None:
    """a tenant role opening an empty database gets one line naming the owner, nothing made."""
    url = pg_server.fresh_database(pg)
    owner = PostgresMemoryStore(url)
    tenant_url = owner.create_tenant("t_lonely")
    owner.close()
    database = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    other = pg_server.fresh_database(pg)
    other_db = psycopg.conninfo.conninfo_to_dict(other)["dbname"]
    with pytest.raises(StoreOpenError, match="owner"):
        PostgresMemoryStore(tenant_url.replace(f"/{database}", f"/{other_db}"))
    with psycopg.connect(other, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('events')").fetchone() == (None,)


def test_v1_database_migrates_and_keeps_rows(pg: pg_server.Server) -> None:
    """a database left at v1 gains validation_logs on open; its events are still there."""
    url = pg_server.fresh_database(pg)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(VERSION_TABLE)
        for statement in MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO lcm_schema VALUES ('schema', '1')")
        conn.execute(
            "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at, folded) "
            "VALUES ('s1', 0, 'message.user', '旧的数据', 'h', 'now', '旧的数据')"
        )
    store = PostgresMemoryStore(url)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        stored = store.get_event("s1", 0)
        assert stored is not None and stored.text == "旧的数据"
        assert store.stats()["validation_logs"] == 0 and store.integrity_check() == []
    finally:
        store.close()


def test_a_newer_schema_is_refused(pg: pg_server.Server) -> None:
    """a database written by a newer lcm is not opened (and not changed)."""
    url = pg_server.fresh_database(pg)
    PostgresMemoryStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE lcm_schema SET value = '99' WHERE key = 'schema'")
    with pytest.raises(SchemaVersionError, match="newer"):
        PostgresMemoryStore(url)
    assert _versions(url)["schema"] == "99"


def test_many_handles_opening_a_new_database_at_once(pg: pg_server.Server) -> None:
    """six handles migrating one fresh database together all open it; it migrates once."""
    url = pg_server.fresh_database(pg)

    def open_and_write(n: int) -> int:
        store = PostgresMemoryStore(url)
        try:
            return int(store.insert_event(make_event("s1", n, f"handle {n}")))
        finally:
            store.close()

    with ThreadPoolExecutor(6) as pool:
        assert sum(pool.map(open_and_write, range(6))) == 6


def test_unreachable_server_is_one_clear_error() -> None:
    """a URL nobody answers gives StoreOpenError naming it, with no password shown."""
    with pytest.raises(StoreOpenError, match="cannot connect") as caught:
        PostgresMemoryStore("postgresql://ann:pw@/lcm?host=/nonexistent-socket-dir")
    assert "pw@" not in str(caught.value)


def test_a_dropped_connection_is_replaced(pg: pg_server.Server, tenant_url: str) -> None:
    """after the server kills the session (restart, failover), one call fails, then work goes on."""
    store = PostgresMemoryStore(tenant_url)
    try:
        store.insert_event(make_event("s1", 0, "before the drop"))
        pid = store._db.raw.info.backend_pid
        with psycopg.connect(pg.admin_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StoreError):
            store.get_event("s1", 0)
        assert store.insert_event(make_event("s1", 1, "断线之后")) is True
        assert [e.seq for e in store.list_events("s1")] == [0, 1]
    finally:
        store.close()
