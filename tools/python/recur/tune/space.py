"""recur tune's search spaces: the YAML file (docs/TUNING.md), its checks, and the values it
gives recur's config keys. Also TuneError, the tuner's bad input (exit 2)."""

from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any

import yaml

from ..overrides import yaml_value

SPACE_FIELDS = {
    "float": {"type", "low", "high", "log", "step", "one_minus"},
    "int": {"type", "low", "high", "log", "step"},
    "categorical": {"type", "choices"},
}


class TuneError(Exception):
    """Bad input (arguments, search space, storage): printed, exit code 2."""


@dataclasses.dataclass
class Param:
    key: str  # the recur config key, e.g. algo.gamma
    kind: str  # float, int or categorical
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    step: float | int | None = None
    one_minus: bool = False  # sample 1 - value in [low, high] (the zoo's gamma and gae_lambda)
    choices: list[Any] = dataclasses.field(default_factory=list)  # as written in the YAML

    @property
    def name(self) -> str:
        """The Optuna parameter name."""
        return f"1-{self.key}" if self.one_minus else self.key

    def optuna_choices(self) -> list[Any]:
        # Optuna keeps None, bool, int, float and str; a list such as [64, 64] travels as its
        # YAML text, which is also what --set takes.
        return [
            c if isinstance(c, (type(None), bool, int, float, str)) else yaml_value(c)
            for c in self.choices
        ]

    def suggest(self, trial) -> Any:
        if self.kind == "float":
            return trial.suggest_float(self.name, self.low, self.high, log=self.log, step=self.step)
        if self.kind == "int":
            return trial.suggest_int(
                self.name, self.low, self.high, log=self.log, step=self.step or 1
            )
        return trial.suggest_categorical(self.name, self.optuna_choices())

    def config_value(self, sampled: Any) -> Any:
        """The recur config value of an Optuna value."""
        return 1.0 - sampled if self.one_minus else sampled

    def optuna_value(self, config_value: Any) -> Any:
        """The Optuna value of a recur config value, or None when it is outside the space."""
        if self.kind == "categorical":
            encoded = self.optuna_choices()
            for choice, enc in zip(self.choices, encoded):
                same_kind = isinstance(choice, bool) == isinstance(config_value, bool)
                if same_kind and (choice == config_value or enc == config_value):
                    return enc
            return None
        if isinstance(config_value, bool) or not isinstance(config_value, (int, float)):
            return None
        v = 1.0 - config_value if self.one_minus else config_value
        if self.kind == "int" and v != int(v):
            return None
        return v if self.low <= v <= self.high else None

    def extremes(self) -> list[Any]:
        """Config values that probe the space's edges (for the dry run)."""
        if self.kind == "categorical":
            return list(self.choices)
        return [self.config_value(self.low), self.config_value(self.high)]


def _number(value: Any, integer: bool) -> bool:
    if isinstance(value, bool):
        return False
    if integer:
        return isinstance(value, int)
    return isinstance(value, (int, float)) and math.isfinite(value)


