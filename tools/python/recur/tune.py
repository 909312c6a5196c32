"""``recur tune CONFIG``: hyperparameter search over ``recur train`` runs with Optuna.

    python -m recur.tune configs/cartpole_novel.yaml --n-trials 50      # or: recur tune ...

One driver process asks Optuna for trials (TPE by default) and runs each trial as ``recur train``
subprocesses, one per tuning seed (100, 101 by default), with the sampled values as ``--set``
overrides. Every evaluation row a run appends to its ``eval.csv`` is reported to Optuna (the mean
over the trial's seeds at that evaluation index), which prunes hopeless trials (median or
successive halving); a pruned trial's runs get SIGINT. The objective is the mean over the seeds
of the run's last evaluation (its final evaluation), as the zoo's. The study lives in a storage
(SQLite by default): a study interrupted by Ctrl-C or a crash resumes with the same command;
finished trials are kept, interrupted ones are run again. docs/TUNING.md has the details.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import difflib
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import yaml

try:
    from .tune_space import (
        Param,
        check_space_values,
        TuneError,
        flatten,
        load_space,
        minibatch_fix,
        yaml_value,
    )
except ImportError:  # run from the source tree by `recur tune` without the extension built
    from tune_space import (
        Param,
        check_space_values,
        TuneError,
        flatten,
        load_space,
        minibatch_fix,
        yaml_value,
    )

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
TUNER_SET_KEYS = ("run.seed", "run.output_dir", "run.name")  # the tuner's alone


# --------------------------------------------------------------------------------------------
# recur train as a subprocess


@dataclasses.dataclass
class Runner:
    recur: str  # the recur executable
    config: pathlib.Path
    fixed: list[str]  # the user's --set overrides, as section.key=value
    plugins: list[str]
    env_factory: str | None  # MODULE:CALLABLE: trials train a Python env through recur.train

    def overrides(self, values: dict[str, Any], pre: dict[str, Any] | None = None) -> list[str]:
        """section.key=value in the order recur applies them: the tuner's own keys (threads,
        seed, output), the user's fixed --set (so that they win), the sampled values."""
        out = [f"{k}={yaml_value(v)}" for k, v in (pre or {}).items()]
        out += self.fixed
        out += [f"{k}={yaml_value(v)}" for k, v in values.items()]
        return out

    def print_config(self, values: dict[str, Any]) -> subprocess.CompletedProcess:
        cmd = [self.recur, "--log-level", "error", "train", str(self.config)]
        for item in self.overrides(values):
            cmd += ["--set", item]
        for p in self.plugins:
            cmd += ["--plugin", p]
        return subprocess.run([*cmd, "--print-config"], capture_output=True, text=True)

    def train_command(self, values: dict[str, Any], pre: dict[str, Any] | None = None) -> list[str]:
        sets = self.overrides(values, pre)
        if self.env_factory:
            plugins = [f"env.plugin={yaml_value(self.plugins)}"] if self.plugins else []
            return [
                sys.executable,
                "-m",
                "recur.tune",
                "--_python-trial",
                str(self.config),
                self.env_factory,
                *plugins,
                *sets,
            ]
        cmd = [self.recur, "train", str(self.config)]
        for item in sets:
            cmd += ["--set", item]
        for p in self.plugins:
            cmd += ["--plugin", p]
        return cmd


def find_recur(explicit: str | None) -> str:
    """The recur executable: --recur, $RECUR_CLI, build/tools/recur of this repository, PATH."""
    here = pathlib.Path(__file__).resolve()
    candidates = [explicit, os.environ.get("RECUR_CLI")]
    if len(here.parents) > 3:
        candidates.append(str(here.parents[3] / "build" / "tools" / "recur"))
    for c in candidates:
        if c and os.access(c, os.X_OK) and os.path.isfile(c):
            return os.path.abspath(c)
        if c and c == explicit:
            raise TuneError(f"--recur {explicit}: not an executable file")
    found = shutil.which("recur")
    if not found:
        raise TuneError(
            "no recur executable: build it (build/tools/recur), put it on PATH or pass --recur PATH"
        )
    return found


def default_space_path() -> pathlib.Path | None:
    here = pathlib.Path(__file__).resolve()
    for root in ([here.parents[3]] if len(here.parents) > 3 else []) + [pathlib.Path.cwd()]:
        p = root / "configs" / "tune" / "ppo_lstm.yaml"
        if p.is_file():
            return p
    return None


