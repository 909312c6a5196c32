#include "agent/run/resume_state.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "agent/run/json_read.h"
#include "core/error.h"

namespace recur::agent {
namespace {
using nlohmann::json;
using namespace json_read;

JobState parse_job(const json& job) {
  JobState o;
  o.env_steps = integer(job.at("env_steps"), "job.env_steps", 0);
  for (const json& x : array(job.at("returns"), "job.returns"))
    o.returns.push_back(real(x, "job.returns"));
  for (const json& x : array(job.at("lengths"), "job.lengths"))
    o.lengths.push_back(
        static_cast<int>(integer(x, "job.lengths", 0, std::numeric_limits<int>::max())));
  o.episodes = integer(job.at("episodes"), "job.episodes", 0);
  o.progress_rows = integer(job.at("progress_rows"), "job.progress_rows", 0);
  o.eval_rows = integer(job.at("eval_rows"), "job.eval_rows", 0);
  o.next_eval = integer(job.at("next_eval"), "job.next_eval", -1);
  o.next_ckpt = integer(job.at("next_ckpt"), "job.next_ckpt", -1);
  if (!job.at("best").is_null()) o.best = real(job["best"], "job.best");
  o.elapsed = real(job.at("elapsed"), "job.elapsed");
  // Keys that older files lack (see the header).
  if (job.contains("target_env_steps") && !job["target_env_steps"].is_null())
    o.target_env_steps = integer(job["target_env_steps"], "job.target_env_steps", 0);
  if (job.contains("target_seconds"))
    o.target_seconds = real(job["target_seconds"], "job.target_seconds");
  if (job.contains("train_target_env_steps") && !job["train_target_env_steps"].is_null())
    o.train_target_env_steps =
        integer(job["train_target_env_steps"], "job.train_target_env_steps", 0);
  if (job.contains("train_target_seconds"))
    o.train_target_seconds = real(job["train_target_seconds"], "job.train_target_seconds");
  if (job.contains("segments")) {
    for (const json& x : array(job["segments"], "job.segments"))
      o.segments.push_back(real(x, "job.segments"));
  } else {
    o.segments = {o.elapsed};
  }
  if (job.contains("finished")) o.finished = boolean(job["finished"], "job.finished");
  if (job.contains("pending_eval_seconds") && !job["pending_eval_seconds"].is_null())
    o.pending_eval_seconds = real(job["pending_eval_seconds"], "job.pending_eval_seconds");
  if (job.contains("confirm_rows"))
    o.confirm_rows = integer(job["confirm_rows"], "job.confirm_rows", 0);
  return o;
}

ResumeState parse_generation(const json& state) {
  RECUR_CHECK(state.is_object() && state.contains("trainer") && state.contains("job"),
              "it has no \"trainer\" and \"job\"");
  ResumeState r;
  r.trainer_states.push_back(string(state["trainer"], "trainer"));
  if (state.contains("ranks"))
    for (const json& s : array(state["ranks"], "ranks"))
      r.trainer_states.push_back(string(s, "ranks[]"));
  if (state.contains("trainer_tensors")) {
    r.trainer_tensors = string(state["trainer_tensors"], "trainer_tensors");
    RECUR_CHECK(!r.trainer_tensors.empty() &&
                    r.trainer_tensors.find_first_of("/\\") == std::string::npos &&
                    r.trainer_tensors.front() != '.',
                "trainer_tensors = \"{}\" is not a file name in checkpoints/", r.trainer_tensors);
  }
  r.job = parse_job(state["job"]);
  return r;
}

json generation_json(const ResumeState& s) {
  const JobState& j = s.job;
  json job = {
      {"env_steps", j.env_steps},
      {"returns", j.returns},
      {"lengths", j.lengths},
      {"episodes", j.episodes},
      {"progress_rows", j.progress_rows},
      {"eval_rows", j.eval_rows},
      {"next_eval", j.next_eval},
      {"next_ckpt", j.next_ckpt},
      {"best", j.best ? json(*j.best) : json()},
      {"elapsed", j.elapsed},
      {"target_env_steps", j.target_env_steps ? json(*j.target_env_steps) : json()},
      {"target_seconds", j.target_seconds},
      {"train_target_env_steps",
       j.train_target_env_steps ? json(*j.train_target_env_steps) : json()},
      {"train_target_seconds", j.train_target_seconds},
      {"segments", j.segments},
      {"finished", j.finished},
      {"pending_eval_seconds", j.pending_eval_seconds ? json(*j.pending_eval_seconds) : json()},
      {"confirm_rows", j.confirm_rows}};
  RECUR_ASSERT(!s.trainer_states.empty());
  json state = {{"trainer", s.trainer_states.front()}, {"job", job}};
  if (s.trainer_states.size() > 1)
    state["ranks"] = std::vector<std::string>(s.trainer_states.begin() + 1, s.trainer_states.end());
  if (!s.trainer_tensors.empty()) state["trainer_tensors"] = s.trainer_tensors;
  return state;
}

template <typename F>
auto checked(const std::string& where, F&& read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw Error(
        fmt::format("{} is not a valid trainer state ({}); start a new run", where, e.what()));
  } catch (const Error& e) {
    throw Error(
        fmt::format("{} is not a valid trainer state ({}); start a new run", where, e.what()));
  }
}
}  // namespace

ResumeFile parse_resume_file(const std::string& text, const std::string& where) {
  const json file = json::parse(text, nullptr, false);
  RECUR_CHECK(!file.is_discarded() && file.is_object(),
              "{} is not a valid trainer state; start a new run", where);
  ResumeFile r;
  r.current = checked(where, [&] { return parse_generation(file); });
  if (file.contains("previous"))
    r.previous = checked(where + " (previous generation)",
                         [&] { return parse_generation(file["previous"]); });
  return r;
}

ResumeState parse_resume_state(const std::string& text, const std::string& where) {
  return parse_resume_file(text, where).current;
}

std::string resume_file_text(const ResumeState& current,
                             const std::optional<ResumeState>& previous) {
  json file = generation_json(current);
  if (previous) file["previous"] = generation_json(*previous);
  return file.dump();
}

}  // namespace recur::agent
