#!/usr/bin/env bash
# recur installed and used as a package (docs/LIBRARY.md): this build ($RECUR_BUILD_DIR) is
# installed into a temporary prefix and the examples under tools/examples are configured and
# built against the installed tree alone, with the CMake settings of this build ($RECUR_CMAKE,
# $RECUR_GENERATOR, $RECUR_CXX, $RECUR_BUILD_TYPE). (tests/cli/lib.sh says how cases run.)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

: "${RECUR_CMAKE:?}" "${RECUR_BUILD_DIR:?}" "${RECUR_GENERATOR:?}" "${RECUR_CXX:?}"
prefix=$tmp/prefix

install_recur() {
  "$RECUR_CMAKE" --install "$RECUR_BUILD_DIR" --prefix "$prefix" >/dev/null
}

# configure SOURCE BUILD [ARGS...]: an example configured against the installed tree.
configure() {
  local source=$1 build=$2
  shift 2
  "$RECUR_CMAKE" -S "$source" -B "$build" -G "$RECUR_GENERATOR" "-DCMAKE_CXX_COMPILER=$RECUR_CXX" \
    "-DCMAKE_BUILD_TYPE=${RECUR_BUILD_TYPE:-}" "-DCMAKE_PREFIX_PATH=$prefix" "$@"
}

# The installed `recur` trains a tiny policy, and tools/examples (find_package(recur),
# recur::recur, with one file that includes every installed header) runs it.
case_example() {
  install_recur
  "$prefix/bin/recur" --log-level warn train "$CONFIGS/cartpole_novel.yaml" \
    --set run.total_env_steps=512 --set "run.output_dir=$tmp/runs" \
    --set run.final_eval_episodes=1 >/dev/null
  run_ok configure "$SRC/tools/examples" ex -DRECUR_EXAMPLE_CHECK_HEADERS=ON
  run_ok "$RECUR_CMAKE" --build ex -j 2
  run_ok ex/run_policy runs/cartpole_novel-*/checkpoints/latest.safetensors 3
  expect_text '\nCartPoleNoVel-v1: 3 episodes, mean return [0-9]+\.[0-9][0-9]\n\z'
}

# recur::agent: tools/examples/own_env (find_package(recur COMPONENTS agent)) registers
# RememberBit-v0, trains it to its target from remember_bit.yaml, evaluates the run and records a
# Minari dataset. The program exits 1 when the target is not reached.
case_agent_example() {
  install_recur
  configure "$SRC/tools/examples/own_env" ex >/dev/null
  "$RECUR_CMAKE" --build ex -j 2 >/dev/null
  run_ok ex/remember_bit "$tmp/out"
  [[ -f out/datasets/recur/remember-bit/ppo-lstm-v0/data/main_data.hdf5 ]] ||
    fail "no main_data.hdf5 in the example's dataset"
  expect_text <<'END'
RememberBit-v0: target 0\.90 reached at [0-9]+ env steps, [0-9.]+ s
run directory .*/out/remember_bit-[0-9-]+
evaluation \(50 episodes, deterministic\): mean return [0-9.]+
dataset .*/out/datasets/recur/remember-bit/ppo-lstm-v0/data: 10 episodes, [0-9]+ steps, mean return [0-9.]+
\z
END
}

# The T-maze plugin against the installed package alone: tools/examples/tmaze (its 5-line
# CMakeLists.txt: find_package(recur), recur_add_env_plugin) configured and built there, and the
# installed `recur` env-checks (all 9 checks pass) and lists it.
case_plugin() {
  install_recur
  configure "$SRC/tools/examples/tmaze" tm >/dev/null
  "$RECUR_CMAKE" --build tm >/dev/null
  quiet "$prefix/bin/recur" env-check TMaze-v0 --plugin "$tmp/tm/libtmaze_plugin.so"
  note "$(last_output | grep -c '^PASS')"
  quiet "$prefix/bin/recur" envs --plugin "$tmp/tm/libtmaze_plugin.so"
  note "$(last_output | grep '^TMaze')"
  expect_text <<'END'
\A9
TMaze-v0  \[memory\]  \(plugin /.*/tm/libtmaze_plugin.so\)
TMazeLong-v0  \[memory\]
END
}

main "$@"