def read_eval_rows(run_root: pathlib.Path) -> list[float]:
    """return_mean of every complete row of the run's eval.csv (<output_dir>/<name>-<time>/)."""
    files = sorted(run_root.glob("*/eval.csv"))
    if not files:
        return []
    try:
        text = files[-1].read_text()
    except OSError:
        return []
    lines = text.split("\n")[:-1]  # the last piece is an incomplete line or empty
    if not lines:
        return []
    header = lines[0].split(",")
    col = header.index("return_mean") if "return_mean" in header else 1
    rows = []
    for line in lines[1:]:
        fields = line.split(",")
        try:
            rows.append(float(fields[col]))
        except (IndexError, ValueError):
            break
    return rows


# --------------------------------------------------------------------------------------------
# The study


def parse_seeds(text: str, option: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip() != ""]
    except ValueError:
        raise TuneError(
            f"{option} {text!r}: expected comma-separated integers, e.g. 100,101"
        ) from None
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise TuneError(f"{option} {text!r}: expected distinct seeds >= 0")
    return seeds


def make_storage(url: str, study_dir: pathlib.Path):
    import optuna

    if "://" not in url:
        path = pathlib.Path(url)
        if path.suffix != ".log":
            raise TuneError(
                f"--storage {url}: expected an RDB URL (sqlite:///study.db) or a journal file ending in .log"
            )
        _check_writable(path, url)
        from optuna.storages.journal import JournalFileBackend

        return optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    engine_kwargs = {}
    if url.startswith("sqlite:///"):
        path = pathlib.Path(url[len("sqlite:///") :])
        _check_writable(path, url)
        # One driver writes; a longer lock timeout keeps a dashboard reader from failing it.
        engine_kwargs = {"connect_args": {"timeout": 60}}
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs)
    except Exception as e:  # noqa: BLE001 (SQLAlchemy and driver errors alike)
        raise TuneError(f"--storage {url}: cannot be opened: {e}") from None


