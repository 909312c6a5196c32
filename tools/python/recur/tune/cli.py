"""The command line of ``recur tune`` / ``python -m recur.tune``: the options, their checks, the
Settings they make, and the study's run from start to exit status."""

from __future__ import annotations

import argparse
import difflib
import os
import pathlib
import shlex
import signal
import sys
import threading
from typing import Any

import yaml

from .accept import accept, acceptance_target
from .report import write_outputs
from .runner import EXIT_TRAIN_INTERRUPTED, Runner, find_recur
from .settings import (
    DEFAULT_SPACE,
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    SPACES_ENV,
    TUNER_SET_KEYS,
    Settings,
)
from .space import Param, TuneError, check_space_values, flatten, load_space
from .study import Tuner, make_storage


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recur tune",
        description="Hyperparameter search over recur train runs with Optuna (docs/TUNING.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("config", help="base training config (YAML), e.g. configs/cartpole_novel.yaml")
    p.add_argument(
        "--space",
        help=f"search-space YAML (default: {DEFAULT_SPACE} of the shipped spaces, the zoo's PPO "
        f"ranges: in ${SPACES_ENV}, which recur tune sets, else in ./configs/tune/)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="fixed override for every trial (repeatable)",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="PATH",
        help="env plugin for recur train (repeatable)",
    )
    p.add_argument(
        "--env-factory",
        metavar="MODULE:CALLABLE",
        help="train a Python Gymnasium env: recur.train(env=MODULE.CALLABLE) per run",
    )
    p.add_argument(
        "--study-dir", help="where trials, best.yaml, trials.csv go (default: tune/<config stem>)"
    )
    p.add_argument(
        "--storage",
        help="Optuna storage: sqlite:///PATH.db, another RDB URL, or a journal file PATH.log "
        "(default: sqlite:///STUDY_DIR/study.db)",
    )
    p.add_argument("--study-name", help="study name in the storage (default: the config's stem)")
    p.add_argument(
        "--n-trials",
        type=int,
        default=20,
        help="finished trials (complete, pruned, failed) the study should hold; counted across "
        "restarts",
    )
    p.add_argument(
        "--jobs", type=int, help="trials run at once (default: cores / (2 x seeds), at least 1)"
    )
    p.add_argument(
        "--threads",
        type=int,
        help="run.threads of each run (default: cores / (jobs x seeds), at least 1)",
    )
    p.add_argument(
        "--seeds",
        default="100,101",
        help="tuning seeds: every trial trains once per seed; the objective aggregates them",
    )
    p.add_argument(
        "--aggregate",
        choices=["mean", "min"],
        default="mean",
        help="objective over the seeds of the last evaluation's mean return",
    )
    p.add_argument("--sampler", choices=["tpe", "random"], default="tpe")
    p.add_argument("--sampler-seed", type=int, help="seed of the sampler (default: random)")
    p.add_argument(
        "--n-startup-trials", type=int, default=10, help="TPE's random trials before it models"
    )
    p.add_argument("--pruner", choices=["median", "halving", "none"], default="median")
    p.add_argument(
        "--pruner-startup-trials",
        type=int,
        default=5,
        help="median pruner: complete trials before it prunes",
    )
    p.add_argument(
        "--pruner-warmup-evals",
        type=int,
        help="median pruner: evaluations before a trial can be pruned (default: a third of them)",
    )
    p.add_argument(
        "--enqueue",
        action="append",
        default=[],
        metavar="YAML",
        help="a trial to run first, as config values: '{algo.learning_rate: 1e-7}' (others "
        "sampled; repeatable)",
    )
    p.add_argument(
        "--no-enqueue-base",
        dest="enqueue_base",
        action="store_false",
        help="do not run the base config's own values as the first trial",
    )
    p.add_argument(
        "--accept-seeds",
        help="after the study, train best.yaml on these seeds (disjoint from --seeds), e.g. 0,1,2",
    )
    p.add_argument(
        "--target",
        type=float,
        help="acceptance: the return a seed must reach (default: run.target_return, else the "
        "env's threshold)",
    )
    p.add_argument(
        "--recur", help="the recur executable (default: $RECUR_CLI, ./build/tools/recur, PATH)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check the config, --set and the search space (every edge through recur), then "
        "exit: no study, nothing written",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--_python-trial":
        return _python_trial(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return run(args, argv)
    except TuneError as e:
        print(f"recur tune: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _python_trial(argv: list[str]) -> int:
    """One run of a trial on a Python env: recur.train(config, overrides, env=MODULE.CALLABLE).
    Exits as `recur train` does, EXIT_TRAIN_INTERRUPTED after Ctrl-C (checkpoint written)."""
    import importlib

    import recur

    config, factory, *overrides = argv
    module, _, name = factory.partition(":")
    env = getattr(importlib.import_module(module), name)
    try:
        recur.train(config, overrides, env=env)
    except KeyboardInterrupt as e:
        print(f"interrupted: {e}", flush=True)
        return EXIT_TRAIN_INTERRUPTED
    return 0


def run(args: argparse.Namespace, argv: list[str]) -> int:
    """The checks, then --check's report or the study; the exit status."""
    try:
        import optuna
    except ImportError:
        raise TuneError("recur tune needs Optuna: pip install optuna") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    config = pathlib.Path(args.config)
    if not config.is_file():
        raise TuneError(f"config {args.config}: no such file")
    seeds, accept_seeds = check_args(args)
    runner = Runner(
        find_recur(args.recur),
        config.resolve(),
        tuple(args.set),
        tuple(os.path.abspath(p) for p in args.plugin),
        args.env_factory,
    )
    # The base config with the fixed overrides: recur resolves and validates it.
    res = runner.print_config({})
    if res.returncode != 0:
        raise TuneError(f"config {args.config} with --set {args.set}: {res.stderr.strip()}")
    base = flatten(yaml.safe_load(res.stdout))
    space = args.space or default_space()
    params = search_params(space, args.set, runner, base)
    if args.check:
        print(
            f"recur tune: {space}: {len(params)} parameters, every edge accepted by "
            f"`recur train {args.config}`",
            flush=True,
        )
        return 0
    settings = make_settings(args, argv, space, seeds, accept_seeds, base)
    return run_study(settings, runner, params, base)


def parse_seeds(text: str, option: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(s) for s in text.split(",") if s.strip() != "")
    except ValueError:
        raise TuneError(
            f"{option} {text!r}: expected comma-separated integers, e.g. 100,101"
        ) from None
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise TuneError(f"{option} {text!r}: expected distinct seeds >= 0")
    return seeds


def check_args(args: argparse.Namespace) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The options' own checks; returns the tuning and the acceptance seeds."""
    seeds = parse_seeds(args.seeds, "--seeds")
    accept_seeds = parse_seeds(args.accept_seeds, "--accept-seeds") if args.accept_seeds else ()
    common = sorted(set(seeds) & set(accept_seeds))
    if common:
        raise TuneError(
            f"--accept-seeds {common} are also tuning seeds: acceptance must use seeds the study "
            "never saw"
        )
    for name in ("n_trials", "jobs", "threads"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise TuneError(f"--{name.replace('_', '-')} {v}: must be >= 1")
    for item in args.set:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise TuneError(f"--set {item!r}: expected section.key=value")
        if item.split("=", 1)[0] in TUNER_SET_KEYS:
            raise TuneError(
                f"--set {item!r}: recur tune sets {item.split('=', 1)[0]} itself "
                "(--seeds, --study-dir)"
            )
    if args.env_factory and ":" not in args.env_factory:
        raise TuneError(f"--env-factory {args.env_factory!r}: expected MODULE:CALLABLE")
    return seeds, accept_seeds


def default_space() -> str:
    """The default search space: in $RECUR_TUNE_SPACES (set by `recur tune` to the shipped spaces
    beside its executable), else in ./configs/tune/ (a repository checkout)."""
    dirs = [os.environ.get(SPACES_ENV), os.path.join("configs", "tune")]
    for d in filter(None, dirs):
        path = pathlib.Path(d) / DEFAULT_SPACE
        if path.is_file():
            return str(path)
    where = f"${SPACES_ENV} ({os.environ[SPACES_ENV]})" if os.environ.get(SPACES_ENV) else ""
    raise TuneError(
        f"no --space given and {DEFAULT_SPACE} is not in {where or f'${SPACES_ENV} (unset)'} "
        "or ./configs/tune/: pass --space FILE (recur tune sets the variable to the spaces "
        "installed with it)"
    )


def search_params(space: str, sets: list[str], runner: Runner, base: dict[str, Any]):
    """The search space's parameters that --set does not fix, each checked against the config's
    keys and, at its edges, by recur itself."""
    params: list[Param] = load_space(pathlib.Path(space), base.get("algo.type"))
    for p in params:
        if p.key not in base and not p.key.startswith("env.options."):
            close = difflib.get_close_matches(p.key, list(base), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TuneError(
                f"search space {space}: entry {p.key!r}: unknown config key{hint}; "
                "`recur train CONFIG --print-config` lists them"
            )
        if p.key in TUNER_SET_KEYS:
            raise TuneError(
                f"search space {space}: entry {p.key!r}: set by recur tune itself (seeds, output)"
            )
    fixed = {item.split("=", 1)[0] for item in sets}
    for p in [p for p in params if p.key in fixed]:
        print(f"recur tune: {p.key} is fixed by --set: not searched", flush=True)
    params = [p for p in params if p.key not in fixed]
    if not params:
        raise TuneError(f"search space {space}: every entry is fixed by --set: nothing to search")
    check_space_values(params, runner, base, space)
    return params


def make_settings(
    args: argparse.Namespace,
    argv: list[str],
    space: str,
    seeds: tuple[int, ...],
    accept_seeds: tuple[int, ...],
    base: dict[str, Any],
) -> Settings:
    """The options completed with their defaults (study directory, storage, jobs, threads,
    pruner warm-up); creates the study directory."""
    stem = pathlib.Path(args.config).stem
    study_dir = pathlib.Path(args.study_dir or pathlib.Path("tune") / stem)
    try:
        study_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TuneError(f"--study-dir {study_dir}: cannot be created: {e.strerror}") from None
    if not os.access(study_dir, os.W_OK):
        raise TuneError(f"--study-dir {study_dir}: not writable")
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
    jobs = args.jobs or max(1, cores // (2 * len(seeds)))
    evals = base.get("run.eval_every") or 0
    n_evals = base["run.total_env_steps"] // evals if evals else 0
    warmup = args.pruner_warmup_evals
    return Settings(
        argv=tuple(argv),
        config=args.config,
        space=space,
        sets=tuple(args.set),
        env_factory=args.env_factory,
        study_dir=study_dir,
        storage=args.storage or f"sqlite:///{(study_dir / 'study.db').resolve()}",
        study_name=args.study_name or stem,
        n_trials=args.n_trials,
        jobs=jobs,
        threads=args.threads or max(1, cores // (jobs * len(seeds))),
        seeds=seeds,
        aggregate=args.aggregate,
        sampler=args.sampler,
        sampler_seed=args.sampler_seed,
        n_startup_trials=args.n_startup_trials,
        pruner=args.pruner,
        pruner_startup_trials=args.pruner_startup_trials,
        pruner_warmup_evals=n_evals // 3 if warmup is None else warmup,
        enqueue=tuple(args.enqueue),
        enqueue_base=args.enqueue_base,
        accept_seeds=accept_seeds,
        target=args.target,
    )


def run_study(s: Settings, runner: Runner, params: list[Param], base: dict[str, Any]) -> int:
    """Opens (or resumes) the study, runs its trials, writes the outputs, accepts; the exit
    status: 0, 1 (3 failed trials in a row) or EXIT_INTERRUPTED."""
    storage = make_storage(s.storage)
    if s.pruner != "none" and not (base.get("run.eval_every") or 0):
        print(
            "recur tune: run.eval_every is 0: no evaluation before the end, nothing to prune on",
            flush=True,
        )
    tuner = Tuner(s, runner, params, base)
    try:
        tuner.open_study(storage)
    except Exception as e:  # noqa: BLE001
        raise TuneError(f"--storage {s.storage}: {e}") from None
    tuner.recover_stale()
    tuner.enqueue_initial()
    print(
        f"recur tune: study '{s.study_name}' in {s.storage}: {tuner.finished()} of {s.n_trials} "
        f"trials finished; {s.jobs} at a time x {len(s.seeds)} seeds {list(s.seeds)}, "
        f"{s.threads} thread(s) each; sampler {s.sampler}, pruner {s.pruner}; {len(params)} "
        f"parameters from {s.space}",
        flush=True,
    )
    interrupted = run_workers(tuner, s.jobs)
    best = write_outputs(tuner, s, runner)
    if interrupted:
        resume = "recur tune " + " ".join(shlex.quote(a) for a in s.argv)
        print(
            f"recur tune: interrupted; the study is in {s.storage}. Resume with the same "
            f"command:\n  {resume}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if tuner.failed_in_a_row >= 3:
        print(
            "recur tune: stopped after 3 failed trials in a row (trials.csv has their errors)",
            file=sys.stderr,
        )
        return 1
    print(f"dashboard: optuna-dashboard {s.storage}")
    if best is not None and s.accept_seeds:
        accept(best, runner, s, acceptance_target(s, runner, base))
    return 0


def run_workers(tuner: Tuner, jobs: int) -> bool:
    """`jobs` worker threads until the study is done; the first Ctrl-C stops them (their runs get
    SIGINT), a second ends at once. Returns whether Ctrl-C came."""
    interrupted = threading.Event()

    def on_sigint(signum, frame):
        if interrupted.is_set():
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            raise KeyboardInterrupt
        interrupted.set()
        tuner.stop.set()
        print(
            "\nrecur tune: stopping: the running trials' runs get SIGINT and their trials are "
            "enqueued again (Ctrl-C again ends at once)",
            file=sys.stderr,
            flush=True,
        )

    previous = signal.signal(signal.SIGINT, on_sigint)
    threads = [
        threading.Thread(target=tuner.worker, name=f"trial-worker-{i}", daemon=True)
        for i in range(jobs)
    ]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    finally:
        signal.signal(signal.SIGINT, previous)
    return interrupted.is_set()
