#!/usr/bin/env python3
"""Markdown table of finished training runs grouped by env id: the final deterministic evaluation
(the last row of eval.csv, mean ± sd over the runs of an id), the last progress row's training
return (stochastic policy, episodes that ended in that iteration) and the training wall time.
Runs whose last evaluation is before their total_env_steps are unfinished: they are left out, with
a line on stderr.

    python3 tools/bench/learning_table.py RUN_DIR...
"""
import csv
import statistics
import sys
from pathlib import Path


def config_value(run: Path, key: str) -> str:
    # config.yaml is the resolved config recur wrote, one key per line; the first "id:" is env.id
    # (the env section comes first) and total_env_steps appears once.
    for line in (run / "config.yaml").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith(key + ":"):
            return stripped.split(":", 1)[1].strip()
    raise SystemExit(f"learning_table: {run}/config.yaml has no {key}")


def last_row(path: Path) -> dict:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"learning_table: {path} has no rows (did the run finish?)")
    return rows[-1]


def mean_sd(values: list) -> str:
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{statistics.mean(values):.0f} ± {statistics.stdev(values):.0f}"


def main(argv: list) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    groups: dict = {}
    for arg in argv:
        run = Path(arg)
        evaluation = last_row(run / "eval.csv")
        progress = last_row(run / "progress.csv")
        # A run still going (or stopped early) has no final evaluation yet: leave it out, say so.
        if int(evaluation["env_steps"]) < int(config_value(run, "total_env_steps")):
            print(f"learning_table: {run} is unfinished (last evaluation at "
                  f"{evaluation['env_steps']} env steps); left out", file=sys.stderr)
            continue
        group = groups.setdefault(config_value(run, "id"), {"eval": [], "train": [], "secs": [], "steps": []})
        group["eval"].append(float(evaluation["return_mean"]))
        if progress["return_mean"]:
            group["train"].append(float(progress["return_mean"]))
        group["secs"].append(float(progress["time_s"]))
        group["steps"].append(int(evaluation["env_steps"]))
    print("| env | runs | env steps | final eval (mean ± sd) | each run | last training return | train s per run |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, g in groups.items():
        each = ", ".join(f"{v:.0f}" for v in g["eval"])
        train = mean_sd(g["train"]) if g["train"] else "-"
        print(f"| {name} | {len(g['eval'])} | {min(g['steps']):,} | {mean_sd(g['eval'])} | {each} | "
              f"{train} | {statistics.mean(g['secs']):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
