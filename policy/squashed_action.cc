#include "policy/squashed_action.h"

#include <fmt/format.h>

#include "core/error.h"

namespace recur::policy {

std::string_view to_string(Squash squash) {
  switch (squash) {
    case Squash::kTanhGaussian:
      return "tanh_gaussian";
    case Squash::kTanh:
      return "tanh";
    default:
      return "none";
  }
}

Squash parse_squash(std::string_view name) {
  if (name == "none") return Squash::kNone;
  if (name == "tanh_gaussian") return Squash::kTanhGaussian;
  if (name == "tanh") return Squash::kTanh;
  throw Error(fmt::format("unknown squash '{}'; allowed: none, tanh_gaussian, tanh", name));
}

}  // namespace recur::policy