def _check_writable(path: pathlib.Path, url: str) -> None:
    parent = path.parent if str(path.parent) else pathlib.Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TuneError(
            f"--storage {url}: directory {parent} cannot be created: {e.strerror}"
        ) from None
    if path.exists():
        if path.is_dir() or not os.access(path, os.R_OK | os.W_OK):
            raise TuneError(f"--storage {url}: {path} cannot be written")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise TuneError(f"--storage {url}: directory {parent} is not writable")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Tuner:
    def __init__(self, args, runner: Runner, params: list[Param], base: dict[str, Any]):
        import optuna

        self.optuna = optuna
        self.args = args
        self.runner = runner
        self.params = params
        self.base = base
        self.study_dir = pathlib.Path(args.study_dir)
        self.seeds = args.seeds
        self.lock = threading.RLock()  # every storage call goes through it
        self.stop = threading.Event()
        self.inflight = 0
        self.failed_in_a_row = 0
        self.driver = f"{socket.gethostname()}:{os.getpid()}"

    # -- study ---------------------------------------------------------------------------------
    def open_study(self, storage):
        optuna = self.optuna
        a = self.args
        if a.sampler == "tpe":
            sampler = optuna.samplers.TPESampler(
                n_startup_trials=a.n_startup_trials,
                seed=a.sampler_seed,
                multivariate=True,
                constant_liar=True,
            )
        else:
            sampler = optuna.samplers.RandomSampler(seed=a.sampler_seed)
        if a.pruner == "median":
            pruner = optuna.pruners.MedianPruner(
                n_startup_trials=a.pruner_startup_trials, n_warmup_steps=a.pruner_warmup_evals
            )
        elif a.pruner == "halving":
            pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=4)
        else:
            pruner = optuna.pruners.NopPruner()
        self.study = optuna.create_study(
            storage=storage,
            study_name=a.study_name,
            direction="maximize",
            sampler=sampler,
            pruner=pruner,
            load_if_exists=True,
        )

    def trials(self, states=None):
        with self.lock:
            return self.study.get_trials(deepcopy=False, states=states)

    def finished(self) -> int:
        """Trials that count towards --n-trials: complete, pruned, and failed ones that were not
        interrupted (interrupted ones are enqueued again)."""
        S = self.optuna.trial.TrialState
        n = 0
        for t in self.trials((S.COMPLETE, S.PRUNED, S.FAIL)):
            if t.state != S.FAIL or not t.user_attrs.get("interrupted"):
                n += 1
        return n

    def retry(self, number: int, params: dict[str, Any], why: str) -> None:
        with self.lock:
            self.study.enqueue_trial(params, user_attrs={"retry_of": number})
        print(f"recur tune: trial {number} {why}: marked failed, enqueued again", flush=True)

    def recover_stale(self) -> None:
        """Trials a killed driver left RUNNING: failed and enqueued again (their runs restart)."""
        S = self.optuna.trial.TrialState
        host = socket.gethostname()
        for t in self.trials((S.RUNNING,)):
            driver = str(t.user_attrs.get("driver", ""))
            h, _, pid = driver.rpartition(":")
            if h == host and pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
                print(
                    f"recur tune: trial {t.number} is running in process {pid}; leaving it",
                    flush=True,
                )
                continue
            if h and h != host:
                print(f"recur tune: trial {t.number} runs on {h}; leaving it", flush=True)
                continue
            with self.lock:
                self.study._storage.set_trial_user_attr(
                    t._trial_id, "interrupted", True
                )  # noqa: SLF001
                self.study.tell(t.number, state=S.FAIL)
            self.retry(t.number, t.params, "was left running by an interrupted study")

    def enqueue_initial(self) -> None:
        by_key = {p.key: p for p in self.params}
        to_enqueue = []
        if self.args.enqueue_base:
            base = {}
            for p in self.params:
                v = p.optuna_value(self.base.get(p.key))
                if v is not None:
                    base[p.name] = v
            if base:
                to_enqueue.append(base)
        for text in self.args.enqueue:
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError:
                doc = None
            if not isinstance(doc, dict):
                raise TuneError(
                    f"--enqueue {text!r}: expected a YAML mapping, e.g. '{{algo.learning_rate: 1e-7}}'"
                )
            values = {}
            for k, v in doc.items():
                if k not in by_key:
                    raise TuneError(
                        f"--enqueue {text!r}: {k!r} is not in the search space ({', '.join(by_key)})"
                    )
                ov = by_key[k].optuna_value(v)
                if ov is None:
                    raise TuneError(f"--enqueue {text!r}: {k}={v!r} is outside the search space")
                values[by_key[k].name] = ov
            to_enqueue.append(values)
        with self.lock:
            for values in to_enqueue:
                self.study.enqueue_trial(values, skip_if_exists=True)

    # -- trials --------------------------------------------------------------------------------
    def next_trial(self):
        with self.lock:
            if self.stop.is_set() or self.finished() + self.inflight >= self.args.n_trials:
                return None
            if self.failed_in_a_row >= 3:
                return None
            self.inflight += 1
            trial = self.study.ask()
            trial.set_user_attr("driver", self.driver)
            trial.set_user_attr("seeds", self.seeds)
            return trial

    def worker(self) -> None:
        while True:
            trial = self.next_trial()
            if trial is None:
                return
            try:
                self.run_trial(trial)
            finally:
                with self.lock:
                    self.inflight -= 1

    def run_trial(self, trial) -> None:
        S = self.optuna.trial.TrialState
        with self.lock:
            sampled = {p.key: p.config_value(p.suggest(trial)) for p in self.params}
        values = minibatch_fix(sampled, self.base)
        if values != sampled:
            with self.lock:
                trial.set_user_attr(
                    "adjusted", {k: v for k, v in values.items() if sampled[k] != v}
                )
        tdir = self.study_dir / "trials" / f"trial-{trial.number:04d}"
        procs = []
        for seed in self.seeds:
            out = tdir / f"seed-{seed}"
            out.mkdir(parents=True, exist_ok=True)
            pre = {
                "run.threads": self.args.threads,  # the user's --set of these two wins
                "run.learner_threads": min(2, self.args.threads),
                "run.seed": seed,
                "run.output_dir": str(out.resolve()),
                "run.name": "run",
            }
            cmd = self.runner.train_command(values, pre)
            log = open(out / "train.log", "w")
            procs.append(
                (seed, out, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log)
            )
        reported = 0
        pruned = stopped = False
        while True:
            running = any(p.poll() is None for _, _, p, _ in procs)
            rows = [read_eval_rows(out) for _, out, _, _ in procs]
            while not pruned and all(len(r) > reported for r in rows):
                value = sum(r[reported] for r in rows) / len(rows)
                with self.lock:
                    trial.report(value, reported)
                    should = trial.should_prune()
                reported += 1
                if should and running:
                    pruned = True
                    for _, _, p, _ in procs:
                        if p.poll() is None:
                            p.send_signal(signal.SIGINT)
            if not running:
                break
            if self.stop.is_set():
                for _, _, p, _ in procs:
                    if p.poll() is None:
                        p.send_signal(signal.SIGINT)
                        stopped = True
                break
            time.sleep(0.2)
        deadline = time.monotonic() + 60
        for _, _, p, log in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            log.close()
        # A run that got a Ctrl-C (the terminal's, before the driver's stop) says so and exits 0.
        cut = any(
            "interrupted after" in (out / "train.log").read_text(errors="replace")
            for _, out, _, _ in procs
        )
        if (stopped or cut) and not pruned:
            with self.lock:
                trial.set_user_attr("interrupted", True)
                self.study.tell(trial, state=S.FAIL)
                self.retry(trial.number, trial.params, "was interrupted")
            return
        if pruned:
            with self.lock:
                self.study.tell(trial, state=S.PRUNED)
                self.failed_in_a_row = 0
            print(
                f"recur tune: trial {trial.number} pruned at evaluation {reported - 1}", flush=True
            )
            return
        failures = [(seed, out, p.returncode) for seed, out, p, _ in procs if p.returncode != 0]
        rows = [read_eval_rows(out) for _, out, _, _ in procs]
        if failures or not all(rows):
            seed, out, rc = failures[0] if failures else (self.seeds[0], procs[0][1], 0)
            tail = (out / "train.log").read_text(errors="replace").strip().splitlines()[-3:]
            msg = (
                f"seed {seed}: exit {rc}: " + " | ".join(tail) if failures else "no evaluation rows"
            )
            with self.lock:
                trial.set_user_attr("error", msg[-1000:])
                self.study.tell(trial, state=S.FAIL)
                self.failed_in_a_row += 1
            print(f"recur tune: trial {trial.number} failed: {msg} (logs in {out})", flush=True)
            return
        finals = [r[-1] for r in rows]
        value = min(finals) if self.args.aggregate == "min" else sum(finals) / len(finals)
        with self.lock:
            trial.set_user_attr("seed_returns", finals)
            self.study.tell(trial, value)
            self.failed_in_a_row = 0
        print(
            f"recur tune: trial {trial.number} value {value:.2f} (seeds {self.seeds}: "
            + ", ".join(f"{v:.2f}" for v in finals)
            + ")",
            flush=True,
        )


