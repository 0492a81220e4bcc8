"""Contracts of the archive: raw text kept per (session_id, ref), first write wins."""

from __future__ import annotations

from lcm_core.store.models import ArchiveEntry
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import MIXED


class ArchiveContract(StoreContractBase):
    """Archived text is stored once and read back unchanged."""

    def test_archive_round_trip(self, store: MemoryStore) -> None:
        """an archived entry comes back with its text unchanged, including mixed scripts."""
        entry = ArchiveEntry("s1", "seq:3", MIXED, created_at="2025-01-01T00:00:00.000+00:00")
        store.put_archive(entry)
        assert store.get_archive("s1", "seq:3") == entry

    def test_archive_first_write_wins(self, store: MemoryStore) -> None:
        """a second put for the same (session_id, ref) keeps the first text."""
        store.put_archive(ArchiveEntry("s1", "seq:3", "first text"))
        store.put_archive(ArchiveEntry("s1", "seq:3", "second text"))
        stored = store.get_archive("s1", "seq:3")
        assert stored is not None and stored.text == "first text"

    def test_archive_keys_are_per_session(self, store: MemoryStore) -> None:
        """the same ref in two sessions names two independent entries."""
        store.put_archive(ArchiveEntry("s1", "seq:1", "one"))
        store.put_archive(ArchiveEntry("s2", "seq:1", "two"))
        first, second = store.get_archive("s1", "seq:1"), store.get_archive("s2", "seq:1")
        assert first is not None and second is not None
        assert (first.text, second.text) == ("one", "two")

    def test_unknown_archive_entry_is_none(self, store: MemoryStore) -> None:
        """get_archive of a ref never written returns None."""
        store.put_archive(ArchiveEntry("s1", "seq:1", "one"))
        assert store.get_archive("s1", "seq:2") is None
        assert store.get_archive("s9", "seq:1") is None

    def test_archive_created_at_is_filled(self, store: MemoryStore) -> None:
        """an archive entry written without created_at gets one from the store."""
        store.put_archive(ArchiveEntry("s1", "seq:1", "one"))
        stored = store.get_archive("s1", "seq:1")
        assert stored is not None and stored.created_at != ""
