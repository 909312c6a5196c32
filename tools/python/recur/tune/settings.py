"""The tuner's settings: the command line, checked and completed once (cli.make_settings), then
read, never changed, by the study, the reports and the acceptance."""

from __future__ import annotations

import dataclasses
import pathlib

EXIT_BAD_INPUT = 2  # recur tune: bad arguments, search space or storage (TuneError)
EXIT_INTERRUPTED = 130  # recur tune: Ctrl-C; the same command resumes the study
TUNER_SET_KEYS = ("run.seed", "run.output_dir", "run.name")  # the tuner's alone
# The environment variable through which `recur tune` (tools/cli/cmd_tune.cc) names the directory
# of the shipped search spaces: the source tree's configs/tune/ in a build tree, or
# <prefix>/share/recur/tune/ where recur is installed.
SPACES_ENV = "RECUR_TUNE_SPACES"
DEFAULT_SPACE = "ppo_lstm.yaml"


@dataclasses.dataclass(frozen=True)
class Settings:
    argv: tuple[str, ...]  # the command line as given (for the resume command)
    config: str  # the base config, as given
    space: str  # the search-space file
    sets: tuple[str, ...]  # the fixed --set overrides, section.key=value
    env_factory: str | None
    study_dir: pathlib.Path
    storage: str
    study_name: str
    n_trials: int
    jobs: int
    threads: int  # run.threads of each run
    seeds: tuple[int, ...]  # tuning seeds
    aggregate: str  # mean or min
    sampler: str  # tpe or random
    sampler_seed: int | None
    n_startup_trials: int
    pruner: str  # median, halving or none
    pruner_startup_trials: int
    pruner_warmup_evals: int
    enqueue: tuple[str, ...]  # --enqueue YAML mappings
    enqueue_base: bool
    accept_seeds: tuple[int, ...]
    target: float | None  # --target (acceptance); None: the config's or the env's
