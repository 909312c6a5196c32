// `recur envs`: every registered env id with its spaces, time limit, threshold and render size/fps.
#include <fmt/format.h>

#include <memory>

#include "envs/registry.h"
#include "tools/cli/commands.h"

namespace recur::cli {

void add_envs_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("envs", "List registered environments with spaces and limits");
  auto json = std::make_shared<bool>(false);
  auto plugins = std::make_shared<std::vector<std::string>>();
  cmd->add_flag("--json", *json, "One JSON object per line instead of a table");
  add_plugin_option(cmd, *plugins);
  cmd->callback([json, plugins, &exit_code] {
    load_cli_plugins(*plugins);
    const auto& reg = envs::registry();
    for (const auto& spec : reg.specs()) {
      const std::string limit =
          spec.max_episode_steps ? std::to_string(spec.max_episode_steps) : std::string("none");
      const std::string threshold =
          spec.reward_threshold ? fmt::format("{:g}", *spec.reward_threshold) : std::string("none");
      if (!spec.available) {
        // Registered, but this build lacks what the env needs (MuJoCo's envs without MuJoCo):
        // it cannot be made, so there are no spaces to show; its summary says what it needs.
        if (*json) {
          fmt::print(
              "{{\"id\": \"{}\", \"family\": \"{}\", \"available\": false, \"summary\": "
              "\"{}\", \"max_episode_steps\": {}, \"reward_threshold\": {}}}\n",
              spec.id, spec.family, spec.summary, spec.max_episode_steps,
              spec.reward_threshold ? fmt::format("{}", *spec.reward_threshold) : "null");
        } else {
          fmt::print("{}  [{}]  unavailable\n  {}\n  max steps {}, reward threshold {}\n\n",
                     spec.id, spec.family, spec.summary, limit, threshold);
        }
        continue;
      }
      const auto env = reg.make(spec.id);
      const envs::RenderInfo render = env->render_info();
      if (*json) {
        fmt::print(
            "{{\"id\": \"{}\", \"family\": \"{}\", \"available\": true, \"observation_space\": "
            "\"{}\", "
            "\"action_space\": \"{}\", \"max_episode_steps\": {}, \"reward_threshold\": {}, "
            "\"render_fps\": {}, \"render_width\": {}, \"render_height\": {}, \"source\": "
            "\"{}\"}}\n",
            spec.id, spec.family, env->observation_space().to_string(),
            env->action_space().to_string(), spec.max_episode_steps,
            spec.reward_threshold ? fmt::format("{}", *spec.reward_threshold) : "null", render.fps,
            render.width, render.height, spec.source.empty() ? "built-in" : spec.source);
        continue;
      }
      const std::string rendering =
          render.renders() ? fmt::format("{}x{} at {} fps", render.width, render.height, render.fps)
                           : std::string("none");
      fmt::print(
          "{}  [{}]{}\n  {}\n  observation {}\n  action      {}\n  render      {}\n  max steps {}, "
          "reward threshold {}\n\n",
          spec.id, spec.family, spec.source.empty() ? "" : "  (" + spec.source + ")", spec.summary,
          env->observation_space().to_string(), env->action_space().to_string(), rendering, limit,
          threshold);
    }
    if (!*json) fmt::print("{} environments\n", reg.specs().size());
    exit_code = 0;
  });
}

}  // namespace recur::cli
