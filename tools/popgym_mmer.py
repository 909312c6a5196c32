"""POPGym's MMER of recur runs: per run the max over training of the mean episodic return (each
progress.csv row's return_mean: the episodes finished in that iteration), then mean and standard
deviation over the runs of one env id (the seeds). POPGym's rewards are scaled so that an
episode's return lies in [-1, 1], and recur's ports keep that scale, so no further normalization
is applied. Also prints each env's env steps and wall time (progress.csv's last row).

    python3 tools/popgym_mmer.py RUN_DIR... [--paper /path/to/paper_table.csv] [--markdown]

RUN_DIR: run directories (or folders of them); the env id is read from each run's config.yaml.
--paper: a CSV "env_id,gru_mmer" of the paper's figures, printed beside recur's.
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import re
import statistics
import sys


def env_id_of(run: pathlib.Path) -> str:
    text = (run / "config.yaml").read_text()
    match = re.search(r"^env:\s*\n(?:[ \t]+.*\n)*?[ \t]+id:\s*(\S+)", text, re.M)
    if not match:
        sys.exit(f"{run}/config.yaml: no env.id found")
    return match.group(1).strip("'\"")


def run_dirs(paths: list[str]) -> list[pathlib.Path]:
    out = []
    for p in map(pathlib.Path, paths):
        if (p / "progress.csv").exists():
            out.append(p)
        else:
            out.extend(sorted(d.parent for d in p.glob("*/progress.csv")))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--paper", help="CSV env_id,gru_mmer of the POPGym paper's GRU")
    args = ap.parse_args()
    paper = {}
    if args.paper:
        with open(args.paper) as f:
            paper = {row["env_id"]: row["gru_mmer"] for row in csv.DictReader(f)}

    by_env: dict[str, list[tuple[float, int, float]]] = {}
    for run in run_dirs(args.runs):
        with open(run / "progress.csv") as f:
            rows = [r for r in csv.DictReader(f) if r.get("return_mean")]
        if not rows:
            print(f"{run}: no finished episodes yet; skipped", file=sys.stderr)
            continue
        best = max(float(r["return_mean"]) for r in rows)
        by_env.setdefault(env_id_of(run), []).append(
            (best, int(rows[-1]["env_steps"]), float(rows[-1]["time_s"]))
        )
    if not by_env:
        sys.exit("no runs with progress.csv rows found under " + " ".join(args.runs))

    print("| env | runs | recur MMER (mean ± sd) | POPGym GRU | env steps | wall s per run |")
    print("|---|---:|---:|---:|---:|---:|")
    for env_id in sorted(by_env):
        runs = by_env[env_id]
        best = [b for b, _, _ in runs]
        sd = statistics.stdev(best) if len(best) > 1 else 0.0
        steps = max(s for _, s, _ in runs)
        wall = statistics.mean(t for _, _, t in runs)
        print(
            f"| {env_id} | {len(runs)} | {statistics.mean(best):.3f} ± {sd:.3f} | "
            f"{paper.get(env_id, 'n/a')} | {steps:,} | {wall:.0f} |"
        )


if __name__ == "__main__":
    main()
