"""What lcm's hooks add to the real Claude Code CLI, per prompt and per hook call.

Four users of the pinned CLI (the one `tox -e e2e-claude` installs, see
tests/e2e_claude) talk to one fake Anthropic server on 127.0.0.1: `plain` has no hooks,
`noop` has the same four hooks running `cat >/dev/null` (what Claude Code itself spends
on running any hook), `lcm` has lcm's as `lcm claude install` writes them, and
`lcm-cold` the same with the warm hook server off (`LCM_HOOK_SERVER=0`: every hook
loads lcm in its own process). Each works in its own project and session and all get
the same prompts, a mixed
Chinese/English session (a budget, a latency limit, a corrected port, then work), one
`claude -p --continue` each, the three in a rotating order every round so machine noise
lands on all of them. The first prompt of each arm (a new session, and for `lcm` the
start of its warm server) is shown apart.

Per prompt, the added time is the arm's time minus `plain`'s in the same round; per
hook call, that divided by the hook calls a prompt makes (SessionStart, UserPromptSubmit,
Stop, SessionEnd: 4). Targets: p50 <= 200 ms and p95 <= 350 ms per hook call. The last
column is lcm's own share: the arm's time minus `noop`'s, per hook call.

Then each hook event is timed alone, as Claude Code runs it (`/bin/sh -c` with the
command from the settings file, the event's JSON on stdin), on the `lcm` user's
database and transcript, with the warm server and without, interleaved.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e_claude"))  # the CLI and fake server the tests use

from claude_code import Home, install_cli, npm  # noqa: E402
from fake_anthropic import FakeAnthropic  # noqa: E402

HOOKS_PER_PROMPT = 4
SETUP = (
    "这个项目的预算不超过3000元（含税）。",
    "The p95 latency of /invoices must stay under 180 ms when the cache is warm.",
    "The staging database listens on port 6432.",
    "Correction: the staging database listens on port 5433, not 6432.",
)
WORK = (
    "继续，看看下一个文件。",
    "Let's look at the parser next.",
    "预算还剩多少？",
    "Which port does staging use?",
    "好的，下一步写测试。",
    "Now refactor the invoice exporter.",
)
EVENT_RUNS = 15


def _prompts(count: int) -> list[str]:
    work = [WORK[i % len(WORK)] for i in range(max(0, count - len(SETUP)))]
    return [*SETUP, *work][:count]


def _pct(values: list[float], q: int) -> float:
    """The q-th percentile (nearest rank), in ms."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index] * 1000


def _timed(home: Home, project: Path, prompt: str, first: bool) -> float:
    start = time.perf_counter()
    home.run(project, prompt, *(() if first else ("--continue",)))
    return time.perf_counter() - start


def _hook_command(home: Home, event: str) -> str:
    settings = json.loads((home.claude_dir / "settings.json").read_text(encoding="utf-8"))
    return str(settings["hooks"][event][0]["hooks"][0]["command"])


