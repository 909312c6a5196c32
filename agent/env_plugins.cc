#include "agent/env_plugins.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/error.h"
#include "envs/plugin_loader.h"

namespace recur::agent {

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  RECUR_CHECK(in.good(),
              "{}: cannot be read to compute its SHA-256; check that it exists and is "
              "readable",
              path.string());
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  RECUR_ASSERT(ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n > 0) RECUR_ASSERT(EVP_DigestUpdate(ctx.get(), buffer.data(), n) == 1);
  }
  RECUR_CHECK(in.eof(), "{}: read error while computing its SHA-256", path.string());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  RECUR_ASSERT(EVP_DigestFinal_ex(ctx.get(), digest, &size) == 1);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

void load_env_plugins(const std::vector<std::string>& paths) {
  for (const auto& p : paths) envs::load_plugin(p);
}

std::string plugin_record(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += sha256_file(p) + "  " + p + "\n";
  return out;
}

namespace {
struct RecordedPlugin {
  std::string sha256, path;
};
std::vector<RecordedPlugin> parse_record(const std::string& record) {
  std::vector<RecordedPlugin> out;
  std::istringstream in(record);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto sep = line.find("  ");
    RECUR_CHECK(sep == 64, "a checkpoint's plugin record line '{}' is not '<sha256>  <path>'",
                line);
    out.push_back({line.substr(0, 64), line.substr(66)});
  }
  return out;
}
}  // namespace

std::vector<std::string> recorded_plugin_paths(const std::string& record) {
  std::vector<std::string> out;
  for (const auto& r : parse_record(record)) out.push_back(r.path);
  return out;
}

void load_recorded_plugins(const std::string& record, const std::string& what,
                           const std::vector<std::string>* only) {
  for (const auto& r : parse_record(record)) {
    if (only && std::find(only->begin(), only->end(), r.path) == only->end()) continue;
    std::error_code ec;
    RECUR_CHECK(std::filesystem::exists(r.path, ec),
                "{} was trained with the env plugin {}, which no longer exists; rebuild it there, "
                "or pass --plugin PATH to load another build of it",
                what, r.path);
    const std::string now = sha256_file(r.path);
    RECUR_CHECK(now == r.sha256,
                "{} was trained with the env plugin {} (sha256 {}), but that file has changed "
                "(sha256 {}); put back the build the run used, or pass --plugin {} to load this "
                "build anyway",
                what, r.path, r.sha256, now, r.path);
    envs::load_plugin(r.path);
  }
}

}  // namespace recur::agent
