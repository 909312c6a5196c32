"""``--set key=value`` text from Python values: shared by :func:`recur.train` and the tuner.

Imports nothing of the extension, so that the tuner runs without it (tools/cli/cmd_tune.cc).
"""

from __future__ import annotations

from typing import Any


def yaml_value(value: Any) -> str:
    """A Python value as the YAML scalar or flow collection that ``--set key=value`` takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(v)}" for k, v in value.items()) + "}"
    return str(value)