def load_space(path: pathlib.Path, algo_type: str | None = None) -> list[Param]:
    """Reads and checks a search-space file; TuneError names the file, the entry and what is
    expected."""
    where = str(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise TuneError(f"search space {where}: cannot be read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise TuneError(f"search space {where}: not valid YAML: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("params"), dict) or not doc["params"]:
        raise TuneError(
            f"search space {where}: expected a mapping with 'params:' (one entry per config key, "
            "e.g. 'algo.learning_rate: {type: float, low: 1e-5, high: 2e-3, log: true}')"
        )
    unknown = set(doc) - {"algo", "params"}
    if unknown:
        raise TuneError(
            f"search space {where}: unknown top-level key(s) {sorted(unknown)}; "
            "allowed: algo, params"
        )
    if algo_type is not None and doc.get("algo") is not None and doc["algo"] != algo_type:
        raise TuneError(
            f"search space {where}: written for algo {doc['algo']!r}, the config trains "
            f"algo.type {algo_type!r}"
        )
    params = []
    for key, entry in doc["params"].items():
        at = f"search space {where}: entry {key!r}"
        if not isinstance(key, str) or key.count(".") < 1:
            raise TuneError(
                f"{at}: the name must be a recur config key 'section.key' (e.g. algo.gamma)"
            )
        if not isinstance(entry, dict) or entry.get("type") not in SPACE_FIELDS:
            raise TuneError(
                f"{at}: expected a mapping with type: float, int or categorical "
                "(e.g. {type: float, low: 0.1, high: 0.4})"
            )
        kind = entry["type"]
        extra = set(entry) - SPACE_FIELDS[kind]
        if extra:
            raise TuneError(
                f"{at}: unknown field(s) {sorted(extra)} for type {kind}; "
                f"allowed: {sorted(SPACE_FIELDS[kind])}"
            )
        params.append(_param(at, key, kind, entry))
    return params


def _param(at: str, key: str, kind: str, entry: dict[str, Any]) -> Param:
    """One checked entry of the space (`at` names the file and the entry for messages)."""
    p = Param(key=key, kind=kind)
    if kind == "categorical":
        choices = entry.get("choices")
        if not isinstance(choices, list) or not choices:
            raise TuneError(f"{at}: choices must be a non-empty list, got {choices!r}")
        p.choices = choices
        return p
    integer = kind == "int"
    what = "an integer" if integer else "a finite number"
    for field in ("low", "high"):
        if field not in entry:
            raise TuneError(f"{at}: missing '{field}' ({what})")
        if not _number(entry[field], integer):
            raise TuneError(f"{at}: {field} must be {what}, got {entry[field]!r}")
    p.low, p.high = entry["low"], entry["high"]
    if p.low > p.high:
        raise TuneError(f"{at}: the range is empty: low {p.low!r} > high {p.high!r}")
    p.log = entry.get("log", False)
    if not isinstance(p.log, bool):
        raise TuneError(f"{at}: log must be true or false, got {p.log!r}")
    if p.log and p.low <= 0:
        raise TuneError(f"{at}: log: true needs low > 0, got {p.low!r}")
    p.step = entry.get("step")
    if p.step is not None and (not _number(p.step, integer) or p.step <= 0):
        raise TuneError(f"{at}: step must be {what} > 0, got {p.step!r}")
    if p.step is not None and p.log:
        raise TuneError(f"{at}: step and log: true cannot be combined")
    p.one_minus = entry.get("one_minus", False)
    if not isinstance(p.one_minus, bool):
        raise TuneError(f"{at}: one_minus must be true or false, got {p.one_minus!r}")
    return p


def flatten(doc: Any, prefix: str = "") -> dict[str, Any]:
    out = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            path = f"{prefix}{k}"
            if isinstance(v, dict) and path != "env.options":
                out.update(flatten(v, path + "."))
            else:
                out[path] = v
    return out


def minibatch_fix(values: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """recur's minibatches are whole training sequences, so algo.num_minibatches must divide their
    count: env.num_envs, times algo.rollout_steps / algo.bptt_steps when bptt_steps cuts rollouts
    into pieces. A value that does not becomes the largest divisor of the count below it."""
    if "algo.num_minibatches" not in values:
        return values

    def get(key: str) -> Any:
        return values.get(key, base.get(key))

    sequences = get("env.num_envs")
    steps, bptt = get("algo.rollout_steps"), get("algo.bptt_steps")
    if isinstance(sequences, int) and isinstance(steps, int) and isinstance(bptt, int):
        if 0 < bptt < steps and steps % bptt == 0:
            sequences *= steps // bptt
    mb = values["algo.num_minibatches"]
    valid = isinstance(sequences, int) and isinstance(mb, int) and sequences >= 1 and mb >= 1
    if valid and sequences % mb:
        values = dict(values)
        values["algo.num_minibatches"] = max(
            d for d in range(1, min(mb, sequences) + 1) if sequences % d == 0
        )
    return values


def check_space_values(params: list[Param], runner: Any, base: dict[str, Any], space: str) -> None:
    """recur's own validation of the space's edges (runner: a runner.Runner): a dry run
    (--print-config) with every low, every high and every choice; one failing dry run is narrowed
    down to the entry that recur refuses."""
    probes = []
    longest = max(len(p.extremes()) for p in params)
    for i in range(longest):
        probes.append({p.key: p.extremes()[i % len(p.extremes())] for p in params})
    for probe in probes:
        if runner.print_config(minibatch_fix(probe, base)).returncode == 0:
            continue
        for p in params:
            for v in p.extremes():
                one = minibatch_fix({p.key: v}, base)
                res = runner.print_config(one)
                if res.returncode != 0:
                    msg = res.stderr.strip().removeprefix("error: ")
                    raise TuneError(
                        f"search space {space}: entry {p.key!r}: recur refuses "
                        f"{p.key}={yaml_value(v)}: {msg}"
                    )
        raise TuneError(
            f"search space {space}: recur refuses this combination of edge values: "
            + ", ".join(f"{k}={yaml_value(v)}" for k, v in probe.items())
            + f": {runner.print_config(minibatch_fix(probe, base)).stderr.strip()}"
        )
