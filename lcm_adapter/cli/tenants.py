"""`lcm admin create-tenant`: a tenant role on a server store (PostgreSQL)."""

from __future__ import annotations

from typing import Any, cast

import click

from lcm_adapter.cli.base import emit, fail, json_option, opened_store
from lcm_core.store.errors import StoreError
from lcm_core.store.ports import SupportsTenants


@click.group()
def admin() -> None:
    """Administer a server store: tenants (run as the database owner)."""


@admin.command("create-tenant")
@click.argument("name")
@json_option
@click.pass_context
def create_tenant(ctx: click.Context, name: str, as_json: bool) -> None:
    """Create the tenant role NAME (a person or a team) and print its URL.

    The role logs in with no password set by lcm: give it one with ALTER ROLE from your
    secret store, then pass it through PGPASSWORD or ~/.pgpass, never in the URL.
    """
    with opened_store(ctx) as store:
        if not isinstance(store, SupportsTenants):
            fail(f"{store.url}: this backend has no tenants (use a postgresql:// URL)")
        try:
            url = cast(SupportsTenants, store).create_tenant(name)
        except StoreError as exc:
            fail(str(exc))
    data: dict[str, Any] = {"role": name, "url": url}
    emit(as_json, data, _render)


def _render(d: dict[str, Any]) -> str:
    return (
        f"tenant role: {d['role']}\nurl: {d['url']}\n"
        "set its password with ALTER ROLE and keep it in PGPASSWORD or ~/.pgpass"
    )


def register(group: click.Group) -> None:
    """Add `lcm admin` to the `lcm` group."""
    group.add_command(admin)
