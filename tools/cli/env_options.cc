#include "tools/cli/commands.h"

namespace recur::cli {

Options parse_env_options(const std::vector<std::string>& pairs) {
  Options options;
  options.source = "--option";
  for (const auto& p : pairs) {
    auto [key, value] = parse_key_value(p);
    options.set(key, value);
  }
  return options;
}

}  // namespace recur::cli
