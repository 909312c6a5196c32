#!/usr/bin/env bash
# The example env plugin tools/examples/tmaze ($RECUR_TMAZE), driven through `recur`
# (envs/plugin.h, README "Your own environment"). tmaze_train trains the run $RECUR_TMAZE_RUN that tmaze_eval and
# tmaze_record_video use; tmaze_run_cleanup removes it (ctest fixtures). (tests/cli/lib.sh says
# how cases run.)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

: "${RECUR_TMAZE:?the T-maze plugin (libtmaze_plugin.so)}"

# `recur envs` lists the plugin's envs with where they come from.
case_tmaze_envs() {
  run_ok recur envs --plugin "$RECUR_TMAZE"
  expect_text <<'END'
TMaze-v0  \[memory\]  \(plugin .*libtmaze_plugin.so\)
.*
.*
.*
  render      600x300 at 4 fps
  max steps 40, reward threshold 3.8

TMazeLong-v0
END
}

# env-check: every rule passes, seeding included: the T-maze's whole reset distribution is one fair
# bit (the cue), so about half the other seeds repeat the episode, and the rule asks only that the
# same seed repeats it and some other seed changes it (state replay included: get_state/set_state
# are exact).
case_tmaze_env_check() {
  run recur env-check TMaze-v0 --plugin "$RECUR_TMAZE"
  quiet recur env-check TMazeLong-v0 --plugin "$RECUR_TMAZE" -o length=3 -o max_episode_steps=20
  note "$(last_output | grep -c '^PASS')"
  expect_text <<'END'
PASS  make.*
PASS  spaces.*
PASS  seeding.*
PASS  observations.*
PASS  time limit +limit 40:.*
PASS  bookkeeping.*
PASS  bad actions.*
PASS  call order.*
PASS  state replay +3 state values; steps replay exactly
.*
9\n
END
}

# The rules, through random episodes of a 1-cell corridor: an episode ends only in an arm (+4 or
# -0.1) or at the time limit (0, unlikely with 4 random actions in 40 steps), after >= 2 steps.
case_tmaze_dynamics() {
  local demo
  demo=$(recur demo --env TMaze-v0 --plugin "$RECUR_TMAZE" -o length=1 --episodes 400 --seed 5 \
    2>/dev/null)
  note "$(awk '/^episode/ { print $5; if ($7 < 2) print "too-short" }' <<<"$demo" |
    LC_ALL=C sort -u | tr '\n' ' ')"
  expect_text '\A-0\.100 4\.000 *\n\z'
}

# An LSTM learns it (configs/tmaze.yaml): stopped after the first evaluation at the threshold, in a
# few seconds. The run directory records the plugin; eval and record find it there.
case_tmaze_train() {
  : "${RECUR_TMAZE_RUN:?where the shared run goes}"
  rm -rf "$RECUR_TMAZE_RUN"
  run_ok recur --log-level warn train "$CONFIGS/tmaze.yaml" --set "env.plugin=$RECUR_TMAZE" \
    --set "run.output_dir=$RECUR_TMAZE_RUN" --set run.stop_at_target=true \
    --set run.total_env_steps=150000 --set run.final_eval_episodes=20
  expect_text 'target 3.80 reached at [0-9]+ env steps, [0-9.]+ s \(run.stop_at_target: stopped at [0-9]+ env steps\)'
}

case_tmaze_run_cleanup() {
  rm -rf "${RECUR_TMAZE_RUN:?}"
}

case_tmaze_eval() {
  run_ok recur eval "$RECUR_TMAZE_RUN"/tmaze-* --episodes 20 --deterministic
  expect_text 'on TMaze-v0 \(20 episodes, deterministic\): return 3\.[89][0-9]|return 4\.00'
}

case_tmaze_record_video() {
  run_ok recur record "$RECUR_TMAZE_RUN"/tmaze-* --episodes 2 --video "$tmp/videos" \
    --dataset-id recur/tmaze/ppo-lstm-v0 --out "$tmp"
  run_ok ls videos
  expect_text <<'END'
recorded 2 episodes.*
rl-video-episode-0.mp4
rl-video-episode-1.mp4\n
END
}

case_tmaze_render() {
  run_ok recur render TMaze-v0 --plugin "$RECUR_TMAZE" --out "$tmp/f.png" --seed 1 --steps 6
  note "$(head -c 4 f.png | tail -c 3)"
  expect_text '\(600x300\) of TMaze-v0.*\nPNG\n'
}

main "$@"
