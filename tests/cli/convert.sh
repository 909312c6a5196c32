#!/usr/bin/env bash
# recur convert (tests/cli/lib.sh says how cases run).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# A Keras LSTM fixture (tests/data/convert/make_fixtures.py) imported, exported to TF's
# LSTMBlockCell layout, imported back and shown.
case_convert_roundtrip() {
  run_ok recur convert import "$DATA/convert/keras_lstm.safetensors" --from keras --out c.safetensors
  run_ok recur convert export c.safetensors --to tf-lstm-block --out tf.safetensors
  run_ok recur convert import tf.safetensors --from tf-lstm-block --out c2.safetensors
  run_ok recur convert show c2.safetensors
  expect_text 'core.weight_ih_l1 +\[8, 2\]'
}

case_convert_unknown_layout() {
  run_status 2 recur convert export x --to caffe --out y
  expect_text 'known layouts: tf-lstm-block, keras, onnx'
}

# --to onnx (builds with libonnx): a tiny run's policy as a user exports it.
case_convert_onnx() {
  recur --log-level warn train "$CONFIGS/pendulum_novel.yaml" --set run.total_env_steps=512 \
    --set env.num_envs=4 --set algo.rollout_steps=64 --set "run.output_dir=$tmp" \
    --set run.final_eval_episodes=1 >/dev/null
  run_ok recur convert export pendulum_novel-* --to onnx --out p.onnx
  [[ -s p.onnx ]] || fail "p.onnx is missing or empty"
  expect_text <<'END'
exported the continuous policy \(lstm 64 x1\) of .* \(ONNX opset 13\)
  inputs  obs \[batch, 3\], episode_start \[batch\], h_in \[1, batch, 64\], c_in \[1, batch, 64\], critic_h_in \[1, batch, 64\], critic_c_in \[1, batch, 64\]
  outputs actions \[batch, 1\], mean \[batch, 1\], log_std \[1\], value \[batch\], h_out
END
}

# A bare core (no policy) is refused with exit 2 and nothing written.
case_convert_onnx_not_a_policy() {
  recur convert import "$DATA/convert/keras_lstm.safetensors" --from keras --out c.safetensors \
    >/dev/null
  run_status 2 recur convert export c.safetensors --to onnx --out p.onnx
  expect_text 'not a recur policy checkpoint'
  [[ ! -e p.onnx ]] || fail "p.onnx was written"
}

# A build without libonnx says how to get it.
case_convert_onnx_unavailable() {
  run_status 2 recur convert export x --to onnx --out y
  expect_text '(?s)no ONNX export.*libonnx-dev'
}

main "$@"
