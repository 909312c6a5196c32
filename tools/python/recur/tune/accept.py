"""Acceptance (--accept-seeds): best.yaml trained on seeds the study never saw, each final
evaluation against the target (docs/TUNING.md, "An honest protocol")."""

from __future__ import annotations

import json
import pathlib
import subprocess
from typing import Any

from .runner import Runner, read_eval_rows
from .settings import Settings


def env_threshold(runner: Runner, base: dict[str, Any]) -> float | None:
    """The env's registered reward threshold (`recur envs --json`), recur's default target."""
    cmd = [runner.recur, "--log-level", "error", "envs", "--json"]
    for p in runner.plugins:
        cmd += ["--plugin", p]
    res = subprocess.run(cmd, capture_output=True, text=True)
    for line in res.stdout.splitlines() if res.returncode == 0 else []:
        try:
            spec = json.loads(line)
        except ValueError:
            continue
        if spec.get("id") == base.get("env.id"):
            return spec.get("reward_threshold")
    return None


def acceptance_target(settings: Settings, runner: Runner, base: dict[str, Any]) -> float | None:
    """--target, else the config's run.target_return, else the env's threshold (as recur train)."""
    if settings.target is not None:
        return settings.target
    t = base.get("run.target_return")
    return t if isinstance(t, (int, float)) else env_threshold(runner, base)


def accept(best: pathlib.Path, runner: Runner, settings: Settings, target: float | None) -> None:
    """Trains best.yaml on the acceptance seeds (never tuned on) and prints each final evaluation
    (its own eval seed, derived from the run seed: episodes no trial saw)."""
    seeds = list(settings.accept_seeds)
    print(f"\nacceptance on seeds {seeds}: recur train {best} (full budget, final evaluation)")
    acc = settings.study_dir / "accept"
    results = []
    for seed in seeds:
        out = acc / f"seed-{seed}"
        out.mkdir(parents=True, exist_ok=True)
        values = {"run.seed": seed, "run.output_dir": str(out.resolve())}
        r = Runner(runner.recur, best, (), runner.plugins, runner.env_factory)
        with open(out / "train.log", "w") as log:
            rc = subprocess.run(
                r.train_command(values), stdout=log, stderr=subprocess.STDOUT
            ).returncode
        rows = read_eval_rows(out)
        final = rows[-1] if rc == 0 and rows else None
        results.append((seed, final))
        outcome = (
            f"final evaluation {final:.2f}"
            if final is not None
            else f"failed (exit {rc}, {out}/train.log)"
        )
        print(f"  seed {seed}: {outcome}", flush=True)
    if target is None:
        return
    ok = sum(1 for _, v in results if v is not None and v >= target)
    print(f"  {ok}/{len(results)} seeds reach the target {target:g}")
