// `recur render ENV_ID --out frame.png [--seed S] [--steps N] [-o key=value]`: one frame of an
// env, as Gymnasium's render_mode="rgb_array" draws it, after a seeded reset and N random steps.
#include <fmt/format.h>

#include <memory>

#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"
#include "envs/render/renderer.h"
#include "tools/cli/commands.h"

namespace recur::cli {

void add_render_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("render", "Render one frame of an env to a PNG");
  struct Args {
    std::string env;
    std::string out;
    uint64_t seed = 0;
    int steps = 0;
    std::vector<std::string> options;
    std::vector<std::string> plugins;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("env", args->env, "Env id (`recur envs` lists them)")->required();
  cmd->add_option("--out", args->out, "PNG file to write")->required();
  cmd->add_option("--seed", args->seed, "Reset seed (also seeds the random actions)")
      ->capture_default_str();
  cmd->add_option("--steps", args->steps,
                  "Random steps after the reset (an episode that ends is reset and continues)")
      ->capture_default_str();
  cmd->add_option("-o,--option", args->options, "Env option key=value (repeatable)");
  add_plugin_option(cmd, args->plugins);
  cmd->callback([args, &exit_code] {
    load_cli_plugins(args->plugins);
    RECUR_CHECK(args->steps >= 0, "--steps {}: it must be >= 0", args->steps);
    auto env = envs::make(args->env, parse_env_options(args->options));
    envs::render::Renderer renderer(*env);  // recur::Error when the env does not render
    env->reset(args->seed);
    Rng rng(derive_seed(args->seed, 77));
    std::vector<float> action(static_cast<size_t>(env->action_dim()));
    for (int t = 0; t < args->steps; ++t) {
      env->action_space().sample(rng, action);
      if (env->step(action).done()) env->reset();
    }
    const auto& frame = renderer.render(*env);
    envs::render::write_png(frame, args->out);
    fmt::print("wrote {} ({}x{}) of {}, seed {}, after {} random steps\n", args->out, frame.width,
               frame.height, env->id(), args->seed, args->steps);
    exit_code = 0;
  });
}

}  // namespace recur::cli
