// Filming one episode of a policy into an MP4, the one way recur does it outside a dataset
// recording: `recur train`'s evaluation videos (run.video_every_evals, record_eval_video in
// recorder.h) and the Python package's recur.record_video and its training videos on Gymnasium
// envs.
//
// The episode is the first one an evaluation with the same seed runs in its env 0
// (agent/evaluator.h): the env is reset with `seed` (env 0 of a batch gets derive_seed(seed, 0),
// a single env is reset as that env 0), the policy's state is zeroed at the reset and it acts
// deterministically or samples from Rng(derive_seed(seed, 77)), until the episode ends. The video
// has N+1 frames: the reset state, then the state after every step (the last one the episode's
// final state). A frame of odd width or height loses its last column or row (VideoWriter's rule,
// for every video recur writes).
//
//   const double ret = film_episode(*envs::make("CartPole-v1"), spec, tensors, 7, true, "a.mp4");
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "envs/batch_env.h"
#include "envs/env.h"
#include "envs/render/frame.h"
#include "policy/device_choice.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::agent::record {

// Env 0's current state as an RGB frame (valid until the next call).
using FrameSource = std::function<const envs::render::Frame&()>;

// On a batch of one env whose frames come from `frame`, at `fps` frames per second. After the step
// that ends the episode, `frame` must show the final state: a batch without autoreset, or with
// Gymnasium's NEXT_STEP autoreset (the Python package's "video" batch). Returns the episode's
// return. Throws recur::Error when the policy does not fit the env's spaces, the env renders
// nothing or the video cannot be written (nothing is then left at `path`).
double film_episode(envs::BatchEnv& env, const FrameSource& frame, int fps,
                    const policy::PolicySpec& spec, const policy::TensorMap& tensors, uint64_t seed,
                    bool deterministic, const std::string& path,
                    const policy::Placement& placement = {});

// On one of recur's envs, drawn by envs::render::Renderer at its render_info().fps (recur::Error
// when it does not render); the env is stepped as env 0 of a batch without autoreset.
double film_episode(envs::Env& env, const policy::PolicySpec& spec,
                    const policy::TensorMap& tensors, uint64_t seed, bool deterministic,
                    const std::string& path, const policy::Placement& placement = {});

}  // namespace recur::agent::record
