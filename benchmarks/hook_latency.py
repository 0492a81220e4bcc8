"""Wall time of `lcm hook user-prompt-submit` on the demo database, before and after a change.

Each variant is a source tree put first on PYTHONPATH (the working tree, and e.g. an
earlier commit unpacked with `git archive`), with its own demo database made by its own
`lcm demo` (an older tree may not open a newer schema). Each tree is byte-compiled first
(`compileall`), as pip does on install: with PYTHONDONTWRITEBYTECODE set and no
`__pycache__`, every run would compile lcm's sources again (~130 ms here) and time the
compiler instead of the hook. Runs are interleaved: each round
times the floor (`python -c pass`, the interpreter's own start-up), then every variant
once, each a fresh process fed the same hook payload on stdin. The table shows p50 and
p90 over the rounds and each variant's p50 over the floor's.

An editable install puts a finder on `sys.meta_path` that maps `lcm_core` to the checkout
whatever PYTHONPATH says, so a variant run plainly would time the working tree again. Each
variant therefore runs with `python -S` (no site processing, so no finder) and PYTHONPATH set
to its tree then site-packages, beside a floor of `python -S -c pass`; the row `installed`
is the command as a user runs it (the installed `lcm`, with site), beside `python -c pass`.
Every process starts in the temporary folder: `python -c` puts its working folder first on
sys.path, and from the checkout that would shadow every variant again.

    git archive 1e5a1a9 | tar -x -C /tmp/lcm_before
    python benchmarks/hook_latency.py --variant before=/tmp/lcm_before --runs 21

Every row runs the hook in its own process (`LCM_HOOK_SERVER=0`) but `warm`: the
installed command asking the warm hook server of its database, started before timing.

`--claude` times what the hooks add to the real Claude Code CLI instead
(`benchmarks/claude_hook_latency.py`): the same prompts through `claude -p --continue`
with and without lcm's hooks, in the same run, beside the CLI's own time.

    python benchmarks/hook_latency.py --claude --prompts 30
"""

from __future__ import annotations

import argparse
import json
import os
import site
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"  # the demo session
PAYLOAD = json.dumps(
    {
        "session_id": SESSION,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port did we settle on, and what is the budget? 预算上限是多少？",
    },
    ensure_ascii=False,
).encode("utf-8")
# The console command's entry; trees before `lcm_adapter.entry` existed used the CLI's.
ENTRY = (
    "try:\n    from lcm_adapter.entry import main\n"
    "except ImportError:\n    from lcm_adapter.cli.main import main\nmain()"
)


def _env(tree: Path | None, server: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LCM_", "DSH_"))}
    env.pop("PYTHONPATH", None)
    # The hook in its own process; only the `warm` row asks the warm hook server.
    env["LCM_HOOK_SERVER"] = "1" if server else "0"
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *site.getsitepackages()])
    return env


def _lcm(tree: Path | None, *args: str, stdin: bytes = b"", server: bool = False) -> float:
    """Seconds one `lcm` process took, start to exit; fails loudly on a non-zero exit.

    `tree=None` is the installed command as a user runs it; a tree runs without site."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *(() if tree is None else ("-S",)), "-c", ENTRY, *args],
        input=stdin,
        env=_env(tree, server),
        # Not from the checkout: `python -c` puts the working folder first on sys.path.
        cwd=tempfile.gettempdir(),
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: lcm {' '.join(args)} failed: {done.stderr.decode()[-300:]}")
    return elapsed


def _start_server(db: str) -> None:
    """Have the `warm` row's server up before timing (its first call starts it)."""
    from lcm_adapter.claude import client

    path = client.socket_path(db, None)
    if path is None:
        raise SystemExit(f"no socket beside {db}")
    _lcm(None, "--db", db, "hook", "stop", stdin=PAYLOAD, server=True)
    deadline = time.monotonic() + 60
    while client.ask(path, client.request("stop", db, None, PAYLOAD, True)) is None:
        if time.monotonic() > deadline:
            raise SystemExit("the warm hook server did not start")
        time.sleep(0.2)


def _floor(*flags: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="another source tree to time beside the working tree (repeatable)",
    )
    parser.add_argument("--runs", type=int, default=21, help="interleaved rounds")
    parser.add_argument(
        "--claude",
        action="store_true",
        help="time the hooks inside the real Claude Code CLI instead (needs npm)",
    )
    parser.add_argument("--prompts", type=int, default=30, help="--claude: prompts per arm")
    parser.add_argument(
        "--claude-cache",
        type=Path,
        default=ROOT / ".tox" / "claude-code",
        help="--claude: where the pinned CLI is installed with npm (kept between runs)",
    )
    args = parser.parse_args()
    if args.claude:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from claude_hook_latency import run as run_claude

        run_claude(args.prompts, args.claude_cache)
        return
    trees: dict[str, Path | None] = {"installed": None, "warm": None, "now": ROOT}
    for spec in args.variant:
        name, _, folder = spec.partition("=")
        trees[name] = Path(folder).resolve()
    for tree in {ROOT, *(t for t in trees.values() if t is not None)}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {}
        for name, tree in trees.items():
            dbs[name] = str(Path(tmp) / f"{name}.sqlite")
            _lcm(tree, "--db", dbs[name], "demo")
            _lcm(tree, "--db", dbs[name], "hook", "user-prompt-submit", stdin=PAYLOAD)  # warm
        _start_server(dbs["warm"])
        times: dict[str, list[float]] = {"floor": [], "floor -S": [], **{n: [] for n in trees}}
        for _ in range(args.runs):
            times["floor"].append(_floor())
            times["floor -S"].append(_floor("-S"))
            for name, tree in trees.items():
                hook = ("--db", dbs[name], "hook", "user-prompt-submit")
                times[name].append(_lcm(tree, *hook, stdin=PAYLOAD, server=name == "warm"))
        for sock in Path(tmp).glob(".lcm-hooks-*.sock"):
            sock.unlink()  # the warm server leaves
    print(f"{'variant':<10} {'p50 ms':>8} {'p90 ms':>8} {'p50/floor':>10}   ({args.runs} rounds)")
    for name, values in times.items():
        plain = name in ("floor", "installed", "warm")
        floor = statistics.median(times["floor" if plain else "floor -S"])
        p50 = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else p50
        print(f"{name:<10} {p50 * 1000:8.0f} {p90 * 1000:8.0f} {p50 / floor:10.2f}")


if __name__ == "__main__":
    main()
