#!/usr/bin/env python3
"""Learning curves of a recur run directory, as one PNG.

    python3 tools/plot_run.py RUN_DIR [--out FILE.png]

Reads RUN_DIR/progress.csv (one row per update) and RUN_DIR/eval.csv if present; draws the
training return (mean with the min..max band) and the eval return (mean +- std) against env
steps, the confirmations of RUN_DIR/confirm.csv (run.target_confirm_episodes: the longer
evaluation of the weights of each evaluation at the target, a filled square where it held and a
cross where it fell short), the PPO losses and diagnostics, and the throughput. Columns missing from a file (older
runs, algorithms that log other things) are skipped, so the script never needs to change in
lockstep with the trainer. Needs matplotlib only (tools/requirements.txt); the CSV files are read
with the standard library, whose float() reads recur's "nan" and "inf" and treats an empty field
(a value not logged yet) as missing.
"""

import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def read_columns(path):
    """{column: [float or nan]} for a CSV file with a header; {} if the file is absent."""
    if not os.path.isfile(path):
        return {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        columns = {name: [] for name in reader.fieldnames or []}
        for row in reader:
            for name in columns:
                text = row.get(name)
                try:
                    columns[name].append(float(text) if text not in (None, "") else math.nan)
                except ValueError:
                    columns[name].append(math.nan)
    return columns


def has(columns, *names):
    return all(n in columns and any(not math.isnan(v) for v in columns[n]) for n in names)


def plot_lines(ax, columns, names, title):
    """One line per column of `names` that the file has, against env steps."""
    for name in names:
        if has(columns, name):
            ax.plot(columns["env_steps"], columns[name], label=name)
    ax.set_title(title)
    ax.set_xlabel("env steps")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


# Panels of progress.csv: (title, columns). Losses of very different scales get panels of their
# own (the value loss would flatten the policy loss to a line at 0).
LINE_PANELS = [
    ("policy loss", ["policy_loss"]),
    ("value loss", ["value_loss"]),
    ("entropy", ["entropy"]),
    ("approx KL, clip fraction", ["approx_kl", "clip_fraction"]),
    ("explained variance", ["explained_variance"]),
    ("throughput (env steps / s)", ["fps"]),
    ("time per update (s)", ["act_time_s", "learn_time_s", "wait_time_s"]),
    ("learning rate", ["learning_rate"]),
]


def confirmations(confirm):
    """(held, fell_short): [(env_steps, return_mean)] of confirm.csv's rows, split by `confirmed`."""
    held, short = [], []
    if has(confirm, "env_steps", "return_mean", "confirmed"):
        for x, y, ok in zip(confirm["env_steps"], confirm["return_mean"], confirm["confirmed"]):
            if not math.isnan(y):
                (held if ok == 1 else short).append((x, y))
    return held, short


def plot_returns(ax, progress, evals, confirm=None):
    """Training return (mean, min..max band), eval return (mean +- std), confirmations."""
    if has(progress, "env_steps", "return_mean"):
        x = progress["env_steps"]
        if has(progress, "return_min", "return_max"):
            ax.fill_between(x, progress["return_min"], progress["return_max"], alpha=0.2,
                            label="train min..max")
        ax.plot(x, progress["return_mean"], label="train mean")
    if has(evals, "env_steps", "return_mean"):
        x, mean = evals["env_steps"], evals["return_mean"]
        if has(evals, "return_std"):
            std = evals["return_std"]
            ax.fill_between(x, [m - s for m, s in zip(mean, std)],
                            [m + s for m, s in zip(mean, std)], alpha=0.2, color="C1",
                            label="eval +- std")
        ax.plot(x, mean, "o-", color="C1", markersize=3, label="eval mean")
    held, short = confirmations(confirm or {})
    if held:
        ax.plot(*zip(*held), "s", color="C2", markersize=6, label="confirmed (more episodes)")
    if short:
        ax.plot(*zip(*short), "x", color="C3", markersize=7, label="not confirmed")
    ax.set_title("episode return")
    ax.set_xlabel("env steps")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", help="a run directory (holds progress.csv)")
    parser.add_argument("--out", help="PNG to write (default: RUN_DIR/curves.png)")
    args = parser.parse_args()

    progress = read_columns(os.path.join(args.run_dir, "progress.csv"))
    evals = read_columns(os.path.join(args.run_dir, "eval.csv"))
    confirm = read_columns(os.path.join(args.run_dir, "confirm.csv"))
    if "env_steps" not in progress and "env_steps" not in evals:
        sys.exit(f"plot_run: {args.run_dir} has no progress.csv or eval.csv with an env_steps "
                 "column; is it a recur run directory?")
    out = args.out or os.path.join(args.run_dir, "curves.png")

    # Only the panels whose data is there, so a partial file gives a compact figure.
    panels = []
    if has(progress, "env_steps", "return_mean") or has(evals, "env_steps", "return_mean"):
        panels.append(lambda ax: plot_returns(ax, progress, evals, confirm))
    if "env_steps" in progress:
        for title, names in LINE_PANELS:
            if any(has(progress, n) for n in names):
                panels.append(lambda ax, t=title, n=names: plot_lines(ax, progress, n, t))
    if not panels:
        sys.exit(f"plot_run: nothing to plot in {args.run_dir}")

    cols = 1 if len(panels) == 1 else 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 3.2 * rows + 0.4), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for panel, ax in zip(panels, flat):
        panel(ax)
    for ax in flat[len(panels):]:
        fig.delaxes(ax)
    fig.suptitle(os.path.basename(os.path.normpath(args.run_dir)))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()