# --------------------------------------------------------------------------------------------
# Outputs


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def write_outputs(tuner: Tuner, args, runner: Runner) -> pathlib.Path | None:
    optuna = tuner.optuna
    S = optuna.trial.TrialState
    study = tuner.study
    trials = tuner.trials()
    names = []
    for t in trials:
        for n in t.params:
            if n not in names:
                names.append(n)
    header = [
        "number",
        "state",
        "value",
        "duration_s",
        "evaluations",
        *names,
        "seed_returns",
        "note",
    ]
    table = []
    for t in trials:
        dur = (
            (t.datetime_complete - t.datetime_start).total_seconds()
            if t.datetime_complete and t.datetime_start
            else None
        )
        note = t.user_attrs.get("error") or (
            "interrupted" if t.user_attrs.get("interrupted") else ""
        )
        if "retry_of" in t.user_attrs:
            note = (note + " " if note else "") + f"retry of {t.user_attrs['retry_of']}"
        table.append(
            [
                t.number,
                t.state.name,
                t.value,
                dur,
                len(t.intermediate_values),
                *[t.params.get(n) for n in names],
                " ".join(f"{v:.2f}" for v in t.user_attrs.get("seed_returns", [])),
                note,
            ]
        )
    with open(tuner.study_dir / "trials.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in table:
            w.writerow(["" if v is None else v for v in row])
    short = ["number", "state", "value", "duration_s", "evaluations", *names]
    rows = [[_fmt(v) for v in row[: len(short)]] for row in table]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(short)
    ]
    print("\n" + "  ".join(h.ljust(w) for h, w in zip(short, widths)))
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
    complete = [t for t in trials if t.state == S.COMPLETE]
    counts = {
        s.name: sum(t.state == s for t in trials)
        for s in (S.COMPLETE, S.PRUNED, S.FAIL, S.RUNNING, S.WAITING)
    }
    print("trials: " + ", ".join(f"{n.lower()} {c}" for n, c in counts.items() if c))
    if not complete:
        print("recur tune: no complete trial yet: no best.yaml")
        return None
    best = study.best_trial
    by_name = {p.name: p for p in tuner.params}
    values = minibatch_fix(
        {
            by_name[n].key: by_name[n].config_value(v)
            for n, v in best.params.items()
            if n in by_name
        },
        tuner.base,
    )
    # Its runs are named after the base config, not after best.yaml.
    named = (
        values
        if tuner.base.get("run.name")
        else {"run.name": pathlib.Path(args.config).stem, **values}
    )
    res = runner.print_config(named)
    if res.returncode != 0:
        print(
            f"recur tune: the best trial's config does not resolve: {res.stderr.strip()}",
            file=sys.stderr,
        )
        return None
    text = res.stdout
    header_lines = [
        f"# recur tune: best trial {best.number} of study '{args.study_name}' ({args.storage}),",
        f"# value {best.value:.4f} = {args.aggregate} over tuning seeds {tuner.seeds} of the last evaluation",
        f"# (per seed: {', '.join(f'{v:.2f}' for v in best.user_attrs.get('seed_returns', []))}).",
        f"# Base config {args.config}; search space {args.space}; fixed: {' '.join(args.set) or 'none'}.",
        "# Sampled: " + ", ".join(f"{k}={yaml_value(v)}" for k, v in values.items()),
        "# Accept on seeds the study never saw: recur tune ... --accept-seeds 0,1,2, or",
        "#   recur train best.yaml --set run.seed=0   (and 1, 2; compare the final evaluation)",
    ]
    if args.env_factory:
        header_lines.append(
            f"# Trained on the Python env {args.env_factory}: recur.train('best.yaml', env=...)."
        )
    path = tuner.study_dir / "best.yaml"
    path.write_text("\n".join(header_lines) + "\n" + text)
    print(f"best: trial {best.number}, value {best.value:.2f}; config {path}")
    for k, v in values.items():
        print(f"  {k} = {yaml_value(v)}")
    if len(complete) >= 2:
        try:
            imp = optuna.importance.get_param_importances(study)
            lines = [f"{k}\t{v:.4f}" for k, v in imp.items()]
            (tuner.study_dir / "importance.txt").write_text(
                "# parameter importance (optuna.importance.get_param_importances, default evaluator)\n"
                + "\n".join(lines)
                + "\n"
            )
        except Exception as e:  # noqa: BLE001 (too few or degenerate trials)
            (tuner.study_dir / "importance.txt").write_text(f"# no importances: {e}\n")
    write_plots(tuner, len(complete))
    return path


