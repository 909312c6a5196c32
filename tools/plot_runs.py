#!/usr/bin/env python3
"""Learning curves of several recur runs in one PNG: mean and spread over seeds, per group.

    python3 tools/plot_runs.py RUN_DIR... [--group LABEL=RUN_DIR,RUN_DIR...] [--out FILE.png]
                               [--target R] [--title T] [--train] [--seeds]

The picture rl-baselines3-zoo's plot scripts draw: for each group of runs (the seeds of one
config), the evaluation return against env steps, a line for the mean over the seeds and a band
from the lowest to the highest seed (with 3 seeds a standard error says little; the band shows
every seed), a dashed line at the target. Runs given as plain directories are grouped by their
config's name (run directory name without the -YYYYMMDD-HHMMSS suffix); --group names a group
explicitly (e.g. old and new settings of one config). Reads each run's eval.csv (one row per
periodic evaluation; the final 100-episode evaluation is not in it) and, with --train,
progress.csv's training return as a second panel. The mean and band cover the steps every seed
reached; --seeds adds each run's own curve as a thin line, whole (runs that stop at their target
end early, and the mean stops with the first of them). Needs matplotlib only.
"""

import argparse
import csv
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

STAMP = re.compile(r"-\d{8}-\d{6}(-\d+)?$")


def read_curve(path, y_column):
    """[(env_steps, value)] of a recur CSV log; [] when the file or the column is absent."""
    if not os.path.isfile(path):
        return []
    points = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                x, y = float(row["env_steps"]), float(row[y_column])
            except (KeyError, TypeError, ValueError):
                continue  # a value not logged yet (empty) or a partial last row
            if not math.isnan(y):
                points.append((x, y))
    return points


def group_name(run_dir):
    return STAMP.sub("", os.path.basename(os.path.normpath(run_dir)))


def spread(curves):
    """Per env step present in every curve: (steps, mean, low, high) over the curves. Runs of one
    config evaluate at the same steps; a longer run's extra points are left out, not averaged
    over fewer seeds."""
    common = set(x for x, _ in curves[0])
    for c in curves[1:]:
        common &= set(x for x, _ in c)
    steps = sorted(common)
    by_run = [dict(c) for c in curves]
    mean = [sum(r[x] for r in by_run) / len(by_run) for x in steps]
    low = [min(r[x] for r in by_run) for x in steps]
    high = [max(r[x] for r in by_run) for x in steps]
    return steps, mean, low, high


def draw(ax, groups, file_name, column, title, target, seeds=False):
    for i, (label, runs) in enumerate(groups.items()):
        curves = [c for c in (read_curve(os.path.join(r, file_name), column) for r in runs) if c]
        if not curves:
            continue
        steps, mean, low, high = spread(curves)
        color = f"C{i}"
        ax.fill_between(steps, low, high, color=color, alpha=0.2)
        ax.plot(steps, mean, "o-" if file_name == "eval.csv" else "-", color=color, markersize=3,
                label=f"{label} ({len(curves)} seed{'s' if len(curves) > 1 else ''})")
        if seeds:
            for c in curves:
                ax.plot([x for x, _ in c], [y for _, y in c], "-", color=color, linewidth=0.8,
                        alpha=0.6)
    if target is not None:
        ax.axhline(target, color="k", linestyle="--", linewidth=1, label=f"target {target:g}")
    ax.set_title(title)
    ax.set_xlabel("env steps")
    ax.set_ylabel("return")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def parse_groups(args, parser):
    groups = {}
    for run in args.runs:
        groups.setdefault(group_name(run), []).append(run)
    for spec in args.group:
        label, sep, dirs = spec.partition("=")
        if not sep or not label or not dirs:
            parser.error(f"--group {spec!r}: expected LABEL=RUN_DIR[,RUN_DIR...]")
        groups.setdefault(label, []).extend(d for d in dirs.split(",") if d)
    if not groups:
        parser.error("no runs: give run directories, or --group LABEL=RUN_DIR,...")
    for runs in groups.values():
        for run in runs:
            if not os.path.isfile(os.path.join(run, "eval.csv")):
                parser.error(f"{run} has no eval.csv: is it a recur run directory? (runs with "
                             "run.eval_every: 0 log only the final evaluation, not a curve)")
    return groups


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", help="run directories (grouped by config name)")
    parser.add_argument("--group", action="append", default=[], metavar="LABEL=DIR,DIR...",
                        help="a named group of runs (repeatable)")
    parser.add_argument("--out", default="curves.png", help="PNG to write (default: curves.png)")
    parser.add_argument("--target", type=float, help="draw the target return as a dashed line")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("--train", action="store_true",
                        help="a second panel with the training return (progress.csv)")
    parser.add_argument("--seeds", action="store_true",
                        help="also each run's whole curve as a thin line")
    args = parser.parse_args(argv)
    groups = parse_groups(args, parser)

    panels = [("eval.csv", "return_mean", "evaluation return (deterministic)")]
    if args.train:
        panels.append(("progress.csv", "return_mean", "training return (last 100 episodes)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (file_name, column, title) in zip(axes[0], panels):
        draw(ax, groups, file_name, column, title, args.target, args.seeds)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