def _noop_hooks(noop: Home, like: Home) -> None:
    """The same hook events as `like`, each running a command that only reads its stdin."""
    settings = json.loads((like.claude_dir / "settings.json").read_text(encoding="utf-8"))
    group = [{"hooks": [{"type": "command", "command": "cat >/dev/null"}]}]
    noop.claude_dir.mkdir(parents=True, exist_ok=True)
    hooks = {event: group for event in settings["hooks"]}
    (noop.claude_dir / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")


def _time_events(home: Home, project: Path) -> dict[str, dict[str, list[float]]]:
    """Each hook event alone, warm server and cold, interleaved; seconds per call."""
    transcript = home.transcripts(project)[-1]
    base = {"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(project)}
    events = {
        "SessionStart": {"source": "resume"},
        "UserPromptSubmit": {"prompt": "预算和 staging 端口是多少？and the p95 limit?"},
        "PreCompact": {"trigger": "auto", "custom_instructions": None},
        "Stop": {"stop_hook_active": False},
        "SessionEnd": {"reason": "other"},
    }
    times: dict[str, dict[str, list[float]]] = {e: {"warm": [], "cold": []} for e in events}
    env = {**home.env(), "LCM_HOOK_SERVER_IDLE": "60"}
    for _ in range(EVENT_RUNS):
        for event, extra in events.items():
            payload = json.dumps({**base, "hook_event_name": event, **extra}, ensure_ascii=False)
            for arm, switch in (("warm", "1"), ("cold", "0")):
                start = time.perf_counter()
                subprocess.run(
                    ["/bin/sh", "-c", _hook_command(home, event)],
                    input=payload.encode("utf-8"),
                    env={**env, "LCM_HOOK_SERVER": switch},
                    cwd=project,
                    capture_output=True,
                    check=True,
                )
                times[event][arm].append(time.perf_counter() - start)
    return times


def run(prompts: int, cache: Path) -> None:
    if npm() is None:
        raise SystemExit("npm is not installed: the Claude Code CLI cannot be installed")
    exe = install_cli(cache)
    model = FakeAnthropic().start()
    with tempfile.TemporaryDirectory(prefix="lcm-claude-bench-") as tmp:
        arms = {
            "plain": Home(Path(tmp) / "plain", exe, model),
            "noop": Home(Path(tmp) / "noop", exe, model),
            "lcm": Home(Path(tmp) / "lcm", exe, model),
            "lcm-cold": Home(Path(tmp) / "cold", exe, model, {"LCM_HOOK_SERVER": "0"}),
        }
        for name in ("lcm", "lcm-cold"):
            done = arms[name].install_lcm()
            if done.returncode != 0:
                raise SystemExit(f"lcm claude install failed: {done.stderr}")
        _noop_hooks(arms["noop"], arms["lcm"])
        projects = {name: home.project("invoices") for name, home in arms.items()}
        times: dict[str, list[float]] = {name: [] for name in arms}
        order = list(arms)
        try:
            for index, prompt in enumerate(_prompts(prompts)):
                for name in order:
                    times[name].append(_timed(arms[name], projects[name], prompt, index == 0))
                order = order[1:] + order[:1]  # rotate who goes first
            events = _time_events(arms["lcm"], projects["lcm"])
        finally:
            for home in arms.values():
                home.stop_servers()
            model.stop()
    _report(times, events, prompts)


def _report(
    times: dict[str, list[float]], events: dict[str, dict[str, list[float]]], n: int
) -> None:
    plain, noop = times["plain"][1:], times["noop"][1:]
    own = statistics.median(plain)
    print(f"claude -p --continue, {n} prompts per arm (the first, a new session, apart); ms")
    heads = ("p50", "p95", "x plain", "added p50", "added p95", "/hook p50", "/hook p95")
    print(f"{'arm':<9}" + "".join(f"{h:>10}" for h in (*heads, "lcm /hook", "first")))
    for name, values in times.items():
        rest = values[1:]
        cells = [_pct(rest, 50), _pct(rest, 95), statistics.median(rest) / own]
        if name != "plain":
            added = [a - b for a, b in zip(rest, plain, strict=True)]
            per = [a / HOOKS_PER_PROMPT for a in added]
            # lcm's own share: beyond what Claude Code spends on running any hook.
            mine = [(a - b) / HOOKS_PER_PROMPT for a, b in zip(rest, noop, strict=True)]
            cells += [_pct(added, 50), _pct(added, 95), _pct(per, 50), _pct(per, 95)]
            cells += [_pct(mine, 50), (values[0] - times["plain"][0]) * 1000]
        row = "".join(f"{c:10.2f}" if k == 2 else f"{c:10.0f}" for k, c in enumerate(cells))
        print(f"{name:<9}{row}")
    print(f"\neach hook event alone ({EVENT_RUNS} runs, /bin/sh -c as Claude Code runs it); ms")
    print(
        f"{'event':<18}"
        + "".join(f"{h:>10}" for h in ("warm p50", "warm p95", "cold p50", "cold p95"))
    )
    for event, arms in events.items():
        warm, cold = arms["warm"], arms["cold"]
        cells = (_pct(warm, 50), _pct(warm, 95), _pct(cold, 50), _pct(cold, 95))
        print(f"{event:<18}" + "".join(f"{c:10.0f}" for c in cells))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average {load} on {os.cpu_count()} cores")
