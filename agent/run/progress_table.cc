#include "agent/run/progress_table.h"

#include <array>

#include "agent/run/csv_log.h"
#include "agent/run/tensorboard.h"
#include "core/error.h"

namespace recur::agent {
namespace {

// The job's columns, in progress.csv's order: these before the algorithm's, the rest after.
// Tags as Stable-Baselines3 names them (rollout/, time/), recur/ for the ones SB3 lacks.
const std::array<MetricColumn, 8> kHead = {{{"env_steps", "", 1, true},
                                            {"time_s", ""},
                                            {"fps", "time/fps"},
                                            {"episodes", "", 1, true},
                                            {"return_mean", "rollout/ep_rew_mean"},
                                            {"return_min", "recur/ep_rew_min"},
                                            {"return_max", "recur/ep_rew_max"},
                                            {"length_mean", "rollout/ep_len_mean"}}};
const std::array<MetricColumn, 4> kTail = {{{"act_time_s", "recur/act_time_s"},
                                            {"learn_time_s", "recur/learn_time_s"},
                                            {"wait_time_s", "recur/wait_time_s"},
                                            {"policy_lag", "recur/policy_lag", 1, true}}};

// ProgressRow's values in kHead then kTail order.
std::array<std::optional<double>, kHead.size() + kTail.size()> job_values(const ProgressRow& r) {
  return {static_cast<double>(r.env_steps),
          r.time_s,
          r.fps,
          static_cast<double>(r.episodes),
          r.return_mean,
          r.return_min,
          r.return_max,
          r.length_mean,
          r.act_seconds,
          r.learn_seconds,
          r.wait_seconds,
          static_cast<double>(r.policy_lag)};
}

CsvField field(const std::optional<double>& value, bool integer) {
  if (!value) return CsvField(std::nullopt);
  if (integer) return CsvField(static_cast<int64_t>(*value));
  return CsvField(*value);
}

}  // namespace

ProgressTable::ProgressTable(const std::vector<MetricColumn>& algorithm_columns)
    : algorithm_columns_(algorithm_columns.size()) {
  int job = 0;
  for (const auto& c : kHead) columns_.push_back({c, Source::kJob, job++});
  for (size_t i = 0; i < algorithm_columns.size(); ++i)
    columns_.push_back({algorithm_columns[i], Source::kAlgorithm, static_cast<int>(i)});
  for (const auto& c : kTail) columns_.push_back({c, Source::kJob, job++});
}

std::vector<std::string> ProgressTable::csv_header() const {
  std::vector<std::string> header;
  for (const auto& c : columns_) header.push_back(c.column.csv);
  return header;
}

void ProgressTable::write(const ProgressRow& row, const std::vector<double>& metrics, CsvLog& csv,
                          TensorBoardWriter* tb) const {
  RECUR_ASSERT(metrics.size() == algorithm_columns_);
  const auto job = job_values(row);
  std::vector<CsvField> fields;
  fields.reserve(columns_.size());
  for (const auto& c : columns_) {
    const std::optional<double> v =
        c.source == Source::kJob ? job[static_cast<size_t>(c.index)]
                                 : std::optional<double>(metrics[static_cast<size_t>(c.index)]);
    fields.push_back(field(v, c.column.integer));
    if (tb && v && !c.column.tag.empty())
      tb->scalar(c.column.tag, *v * c.column.tb_scale, row.env_steps);
  }
  csv.write_row(fields);
}

}  // namespace recur::agent
