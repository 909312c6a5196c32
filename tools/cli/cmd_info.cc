// `recur info`: what this build has (CPU/CUDA backends, library versions) and the devices it sees.
#include <fmt/format.h>

#include "policy/devices.h"
#include "tools/cli/commands.h"

namespace recur::cli {

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Show build options, library versions and GPUs");
  cmd->callback([&exit_code] {
    const auto d = policy::query_devices();
    fmt::print("recur 0.1.0\n  cpu: Eigen {}, matrix products through {}\n", d.eigen_version,
               d.cpu_products);
    if (d.cuda_built) {
      fmt::print("  cuda: built (runtime {}, driver {}, cuDNN {})\n", d.cuda_runtime,
                 d.cuda_driver.empty() ? "none" : d.cuda_driver, d.cudnn_version);
    } else {
      fmt::print("  cuda: not built\n");
    }
    for (const auto& g : d.gpus) fmt::print("  gpu {}\n", g);
    if (!d.cuda_usable()) fmt::print("  gpu: none usable ({})\n", d.gpu_unavailable);
    exit_code = 0;
  });
}

}  // namespace recur::cli
