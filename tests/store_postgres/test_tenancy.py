"""Tenancy as a non-owner role with raw SQL: another tenant's rows cannot be read or changed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from lcm_core.store.models import SESSION_TABLES, TABLES
from lcm_core.testing.builders import CHINESE, make_event, make_item, populate
from lcm_store_postgres import PostgresMemoryStore

SECRET = "tenant-a-secret 机密预算 4711"


@pytest.fixture
def two_tenants(owner_url: str) -> Iterator[tuple[PostgresMemoryStore, PostgresMemoryStore]]:
    """Tenant A with a populated session `s1`, and an empty tenant B, on one database."""
    owner = PostgresMemoryStore(owner_url)
    try:
        urls = [owner.create_tenant(f"t_{uuid.uuid4().hex[:12]}") for _ in range(2)]
    finally:
        owner.close()
    a, b = PostgresMemoryStore(urls[0]), PostgresMemoryStore(urls[1])
    populate(a, "s1")
    a.insert_event(make_event("s1", 50, SECRET))
    a.insert_item(make_item("s1", SECRET, item_id="mem_secret"))
    yield a, b
    a.close()
    b.close()


def _raw(store: PostgresMemoryStore) -> psycopg.Connection[tuple[object, ...]]:
    """A plain driver connection as the store's role: what a tenant could type into psql."""
    return psycopg.connect(store._db.url, autocommit=True)


def test_select_sees_no_other_tenant_rows(two_tenants: tuple[PostgresMemoryStore, ...]) -> None:
    """SELECT * on every table, as tenant B, returns none of tenant A's rows."""
    a, b = two_tenants
    assert a.stats("s1")["events"] > 0
    with _raw(b) as conn:
        for table in TABLES:
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
        hit = conn.execute("SELECT count(*) FROM events WHERE text LIKE '%机密%'").fetchone()
        assert hit == (0,)


