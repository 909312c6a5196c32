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
  expect_text 'known layouts: tf-lstm-block, tf-layer-norm-lstm, keras, onnx'
}

# write_tf_layer_norm FILE [bias]: a 2-layer TF LayerNormBasicLSTMCell (input 3, hidden 2) under
# MultiRNNCell's names, as safetensors (tests/data/convert/make_fixtures.py's format). Values are
# on a 2^-6 grid, so folding forget_bias = 1 into the forget shift and back out is exact. With
# `bias`, layer 0 also has the "bias" of a layer_norm=False cell.
write_tf_layer_norm() {
  perl -e '
    my ($in, $h, $n, %t) = (3, 2, 0);
    sub val { $n++; return (($n * 37) % 61 - 30) / 32; }  # deterministic, in [-0.94, 0.94]
    for my $k (0, 1) {
      my $s = "rnn/multi_rnn_cell/cell_$k/layer_norm_basic_lstm_cell/";
      my $rows = ($k ? $h : $in) + $h;
      $t{"${s}kernel"} = [[$rows, 4 * $h], [map { val() } 1 .. $rows * 4 * $h]];
      for my $scope (qw(input transform forget output state)) {
        $t{"$s$scope/gamma"} = [[$h], [map { 1 + val() / 2 } 1 .. $h]];
        $t{"$s$scope/beta"} = [[$h], [map { val() / 2 } 1 .. $h]];
      }
      $t{"${s}bias"} = [[4 * $h], [map { val() } 1 .. 4 * $h]] if $ARGV[0] && !$k;
    }
    my ($off, $json, $data) = (0, "", "");
    for my $name (sort keys %t) {
      my ($shape, $v) = @{$t{$name}};
      my $bytes = pack("f<*", @$v);
      $json .= sprintf(q("%s":{"dtype":"F32","shape":[%s],"data_offsets":[%d,%d]},),
                       $name, join(",", @$shape), $off, $off + length $bytes);
      $off += length $bytes;
      $data .= $bytes;
    }
    $json = "{" . $json . q("__metadata__":{"source":"convert.sh"}});
    $json .= " " x (-length($json) % 8);
    print pack("Q<", length $json), $json, $data;
  ' "${2:-}" >"$1"
}

# An lstm_ln core imported from TF's LayerNormBasicLSTMCell, exported back and imported again:
# the checkpoints are byte for byte the same and the TF tensors match the original file's.
case_convert_layer_norm_roundtrip() {
  write_tf_layer_norm tf.safetensors
  run_ok recur convert import tf.safetensors --from tf-layer-norm-lstm --out c.safetensors
  expect_text 'forget_bias 1 folded into the forget-gate LayerNorm shifts; LayerNorm eps 1e-12'
  run_ok recur convert show c.safetensors
  expect_text '    core\.cell = lstm_ln\n'
  expect_text '    core\.norm_epsilon = 1e-12\n'
  expect_text '    core\.norm_bias_l1 +\[5, 2\] '
  expect_no_text 'core\.bias_ih'
  run_ok recur convert export c.safetensors --to tf-layer-norm-lstm --out tf2.safetensors
  expect_no_text 'eps is'  # an imported core already has TF's eps
  run_ok recur convert import tf2.safetensors --from tf-layer-norm-lstm --out c2.safetensors
  cmp c.safetensors c2.safetensors || fail "c2.safetensors differs from c.safetensors"
  tensors() { recur convert show "$1" | sed -n '/^  tensors (/,$p'; }
  diff <(tensors tf.safetensors) <(tensors tf2.safetensors) ||
    fail "the exported TF tensors differ from the original file's"
}

# A plain lstm core is not a layer-norm cell: exit 2, nothing written, and the layout to use.
case_convert_layer_norm_refuses_lstm() {
  recur convert import "$DATA/convert/keras_lstm.safetensors" --from keras --out c.safetensors \
    >/dev/null
  run_status 2 recur convert export c.safetensors --to tf-layer-norm-lstm --out tf.safetensors
  expect_text 'lstm_ln cores only, this core is lstm; .*use the tf-lstm-block layout'
  [[ ! -e tf.safetensors ]] || fail "tf.safetensors was written"
}

# A layer_norm=False cell (one bias, no gammas or betas) is pointed at tf-lstm-block.
case_convert_layer_norm_false_refused() {
  write_tf_layer_norm tf.safetensors bias
  run_status 2 recur convert import tf.safetensors --from tf-layer-norm-lstm --out c.safetensors
  expect_text "layer_norm=False.*import it with --from tf-lstm-block"
  [[ ! -e c.safetensors ]] || fail "c.safetensors was written"
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
