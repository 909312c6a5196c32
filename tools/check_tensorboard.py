#!/usr/bin/env python3
"""Check TensorBoard event files written by recur with TensorBoard's own reader (PyPI `tensorboard`).

    python tools/check_tensorboard.py runs/cartpole-20250101-120000      # a run dir (reads tb/)
    python tools/check_tensorboard.py runs/.../tb/events.out.tfevents.*  # or one event file
    python tools/check_tensorboard.py DIR --require rollout/ep_rew_mean --require time/fps

Loads the events with tensorboard.backend.event_processing.event_accumulator.EventAccumulator
(every event kept, no purging of out-of-order steps, so that what is checked is what is in the
files), prints each scalar tag with its number of points, step range and last value, and checks:
every record of every event file passes TensorBoard's own record reader (its length and data
CRC32Cs: the accumulator alone stops quietly at a bad record, taking it for a live file's
unfinished tail); the file version is brain.Event:2; there is at least one scalar; every Stable-Baselines3 tag
(rollout/, train/, time/, eval/ names recur writes) that occurs is a scalar, not another kind of
summary; the steps of every scalar tag strictly increase (env steps, one point per update); each
--require'd tag is present. Non-finite values are reported but allowed (SB3's explained_variance is
NaN when the returns have no variance). Exits 1 on a failed check, 2 when nothing can be loaded.
The C++ side reads the same files with recur::agent::read_tensorboard_scalars (CRCs checked).
Needs: pip install tensorboard (tools/requirements.txt).
"""
import argparse
import math
import os
import sys

SB3_TAGS = [
    "rollout/ep_rew_mean", "rollout/ep_len_mean", "train/policy_gradient_loss", "train/value_loss",
    "train/entropy_loss", "train/approx_kl", "train/clip_fraction", "train/explained_variance",
    "train/learning_rate", "time/fps", "eval/mean_reward",
]


def resolve(target):
    """A run directory is read through its tb/ subdirectory; a file or other directory as given."""
    if os.path.isdir(target) and os.path.isdir(os.path.join(target, "tb")):
        if not any("tfevents" in f for f in os.listdir(target)):
            return os.path.join(target, "tb")
    return target


def event_files(path):
    if os.path.isfile(path):
        return [path]
    return sorted(os.path.join(path, f) for f in os.listdir(path) if "tfevents" in f)


def check_records(path, fail):
    """Reads every record with TensorBoard's TFRecord reader, which checks both CRCs."""
    from tensorboard.compat.tensorflow_stub import errors, pywrap_tensorflow

    files = event_files(path)
    if not files:
        fail(f"no event files (events.out.tfevents.*) in {path}")
    for f in files:
        reader = pywrap_tensorflow.PyRecordReader_New(f)
        records = 0
        while True:
            try:
                reader.GetNext()
            except errors.OutOfRangeError:
                break
            except errors.DataLossError as e:
                fail(f"{f}: record {records} is corrupt or truncated: {e.message}")
                break
            records += 1
        print(f"{f}: {records} record(s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="a run directory, a directory of event files, or one event file")
    ap.add_argument("--require", action="append", default=[], metavar="TAG",
                    help="a scalar tag that must be present (repeatable)")
    args = ap.parse_args()

    from tensorboard.backend.event_processing import event_accumulator

    path = resolve(args.path)
    if not os.path.exists(path):
        print(f"ERROR: {path} does not exist")
        return 2
    acc = event_accumulator.EventAccumulator(
        path, size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0},
        purge_orphaned_data=False)
    try:
        acc.Reload()
    except Exception as e:  # a corrupt file: TensorBoard's reader raises DataLossError etc.
        print(f"ERROR: cannot load {path}: {type(e).__name__}: {e}")
        return 2

    problems = []

    def fail(msg):
        problems.append(msg)
        print(f"PROBLEM: {msg}")

    check_records(path, fail)
    tags = acc.Tags()
    scalars = sorted(tags.get(event_accumulator.SCALARS, []))
    print(f"{path}: file_version {acc.file_version}, {len(scalars)} scalar tag(s)")
    if acc.file_version != 2.0:
        fail(f"file_version is {acc.file_version}, expected 2.0 (brain.Event:2)")
    if not scalars:
        fail("no scalar tags")

    width = max((len(t) for t in scalars), default=0)
    for tag in scalars:
        events = acc.Scalars(tag)
        steps = [e.step for e in events]
        last = events[-1]
        print(f"  {tag:<{width}}  {len(events):5d} point(s)  steps {steps[0]}..{steps[-1]}"
              f"  last {last.value:.6g} (step {last.step})")
        bad = [(a, b) for a, b in zip(steps, steps[1:]) if b <= a]
        if bad:
            fail(f"{tag}: steps do not increase ({bad[0][0]} then {bad[0][1]}, "
                 f"{len(bad)} time(s))")
        nonfinite = sum(1 for e in events if not math.isfinite(e.value))
        if nonfinite:
            print(f"  note: {tag} has {nonfinite} non-finite value(s)")

    for kind, names in tags.items():
        if kind == event_accumulator.SCALARS or not isinstance(names, list):
            continue
        for tag in names:
            if tag in SB3_TAGS:
                fail(f"{tag} is stored as {kind}, not as a scalar")
    for tag in args.require:
        if tag not in scalars:
            fail(f"required tag {tag} is missing")

    present = [t for t in SB3_TAGS if t in scalars]
    print(f"SB3 tags present as scalars: {len(present)}/{len(SB3_TAGS)}"
          + (f" (missing: {', '.join(t for t in SB3_TAGS if t not in scalars)})"
             if len(present) < len(SB3_TAGS) else ""))
    if problems:
        print(f"FAILED: {len(problems)} problem(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
