#include "agent/dist/rank_checks.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <vector>

#include "core/error.h"

namespace recur::agent::dist {
namespace {

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// The first `section.key` whose line differs between two config YAML texts (to_yaml's layout:
// a section name at column 0, its keys indented under it), with both lines.
std::string first_config_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb, section;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "(the same lines, in another order)";
    if (!more_a) la.clear();
    if (!more_b) lb.clear();
    if (!la.empty() && la[0] != ' ' && la.back() == ':') section = la.substr(0, la.size() - 1);
    if (la == lb) continue;
    const auto key_of = [&](const std::string& line) {
      const auto start = line.find_first_not_of(' ');
      const auto colon = line.find(':');
      if (start == std::string::npos || colon == std::string::npos) return line;
      const std::string key = line.substr(start, colon - start);
      return start > 0 && !section.empty() ? section + "." + key : key;
    };
    return fmt::format("{} ('{}' against '{}')", key_of(la.empty() ? lb : la), la, lb);
  }
}

}  // namespace

std::string fingerprint(const policy::TensorMap& tensors) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& [name, t] : tensors) {
    h = fnv1a(h, name.data(), name.size());
    for (const int64_t d : t.shape) h = fnv1a(h, &d, sizeof d);
    h = fnv1a(h, t.data.data(), t.data.size() * sizeof(float));
  }
  return fmt::format("{:016x}", h);
}

void check_ranks_agree(Communicator& comm, const RankSummary& mine, const std::string& when) {
  const nlohmann::json j = {{"version", mine.version},
                            {"config", mine.config},
                            {"env", mine.env},
                            {"weights", mine.weights},
                            {"env_steps", mine.env_steps}};
  const std::vector<std::string> all = comm.all_gather(j.dump(), "the rank consistency check");
  const auto root = nlohmann::json::parse(all[0]);
  for (size_t r = 1; r < all.size(); ++r) {
    const auto other = nlohmann::json::parse(all[r]);
    const auto differs = [&](const char* key) { return other.at(key) != root.at(key); };
    RECUR_CHECK(!differs("version"),
                "{}: rank {} runs recur {} and rank 0 runs recur {}: every rank must run the "
                "same build (install one recur where every host sees it)",
                when, r, other.at("version").get<std::string>(),
                root.at("version").get<std::string>());
    RECUR_CHECK(!differs("config"),
                "{}: rank {}'s config differs from rank 0's at {}: start every rank with the "
                "same config file and --set overrides",
                when, r,
                first_config_difference(root.at("config").get<std::string>(),
                                        other.at("config").get<std::string>()));
    RECUR_CHECK(!differs("env"),
                "{}: rank {}'s env is {} and rank 0's is {}: every rank must load the same env "
                "(and the same env plugin files)",
                when, r, other.at("env").get<std::string>(), root.at("env").get<std::string>());
    RECUR_CHECK(!differs("env_steps"),
                "{}: rank {} is at {} env steps and rank 0 at {}: the ranks resumed from "
                "different trainer states; resume every rank from the same run directory",
                when, r, other.at("env_steps").get<int64_t>(), root.at("env_steps").get<int64_t>());
    RECUR_CHECK(!differs("weights"),
                "{}: rank {}'s policy weights (fingerprint {}) differ from rank 0's ({}): the "
                "ranks no longer train one policy. At start-up this means different seeds or "
                "checkpoints; later, a rank whose arithmetic differs (another CPU or library "
                "build). Start every rank on the same kind of machine and build",
                when, r, other.at("weights").get<std::string>(),
                root.at("weights").get<std::string>());
  }
}

}  // namespace recur::agent::dist
