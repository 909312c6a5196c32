#include "policy/policy_checkpoint.h"

#include <fmt/ranges.h>

#include <cmath>

#include "core/error.h"

namespace recur::policy {

void save_policy(const std::filesystem::path& path, const PolicySpec& spec,
                 const TensorMap& tensors, const std::map<std::string, std::string>& extra) {
  Checkpoint c;
  c.tensors = tensors;
  c.metadata = extra;
  for (const auto& [k, v] : spec.to_metadata()) c.metadata[k] = v;
  c.metadata["recur.format"] = kPolicyFormat;
  // Validate before writing: never put a checkpoint on disk that load_policy would reject, nor
  // one holding a NaN or infinity (a diverged run must not overwrite a good checkpoint).
  validate_policy(c, path.string());
  for (const auto& [name, t] : c.tensors)
    for (float v : t.data)
      RECUR_CHECK(std::isfinite(v),
                  "refusing to write {}: tensor '{}' holds a non-finite value "
                  "({})",
                  path.string(), name, v);
  save_checkpoint(path, c);
}

PolicyCheckpoint validate_policy(Checkpoint checkpoint, const std::string& source) {
  const auto fmt_it = checkpoint.metadata.find("recur.format");
  RECUR_CHECK(fmt_it != checkpoint.metadata.end(),
              "{}: not a recur policy checkpoint (no 'recur.format' in its metadata); convert "
              "foreign weights with `recur convert import`",
              source);
  RECUR_CHECK(fmt_it->second == kPolicyFormat,
              "{}: checkpoint format '{}' is not supported by this recur (it reads '{}')", source,
              fmt_it->second, kPolicyFormat);
  PolicyCheckpoint out;
  try {
    out.spec = PolicySpec::from_metadata(checkpoint.metadata);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", source, e.what()));
  }
  // The shapes the spec implies, from a throwaway initialization.
  Rng rng(0);
  const TensorMap expected = init_policy(out.spec, rng);
  for (const auto& [name, want] : expected) {
    const auto it = checkpoint.tensors.find(name);
    RECUR_CHECK(it != checkpoint.tensors.end(),
                "{}: tensor '{}' is missing (the policy in its "
                "metadata needs it)",
                source, name);
    RECUR_CHECK(it->second.shape == want.shape,
                "{}: tensor '{}' has shape [{}], the policy in "
                "its metadata needs [{}]",
                source, name, fmt::join(it->second.shape, ", "), fmt::join(want.shape, ", "));
  }
  for (const auto& [name, t] : checkpoint.tensors)
    RECUR_CHECK(expected.count(name) || name.rfind("optim.", 0) == 0,
                "{}: unexpected tensor '{}' (not part of the policy in its metadata)", source,
                name);
  out.tensors = std::move(checkpoint.tensors);
  out.metadata = std::move(checkpoint.metadata);
  return out;
}

PolicyCheckpoint load_policy(const std::filesystem::path& path) {
  return validate_policy(load_checkpoint(path), path.string());
}

}  // namespace recur::policy
