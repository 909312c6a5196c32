// progress.csv's columns and their TensorBoard tags as one table: the job's own columns (env
// steps, time, episode statistics, timing) around the algorithm's metric columns
// (Algorithm::metric_columns). One row per iteration goes to both; a column without a tag is
// CSV-only, and a missing value (no finished episode yet) is an empty field and no scalar.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/algorithm.h"

namespace recur::agent {

class CsvLog;
class TensorBoardWriter;

// The job's values of one row.
struct ProgressRow {
  int64_t env_steps = 0;
  double time_s = 0, fps = 0;
  int64_t episodes = 0;
  std::optional<double> return_mean, return_min, return_max, length_mean;  // last 100 episodes
  double act_seconds = 0, learn_seconds = 0, wait_seconds = 0;
  int64_t policy_lag = 0;
};

class ProgressTable {
 public:
  explicit ProgressTable(const std::vector<MetricColumn>& algorithm_columns);

  std::vector<std::string> csv_header() const;
  // One row into progress.csv and (tb not null) TensorBoard at step row.env_steps; `metrics` are
  // the algorithm's, in its columns' order.
  void write(const ProgressRow& row, const std::vector<double>& metrics, CsvLog& csv,
             TensorBoardWriter* tb) const;

 private:
  enum class Source { kJob, kAlgorithm };
  struct Column {
    MetricColumn column;
    Source source;
    int index;  // into the job's values (job_values) or the algorithm's metrics
  };
  std::vector<Column> columns_;
  size_t algorithm_columns_ = 0;
};

}  // namespace recur::agent
