#!/usr/bin/env bash
# recur record / render (agent/record): datasets, videos and frames as a user makes them
# (tests/cli/lib.sh says how cases run). One tiny trained run, $RECUR_RECORD_RUN, is shared by the
# cases that need a policy: record_fixture_train makes it, record_fixture_cleanup removes it
# (ctest fixtures).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

case_record_fixture_train() {
  : "${RECUR_RECORD_RUN:?where the shared run goes}"
  rm -rf "$RECUR_RECORD_RUN"
  run_ok recur --log-level warn train "$CONFIGS/cartpole.yaml" --set run.total_env_steps=512 \
    --set "run.output_dir=$RECUR_RECORD_RUN" --set run.final_eval_episodes=2
}

case_record_fixture_cleanup() {
  : "${RECUR_RECORD_RUN:?where the shared run is}"
  rm -rf "$RECUR_RECORD_RUN"
}

case_record_random() {
  run_ok recur record --random --env CartPole-v1 --episodes 3 --seed 1 \
    --dataset-id recur/cartpole/random-v0 --out "$tmp"
  [[ -f recur/cartpole/random-v0/data/main_data.hdf5 ]] || fail "no main_data.hdf5"
  [[ -f recur/cartpole/random-v0/data/metadata.json ]] || fail "no metadata.json"
  expect_text 'recorded 3 episodes \([0-9]+ steps\): return [0-9.]+ \+- [0-9.]+; dataset .*/recur/cartpole/random-v0/data\n'
}

# A trained policy with its recurrent state recorded, and videos of the first two episodes.
case_record_trained() {
  run_ok recur record "$RECUR_RECORD_RUN"/cartpole-* --episodes 3 --record-state \
    --video "$tmp/videos" --dataset-id recur/cartpole/ppo-lstm-v0 --out "$tmp"
  grep -aq policy_state recur/cartpole/ppo-lstm-v0/data/main_data.hdf5 ||
    fail "main_data.hdf5 has no policy_state"
  run_ok ls videos
  expect_text <<'END'
recorded 3 episodes \([0-9]+ steps\): return .*; dataset .*/recur/cartpole/ppo-lstm-v0/data; videos 2 in .*/videos
rl-video-episode-0.mp4
rl-video-episode-1.mp4
END
}

# --format both writes Minari and D4RL (--json names both files), --format d4rl the D4RL file alone.
case_record_formats() {
  run_ok recur record --random --env Pendulum-v1 --episodes 2 \
    --dataset-id recur/pendulum/random-v0 --out "$tmp" --format both --json
  run_ok recur record --random --env Pendulum-v1 --episodes 2 \
    --dataset-id recur/pendulum/random-v1 --out "$tmp" --format d4rl
  run_ok ls recur/pendulum/random-v1
  expect_text '(?s)"d4rl": ?"[^"]*/recur/pendulum/random-v0/d4rl.hdf5".*"returns": ?\[-[0-9.]+, ?-[0-9.]+\].*dataset [^\n]*random-v1/d4rl.hdf5\nd4rl.hdf5\n\z'
}

# --json says what acted: the random policy's actions are drawn, not deterministic. (The old test
# had this as FAIL_REGULAR_EXPRESSION: the output must not say deterministic true.)
case_record_random_json() {
  run_ok recur record --random --env CartPole-v1 --episodes 2 \
    --dataset-id recur/cartpole/random-v0 --out "$tmp" --json
  expect_text '"policy": ?"random", ?"deterministic": ?false,'
  expect_no_text '"deterministic": ?true'
}

case_render_png() {
  run_ok recur render CartPole-v1 --out "$tmp/frame.png" --seed 1 --steps 5
  note "$(head -c 4 frame.png | tail -c 3)"
  expect_text <<'END'
wrote .*frame.png \(600x400\) of CartPole-v1, seed 1, after 5 random steps
PNG
END
}

