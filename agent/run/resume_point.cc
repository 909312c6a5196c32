#include "agent/run/resume_point.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/train_job.h"
#include "core/error.h"

namespace recur::agent {

namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  RECUR_CHECK(in.good(), "cannot read {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ResumePoint read_resume_point(const RunDir& dir, const std::string& remedy) {
  RECUR_CHECK(std::filesystem::exists(dir.trainer_state()),
              "{} has no trainer state ({}): it never wrote a checkpoint with resume state; {}",
              dir.path().string(), dir.trainer_state().filename().string(), remedy);
  const std::string where = dir.trainer_state().string();
  ResumeFile file = parse_resume_file(read_all(dir.trainer_state()), where);
  RECUR_CHECK(std::filesystem::exists(dir.latest_checkpoint()),
              "{} has no latest checkpoint ({}): the run was stopped while writing its first "
              "one; {}",
              dir.path().string(), dir.latest_checkpoint().string(), remedy);
  ResumePoint point;
  point.checkpoint = policy::load_policy(dir.latest_checkpoint());
  const std::string ckpt_steps = point.checkpoint.metadata.at(kMetaEnvSteps);
  point.state = std::move(file.current);
  if (std::to_string(point.state.job.env_steps) != ckpt_steps && file.previous &&
      std::to_string(file.previous->job.env_steps) == ckpt_steps) {
    spdlog::warn(
        "the run stopped while saving its checkpoint at {} env steps; taking the one before, at "
        "{}",
        point.state.job.env_steps, ckpt_steps);
    point.state = std::move(*file.previous);
  }
  RECUR_CHECK(ckpt_steps == std::to_string(point.state.job.env_steps),
              "{}: the latest checkpoint ({} steps) and the trainer state ({} steps) differ; "
              "the run stopped while saving: {}",
              dir.path().string(), ckpt_steps, point.state.job.env_steps, remedy);
  return point;
}

policy::TensorMap load_trainer_tensors(const RunDir& dir, const ResumeState& state) {
  if (state.trainer_tensors.empty()) return {};
  return policy::load_checkpoint(dir.checkpoints_dir() / state.trainer_tensors).tensors;
}

}  // namespace recur::agent
