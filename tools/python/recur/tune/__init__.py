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

The modules: cli (the options, Settings, the study's run and exit status), settings (the frozen
Settings and the exit codes), space (the search-space file), runner (``recur train`` as a
subprocess: Runner, TrialRun), study (the Optuna study and each trial's lifecycle: Tuner), report
(trials.csv, best.yaml, importance.txt, plots) and accept (--accept-seeds). The package imports
nothing of recur's extension: ``recur tune`` runs it without one (tools/cli/cmd_tune.cc).
"""

from .cli import main

__all__ = ["main"]
