"""POPGym's MMER of recur runs: per run the max over training of the mean episodic return, then
mean and standard deviation over the runs of one env id (the seeds). POPGym's rewards are scaled
so that an episode's return lies in [-1, 1], and recur's ports keep that scale, so no further
normalization is applied. Also prints each env's env steps and wall time (progress.csv's last
row).

    python3 tools/popgym_mmer.py RUN_DIR... [--paper /path/to/paper_table.csv]
                                            [--smooth N] [--every STEPS]

RUN_DIR: run directories (or folders of them); the env id is read from each run's config.yaml.
--paper: a CSV "env_id,gru_mmer" of the paper's figures, printed beside recur's.

What "the mean episodic return" is decides how far a max over training drifts up from noise.
POPGym's figures are RLlib's `episode_reward_mean`, one per training iteration of 65536 env steps
(popgym/baselines/ppo.py: train_batch_size), averaged over the last 100 finished episodes (RLlib's
metrics_num_episodes_for_smoothing). The defaults do the same with recur's episodes (monitor.csv,
in the order they finished): --smooth 100 episodes, looked at once per --every 65536 env steps
(at the first progress.csv row at or past each multiple). --smooth 0 takes each progress.csv row's
return_mean instead: the same 100-episode mean, but looked at after every recur iteration (a few
thousand env steps), so the max over many more looks at a noisy mean sits a little higher.
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


def episode_returns(run: pathlib.Path) -> list[float]:
    """monitor.csv's returns in the order the episodes finished (its first line is a comment)."""
    with open(run / "monitor.csv") as f:
        lines = [line for line in f if not line.startswith("#")]
    return [float(row["r"]) for row in csv.DictReader(lines)]


def mmer(rows: list[dict], returns: list[float], smooth: int, every: int) -> float:
    """The max over looks of the mean return. A look is each progress row (smooth 0), or the first
    row at or past each multiple of `every` env steps, averaging the last `smooth` episodes
    finished by then (fewer only while fewer have finished, as RLlib)."""
    if smooth <= 0:
        return max(float(r["return_mean"]) for r in rows if r.get("return_mean"))
    best, next_look = None, every
    for r in rows:
        steps = int(r["env_steps"])
        done = min(int(r["episodes"]), len(returns))
        if steps < next_look or done == 0:
            continue
        while next_look <= steps:
            next_look += every
        window = returns[max(0, done - smooth) : done]
        mean = sum(window) / len(window)
        best = mean if best is None else max(best, mean)
    if best is None:  # shorter than one look: the whole run's last window
        window = returns[-smooth:]
        best = sum(window) / len(window)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--paper", help="CSV env_id,gru_mmer of the POPGym paper's GRU")
    ap.add_argument("--smooth", type=int, default=100, help="episodes per mean (0: per iteration)")
    ap.add_argument("--every", type=int, default=65536, help="env steps between looks")
    args = ap.parse_args()
    if args.every < 1:
        sys.exit(f"--every {args.every}: must be >= 1 env step")
    paper = {}
    if args.paper:
        with open(args.paper) as f:
            paper = {row["env_id"]: row["gru_mmer"] for row in csv.DictReader(f)}

    by_env: dict[str, list[tuple[float, int, float]]] = {}
    for run in run_dirs(args.runs):
        with open(run / "progress.csv") as f:
            rows = list(csv.DictReader(f))
        returns = episode_returns(run) if args.smooth > 0 else []
        if not any(r.get("return_mean") for r in rows) or (args.smooth > 0 and not returns):
            print(f"{run}: no finished episodes yet; skipped", file=sys.stderr)
            continue
        best = mmer(rows, returns, args.smooth, args.every)
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