# Bad input: exit 2, a message that says what is wrong (a regex), and nothing left in the output
# directory. a-file, a plain file, stands in the way of the unwritable cases.
record_error() {
  local message=$1
  shift
  touch a-file
  run_status 2 recur record "$@"
  rm a-file
  expect_text "$message"
  [[ -z $(ls -A "$tmp") ]] || fail "recur record left files behind: $(ls -A "$tmp")"
}

case_record_error_unknown_env() {
  record_error "unknown env id 'CartPol-v1'. Closest known ids: CartPole-v1" \
    --random --env CartPol-v1 --episodes 2 --dataset-id recur/x-v0 --out "$tmp/ds" \
    --video "$tmp/v"
}

case_record_error_spaces() {
  record_error 'does not fit env Pendulum-v1: the policy takes observations of size 4 and gives Discrete\(2\); Pendulum-v1 has observation space Box\(\[-1 -1 -8\], \[1 1 8\], \(3,\), float32\) and action space Box' \
    "$RECUR_RECORD_RUN"/cartpole-* --env Pendulum-v1 --episodes 2 --dataset-id recur/x-v0 \
    --out "$tmp/ds"
}

case_record_error_zero_episodes() {
  record_error '--episodes 0: record at least 1 episode' \
    --random --env CartPole-v1 --episodes 0 --dataset-id recur/x-v0 --out "$tmp/ds"
}

case_record_error_unwritable() {
  record_error 'cannot create the dataset directory .*a-file/ds/recur for recur/x-v0: Not a directory' \
    --random --env CartPole-v1 --episodes 2 --dataset-id recur/x-v0 --out "$tmp/a-file/ds"
}

case_record_error_unwritable_video() {
  record_error 'video directory .*a-file/v: cannot create the directory: Not a directory' \
    --random --env CartPole-v1 --episodes 2 --dataset-id recur/x-v0 --out "$tmp/ds" \
    --video "$tmp/a-file/v"
}

case_record_error_random_without_env() {
  record_error '--random needs --env ID' \
    --random --episodes 2 --dataset-id recur/x-v0 --out "$tmp/ds"
}

case_record_error_random_deterministic() {
  record_error "--deterministic picks how a policy's actions are chosen. --random draws them uniformly from the action space: drop --deterministic" \
    --random --env CartPole-v1 --deterministic --episodes 2 --dataset-id recur/x-v0 \
    --out "$tmp/ds"
}

case_record_error_bad_dataset_id() {
  record_error "dataset id 'cartpole' is not a Minari dataset id: it does not end in a version suffix -vN" \
    --random --env CartPole-v1 --episodes 2 --dataset-id cartpole --out "$tmp/ds"
}

case_record_error_video_episode_out_of_range() {
  record_error '--video-episodes: episode 5 is not recorded: there are 2 episodes' \
    --random --env CartPole-v1 --episodes 2 --dataset-id recur/x-v0 --out "$tmp/ds" \
    --video "$tmp/v" --video-episodes 0,5
}

# An existing dataset id is refused without --overwrite (exit 2; the dataset left intact, no
# video directory made) and replaced with it.
case_record_error_existing() {
  recur record --random --env CartPole-v1 --episodes 2 --dataset-id recur/x-v0 --out "$tmp" \
    >/dev/null
  run_status 2 recur record --random --env CartPole-v1 --episodes 3 --dataset-id recur/x-v0 \
    --out "$tmp" --video "$tmp/v"
  [[ ! -e v ]] || fail "the refused record made its video directory"
  note "$(grep -o '"total_episodes": [0-9]*' recur/x-v0/data/metadata.json)"
  run_ok recur record --random --env CartPole-v1 --episodes 3 --dataset-id recur/x-v0 \
    --out "$tmp" --overwrite
  expect_text <<'END'
dataset recur/x-v0 already exists at .*/recur/x-v0; pass --overwrite to replace it.*
"total_episodes": 2
recorded 3 episodes
END
}

main "$@"
