"""Mutation run of a storage backend against its tests: how many small bugs the suite catches.

Usage: python benchmarks/mutation_run.py --backend sqlite|duckdb [--sample 200] [--seed 22]
       [--timeout 180] [--files store.py,search.py] [--only KEYS|OUT.json] [--list] [--json OUT]
       python benchmarks/mutation_run.py --summarize OUT.json [RERUN.json ...]

The tracked (and untracked, not ignored) files of the checkout are copied to a temporary
folder once; the backend's tests run there once under a line tracer
(`mutation_trace.py`) to learn which tests run which lines. Then each sampled mutant
(`mutation_ops.py`: Python and SQL-string changes) is written into the copy alone and
the tests that run its statement are run with `-x` and a timeout. A mutant is killed
when they fail (or time out), survives when they pass, and is "uncovered" when no test
runs its statement. The checkout itself is never modified.

The score leaves out the mutants listed in `benchmarks/mutation_equivalents.md`
(equivalent: no observable behaviour changes), each with its reason there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from mutation_ops import Mutant, column_map, mutants, statement_lines

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
EQUIVALENTS = HERE / "mutation_equivalents.md"

BACKENDS: dict[str, dict[str, list[str] | str]] = {
    "sqlite": {
        "package": "lcm_store_sqlite",
        "files": ["records.py", "store.py", "search.py"],
        "tests": ["tests/store_sqlite"],
    },
    "duckdb": {
        "package": "lcm_store_duckdb",
        "files": ["admin.py", "events.py", "records.py", "search.py", "store.py", "undo.py"],
        "tests": ["tests/store_duckdb"],
    },
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the tests did to one mutant."""

    key: str
    line: int
    old: str
    new: str
    status: str  # killed | timeout | survived | uncovered
    tests: int
    seconds: float


def copy_checkout(target: Path) -> None:
    """Copy the checkout's tracked and untracked-but-not-ignored files to `target`."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def test_env(copy: Path) -> dict[str, str]:
    """The environment a test run in the copy gets: the copy's packages first, no .pyc."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy), str(HERE)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def pytest_args(tests: list[str]) -> list[str]:
    """Options and tests of a quiet pytest run that stops at the first failure.

    The store tests use no Hypothesis; loading its plugin took longer than most runs.
    """
    return ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *tests]


