"""No command that writes a path the user gives may replace the database it reads.

`lcm export --force --out <the database>` once replaced the live SQLite file (duckdb),
or turned it into a folder (jsonl). Every format, every spelling of the path, and every
companion file is refused with one line, whatever `--force` says, and the database is
left as it was.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.config import load_config
from lcm_core.store.registry import open_store

HAS_DUCKDB = all(importlib.util.find_spec(m) is not None for m in ("duckdb", "pyarrow"))
FORMATS = ["jsonl", *(["duckdb", "parquet"] if HAS_DUCKDB else [])]


def run(db: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", db, *args])


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo database, made once and copied for each test."""
    path = tmp_path_factory.mktemp("seed") / "memory.sqlite"
    result = run(str(path), "demo")
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def db(seeded: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "data 数据"
    folder.mkdir()
    path = folder / "memory.sqlite"
    shutil.copy(seeded, path)
    return path


def snapshot(url: str) -> dict[str, int]:
    store = open_store(url)
    try:
        return store.stats()
    finally:
        store.close()


def assert_refused(result: Result, before: dict[str, int], url: str) -> None:
    """Exit 1, one line on stderr naming the refusal, and the database unchanged."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to write" in lines[0], result.stderr
    assert "Traceback" not in result.output
    status = run(url, "status")
    assert status.exit_code == 0, status.output
    assert snapshot(url) == before


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_export_onto_the_database_or_its_journal_is_refused(
    db: Path, fmt: str, suffix: str
) -> None:
    before = snapshot(str(db))
    out = db.with_name(db.name + suffix)
    existed = out.exists()
    result = run(str(db), "export", "--format", fmt, "--force", "--out", str(out))
    assert_refused(result, before, str(db))
    assert out.exists() == existed


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_onto_a_folder_holding_the_database_is_refused(db: Path, fmt: str) -> None:
    before = snapshot(str(db))
    for out in (db.parent, db.parent.parent):
        result = run(str(db), "export", "--format", fmt, "--force", "--out", str(out))
        assert_refused(result, before, str(db))
    assert db.is_file()


@pytest.mark.parametrize("fmt", FORMATS)
def test_relative_symlinked_and_url_spellings_are_refused(
    db: Path, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(str(db))
    link = tmp_path / "link.sqlite"
    link.symlink_to(db)
    folder_link = tmp_path / "folder-link"
    folder_link.symlink_to(db.parent, target_is_directory=True)
    monkeypatch.chdir(db.parent)
    cases = [
        (str(db), "memory.sqlite"),  # relative --out
        (str(db), f"../{db.parent.name}/./memory.sqlite"),  # dots in --out
        (str(db), str(link)),  # a symlink to the database
        (str(db), str(folder_link)),  # a symlink to its folder
        ("memory.sqlite", str(db)),  # relative --db
        (f"sqlite://{db}", str(db)),  # sqlite:/// URL as --db
        (f"sqlite://{db}", str(db) + "-wal"),
        (str(link), str(db)),  # --db through a symlink
    ]
    for url, out in cases:
        result = run(url, "export", "--format", fmt, "--force", "--out", out)
        assert_refused(result, before, str(db))
    assert link.is_symlink() and folder_link.is_symlink()


@pytest.mark.skipif(not HAS_DUCKDB, reason="needs the duckdb extra")
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_duckdb_store_cannot_be_exported_onto_itself(db: Path, tmp_path: Path, fmt: str) -> None:
    store_file = tmp_path / "store.duckdb"
    made = run(str(db), "export", "--format", "duckdb", "--out", str(store_file))
    assert made.exit_code == 0, made.output
    url = f"duckdb://{store_file}"
    before = snapshot(url)
    for out in (store_file, Path(f"{store_file}.wal"), tmp_path):
        result = run(url, "export", "--format", fmt, "--force", "--out", str(out))
        assert_refused(result, before, url)


def test_without_force_the_refusal_is_the_same_line(db: Path) -> None:
    """The database is refused for what it is, not because it exists."""
    before = snapshot(str(db))
    result = run(str(db), "export", "--format", "jsonl", "--out", str(db))
    assert_refused(result, before, str(db))


def test_an_ordinary_export_beside_the_database_still_works(db: Path) -> None:
    out = db.parent / "memory.sqlite-export"
    result = run(str(db), "export", "--format", "jsonl", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "export.json").is_file()
    again = run(str(db), "export", "--format", "jsonl", "--force", "--out", str(out))
    assert again.exit_code == 0, again.output


def test_the_host_memory_export_command_refuses_the_database(db: Path) -> None:
    """`memory export FILE` inside DSH writes a path the user typed too."""
    before = snapshot(str(db))
    runtime = MemoryRuntime.open(str(db), load_config(None))
    try:
        session = runtime.store.list_sessions()[0].session_id
        for target in (str(db), str(db) + "-wal", str(db.parent)):
            result = runtime.command_result(session, ["export", target])
            assert not result.ok
            assert result.text.startswith("memory: refusing to write"), result.text
    finally:
        runtime.close()
    assert snapshot(str(db)) == before
    assert run(str(db), "status").exit_code == 0


def test_dsh_install_never_writes_over_the_database(tmp_path: Path) -> None:
    """A `--db` that names the profile's patch file is refused before anything is read."""
    home = tmp_path / "dsh"
    patch = home / "profiles" / "web" / "cordis.patch.yml"
    made = run(str(patch), "demo")
    assert made.exit_code == 0, made.output
    before = snapshot(str(patch))
    result = run(str(patch), "dsh", "install", "--dsh-home", str(home))
    assert_refused(result, before, str(patch))


def test_export_leaves_no_staging_file_when_refused(db: Path) -> None:
    run(str(db), "export", "--format", "jsonl", "--force", "--out", str(db))
    assert sorted(os.listdir(db.parent)) == sorted(
        p.name for p in db.parent.iterdir() if not p.name.startswith(".")
    )


def test_the_shown_url_is_absolute_with_three_slashes(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative `--db` or a URL with extra slashes is shown as `sqlite:///<absolute path>`."""
    monkeypatch.chdir(db.parent)
    for given in ("memory.sqlite", f"sqlite:///{db}", f"sqlite://///{str(db).lstrip('/')}"):
        result = run(given, "doctor", "--json")
        assert result.exit_code == 0, result.output
        assert f'"url": "sqlite://{db}"' in result.stdout
        assert "sqlite:////" not in result.stdout
