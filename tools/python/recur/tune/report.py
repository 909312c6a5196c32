"""What a study leaves in its directory: trials.csv (and the same table printed), best.yaml,
importance.txt and the plots (docs/TUNING.md, "Outputs")."""

from __future__ import annotations

import csv
import pathlib
import sys
from typing import Any

from .runner import Runner
from .settings import Settings
from .space import minibatch_fix, yaml_value
from .study import Tuner


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def write_outputs(tuner: Tuner, settings: Settings, runner: Runner) -> pathlib.Path | None:
    """Writes trials.csv, best.yaml, importance.txt and the plots; returns best.yaml's path (None
    without a complete trial or when its config does not resolve)."""
    S = tuner.optuna.trial.TrialState
    trials = tuner.trials()
    names = param_names(trials)
    table = [trial_row(t, names) for t in trials]
    write_trials_csv(tuner.study_dir / "trials.csv", names, table)
    print_table(names, table)
    counts = {
        s.name: sum(t.state == s for t in trials)
        for s in (S.COMPLETE, S.PRUNED, S.FAIL, S.RUNNING, S.WAITING)
    }
    print("trials: " + ", ".join(f"{n.lower()} {c}" for n, c in counts.items() if c))
    n_complete = counts["COMPLETE"]
    if not n_complete:
        print("recur tune: no complete trial yet: no best.yaml")
        return None
    path = write_best(tuner, settings, runner)
    if path is None:
        return None
    if n_complete >= 2:
        write_importance(tuner)
    write_plots(tuner, n_complete)
    return path


def param_names(trials) -> list[str]:
    names = []
    for t in trials:
        for n in t.params:
            if n not in names:
                names.append(n)
    return names


def trial_row(t, names: list[str]) -> list[Any]:
    """A row of trials.csv: number, state, value, duration_s, evaluations, the parameters,
    seed_returns, note."""
    dur = (
        (t.datetime_complete - t.datetime_start).total_seconds()
        if t.datetime_complete and t.datetime_start
        else None
    )
    note = t.user_attrs.get("error") or ("interrupted" if t.user_attrs.get("interrupted") else "")
    if "retry_of" in t.user_attrs:
        note = (note + " " if note else "") + f"retry of {t.user_attrs['retry_of']}"
    return [
        t.number,
        t.state.name,
        t.value,
        dur,
        len(t.intermediate_values),
        *[t.params.get(n) for n in names],
        " ".join(f"{v:.2f}" for v in t.user_attrs.get("seed_returns", [])),
        note,
    ]


def write_trials_csv(path: pathlib.Path, names: list[str], table: list[list[Any]]) -> None:
    header = ["number", "state", "value", "duration_s", "evaluations", *names]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*header, "seed_returns", "note"])
        for row in table:
            w.writerow(["" if v is None else v for v in row])


def print_table(names: list[str], table: list[list[Any]]) -> None:
    short = ["number", "state", "value", "duration_s", "evaluations", *names]
    rows = [[_fmt(v) for v in row[: len(short)]] for row in table]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(short)
    ]
    print("\n" + "  ".join(h.ljust(w) for h, w in zip(short, widths)))
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))


def best_values(tuner: Tuner, best) -> dict[str, Any]:
    """The best trial's config values (the minibatch fix applied, as its runs had them)."""
    by_name = {p.name: p for p in tuner.params}
    return minibatch_fix(
        {
            by_name[n].key: by_name[n].config_value(v)
            for n, v in best.params.items()
            if n in by_name
        },
        tuner.base,
    )


def write_best(tuner: Tuner, settings: Settings, runner: Runner) -> pathlib.Path | None:
    """best.yaml: the base config with the fixed --set and the best values, fully resolved by
    recur, under a comment header naming the study, trial, value, seeds and values."""
    best = tuner.study.best_trial
    values = best_values(tuner, best)
    # Its runs are named after the base config, not after best.yaml.
    named = (
        values
        if tuner.base.get("run.name")
        else {"run.name": pathlib.Path(settings.config).stem, **values}
    )
    res = runner.print_config(named)
    if res.returncode != 0:
        print(
            f"recur tune: the best trial's config does not resolve: {res.stderr.strip()}",
            file=sys.stderr,
        )
        return None
    seed_returns = ", ".join(f"{v:.2f}" for v in best.user_attrs.get("seed_returns", []))
    header_lines = [
        f"# recur tune: best trial {best.number} of study '{settings.study_name}' "
        f"({settings.storage}),",
        f"# value {best.value:.4f} = {settings.aggregate} over tuning seeds {tuner.seeds} of the "
        "last evaluation",
        f"# (per seed: {seed_returns}).",
        f"# Base config {settings.config}; search space {settings.space}; "
        f"fixed: {' '.join(settings.sets) or 'none'}.",
        "# Sampled: " + ", ".join(f"{k}={yaml_value(v)}" for k, v in values.items()),
        "# Accept on seeds the study never saw: recur tune ... --accept-seeds 0,1,2, or",
        "#   recur train best.yaml --set run.seed=0   (and 1, 2; compare the final evaluation)",
    ]
    if settings.env_factory:
        header_lines.append(
            f"# Trained on the Python env {settings.env_factory}: "
            "recur.train('best.yaml', env=...)."
        )
    path = tuner.study_dir / "best.yaml"
    path.write_text("\n".join(header_lines) + "\n" + res.stdout)
    print(f"best: trial {best.number}, value {best.value:.2f}; config {path}")
    for k, v in values.items():
        print(f"  {k} = {yaml_value(v)}")
    return path


def write_importance(tuner: Tuner) -> None:
    path = tuner.study_dir / "importance.txt"
    try:
        imp = tuner.optuna.importance.get_param_importances(tuner.study)
        lines = [f"{k}\t{v:.4f}" for k, v in imp.items()]
        path.write_text(
            "# parameter importance (optuna.importance.get_param_importances, default "
            "evaluator)\n" + "\n".join(lines) + "\n"
        )
    except Exception as e:  # noqa: BLE001 (too few or degenerate trials)
        path.write_text(f"# no importances: {e}\n")


def write_plots(tuner: Tuner, n_complete: int) -> None:
    """history.png, intermediate.png and (2 or more complete trials) importance.png, with
    optuna.visualization.matplotlib, when matplotlib is installed."""
    try:
        import warnings

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
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