def test_update_and_delete_touch_no_other_tenant_rows(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """UPDATE and DELETE without a WHERE clause, as tenant B, change none of A's rows."""
    a, b = two_tenants
    before = a.stats()
    with _raw(b) as conn:
        for table in TABLES:
            assert conn.execute(f"DELETE FROM {table}").rowcount == 0, table
        assert conn.execute("UPDATE events SET text = 'pwned'").rowcount == 0
        assert conn.execute("UPDATE memory_items SET status = 'retracted'").rowcount == 0
    assert a.stats() == before
    stored = a.get_event("s1", 50)
    assert stored is not None and stored.text == SECRET


def test_writing_rows_as_another_tenant_fails(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """B cannot insert a row labelled with A's tenant, nor move its own row over to A."""
    a, b = two_tenants
    tenant_a = a._db.raw.execute("SELECT current_user AS u").fetchone()
    assert tenant_a is not None
    with _raw(b) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO meta (tenant, key, value) VALUES (%s, 'planted', 'x')",
                (tenant_a["u"],),
            )
        conn.execute("INSERT INTO meta (key, value) VALUES ('mine', 'x')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE meta SET tenant = %s WHERE key = 'mine'", (tenant_a["u"],))
    assert a.get_meta("planted") is None and a.get_meta("mine") is None
    assert b.get_meta("mine") == "x"


def test_policy_cannot_be_switched_off_by_a_tenant(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """A tenant can neither drop the policy, disable RLS, turn row_security off, nor become A."""
    a, b = two_tenants
    tenant_a = a._db.raw.execute("SELECT current_user AS u").fetchone()
    assert tenant_a is not None
    with _raw(b) as conn:
        for statement in (
            "ALTER TABLE events DISABLE ROW LEVEL SECURITY",
            "ALTER TABLE events NO FORCE ROW LEVEL SECURITY",
            "DROP POLICY tenant_rows ON events",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(tenant_a["u"]))
            )
        conn.execute("SET row_security = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM events")


def test_export_through_copy_returns_nothing_of_others(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """COPY ... TO STDOUT (a raw export) and the store's export_rows give B none of A's rows."""
    _, b = two_tenants
    with (
        _raw(b) as conn,
        conn.cursor() as cursor,
        cursor.copy("COPY (SELECT * FROM events) TO STDOUT") as copy,
    ):
        assert b"".join(bytes(chunk) for chunk in copy) == b""
    for table in TABLES:
        assert list(b.export_rows(table)) == [], table


def test_crafted_search_input_finds_nothing_of_others(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """search terms written as SQL or wildcards return none of A's events or items to B."""
    a, b = two_tenants
    crafted = [
        "%",
        "_",
        "' OR tenant <> current_user --",
        "') OR 1=1 --",
        "机密",
        SECRET,
        "%' UNION SELECT * FROM events --",
    ]
    for term in crafted:
        assert b.search_events(None, [term]) == [], term
        assert b.search_events("s1", [term]) == [], term
        assert b.search_items(None, [term], statuses=("active", "superseded")) == [], term
    assert {hit.event.seq for hit in a.search_events("s1", ["机密"])} == {50}


def test_purge_and_export_never_cross_tenants(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """B's purge_session and purge_all delete only B's rows; A's export is unchanged."""
    a, b = two_tenants
    populate(b, "s1")
    exported = {table: list(a.export_rows(table)) for table in TABLES}
    own = b.stats("s1")
    removed = b.purge_session("s1")
    assert {table: removed[table] for table in SESSION_TABLES} == {
        table: own[table] for table in SESSION_TABLES
    }
    b.purge_all()
    assert all(count == 0 for table, count in b.stats().items() if table != "meta")
    assert {table: list(a.export_rows(table)) for table in TABLES} == exported


def test_same_ids_and_hashes_in_two_tenants(
    two_tenants: tuple[PostgresMemoryStore, ...],
) -> None:
    """sessions, seqs, item ids and content hashes may repeat across tenants without conflict."""
    a, b = two_tenants
    assert b.insert_event(make_event("s1", 50, SECRET)) is True
    item, created = b.insert_item(make_item("s1", SECRET, item_id="mem_secret"))
    assert created is True and item.id == "mem_secret"
    b.insert_event(make_event("s1", 51, CHINESE))
    assert a.get_event("s1", 51) is None
    assert len(a.list_memory_events(memory_id="mem_secret")) == 1
    assert len(b.list_memory_events(memory_id="mem_secret")) == 1


def test_the_owner_is_bound_by_the_policy_too(
    owner_url: str, two_tenants: tuple[PostgresMemoryStore, ...]
) -> None:
    """FORCE ROW LEVEL SECURITY: the tables' owner role sees none of the tenants' rows."""
    with psycopg.connect(owner_url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM events WHERE text = %s", (SECRET,)
        ).fetchone() == (0,)


def test_a_shared_login_role_acts_as_the_tenant_it_sets(
    owner_url: str, two_tenants: tuple[PostgresMemoryStore, ...]
) -> None:
    """a gateway role that is a member of tenant A, connecting with role=A, sees A's rows only."""
    a, _ = two_tenants
    tenant_a = a._db.raw.execute("SELECT current_user AS u").fetchone()
    assert tenant_a is not None
    gateway = f"gw_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(psycopg.sql.Identifier(gateway))
        )
        conn.execute(
            psycopg.sql.SQL("GRANT {} TO {}").format(
                psycopg.sql.Identifier(tenant_a["u"]), psycopg.sql.Identifier(gateway)
            )
        )
    base = a._db.url.replace(f"postgresql://{tenant_a['u']}@", f"postgresql://{gateway}@", 1)
    as_a = PostgresMemoryStore(base + "&options=-c%20role%3D" + tenant_a["u"])
    try:
        stored = as_a.get_event("s1", 50)
        assert stored is not None and stored.text == SECRET
        assert as_a.stats() == a.stats()
    finally:
        as_a.close()
    # As itself the gateway is a tenant of its own, with no rows: it sees nobody's.
    with psycopg.connect(base, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
