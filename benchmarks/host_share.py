"""How often DSH compacts with and without the memory plugin, per host share and threshold.

The same scripted session (`tests/e2e/host_prompts.py`: a goal, a budget, a latency
limit, a corrected port, then many files of one shape, questions about what was set,
and a switch from English to Chinese halfway) runs on the real DSH runtime (profile
sdk-minimal, a fake model on 127.0.0.1) with DSH's compaction threshold lowered to a
few thousand tokens: once without the plugin, once with it for each `assembly.hostShare`.
Share 0 is the fixed budget (`assembly.softBudgetTokens`); a share s makes the block's
budget s x the threshold DSH reports, never below `assembly.minBudgetTokens`. Printed per threshold and share:
compactions without and with memory, their ratio, the turns that got a block and the
mean budget and tokens of the injected blocks (from the assembly log).

Needs the `e2e` extra (deepseek-harness-sdk and deepseek-harness-runtime-bin).

    python benchmarks/host_share.py
    python benchmarks/host_share.py --turns 70 --thresholds 3000,2000 --shares 0,0.1,0.2
    python benchmarks/host_share.py --rules 6 --short-replies
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from statistics import mean
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))  # the e2e helpers and prompts

from dsh_session import DshSession, compaction_rows  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from host_prompts import REPLY, filler_prompts, prompts  # noqa: E402


def run(
    root: Path,
    cache: Path,
    threshold: int,
    share: float | None,
    texts: list[str],
    reply: str,
) -> dict[str, Any]:
    """One session; `share` None runs DSH without the plugin."""
    model = FakeModel(default_text=reply).start() if reply else FakeModel().start()
    settings = None if share is None else {"assembly": {"hostShare": share}}
    session = DshSession(root, model, settings, compaction_rows(threshold), share is not None)
    try:
        session.start(cache)
        compactions = session.compactions(texts)
    finally:
        session.close()
        model.stop()
    row: dict[str, Any] = {"compactions": compactions, "blocks": 0, "budget": 0.0, "used": 0.0}
    if share is not None:
        runtime = session.runtime()
        try:
            logs = runtime.store.list_assembly_logs(session.session.id, limit=1000)
        finally:
            runtime.close()
        injected = [log for log in logs if log.injected]
        row["blocks"] = len(injected)
        if injected:
            row["budget"] = mean(log.budget_tokens for log in injected)
            row["used"] = mean(log.used_tokens for log in injected)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=70)
    parser.add_argument("--thresholds", default="3000,2000", help="DSH thresholds in tokens")
    parser.add_argument("--shares", default="0,0.1,0.2", help="assembly.hostShare values")
    parser.add_argument(
        "--rules", type=int, default=0, help="standing rules set after the first five turns (0-6)"
    )
    parser.add_argument(
        "--filler",
        action="store_true",
        help="the compaction-survival test's script instead: four turns that set values, "
        "then chatter",
    )
    parser.add_argument(
        "--short-replies",
        action="store_true",
        help="the fake model's seven-character reply instead of a few sentences",
    )
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    args = parser.parse_args()
    thresholds = [int(t) for t in args.thresholds.split(",")]
    shares = [float(s) for s in args.shares.split(",")]
    cache = Path(
        os.environ.get("PKG_NATIVE_CACHE_PATH") or Path(tempfile.gettempdir()) / "lcm-pkg-cache"
    )
    cache.mkdir(parents=True, exist_ok=True)
    reply = "" if args.short_replies else REPLY
    kind = "seven-character replies" if args.short_replies else f"{len(REPLY)}-character replies"
    texts = filler_prompts(args.turns) if args.filler else prompts(args.turns, args.rules)
    script = "4 setting turns, then filler" if args.filler else f"{args.rules} more rules"
    print(f"{args.turns} turns per session (tests/e2e/host_prompts.py, {script}), {kind}")
    print(
        f"{'threshold':>9} {'share':>6} {'off':>4} {'on':>4} {'on/off':>7}"
        f" {'blocks':>7} {'budget':>7} {'used':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="lcm-host-share-") as scratch:
        base = args.keep or Path(scratch)
        for threshold in thresholds:
            off = run(base / f"t{threshold}-off", cache, threshold, None, texts, reply)
            for share in shares:
                on = run(base / f"t{threshold}-s{share}", cache, threshold, share, texts, reply)
                ratio = on["compactions"] / off["compactions"] if off["compactions"] else 0.0
                print(
                    f"{threshold:>9} {share:>6.2f} {off['compactions']:>4} {on['compactions']:>4}"
                    f" {ratio:>7.2f} {on['blocks']:>7} {on['budget']:>7.0f} {on['used']:>6.0f}"
                )


if __name__ == "__main__":
    main()
