"""Tenant roles and the server report behind `lcm admin create-tenant` and `lcm doctor`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import psycopg
from psycopg import sql

from lcm_core.store.errors import StoreError
from lcm_core.store.models import REPORT_TABLES, SCHEMA_VERSION, TABLES
from lcm_store_postgres.schema import TENANT_GROUP

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection

# A role name a tenant can type in a URL without quoting: lower case, digits, _ and -.
_TENANT_NAME: Final = re.compile(r"^[a-z_][a-z0-9_-]{0,62}$")


def tenant_url(url: str, role: str) -> str:
    """The store URL with its user replaced by `role` and any password dropped."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    info.pop("password", None)
    host = str(info.pop("host", "") or "")
    port = info.pop("port", None)
    dbname = info.pop("dbname", "")
    info.pop("user", None)
    netloc = f"{role}@"
    query: list[str] = [f"{key}={value}" for key, value in sorted(info.items())]
    if host.startswith("/"):
        query.insert(0, f"host={host}")
    else:
        netloc += host
        if port:
            netloc += f":{port}"
    tail = ("?" + "&".join(query)) if query else ""
    return f"postgresql://{netloc}/{dbname}{tail}"


def create_tenant(db: Connection, name: str) -> str:
    """Create a login role in the tenant group; its rows are its own by row-level security.

    No password is set here: give one with `ALTER ROLE ... PASSWORD` from a secret store, or
    let the server authenticate by certificate or peer. lcm never stores it.
    """
    if not _TENANT_NAME.match(name):
        raise StoreError(
            f"tenant name {name!r}: use lower-case letters, digits, '_' or '-' (63 at most), "
            "starting with a letter or '_'"
        )
    role = sql.Identifier(name)
    with db.transaction(), db.guarded("create tenant") as raw:
        exists = raw.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        if exists is None:
            raw.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(role))
        raw.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(TENANT_GROUP), role))
        database = raw.execute("SELECT current_database() AS d").fetchone()
        if database is not None:
            raw.execute(
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(str(database["d"])), role
                )
            )
    return tenant_url(db.url, name)


def server_report(db: Connection) -> dict[str, Any]:
    """What `lcm doctor` shows for a server: who we are, schema, extensions, rights, counts."""
    report: dict[str, Any] = {"problems": []}
    problems: list[str] = report["problems"]
    with db.guarded("server report") as raw:
        who = raw.execute(
            "SELECT current_user AS role, current_database() AS database, "
            "current_setting('server_version') AS version, r.rolsuper AS superuser, "
            "r.rolbypassrls AS bypassrls FROM pg_roles AS r WHERE r.rolname = current_user"
        ).fetchone()
        report["server"] = dict(who or {})
        if who and (who["superuser"] or who["bypassrls"]):
            problems.append(
                f"role {who['role']} bypasses row-level security: it sees every tenant's rows; "
                "connect as a tenant role (lcm admin create-tenant NAME)"
            )
        report["schema_version"] = db.current_version()
        if report["schema_version"] != SCHEMA_VERSION:
            problems.append(
                f"schema is v{report['schema_version']}, this lcm needs v{SCHEMA_VERSION}"
            )
        extensions = raw.execute("SELECT extname, extversion FROM pg_extension").fetchall()
        report["extensions"] = {row["extname"]: row["extversion"] for row in extensions}
        if "pg_trgm" not in report["extensions"]:
            problems.append("extension pg_trgm is missing: search cannot use trigram indexes")
        else:
            grams = raw.execute("SELECT cardinality(show_trgm('数据库迁移')) AS n").fetchone()
            if not grams or not grams["n"]:
                problems.append(
                    "pg_trgm makes no trigrams of Chinese text under this database's ctype; "
                    "create the database with a UTF-8 locale (e.g. C.UTF-8)"
                )
        rights: dict[str, bool] = {}
        for table in TABLES:
            row = raw.execute(
                "SELECT has_table_privilege(%s, 'SELECT, INSERT, UPDATE, DELETE') AS ok",
                (table,),
            ).fetchone()
            rights[table] = bool(row and row["ok"])
        report["privileges"] = rights
        missing = sorted(table for table, ok in rights.items() if not ok)
        if missing:
            problems.append(f"role may not read and write: {', '.join(missing)}")
        counts: dict[str, int] = {}
        for table in REPORT_TABLES:
            if rights.get(table):
                row = raw.execute(f"SELECT count(*) AS n FROM {table}").fetchone()
                counts[table] = int(row["n"]) if row else 0
        report["rows"] = counts
    return report
