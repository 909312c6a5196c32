// The registry as programs and plugins extend it: clashes, bad specs, and failures of a user's env
// named with its id, its source and the step (envs/registry.h, envs/env.cc).
#include "envs/registry.h"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace {

using recur::envs::Env;
using recur::envs::EnvSpec;
using recur::envs::Registry;
using recur::envs::Space;

// Throws from its step at `fail_at` (0: never), from its constructor when `fail_ctor`.
class Fragile : public Env {
 public:
  Fragile(int fail_at, bool fail_ctor)
      : Env(Space::box(-1.0f, 1.0f, {1}), Space::discrete(2)), fail_at_(fail_at) {
    if (fail_ctor) throw std::runtime_error("no memory for the maze");
  }

 protected:
  void reset_impl(recur::Rng&, std::optional<uint64_t>) override {}
  Outcome step_impl(std::span<const float>) override {
    if (elapsed_steps() + 1 == fail_at_) throw std::out_of_range("index 7 past the corridor");
    return {0.0, false};
  }
  void observe(std::span<float> obs) const override { obs[0] = 0; }

 private:
  int fail_at_;
};

EnvSpec fragile(const std::string& id, const std::string& source) {
  return {.id = id,
          .family = "test",
          .max_episode_steps = 0,
          .reward_threshold = {},
          .summary = "throws on request",
          .factory = [](recur::OptionReader& o) -> std::unique_ptr<Env> {
            return std::make_unique<Fragile>(static_cast<int>(o.get_int("fail_at", 0)),
                                             o.get_bool("fail_ctor", false));
          },
          .source = source};
}

std::string error_of(const auto& f) {
  try {
    f();
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "(no recur::Error)";
}

}  // namespace

TEST_CASE("an id registered twice is refused, naming where the first one came from") {
  Registry r;
  r.add(fragile("Fragile-v0", "plugin /opt/a.so"));
  const auto msg = error_of([&] { r.add(fragile("Fragile-v0", "plugin /opt/b.so")); });
  CHECK(msg.find("env id 'Fragile-v0' from plugin /opt/b.so is already registered by plugin "
                 "/opt/a.so") != std::string::npos);
  CHECK(r.ids().size() == 1);
  // The process registry refuses a program env that clashes with a built-in (and stays as it was:
  // other tests walk every registered env).
  const auto builtin =
      error_of([] { recur::envs::registry().add(fragile("CartPole-v1", "program")); });
  CHECK(builtin.find("already registered by recur's built-ins") != std::string::npos);
}

TEST_CASE("a spec without an id or a factory is refused with what to do") {
  Registry r;
  CHECK(error_of([&] { r.add(fragile("", "program")); }).find("empty id") != std::string::npos);
  EnvSpec no_factory = fragile("NoFactory-v0", "program");
  no_factory.factory = nullptr;
  CHECK(error_of([&] { r.add(no_factory); }).find("has no factory") != std::string::npos);
}

TEST_CASE("a user's env that throws is named with its id, source and step") {
  Registry r;
  r.add(fragile("Fragile-v0", "plugin /opt/a.so"));
  const auto ctor =
      error_of([&] { r.make("Fragile-v0", recur::Options{}.set("fail_ctor", "true")); });
  CHECK(ctor ==
        "env Fragile-v0 (plugin /opt/a.so) threw in its constructor: no memory for the maze");
  auto env = r.make("Fragile-v0", recur::Options{}.set("fail_at", "3"));
  env->reset(0);
  const float a[1] = {0};
  env->step(a);
  env->step(a);
  CHECK(error_of([&] { env->step(a); }) ==
        "env Fragile-v0 threw in step() at step 3 of its episode: index 7 past the corridor");
  // An unknown option is reported as for a built-in env.
  const auto option = error_of([&] { r.make("Fragile-v0", recur::Options{}.set("fail", "1")); });
  CHECK(option.find("Fragile-v0") != std::string::npos);
  CHECK(option.find("'fail'") != std::string::npos);
}
