"""Run the reliability tests and print their figures as a Markdown section for docs/measurements.md.

    python tests/reliability/report.py            # default counts (a couple of minutes)
    python tests/reliability/report.py --full     # the large counts
    python -m tests.reliability.report --full     # the same, from the repository root

The figures are measured by the tests themselves (they write them to the file named by
`LCM_RELIABILITY_FIGURES`); this script only runs pytest and formats what came back.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RUN = "pytest tests/reliability"


def run_tests(full: bool, extra: list[str]) -> tuple[dict[str, Any], int, str]:
    """Run the folder; (figures file contents, pytest exit code, pytest's last line)."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "figures.json"
        env = dict(os.environ)
        env["LCM_RELIABILITY_FIGURES"] = str(target)
        if full:
            env["LCM_RELIABILITY_FULL"] = "1"
        command = [sys.executable, "-m", "pytest", "tests/reliability", "-q"]
        done = subprocess.run(
            [*command, "-p", "no:cacheprovider", *extra],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        last = lines[-1] if lines else done.stderr.strip()[-300:]
        data = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    return data, done.returncode, last


def _get(figures: dict[str, Any], key: str, field: str | None = None) -> Any:
    value = figures.get(key)
    if field is not None:
        value = value.get(field) if isinstance(value, dict) else None
    return "n/a" if value is None else value


def _cmd(full: bool, target: str) -> str:
    prefix = "LCM_RELIABILITY_FULL=1 " if full else ""
    return f"`{prefix}{RUN}/{target}`"


def render(data: dict[str, Any], code: int, last: str) -> str:
    """The Markdown section: one table row per figure, with the command behind it."""
    f = data.get("figures", {})
    full = bool(data.get("full"))
    outcomes: dict[str, str] = data.get("outcomes", {})
    tally = Counter(outcomes.values())
    crash, conc = f.get("crash", {}), f.get("concurrency", {})
    rows: list[tuple[str, str, str]] = []

    def add(name: str, value: Any, target: str) -> None:
        rows.append((name, str(value), _cmd(full, target)))

    add(
        "SIGKILLs survived (kills before a segment end)",
        f"{_get(f, 'crash', 'kills')} ({_get(f, 'crash', 'kills_before_segment_end')})",
        "test_rel_crash.py",
    )
    add(
        "acknowledged events / lost",
        f"{_get(f, 'crash', 'acknowledged')} / {_get(f, 'crash', 'acknowledged_lost')}",
        "test_rel_crash.py",
    )
    add(
        "integrity_check failures after kills",
        _get(f, "crash", "integrity_failures"),
        "test_rel_crash.py",
    )
    add(
        "full replay: events stored / expected; 2nd replay inserted",
        f"{crash.get('events_after_replay', 'n/a')} / {crash.get('stream_events', 'n/a')}; "
        f"{crash.get('second_replay_inserted', 'n/a')}",
        "test_rel_crash.py",
    )
    add(
        "concurrency: events stored / expected",
        f"{conc.get('events_stored', 'n/a')} / {conc.get('events_expected', 'n/a')} "
        f"({conc.get('writers', 'n/a')} writers x {conc.get('events_per_writer', 'n/a')})",
        "test_rel_concurrency.py",
    )
    add(
        "lock errors reaching callers",
        _get(f, "concurrency", "lock_errors_reaching_callers"),
        "test_rel_concurrency.py",
    )
    add(
        "assembly errors (reader assemblies)",
        f"{_get(f, 'concurrency', 'assembly_errors')} ({_get(f, 'concurrency', 'reader_assemblies')})",
        "test_rel_concurrency.py",
    )
    for key in sorted(k for k in f if k.startswith("hypothesis.")):
        name = key.removeprefix("hypothesis.").removesuffix(".examples")
        add(f"Hypothesis examples: {name}", f[key], "test_rel_hostile_*.py")
    hostile = [n for n in outcomes if "test_rel_hostile" in n or "test_rel_redact" in n]
    add(
        "property / hostile-input test failures",
        sum(outcomes[n] == "failed" for n in hostile),
        "test_rel_hostile_*.py",
    )
    add(
        "injection cases: became memory / quoted by default",
        f"{_get(f, 'injection.cases')}: {_get(f, 'injection.became_memory')} / {_get(f, 'injection.quoted_by_default')}",
        "test_rel_injection.py",
    )
    add(
        "forged labels passing as real (tool-output + user-typed cases)",
        f"{_get(f, 'injection.forged_labels_passed')} ({_get(f, 'injection.forged_label_cases')} + {_get(f, 'injection.user_forgery_cases')})",
        "test_rel_injection.py",
    )
    add(
        "damaged files: clear StoreOpenError + doctor exit != 0",
        f"{_get(f, 'damaged.clear_errors')} / {_get(f, 'damaged.cases')}",
        "test_rel_damaged_storage.py",
    )
    torn = f.get("damaged.torn_wal", {})
    add(
        "torn WAL copies opened healthy (rows kept)",
        f"{torn.get('cuts', 'n/a')} ({min(torn.get('rows_kept') or [0])}-{max(torn.get('rows_kept') or [0])})",
        "test_rel_damaged_storage.py",
    )
    for key, label in (
        ("damaged.full_tmpfs", "full tmpfs"),
        ("damaged.full_rlimit", "RLIMIT_FSIZE"),
    ):
        full_disk = f.get(key, {})
        add(
            f"{label}: writes refused / acknowledged lost / ingest exit",
            f"{full_disk.get('writes_refused', 'n/a')} / {full_disk.get('acknowledged_lost', 'n/a')} / {full_disk.get('ingest_exit', 'n/a')}",
            "test_rel_damaged_storage.py",
        )
    purge = f.get("private.purge", {})
    add(
        "purge 1 of 3 sessions: rows deleted / expected, still findable",
        f"{purge.get('rows_deleted', 'n/a')} / {purge.get('rows_expected', 'n/a')}, {purge.get('victim_rows_findable_after', 'n/a')}",
        "test_rel_private_data.py",
    )
    add(
        "file-mode violations (db, WAL, SHM, folder; 3 umasks)",
        _get(f, "private.mode_violations"),
        "test_rel_private_data.py",
    )
    add(
        "redaction: corpus secrets missed / ordinary texts changed",
        f"{_get(f, 'redaction.secrets_missed')} of {_get(f, 'redaction.secrets')} / {_get(f, 'redaction.ordinary_changed')} of {_get(f, 'redaction.ordinary')}",
        "test_rel_redact.py",
    )
    export = f.get("private.export_redaction", {})
    add(
        "`lcm export --redact`: secrets left",
        f"{export.get('missed', 'n/a')} of {export.get('secrets', 'n/a')}",
        "test_rel_private_data.py",
    )
    scripts = f.get("private.script_paths", {})
    add(
        "script paths outside scriptDir refused",
        f"{scripts.get('refused', 'n/a')} / {scripts.get('hostile', 'n/a')}",
        "test_rel_private_data.py",
    )

    mode = "full" if full else "default"
    lines = [
        "## Reliability",
        "",
        f"Measured by `tests/reliability` ({mode} counts; `python tests/reliability/report.py"
        f"{' --full' if full else ''}` reprints this table).",
        "",
        "| figure | value | reproduce |",
        "|---|---|---|",
        *(f"| {name} | {value} | {cmd} |" for name, value, cmd in rows),
        "",
        f"Tests: {dict(sorted(tally.items()))}; pytest exit {code}: {last}",
    ]
    known = sorted(n for n, o in outcomes.items() if o == "xfailed")
    if known:
        lines += ["", "Known bugs kept as strict xfails:", *(f"- `{n}`" for n in known)]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="run the large counts")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (e.g. -k crash)")
    args = parser.parse_args()
    data, code, last = run_tests(args.full, args.pytest_args)
    print(render(data, code, last))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
