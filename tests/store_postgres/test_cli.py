"""The CLI against a server: open_store URLs, create-tenant, doctor, dsh install, LCM_DB."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_core.store.registry import open_store
from lcm_core.testing.builders import make_event
from lcm_store_postgres import PostgresMemoryStore


def test_open_store_understands_postgresql_urls(tenant_url: str) -> None:
    """open_store('postgresql://...') and 'postgres://...' give the PostgreSQL store."""
    for url in (tenant_url, tenant_url.replace("postgresql://", "postgres://", 1)):
        store = open_store(url)
        try:
            assert isinstance(store, PostgresMemoryStore)
            store.insert_event(make_event("s1", 0, "经由 URL 打开"))
            assert store.get_event("s1", 0) is not None
        finally:
            store.close()


def test_store_url_never_shows_a_password(tenant_url: str) -> None:
    """a password given in the URL is masked in `store.url` (which doctor and errors print)."""
    with_password = tenant_url.replace("@", ":hunter2@", 1)
    store = PostgresMemoryStore(with_password)  # trust auth: the password is not checked
    try:
        assert "hunter2" not in store.url and "***" in store.url
    finally:
        store.close()


def test_create_tenant_prints_a_url_that_works(owner_url: str) -> None:
    """`lcm admin create-tenant NAME` prints the role and a URL that opens an empty store."""
    name = f"team_{uuid.uuid4().hex[:8]}"
    result = CliRunner().invoke(cli, ["--db", owner_url, "admin", "create-tenant", name, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["role"] == name and data["url"].startswith(f"postgresql://{name}@")
    store = open_store(data["url"])
    try:
        assert store.stats()["events"] == 0
    finally:
        store.close()
    again = CliRunner().invoke(cli, ["--db", owner_url, "admin", "create-tenant", name])
    assert again.exit_code == 0 and name in again.output


def test_create_tenant_rejects_odd_names(owner_url: str) -> None:
    """a name that is not a plain role name fails with one line, nothing created."""
    result = CliRunner().invoke(cli, ["--db", owner_url, "admin", "create-tenant", "x; DROP"])
    assert result.exit_code == 1 and "tenant name" in result.stderr


def test_create_tenant_on_sqlite_says_why_not(tmp_path: Path) -> None:
    """a file store has no tenants: one clear line, exit 1."""
    open_store(str(tmp_path / "m.sqlite")).close()
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "m.sqlite"), "admin", "create-tenant", "ann"]
    )
    assert result.exit_code == 1 and "no tenants" in result.stderr


def test_doctor_reports_the_server(tenant_url: str) -> None:
    """doctor on a tenant URL: server, extensions, privileges and counts, exit 0."""
    store = PostgresMemoryStore(tenant_url)
    store.insert_event(make_event("s1", 0, "doctor 检查"))
    store.close()
    result = CliRunner().invoke(cli, ["--db", tenant_url, "doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    server = report["server"]
    assert "pg_trgm" in server["extensions"] and server["problems"] == []
    assert all(server["privileges"].values()) and server["rows"]["events"] == 1
    assert report["integrity"] == "ok" and report["file_mode"] is None
    readable = CliRunner().invoke(cli, ["--db", tenant_url, "doctor"])
    assert readable.exit_code == 0 and "PostgreSQL" in readable.output


def test_doctor_warns_about_a_role_that_bypasses_rls(pg: object) -> None:
    """connected as a superuser, doctor fails and says every tenant's rows are visible."""
    admin_url = pg.admin_url  # type: ignore[attr-defined]
    result = CliRunner().invoke(cli, ["--db", admin_url, "doctor", "--json"])
    assert result.exit_code == 1
    assert "bypasses row-level security" in json.dumps(json.loads(result.output)["integrity"])


def test_dsh_install_keeps_the_password_out_of_the_profile(tmp_path: Path, tenant_url: str) -> None:
    """`lcm dsh install --db postgresql://user:pw@...` writes the URL without the password."""
    with_password = tenant_url.replace("@", ":s3cret-pw@", 1)
    result = CliRunner().invoke(
        cli, ["--db", with_password, "dsh", "install", "--dsh-home", str(tmp_path / "dsh")]
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "dsh" / "profiles" / "web" / "cordis.patch.yml").read_text("utf-8")
    assert "s3cret-pw" not in text and tenant_url in text
    assert "PGPASSWORD" in result.output and "s3cret-pw" not in result.output


def test_lcm_db_names_a_server(tenant_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """LCM_DB=postgresql://... is the store every command uses."""
    monkeypatch.setenv("LCM_DB", tenant_url)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["paths"]["db_source"] == "LCM_DB"
