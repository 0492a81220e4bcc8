"""The PostgreSQL tests' server: started once per run from pip-installed binaries.

This folder is put on `sys.path` (pytest runs with `--import-mode=importlib`) so the
tests import `pg_server`. Each test class gets a database owned by a non-superuser owner
role; each store under test connects as a tenant role of its own, so row-level security,
not a fresh database, gives every test an empty store.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import pg_server  # noqa: E402  (needs the path set above)

from lcm_store_postgres import PostgresMemoryStore  # noqa: E402


@pytest.fixture(scope="session")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_server.Server]:
    """The running server (started here unless LCM_TEST_POSTGRES_URL names one)."""
    folder = Path("/tmp") / f"lcm-pg-{uuid.uuid4().hex[:8]}"  # a socket path must be short
    folder.mkdir(mode=0o700)
    try:
        server = pg_server.start(folder)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    print(f"\ntest PostgreSQL started in {server.start_seconds:.2f} s", file=sys.stderr)
    yield server


@pytest.fixture(scope="session")
def owner_url(pg: pg_server.Server) -> str:
    """A migrated database, its schema made by the owner role (not a superuser)."""
    url = pg_server.fresh_database(pg)
    PostgresMemoryStore(url).close()
    return url


@pytest.fixture
def tenant_url(owner_url: str) -> str:
    """A new tenant role on the shared database: an empty store, isolated by RLS."""
    owner = PostgresMemoryStore(owner_url)
    try:
        return owner.create_tenant(f"t_{uuid.uuid4().hex[:12]}")
    finally:
        owner.close()