class Worker:
    """The fork server (`mutation_worker.py`) running in the copy."""

    def __init__(self, copy: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "mutation_worker.py")],
            cwd=copy,
            env=test_env(copy),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._read()

    def _read(self) -> dict[str, object]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            sys.exit("the mutation worker stopped")
        answer: dict[str, object] = json.loads(line)
        return answer

    def run(self, tests: list[str], timeout: float) -> int | None:
        """Exit code of the tests, or None after `timeout` seconds."""
        assert self.process.stdin is not None
        request = {"args": pytest_args(tests), "timeout": timeout}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        code = self._read()["code"]
        return None if code is None else int(str(code))

    def close(self) -> None:
        """End the worker."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def trace(copy: Path, files: list[Path], tests: list[str]) -> dict[str, dict[int, list[str]]]:
    """Run the tests once under the tracer; path -> line -> the tests that ran it."""
    out = copy / "mutation_trace.json"
    env = test_env(copy)
    env["LCM_TRACE_FILES"] = os.pathsep.join(str(f) for f in files)
    env["LCM_TRACE_OUT"] = str(out)
    argv = [sys.executable, "-m", "pytest", *pytest_args(tests), "-p", "mutation_trace"]
    done = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the unmutated tests fail; fix them first:\n{done.stdout[-3000:]}")
    raw = json.loads(out.read_text())
    return {path: {int(line): ids for line, ids in lines.items()} for path, lines in raw.items()}


def equivalent_keys() -> set[str]:
    """Keys of mutants judged equivalent, from the first column of the equivalents table."""
    if not EQUIVALENTS.exists():
        return set()
    return set(re.findall(r"^\| `([^`]+)` \|", EQUIVALENTS.read_text(), re.M))


def run_one(
    mutant: Mutant,
    copy: Path,
    source: str,
    lines: dict[int, list[str]],
    all_tests: list[str],
    weight: dict[str, int],
    worker: Worker,
    timeout: float,
    full_seconds: float,
) -> Outcome:
    """Apply one mutant in the copy, run the tests of its statement, restore the file."""
    span, in_function = statement_lines(source, mutant.line)
    if in_function:
        # The most specific tests first (fewest traced lines): they run fastest and are
        # the likeliest to fail, and -x stops at the first failure.
        chosen = {t for line in span for t in lines.get(line, [])}
        selected = sorted(chosen, key=lambda test: (weight.get(test, 0), test))
    else:
        selected = list(all_tests)  # runs at import: every test depends on it
        # The whole suite: a timeout here means a slow machine, not a hung mutant.
        timeout = max(timeout, 2 * full_seconds)
    if not selected:
        return Outcome(mutant.key, mutant.line, mutant.old, mutant.new, "uncovered", 0, 0.0)
    target = copy / mutant.path
    target.write_text(mutant.apply(source), encoding="utf-8")
    start = time.perf_counter()
    try:
        code = worker.run(selected, timeout)
        status = "timeout" if code is None else "survived" if code == 0 else "killed"
    finally:
        target.write_text(source, encoding="utf-8")
    seconds = time.perf_counter() - start
    return Outcome(mutant.key, mutant.line, mutant.old, mutant.new, status, len(selected), seconds)


def summary(outcomes: list[Outcome], equivalent: set[str]) -> dict[str, object]:
    """Counts and the score over the non-equivalent mutants."""
    counted = [o for o in outcomes if o.key not in equivalent]
    killed = sum(1 for o in counted if o.status in ("killed", "timeout"))
    return {
        "mutants": len(outcomes),
        "equivalent": len(outcomes) - len(counted),
        "killed": killed,
        "survived": [o.key for o in counted if o.status in ("survived", "uncovered")],
        "score": round(killed / len(counted), 3) if counted else None,
        "raw_score": round(killed / len(outcomes), 3) if outcomes else None,
    }


def _stop(signum: int, frame: object) -> None:
    """Turn SIGTERM into an exit that still removes the temporary copy."""
    raise SystemExit(f"stopped by signal {signum}")


def main() -> None:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(BACKENDS))
    parser.add_argument(
        "--summarize",
        nargs="+",
        type=Path,
        help="print the score of earlier --json files (a later file's outcome wins) and stop",
    )
    parser.add_argument("--sample", type=int, default=200, help="mutants to run (0: all)")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per mutant")
    parser.add_argument("--files", help="comma-separated file names inside the package")
    parser.add_argument(
        "--only",
        help="run just these mutants: comma-separated keys, or those a --json file did not kill",
    )
    parser.add_argument("--list", action="store_true", help="print the sample and stop")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    args = parser.parse_args()
    if args.summarize:
        merged: dict[str, Outcome] = {}
        for path in args.summarize:
            for raw in json.loads(path.read_text())["outcomes"]:
                merged[raw["key"]] = Outcome(**raw)
        print(json.dumps(summary(list(merged.values()), equivalent_keys()), indent=2))
        return
    if args.backend is None:
        parser.error("--backend is required")

    config = BACKENDS[args.backend]
    package = str(config["package"])
    names = args.files.split(",") if args.files else list(config["files"])
    tables = column_map((ROOT / package / "schema.py").read_text())
    sources = {f"{package}/{name}": (ROOT / package / name).read_text() for name in names}
    every = sorted(
        (m for path, text in sources.items() for m in mutants(path, text, tables)),
        key=lambda m: (m.path, m.start, m.key),
    )
    chosen = every if args.sample <= 0 else random.Random(args.seed).sample(every, args.sample)
    if args.only:
        wanted = set(args.only.split(","))
        if Path(args.only).is_file():
            earlier = json.loads(Path(args.only).read_text())["outcomes"]
            wanted = {o["key"] for o in earlier if o["status"] != "killed"}
        chosen = [m for m in every if m.key in wanted]
    chosen.sort(key=lambda m: (m.path, m.start, m.key))
    print(f"{len(every)} mutants in {', '.join(sources)}; running {len(chosen)} (seed {args.seed})")
    if args.list:
        for m in chosen:
            print(f"{m.key}  line {m.line}: {m.old!r} -> {m.new!r}")
        return

    equivalent = equivalent_keys()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="lcm-mutation-") as folder:
        copy = Path(folder)
        copy_checkout(copy)
        tests = list(config["tests"])
        started = time.perf_counter()
        lines_by_file = trace(copy, [copy / path for path in sources], tests)
        full_seconds = time.perf_counter() - started
        print(f"traced the tests in {full_seconds:.0f} s")
        weight: dict[str, int] = {}
        for by_line in lines_by_file.values():
            for ids in by_line.values():
                for test in ids:
                    weight[test] = weight.get(test, 0) + 1
        worker = Worker(copy)
        for i, mutant in enumerate(chosen, 1):
            lines = lines_by_file.get(str(copy / mutant.path), {})
            outcome = run_one(
                mutant,
                copy,
                sources[mutant.path],
                lines,
                tests,
                weight,
                worker,
                args.timeout,
                full_seconds,
            )
            outcomes.append(outcome)
            mark = " (equivalent)" if mutant.key in equivalent else ""
            print(
                f"[{i}/{len(chosen)}] {outcome.status:9} {outcome.seconds:5.1f}s "
                f"{mutant.key} line {mutant.line}: {mutant.old!r} -> {mutant.new!r}{mark}",
                flush=True,
            )
        worker.close()
    result = summary(outcomes, equivalent)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        payload = {"backend": args.backend, "seed": args.seed, "summary": result}
        payload["outcomes"] = [asdict(o) for o in outcomes]
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