def write_plots(tuner: Tuner, n_complete: int) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import warnings
        from optuna.visualization import matplotlib as ovm
    except ImportError:
        return
    plots = [
        ("history.png", ovm.plot_optimization_history),
        ("intermediate.png", ovm.plot_intermediate_values),
    ]
    if n_complete >= 2:
        plots.append(("importance.png", ovm.plot_param_importances))
    for name, fn in plots:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ax = fn(tuner.study)
            fig = ax.figure if hasattr(ax, "figure") else ax.flat[0].figure
            fig.tight_layout()
            fig.savefig(tuner.study_dir / name, dpi=120)
            plt.close(fig)
        except Exception:  # noqa: BLE001 (a plot Optuna cannot draw for this study)
            pass


def env_threshold(runner: Runner, base: dict[str, Any]) -> float | None:
    """The env's registered reward threshold (`recur envs --json`), recur's default target."""
    import json

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


def accept(best: pathlib.Path, runner: Runner, args) -> None:
    """Trains best.yaml on the acceptance seeds (never tuned on) and prints each final evaluation
    (its own eval seed, derived from the run seed: episodes no trial saw)."""
    print(
        f"\nacceptance on seeds {args.accept_seeds}: recur train {best} (full budget, final evaluation)"
    )
    acc = pathlib.Path(args.study_dir) / "accept"
    results = []
    for seed in args.accept_seeds:
        out = acc / f"seed-{seed}"
        out.mkdir(parents=True, exist_ok=True)
        values = {"run.seed": seed, "run.output_dir": str(out.resolve())}
        r = Runner(runner.recur, best, [], runner.plugins, runner.env_factory)
        with open(out / "train.log", "w") as log:
            rc = subprocess.run(
                r.train_command(values), stdout=log, stderr=subprocess.STDOUT
            ).returncode
        rows = read_eval_rows(out)
        final = rows[-1] if rc == 0 and rows else None
        results.append((seed, final))
        print(
            f"  seed {seed}: "
            + (
                f"final evaluation {final:.2f}"
                if final is not None
                else f"failed (exit {rc}, {out}/train.log)"
            ),
            flush=True,
        )
    target = args.target
    if target is None:
        return
    ok = sum(1 for _, v in results if v is not None and v >= target)
    print(f"  {ok}/{len(results)} seeds reach the target {target:g}")


