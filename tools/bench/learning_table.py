#!/usr/bin/env python3
"""Markdown table of finished training runs grouped by env id: the final deterministic evaluation
(the last row of eval.csv, mean ± sd over the runs of an id), the last progress row's training
return (stochastic policy, episodes that ended in that iteration) and the training wall time.

    python3 tools/bench/learning_table.py RUN_DIR...
"""
import csv
import statistics
import sys
from pathlib import Path


def env_id(run: Path) -> str:
    # config.yaml is the resolved config recur wrote; its env section comes first.
    for line in (run / "config.yaml").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("id:"):
            return stripped.split(":", 1)[1].strip()
    raise SystemExit(f"learning_table: {run}/config.yaml has no env id")


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
        group = groups.setdefault(env_id(run), {"eval": [], "train": [], "secs": [], "steps": []})
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
