#include "agent/run/background_eval.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "core/error.h"
#include "core/thread_priority.h"

namespace recur::agent {

BackgroundEval::BackgroundEval(Work work, int nice) : work_(std::move(work)), nice_(nice) {}

BackgroundEval::~BackgroundEval() {
  if (future_.valid()) future_.wait();  // std::async's future would also block; said explicitly
}

void BackgroundEval::submit(EvalSnapshot snapshot) {
  RECUR_ASSERT(!future_.valid());
  // The snapshot moves into the task: the thread owns everything it reads except work_, which
  // the job keeps alive (and unchanged) until the future is taken or this object is destroyed.
  future_ = std::async(std::launch::async, [this, s = std::move(snapshot)]() mutable {
    // Below the training threads: the envs' steps wait for their slowest worker, and a busy
    // evaluation thread that takes a worker's core stalls every step (run.eval_nice).
    if (nice_ > 0) {
      if (const std::string why = set_thread_nice(nice_); !why.empty())
        spdlog::debug("run.eval_nice: the evaluation runs at the job's priority: {}", why);
    }
    EvalOutcome out;
    static_cast<EvalReport&>(out) = work_(s);
    out.snapshot = std::move(s);
    out.finished = std::chrono::steady_clock::now();
    return out;
  });
}

std::optional<EvalOutcome> BackgroundEval::poll() {
  if (!future_.valid() || future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return std::nullopt;
  return future_.get();  // get() invalidates the future and rethrows the task's exception
}

std::optional<EvalOutcome> BackgroundEval::wait() {
  if (!future_.valid()) return std::nullopt;
  return future_.get();
}

}  // namespace recur::agent