# --------------------------------------------------------------------------------------------
# Command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recur tune",
        description="Hyperparameter search over recur train runs with Optuna (docs/TUNING.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("config", help="base training config (YAML), e.g. configs/cartpole_novel.yaml")
    p.add_argument(
        "--space",
        help="search-space YAML (default: configs/tune/ppo_lstm.yaml, the zoo's PPO ranges)",
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
        help="Optuna storage: sqlite:///PATH.db, another RDB URL, or a journal file PATH.log (default: sqlite:///STUDY_DIR/study.db)",
    )
    p.add_argument("--study-name", help="study name in the storage (default: the config's stem)")
    p.add_argument(
        "--n-trials",
        type=int,
        default=20,
        help="finished trials (complete, pruned, failed) the study should hold; counted across restarts",
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
        help="a trial to run first, as config values: '{algo.learning_rate: 1e-7}' (others sampled; repeatable)",
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
        help="acceptance: the return a seed must reach (default: run.target_return, else the env's threshold)",
    )
    p.add_argument(
        "--recur", help="the recur executable (default: $RECUR_CLI, build/tools/recur, PATH)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="check the config, --set and the search space (every edge through recur), then exit: no study, nothing written",
    )
    return p


def _python_trial(argv: list[str]) -> int:
    """One run of a trial on a Python env: recur.train(config, overrides, env=MODULE.CALLABLE)."""
    import importlib

    import recur

    config, factory, *overrides = argv
    module, _, name = factory.partition(":")
    env = getattr(importlib.import_module(module), name)
    recur.train(config, overrides, env=env)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--_python-trial":
        return _python_trial(argv[1:])
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return _main(args)
    except TuneError as e:
        print(f"recur tune: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def _main(args) -> int:
    try:
        import optuna
    except ImportError:
        raise TuneError("recur tune needs Optuna: pip install optuna") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    config = pathlib.Path(args.config)
    if not config.is_file():
        raise TuneError(f"config {args.config}: no such file")
    args.seeds = parse_seeds(args.seeds, "--seeds")
    args.accept_seeds = (
        parse_seeds(args.accept_seeds, "--accept-seeds") if args.accept_seeds else []
    )
    common = sorted(set(args.seeds) & set(args.accept_seeds))
    if common:
        raise TuneError(
            f"--accept-seeds {common} are also tuning seeds: acceptance must use seeds the study never saw"
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
    runner = Runner(
        find_recur(args.recur),
        config.resolve(),
        args.set,
        [os.path.abspath(p) for p in args.plugin],
        args.env_factory,
    )

    # The base config with the fixed overrides: recur resolves and validates it.
    res = runner.print_config({})
    if res.returncode != 0:
        raise TuneError(f"config {args.config} with --set {args.set}: {res.stderr.strip()}")
    base = flatten(yaml.safe_load(res.stdout))

    if args.space is None:
        found = default_space_path()
        if found is None:
            raise TuneError("no --space given and configs/tune/ppo_lstm.yaml not found")
        args.space = str(found)
    params = load_space(pathlib.Path(args.space), base.get("algo.type"))
    for p in params:
        if p.key not in base and not p.key.startswith("env.options."):
            close = difflib.get_close_matches(p.key, list(base), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TuneError(
                f"search space {args.space}: entry {p.key!r}: unknown config key{hint}; "
                "`recur train CONFIG --print-config` lists them"
            )
        if p.key in TUNER_SET_KEYS:
            raise TuneError(
                f"search space {args.space}: entry {p.key!r}: set by recur tune itself (seeds, output)"
            )
    fixed = {item.split("=", 1)[0] for item in args.set}
    for p in [p for p in params if p.key in fixed]:
        print(f"recur tune: {p.key} is fixed by --set: not searched", flush=True)
    params = [p for p in params if p.key not in fixed]
    if not params:
        raise TuneError(
            f"search space {args.space}: every entry is fixed by --set: nothing to search"
        )
    check_space_values(params, runner, base, args.space)
    if args.check:
        print(
            f"recur tune: {args.space}: {len(params)} parameters, every edge accepted by "
            f"`recur train {args.config}`",
            flush=True,
        )
        return 0

    stem = config.stem
    args.study_dir = args.study_dir or str(pathlib.Path("tune") / stem)
    args.study_name = args.study_name or stem
    study_dir = pathlib.Path(args.study_dir)
    try:
        study_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TuneError(f"--study-dir {study_dir}: cannot be created: {e.strerror}") from None
    if not os.access(study_dir, os.W_OK):
        raise TuneError(f"--study-dir {study_dir}: not writable")
    args.storage = args.storage or f"sqlite:///{(study_dir / 'study.db').resolve()}"
    storage = make_storage(args.storage, study_dir)

    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
    per_trial = len(args.seeds)
    args.jobs = args.jobs or max(1, cores // (2 * per_trial))
    args.threads = args.threads or max(1, cores // (args.jobs * per_trial))
    evals = base.get("run.eval_every") or 0
    n_evals = base["run.total_env_steps"] // evals if evals else 0
    if args.pruner_warmup_evals is None:
        args.pruner_warmup_evals = n_evals // 3
    if args.pruner != "none" and not n_evals:
        print(
            "recur tune: run.eval_every is 0: no evaluation before the end, nothing to prune on",
            flush=True,
        )

    tuner = Tuner(args, runner, params, base)
    try:
        tuner.open_study(storage)
    except Exception as e:  # noqa: BLE001
        raise TuneError(f"--storage {args.storage}: {e}") from None
    tuner.recover_stale()
    tuner.enqueue_initial()
    done = tuner.finished()
    print(
        f"recur tune: study '{args.study_name}' in {args.storage}: {done} of {args.n_trials} trials finished; "
        f"{args.jobs} at a time x {per_trial} seeds {args.seeds}, {args.threads} thread(s) each; "
        f"sampler {args.sampler}, pruner {args.pruner}; {len(params)} parameters from {args.space}",
        flush=True,
    )

    interrupted = False

    def on_sigint(signum, frame):
        nonlocal interrupted
        if interrupted:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            raise KeyboardInterrupt
        interrupted = True
        tuner.stop.set()
        print(
            "\nrecur tune: stopping: the running trials' runs get SIGINT and their trials are enqueued "
            "again (Ctrl-C again ends at once)",
            file=sys.stderr,
            flush=True,
        )

    previous = signal.signal(signal.SIGINT, on_sigint)
    threads = [
        threading.Thread(target=tuner.worker, name=f"trial-worker-{i}", daemon=True)
        for i in range(args.jobs)
    ]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    finally:
        signal.signal(signal.SIGINT, previous)
    best = write_outputs(tuner, args, runner)
    resume = "recur tune " + " ".join(_quote(a) for a in args.argv)
    if interrupted:
        print(
            f"recur tune: interrupted; the study is in {args.storage}. Resume with the same command:\n  {resume}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if tuner.failed_in_a_row >= 3:
        print(
            "recur tune: stopped after 3 failed trials in a row (trials.csv has their errors)",
            file=sys.stderr,
        )
        return 1
    print(f"dashboard: optuna-dashboard {args.storage}")
    if best is not None and args.accept_seeds:
        if args.target is None:
            t = base.get("run.target_return")
            args.target = t if isinstance(t, (int, float)) else env_threshold(runner, base)
        accept(best, runner, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
