"""The real Claude Code CLI, installed from npm into a cache folder, run against the fake server.

`install_cli` runs `npm install @anthropic-ai/claude-code@VERSION` into a folder of its
own (never a global install) and reuses it while `claude --version` says VERSION. A
`Home` is one user: a temporary HOME holding `~/.claude`, set up the way
docs/claude-code.md tells people to (`lcm claude install`), and project folders in it.
`Home.run` is one `claude -p` process; every environment variable it sees is set here,
so nothing of the machine's own Claude Code settings, or its network, is used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropic

VERSION = "2.1.328"
PACKAGE = f"@anthropic-ai/claude-code@{VERSION}"
RUN_SECONDS = 180  # an upper bound for a slow machine, never a measured expectation
# A request size past the blocking limit of the pinned CLI's default model (a 1M-token
# window): after a reply reporting it, Claude Code compacts before its next request.
# (`CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000` with 195 000 was tried: 2.1.328 judges the
# fixed prefix too large for compaction to help and sends the request as it is.)
NEAR_FULL = 995_000


class CliUnavailable(RuntimeError):
    """npm is there but the CLI could not be installed or run; the message says why."""


def npm() -> str | None:
    return shutil.which("npm")


def install_cli(cache: Path) -> Path:
    """The `claude` executable of PACKAGE under `cache`, installed there when missing."""
    exe = cache / "node_modules" / ".bin" / "claude"
    if _version(exe) == VERSION:
        return exe
    cache.mkdir(parents=True, exist_ok=True)
    command = [str(npm()), "install", "--prefix", str(cache), "--no-save", "--no-audit"]
    done = subprocess.run(
        [*command, "--no-fund", PACKAGE],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise CliUnavailable(f"npm install {PACKAGE} failed: {done.stderr.strip()[-600:]}")
    found = _version(exe)
    if found != VERSION:
        raise CliUnavailable(f"{exe} --version gave {found!r}, expected {VERSION}")
    return exe


def _version(exe: Path) -> str | None:
    if not exe.exists():
        return None
    try:
        done = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError:
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


def lcm_executable() -> str:
    """The `lcm` of the Python running the tests (tox's env, or the checkout's venv)."""
    beside = Path(sys.executable).parent / "lcm"
    if not beside.exists():
        raise CliUnavailable(f"no lcm beside {sys.executable}; install the project first")
    return str(beside)


@dataclass(frozen=True, slots=True)
class Run:
    """One finished `claude` process."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Home:
    """One user of Claude Code with lcm installed: a HOME, its projects and the fake model."""

    root: Path
    exe: Path
    model: FakeAnthropic
    env_extra: dict[str, str] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def claude_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def db(self) -> Path:
        """Where docs/claude-code.md says a Claude-Code-only user's memory lives."""
        return self.claude_dir / "long-conversation-memory" / "memory.sqlite"

    def project(self, name: str) -> Path:
        folder = self.root / "work" / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": os.pathsep.join(("/usr/local/bin", "/usr/bin", "/bin")),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake-e2e",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # lcm's warm hook server leaves soon after the test's last prompt.
            "LCM_HOOK_SERVER_IDLE": os.environ.get("LCM_HOOK_SERVER_IDLE", "60"),
            **self.env_extra,
        }

    def install_lcm(self) -> subprocess.CompletedProcess[str]:
        """`lcm claude install`, exactly as docs/claude-code.md has a user run it."""
        self.claude_dir.mkdir(parents=True, exist_ok=True)  # Claude Code's own folder
        return subprocess.run(
            [lcm_executable(), "claude", "install"],
            env=self.env(),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=RUN_SECONDS,
            check=False,
        )

    def run(self, project: Path, prompt: str, *flags: str) -> Run:
        """`claude -p [flags] PROMPT` in a project folder; fails the test on a non-zero exit."""
        args = (str(self.exe), "-p", *flags, prompt)
        done = subprocess.run(
            args,
            cwd=project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=RUN_SECONDS,
            check=False,
        )
        run = Run(args[1:], done.returncode, done.stdout, done.stderr)
        self.runs.append(run)
        if done.returncode != 0:
            raise AssertionError(
                f"claude {' '.join(args[1:])} exited {done.returncode}: {done.stderr}"
            )
        return run

    def live(self, project: Path) -> Live:
        """One `claude` process taking prompts as stream-json, as an interactive session does."""
        args = [str(self.exe), "-p", "--input-format", "stream-json"]
        args += ["--output-format", "stream-json", "--verbose"]
        process = subprocess.Popen(
            args,
            cwd=project,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return Live(process)

    def transcripts(self, project: Path) -> list[Path]:
        """The project's session transcripts, oldest first."""
        folder = self.claude_dir / "projects" / _project_folder(project)
        return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)

    def stop_servers(self) -> None:
        """Send lcm's warm hook servers away: each leaves when its socket file is gone."""
        for sock in self.db.parent.glob(".lcm-hooks-*.sock"):
            sock.unlink(missing_ok=True)

    def hook_log(self) -> str:
        path = self.db.parent / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@dataclass
class Live:
    """A running `claude` that takes one prompt at a time on stdin."""

    process: subprocess.Popen[str]
    results: list[dict[str, Any]] = field(default_factory=list)

    def say(self, prompt: str) -> dict[str, Any]:
        """Send a prompt and wait for its result line (the turn is over then)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        line = {"type": "user", "message": {"role": "user", "content": prompt}}
        self.process.stdin.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        for raw in self.process.stdout:
            value = json.loads(raw)
            if value.get("type") == "result":
                self.results.append(value)
                return dict(value)
        raise AssertionError(f"claude ended before answering: {self.close()}")

    def close(self) -> str:
        """End the session (stdin closed) and return what it wrote on stderr."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.stdin = None  # closed: communicate must not flush it
        _, stderr = self.process.communicate(timeout=RUN_SECONDS)
        return stderr


def _project_folder(project: Path) -> str:
    """Claude Code's folder name for a project: its path with all but ASCII letters and digits dashes."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))


def transcript_lines(path: Path) -> Iterator[dict[str, Any]]:
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            value = json.loads(raw)
            if isinstance(value, dict):
                yield value


# The notice marks an old value in the block's language.
OLD_MARKERS = ("旧值", "old value")
# The correction's own words, which may name the old port as what it is not.
NOT_THE_OLD_PORT = re.compile(r"not 6432|不是 ?6432")


def assert_carries_what_the_user_set(request: str) -> None:
    """Budget with 含税, the latency limit with its condition, the new port; old one marked."""
    assert "预算不超过3000元（含税）" in request
    assert "/invoices" in request and "180 ms" in request
    assert "when the cache is warm" in request
    assert "5433" in request
    for line in request.splitlines():
        if "6432" in line and not any(m in line for m in OLD_MARKERS):
            assert NOT_THE_OLD_PORT.sub("", line).count("6432") == 0, line


def our_blocks(transcripts: Iterable[Path]) -> list[str]:
    """Every block lcm's hooks returned, as Claude Code kept them in its transcripts."""
    from lcm_adapter.claude.lines import OWN_HEADERS

    blocks: list[str] = []
    for path in transcripts:
        for line in transcript_lines(path):
            attachment = line.get("attachment") or {}
            if attachment.get("type") == "hook_additional_context":
                content = attachment.get("content") or []
                blocks.extend(str(c) for c in content if str(c).startswith(OWN_HEADERS))
    return blocks
