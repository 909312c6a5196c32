"""The Optuna study and the lifecycle of its trials: the storage, the sampler and pruner, the
first (enqueued) trials, trials a killed driver left running, and each trial's runs from start to
its state (complete, pruned, failed, or interrupted and enqueued again)."""

from __future__ import annotations

import os
import pathlib
import socket
import threading
import time
from typing import Any

import yaml

from .runner import Runner, TrialRun
from .settings import Settings
from .space import Param, TuneError, minibatch_fix


def make_storage(url: str):
    import optuna

    if "://" not in url:
        path = pathlib.Path(url)
        if path.suffix != ".log":
            raise TuneError(
                f"--storage {url}: expected an RDB URL (sqlite:///study.db) or a journal file "
                "ending in .log"
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


def make_sampler(s: Settings):
    import optuna

    if s.sampler == "tpe":
        return optuna.samplers.TPESampler(
            n_startup_trials=s.n_startup_trials,
            seed=s.sampler_seed,
            multivariate=True,
            constant_liar=True,
        )
    return optuna.samplers.RandomSampler(seed=s.sampler_seed)


def make_pruner(s: Settings):
    import optuna

    if s.pruner == "median":
        return optuna.pruners.MedianPruner(
            n_startup_trials=s.pruner_startup_trials, n_warmup_steps=s.pruner_warmup_evals
        )
    if s.pruner == "halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=4)
    return optuna.pruners.NopPruner()


def parse_enqueue(text: str, by_key: dict[str, Param]) -> dict[str, Any]:
    """An --enqueue mapping of config values as Optuna parameter values."""
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
    return values


class Tuner:
    def __init__(
        self, settings: Settings, runner: Runner, params: list[Param], base: dict[str, Any]
    ):
        import optuna

        self.optuna = optuna
        self.settings = settings
        self.runner = runner
        self.params = params
        self.base = base
        self.study_dir = settings.study_dir
        self.seeds = list(settings.seeds)
        self.lock = threading.RLock()  # every storage call goes through it
        self.stop = threading.Event()
        self.inflight = 0
        self.failed_in_a_row = 0
        self.driver = f"{socket.gethostname()}:{os.getpid()}"

    # -- study ---------------------------------------------------------------------------------
    def open_study(self, storage) -> None:
        self.storage = storage
        self.study = self.optuna.create_study(
            storage=storage,
            study_name=self.settings.study_name,
            direction="maximize",
            sampler=make_sampler(self.settings),
            pruner=make_pruner(self.settings),
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

    def _mark_interrupted(self, number: int) -> None:
        """The user attribute `interrupted` on a trial this driver holds no Trial object for (one
        a killed driver left RUNNING), through the storage's public API (BaseStorage)."""
        study_id = self.storage.get_study_id_from_name(self.settings.study_name)
        trial_id = self.storage.get_trial_id_from_study_id_trial_number(study_id, number)
        self.storage.set_trial_user_attr(trial_id, "interrupted", True)

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
                self._mark_interrupted(t.number)
                self.study.tell(t.number, state=S.FAIL)
            self.retry(t.number, t.params, "was left running by an interrupted study")

    def enqueue_initial(self) -> None:
        by_key = {p.key: p for p in self.params}
        to_enqueue = []
        if self.settings.enqueue_base:
            base = {}
            for p in self.params:
                v = p.optuna_value(self.base.get(p.key))
                if v is not None:
                    base[p.name] = v
            if base:
                to_enqueue.append(base)
        to_enqueue += [parse_enqueue(text, by_key) for text in self.settings.enqueue]
        with self.lock:
            for values in to_enqueue:
                self.study.enqueue_trial(values, skip_if_exists=True)

    # -- trials --------------------------------------------------------------------------------
    def next_trial(self):
        with self.lock:
            if self.stop.is_set() or self.finished() + self.inflight >= self.settings.n_trials:
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
        runs = self._start_runs(trial, self._sample(trial))
        reported, pruned, stopped = self._watch(trial, runs)
        deadline = time.monotonic() + 60
        for run in runs:
            run.wait(deadline)
        # A run that got a Ctrl-C (the terminal's, before the driver's stop) exits so.
        if (stopped or any(run.interrupted() for run in runs)) and not pruned:
            self._interrupted(trial)
        elif pruned:
            self._pruned(trial, reported - 1)
        else:
            self._ended(trial, runs)

    def _sample(self, trial) -> dict[str, Any]:
        with self.lock:
            sampled = {p.key: p.config_value(p.suggest(trial)) for p in self.params}
        values = minibatch_fix(sampled, self.base)
        if values != sampled:
            with self.lock:
                trial.set_user_attr(
                    "adjusted", {k: v for k, v in values.items() if sampled[k] != v}
                )
        return values

    def _start_runs(self, trial, values: dict[str, Any]) -> list[TrialRun]:
        tdir = self.study_dir / "trials" / f"trial-{trial.number:04d}"
        threads = self.settings.threads
        runs = []
        for seed in self.seeds:
            out = tdir / f"seed-{seed}"
            out.mkdir(parents=True, exist_ok=True)
            pre = {
                "run.threads": threads,  # the user's --set of these two wins
                "run.learner_threads": min(2, threads),
                "run.seed": seed,
                "run.output_dir": str(out.resolve()),
                "run.name": "run",
            }
            runs.append(TrialRun.start(seed, out, self.runner.train_command(values, pre)))
        return runs

    def _watch(self, trial, runs: list[TrialRun]) -> tuple[int, bool, bool]:
        """Reports each evaluation row that every run has written; SIGINT to the runs when Optuna
        prunes or the driver stops. Returns (rows reported, pruned, stopped)."""
        reported = 0
        pruned = stopped = False
        while True:
            running = any(run.running() for run in runs)
            rows = [run.rows() for run in runs]
            while not pruned and all(len(r) > reported for r in rows):
                value = sum(r[reported] for r in rows) / len(rows)
                with self.lock:
                    trial.report(value, reported)
                    should = trial.should_prune()
                reported += 1
                # Pruned whether or not the runs are still going: a run that finished before this
                # poll read its rows is judged by them as a slower one would be (Optuna's own
                # semantics), so the outcome does not depend on how fast the trial ran.
                if should:
                    pruned = True
                    if running:
                        for run in runs:
                            run.interrupt()
            if not running:
                return reported, pruned, stopped
            if self.stop.is_set():
                for run in runs:
                    stopped = run.interrupt() or stopped
                return reported, pruned, stopped
            time.sleep(0.2)

    def _interrupted(self, trial) -> None:
        with self.lock:
            trial.set_user_attr("interrupted", True)
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            self.retry(trial.number, trial.params, "was interrupted")

    def _pruned(self, trial, evaluation: int) -> None:
        with self.lock:
            self.study.tell(trial, state=self.optuna.trial.TrialState.PRUNED)
            self.failed_in_a_row = 0
        print(f"recur tune: trial {trial.number} pruned at evaluation {evaluation}", flush=True)

    def _ended(self, trial, runs: list[TrialRun]) -> None:
        """Every run has ended by itself: the trial's value, or its failure."""
        failures = [run for run in runs if run.returncode != 0]
        rows = [run.rows() for run in runs]
        if failures or not all(rows):
            first = failures[0] if failures else runs[0]
            msg = (
                f"seed {first.seed}: exit {first.returncode}: " + " | ".join(first.log_tail())
                if failures
                else "no evaluation rows"
            )
            with self.lock:
                trial.set_user_attr("error", msg[-1000:])
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
                self.failed_in_a_row += 1
            print(
                f"recur tune: trial {trial.number} failed: {msg} (logs in {first.out})", flush=True
            )
            return
        finals = [r[-1] for r in rows]
        agg = self.settings.aggregate
        value = min(finals) if agg == "min" else sum(finals) / len(finals)
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
