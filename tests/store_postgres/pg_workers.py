"""Worker processes of the PostgreSQL concurrency tests (module level, so spawn can pickle)."""

from __future__ import annotations

from lcm_core.store.models import Event
from lcm_store_postgres import PostgresMemoryStore

BATCH = 50


def write_events(
    url: str, session_id: str, first_seq: int, count: int, marker: str
) -> dict[str, object]:
    """Capture `count` events one transaction per small batch, as the sidecar does; report
    how many were new and every error text (a caller must see none)."""
    errors: list[str] = []
    inserted = 0
    store = PostgresMemoryStore(url)
    try:
        for start in range(0, count, BATCH):
            batch = [
                Event(
                    session_id, first_seq + seq, "message.user", f"{marker} 事件 {first_seq + seq}"
                )
                for seq in range(start, min(count, start + BATCH))
            ]
            try:
                inserted += store.insert_events(batch)
            except Exception as exc:  # counted, reported: the test asserts there are none
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()
    return {"inserted": inserted, "errors": errors}
