// Evaluations beside training (run.eval_async): the training job snapshots what an evaluation
// needs (the policy's spec and a copy of its tensors, the env step count, the elapsed seconds) and
// hands it here; the evaluation then runs on a thread of its own, with its own envs and actor,
// while training goes on. One evaluation at a time: the job waits for the previous one before it
// submits the next (evaluations are rarer than updates, so that wait is short or nothing), and
// takes the results in order. The job logs them (eval.csv, TensorBoard, best checkpoint) with the
// snapshot's step and seconds, so the time to target is the same as a synchronous evaluation's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <utility>

#include "agent/evaluator.h"
#include "policy/policy_spec.h"
#include "policy/tensor.h"

namespace recur::agent {

// The policy as it was at an evaluation point.
struct EvalSnapshot {
  policy::PolicySpec spec;
  policy::TensorMap tensors;  // a copy: training changes the algorithm's own meanwhile
  int64_t env_steps = 0;
  double seconds = 0;  // the job's elapsed training seconds when the snapshot was taken
  bool film = false;   // this evaluation also films an episode (run.video_every_evals)
  // run.target_confirm_episodes: the target, when an evaluation reaching it is to be confirmed by
  // more episodes of these weights (the target not yet reached, the evaluation shorter than the
  // confirmation); absent: no confirmation.
  std::optional<double> confirm_target;
};

// What one evaluation returns: its result, and the confirmation's when one ran.
struct EvalReport {
  EvalReport() = default;
  EvalReport(EvalResult r) : result(std::move(r)) {}  // NOLINT: implicit, no confirmation
  EvalResult result;
  std::optional<EvalResult> confirmation;
};

// A finished evaluation: its report, its snapshot, and when it was ready.
struct EvalOutcome : EvalReport {
  EvalSnapshot snapshot;
  std::chrono::steady_clock::time_point finished;
};

class BackgroundEval {
 public:
  // What an evaluation does with a snapshot (on the evaluation's thread): evaluate, maybe film
  // and confirm.
  using Work = std::function<EvalReport(const EvalSnapshot&)>;
  // nice: the evaluation thread's nice value (run.eval_nice; 0 leaves it as the job's threads).
  explicit BackgroundEval(Work work, int nice = 0);
  // Waits for a running evaluation (no thread outlives its job); its result or error is dropped:
  // the job collects with wait() before every normal exit.
  ~BackgroundEval();
  BackgroundEval(const BackgroundEval&) = delete;
  BackgroundEval& operator=(const BackgroundEval&) = delete;

  // An evaluation submitted and not yet taken (running or finished).
  bool busy() const { return future_.valid(); }
  // Starts an evaluation of `snapshot`; the previous one must have been taken (busy() false).
  void submit(EvalSnapshot snapshot);
  // The submitted evaluation if it has finished (nullopt: none, or still running), without
  // waiting. An exception thrown by the evaluation is rethrown here, as it was thrown.
  std::optional<EvalOutcome> poll();
  // The submitted evaluation, waiting for it to finish (nullopt: none); rethrows as poll().
  std::optional<EvalOutcome> wait();

 private:
  Work work_;
  int nice_ = 0;
  std::future<EvalOutcome> future_;
};

}  // namespace recur::agent
