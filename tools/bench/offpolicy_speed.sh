#!/usr/bin/env bash
# Recurrent SAC's learner speed, side by side in one run (docs/PERFORMANCE.md, "Recurrent SAC and
# TD3"): recur's gradient updates/s on PendulumNoVel (B 32 sequences x 33 rows, LSTM 64, encoder
# and heads 64; the previous action and reward as inputs) read from a short training run's
# progress.csv, with run.learner_threads 1 and 2, the PyTorch peer's on the same shapes
# (tools/bench/peers/recurrent_sac_torch.py --bench-updates), and the fused sequence core's
# roofline at that shape (`recur bench rnn`).
#   tools/bench/offpolicy_speed.sh [RECUR] [PYTHON_WITH_TORCH]
set -euo pipefail
recur=${1:-build/tools/recur}
py=${2:-python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for threads in 1 2; do
  echo "== recur: SAC updates/s (PendulumNoVel, run.learner_threads $threads, updates_per_step 1)"
  "$recur" --log-level warn train configs/pendulum_novel_sac.yaml --set run.total_env_steps=6000 \
    --set offpolicy.learning_starts=1000 --set offpolicy.updates_per_step=1 \
    --set run.eval_every=0 --set run.final_eval_episodes=1 --set run.stop_at_target=false \
    --set run.learner_threads="$threads" --set "run.output_dir=$out" --set run.name="t$threads" \
    >/dev/null
  python3 - "$out"/t"$threads"-*/progress.csv "$threads" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
a, b = rows[1], rows[-1]  # skip the row with the first updates (warm-up)
du = float(b["n_updates"]) - float(a["n_updates"])
dt = sum(float(r["learn_time_s"]) for r in rows[2:])
print(f"recur_updates_per_s={du / dt:.1f} learner_threads={sys.argv[2]} updates={du:.0f} "
      f"learn_s={dt:.2f}")
PY
done

# Spin-waiting OpenMP threads are PyTorch's fastest on a quiet machine (2 threads, 2026-11-28:
# ACTIVE 177.3 updates/s, the default policy 159.5, PASSIVE 31.9); PASSIVE stays as a third row,
# the setting for a loaded machine.
echo "== PyTorch peer, same shapes"
for run in "1 ACTIVE" "2 ACTIVE" "2 PASSIVE"; do
  read -r threads policy <<<"$run"
  OMP_WAIT_POLICY=$policy "$py" tools/bench/peers/recurrent_sac_torch.py --bench-updates 200 \
    --prev-action-reward --threads "$threads" | grep -E "updates_per_s|^B=" || true
done

echo "== fused LSTM core at the learner's shape (fwd+bwd per sequence batch)"
"$recur" bench rnn --input 64 --batch 32 --hidden 64 --seq-len 33
