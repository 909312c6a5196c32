// `recur bench envs|rnn|rnn-gpu|scan|devices|train`: env stepping speed (bench_envs.h), the CPU
// executors (bench_rnn.h), the GPU executors against the CPU ones (bench_rnn_gpu.h), minGRU's scan
// sequential vs chunked in T (bench_scan.h), the whole policy's actor step and PPO minibatch per
// device (bench_devices.h), and a training config's throughput, synchronous vs async
// actor-learner (bench_train.h).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "agent/config/yaml.h"
#include "policy/gemm.h"
#include "tools/cli/bench/bench_devices.h"
#include "tools/cli/bench/bench_env_policy.h"
#include "tools/cli/bench/bench_envs.h"
#include "tools/cli/bench/bench_rnn.h"
#include "tools/cli/bench/bench_rnn_gpu.h"
#include "tools/cli/bench/bench_scan.h"
#include "tools/cli/bench/bench_train.h"
#include "tools/cli/commands.h"

namespace recur::cli {

namespace {

// A CSV field as RFC 4180 writes it: quoted, inner quotes doubled, when it holds a comma, a quote
// or a line break (the rnn-gpu notes do: "algo standard, device-resident").
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

void add_rnn_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "rnn", "Step vs sequence execution of the recurrent core, vanilla cell and GEMM roofline");
  struct Args {
    RnnBenchConfig config;
    std::string cell = "lstm";
    bool csv = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--cell", args->cell,
                  "lstm, gru, rnn_tanh, rnn_relu, mingru, mingru_highway or lstm_ln")
      ->capture_default_str();
  cmd->add_option("--input", args->config.input, "Input width")->capture_default_str();
  cmd->add_option("--layers", args->config.layers, "Layers")->capture_default_str();
  cmd->add_option("--batch", args->config.batch, "Batch sizes B")->delimiter(',');
  cmd->add_option("--hidden", args->config.hidden, "Hidden sizes H")->delimiter(',');
  cmd->add_option("--seq-len", args->config.seq_len, "Sequence lengths T")->delimiter(',');
  cmd->add_option("--min-seconds", args->config.min_seconds, "Time per measurement")
      ->capture_default_str();
  cmd->add_option("--start-rate", args->config.start_rate,
                  "Fraction of the sequence rows' timesteps that start an episode (state reset "
                  "inside the sequence, as in a learner's minibatch)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--csv", args->csv, "CSV instead of a table");
  cmd->callback([args, &exit_code] {
    auto config = args->config;
    config.cell = policy::parse_cell_type(args->cell);
    const auto rows = bench_rnn(config);
    if (args->csv) {
      fmt::print("mode,batch,hidden,seq_len,us_per_call,samples_per_s,gflops,roofline_fraction\n");
      for (const auto& r : rows)
        fmt::print("{},{},{},{},{:.3f},{:.0f},{:.3f},{:.4f}\n", r.mode, r.batch, r.hidden,
                   r.seq_len, r.us_per_call, r.samples_per_s, r.gflops, r.roofline_fraction);
    } else {
      fmt::print(
          "{} core, input {}, {} layer(s), episode starts {:g} of the sequence rows' timesteps; "
          "GFLOP/s count GEMM work; roofline = the faster of gemm ({}) and gemm-eigen on the "
          "step's shapes (one per layer) in this run\n",
          args->cell, config.input, config.layers, config.start_rate, policy::gemm_backend());
      fmt::print("{:<12} {:>5} {:>5} {:>5} {:>12} {:>14} {:>9} {:>9}\n", "mode", "B", "H", "T",
                 "us/call", "samples/s", "GFLOP/s", "roofline");
      for (const auto& r : rows)
        fmt::print("{:<12} {:>5} {:>5} {:>5} {:>12.2f} {:>14.0f} {:>9.2f} {:>8.0f}%\n", r.mode,
                   r.batch, r.hidden, r.seq_len, r.us_per_call, r.samples_per_s, r.gflops,
                   100 * r.roofline_fraction);
    }
    exit_code = 0;
  });
}

void add_rnn_gpu_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "rnn-gpu",
      "CUDA step executor (plain and graph) and cuDNN sequence executor vs the CPU executors");
  struct Args {
    GpuRnnBenchConfig config;
    std::string cell = "lstm";
    bool no_cpu = false;
    bool csv = false;
    std::vector<std::string> math = {"fma"};
    std::vector<std::string> data = {"fp32"};
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--cell", args->cell,
                  "lstm, gru, rnn_tanh, rnn_relu (cuDNN's rows), mingru, mingru_highway or "
                  "lstm_ln (recur's fused kernels, beside cuDNN's LSTM of the same H)")
      ->capture_default_str();
  cmd->add_option("--input", args->config.input, "Input width")->capture_default_str();
  cmd->add_option("--layers", args->config.layers, "Layers")->capture_default_str();
  cmd->add_option("--device", args->config.device, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--batch", args->config.batch, "Batch sizes B")->delimiter(',');
  cmd->add_option("--hidden", args->config.hidden, "Hidden sizes H")->delimiter(',');
  cmd->add_option("--seq-len", args->config.seq_len, "Sequence lengths T")->delimiter(',');
  cmd->add_option("--min-seconds", args->config.min_seconds, "Time per measurement")
      ->capture_default_str();
  cmd->add_option("--start-rate", args->config.start_rate,
                  "Fraction of the sequence rows' timesteps that start an episode (state reset "
                  "inside the sequence, as in a learner's minibatch)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--no-cpu", args->no_cpu, "Skip the CPU executor rows");
  cmd->add_option("--math", args->math,
                  "device.cudnn_math modes of the cuDNN rows (fma, tf32, fp16): each beyond fma "
                  "adds device-resident cudnn-<math>-dev rows")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--data", args->data,
                  "device.cudnn_data types of the cuDNN rows (fp32, fp16, bf16): each beyond "
                  "fp32 adds device-resident cudnn-<data>-dev rows (fp32 master weights)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--csv", args->csv, "CSV instead of a table");
  cmd->callback([args, &exit_code] {
    auto config = args->config;
    config.cell = policy::parse_cell_type(args->cell);
    config.cpu = !args->no_cpu;
    config.math.clear();
    for (const auto& m : args->math) config.math.push_back(policy::parse_rnn_math(m));
    config.data.clear();
    for (const auto& d : args->data) config.data.push_back(policy::parse_rnn_data(d));
    const auto rows = bench_rnn_gpu(config);
    if (args->csv) {
      fmt::print(
          "mode,batch,hidden,seq_len,us_per_call,samples_per_s,gflops,roofline_fraction,note\n");
      for (const auto& r : rows)
        fmt::print("{},{},{},{},{:.3f},{:.0f},{:.3f},{:.4f},{}\n", r.mode, r.batch, r.hidden,
                   r.seq_len, r.us_per_call, r.samples_per_s, r.gflops, r.roofline_fraction,
                   csv_field(r.note));
      exit_code = 0;
      return;
    }
    fmt::print(
        "{} core, input {}, {} layer(s), episode starts {:g} of the sequence rows' timesteps; "
        "GFLOP/s count GEMM work; roofline = cuBLAS fp32 GEMM of the step's shape in this run "
        "(device time)\n",
        args->cell, config.input, config.layers, config.start_rate);
    fmt::print("{:<26} {:>5} {:>5} {:>5} {:>12} {:>14} {:>9} {:>9}  {}\n", "mode", "B", "H", "T",
               "us/call", "samples/s", "GFLOP/s", "roofline", "note");
    for (const auto& r : rows)
      fmt::print("{:<26} {:>5} {:>5} {:>5} {:>12.2f} {:>14.0f} {:>9.2f} {:>8.1f}%  {}\n", r.mode,
                 r.batch, r.hidden, r.seq_len, r.us_per_call, r.samples_per_s, r.gflops,
                 100 * r.roofline_fraction, r.note);
    exit_code = 0;
  });
}

void add_scan_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "scan", "minGRU's scan on the CPU: sequential (lanes split over threads) vs chunked in T");
  struct Args {
    ScanBenchConfig config;
    bool csv = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--batch", args->config.batch, "Batch sizes B")->delimiter(',');
  cmd->add_option("--hidden", args->config.hidden, "Hidden sizes H")->delimiter(',');
  cmd->add_option("--seq-len", args->config.seq_len, "Sequence lengths T")->delimiter(',');
  cmd->add_option("--threads", args->config.threads, "Thread counts")->delimiter(',');
  cmd->add_option("--min-seconds", args->config.min_seconds, "Time per measurement")
      ->capture_default_str();
  cmd->add_flag("--csv", args->csv, "CSV instead of a table");
  cmd->callback([args, &exit_code] {
    const auto rows = bench_scan(args->config);
    if (args->csv) {
      fmt::print(
          "batch,hidden,seq_len,threads,sequential_us,chunked_us,chunked_over_sequential,"
          "max_abs_diff\n");
      for (const auto& r : rows)
        fmt::print("{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3g}\n", r.batch, r.hidden, r.seq_len,
                   r.threads, r.sequential_us, r.chunked_us, r.chunked_over_sequential(),
                   r.max_abs_diff);
    } else {
      fmt::print(
          "minGRU scan, forward + backward of one layer (the GEMMs not included); sequential = "
          "the engine's loop over T with the B x H lanes split over the threads, chunked = T cut "
          "into one chunk per thread (fold, compose, re-run)\n");
      fmt::print("{:>5} {:>5} {:>6} {:>7} {:>14} {:>12} {:>10} {:>10}\n", "B", "H", "T", "threads",
                 "sequential us", "chunked us", "chunked/", "max diff");
      for (const auto& r : rows)
        fmt::print("{:>5} {:>5} {:>6} {:>7} {:>14.1f} {:>12.1f} {:>9.2f}x {:>10.1e}\n", r.batch,
                   r.hidden, r.seq_len, r.threads, r.sequential_us, r.chunked_us,
                   r.chunked_over_sequential(), r.max_abs_diff);
    }
    exit_code = 0;
  });
}

void add_devices_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "devices", "Whole-policy actor step and PPO minibatch, CPU vs GPU: which device wins where");
  struct Args {
    DeviceBenchConfig config;
    bool no_gpu = false;
    bool csv = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--envs", args->config.envs, "Actor env slots B")->delimiter(',');
  cmd->add_option("--learner-envs", args->config.learner_envs, "Learner minibatch envs B")
      ->delimiter(',');
  cmd->add_option("--hidden", args->config.hidden, "Hidden sizes H")->delimiter(',');
  cmd->add_option("--seq-len", args->config.seq_len, "Learner sequence length T")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--start-rate", args->config.start_rate,
                  "Learner rollout's episode starts per env step (0: whole sequences)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--cudnn-algo", args->config.cudnn_algo,
                  "The GPU learner's cuDNN algorithm (device.cudnn_algo; persist_small_h also "
                  "takes minibatches with episode starts, their cut sequences padded to T)")
      ->check(CLI::IsMember({"standard", "persist_small_h", "auto"}))
      ->capture_default_str();
  cmd->add_option("--device", args->config.device, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--min-seconds", args->config.min_seconds, "Time per measurement")
      ->capture_default_str();
  cmd->add_flag("--no-gpu", args->no_gpu, "CPU rows only");
  cmd->add_flag("--stages", args->config.stages,
                "Also where each GPU row's time goes: device us per stage (plain launches)");
  cmd->add_flag("--csv", args->csv, "CSV instead of a table");
  cmd->callback([args, &exit_code] {
    auto config = args->config;
    config.gpu = !args->no_gpu;
    std::string note;
    std::vector<DeviceStageRow> stages;
    const auto rows = bench_devices(config, &note, &stages);
    if (args->csv) {
      fmt::print("role,device,batch,hidden,seq_len,us_per_call,samples_per_s\n");
      for (const auto& r : rows)
        fmt::print("{},{},{},{},{},{:.3f},{:.0f}\n", r.role, r.device, r.batch, r.hidden, r.seq_len,
                   r.us_per_call, r.samples_per_s);
    } else {
      fmt::print(
          "policy: obs {}, encoder [64], LSTM H, separate actor/critic cores, 4 actions; actor = "
          "one act() of B slots, learner = one PPO minibatch of T x B (fwd, loss, bwd, clip, "
          "Adam; episode starts {:.3g} per env step; cuDNN algo {})\n",
          config.obs_dim, config.start_rate, config.cudnn_algo);
      fmt::print("{:<8} {:<11} {:>6} {:>5} {:>5} {:>12} {:>14}\n", "role", "device", "B", "H", "T",
                 "us/call", "samples/s");
      for (const auto& r : rows)
        fmt::print("{:<8} {:<11} {:>6} {:>5} {:>5} {:>12.1f} {:>14.0f}\n", r.role, r.device,
                   r.batch, r.hidden, r.seq_len, r.us_per_call, r.samples_per_s);
    }
    // The stage breakdowns: one block per GPU row, stages in enqueue order.
    for (const auto& st : stages) {
      double total = 0;
      for (const auto& [name, us] : st.stages) total += us;
      fmt::print(
          "\nstages of one {} call on cuda, B {} H {} T {} (plain launches, mean device us "
          "over the calls; total {:.1f})\n",
          st.role, st.batch, st.hidden, st.seq_len, total);
      for (const auto& [name, us] : st.stages)
        fmt::print("  {:<40} {:>10.1f} {:>6.1f}%\n", name, us, 100.0 * us / total);
    }
    if (!note.empty()) fmt::print(stderr, "{}\n", note);
    exit_code = 0;
  });
}

// The header line: what one timed iteration is.
std::string train_bench_header(const agent::TrainConfig& config) {
  const std::string envs =
      fmt::format("{}: {} envs{}", config.env.id, config.env.num_envs,
                  config.env.groups > 1 ? fmt::format(" in {} groups", config.env.groups) : "");
  if (config.algo.type == "ppo")
    return fmt::format(
        "{} x {} steps per update, {} epochs x {} minibatches, hidden {}, {} env "
        "threads",
        envs, config.algo.rollout_steps, config.algo.epochs, config.algo.num_minibatches,
        config.policy.hidden, config.run.threads);
  const agent::OffPolicyConfig& o = config.offpolicy;
  return fmt::format(
      "{}, {}: {} env steps per iteration after {} of warm-up, {} gradient updates per env step "
      "of {} sequences x {}{} steps ({} state), hidden {}, {} learner threads",
      envs, config.algo.type, o.steps_per_iteration, o.learning_starts, o.updates_per_step,
      o.batch_size, o.burn_in > 0 ? fmt::format("{} + ", o.burn_in) : "", o.seq_len + 1,
      o.stored_state ? "stored" : "zero", config.policy.hidden, config.run.learner_threads);
}

void add_train_bench(CLI::App& bench, int& exit_code) {
  auto* cmd = bench.add_subcommand(
      "train",
      "A training config's env steps/s, synchronous vs async actor-learner (SAC/TD3: and gradient "
      "updates/s)");
  struct Args {
    std::string config;
    std::vector<std::string> overrides;
    int updates = 20;
    std::vector<std::string> modes;
    std::vector<std::string> devices;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("config", args->config, "Training config (YAML)")->required();
  cmd->add_option("--set", args->overrides, "Override a key: section.key=value (repeatable)");
  cmd->add_option("--updates", args->updates,
                  "Timed updates per mode (after one warm-up); SAC/TD3: iterations of "
                  "offpolicy.steps_per_iteration env steps (after offpolicy.learning_starts)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--modes", args->modes,
                  "Modes to time, in this order (default: sync,async; SAC/TD3: sync, their only "
                  "mode)")
      ->delimiter(',');
  cmd->add_option("--devices", args->devices,
                  "ACTOR/LEARNER pairs to time, in this order, e.g. cuda/cuda,cpu/cpu (default: "
                  "the config's device.actor/device.learner)")
      ->delimiter(',');
  cmd->callback([args, &exit_code] {
    const auto config = agent::load_config(args->config, args->overrides);
    const bool ppo = config.algo.type == "ppo";
    std::vector<std::string> modes = args->modes;
    if (modes.empty())
      modes = ppo ? std::vector<std::string>{"sync", "async"} : std::vector<std::string>{"sync"};
    const auto rows = bench_train(config, args->updates, modes, args->devices);
    fmt::print("{}\n", train_bench_header(config));
    fmt::print("policy: {}\n", config.run.init_from.empty()
                                   ? std::string("fresh (run.init_from: a trained one)")
                                   : "from " + config.run.init_from);
    // SAC/TD3's learner work is its gradient updates (update-to-data ratio times env steps).
    const std::string updates_head = ppo ? "" : fmt::format(" {:>12}", "grad upd/s");
    fmt::print("{:<10} {:<6} {:>8} {:>10} {:>12}{} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9}\n",
               "devices", "mode", ppo ? "updates" : "iters", "env steps", "env steps/s",
               updates_head, "act s", "learn s", "wait s", "lag mean", "lag max", "episodes");
    for (const auto& r : rows)
      fmt::print(
          "{:<10} {:<6} {:>8} {:>10} {:>12.0f}{} {:>8.2f} {:>8.2f} {:>8.2f} {:>9.2f} {:>8} "
          "{:>9}\n",
          r.devices, r.mode, r.updates, r.env_steps, r.steps_per_s(),
          ppo ? "" : fmt::format(" {:>12.1f}", r.learner_updates_per_s()), r.act_s, r.learn_s,
          r.wait_s, r.lag_mean, r.lag_max, r.episodes);
    // Every row against the first: the devices' and the modes' speed-ups side by side.
    for (size_t i = 1; i < rows.size(); ++i)
      fmt::print("{} {} / {} {}: {:.2f}x env steps/s\n", rows[i].devices, rows[i].mode,
                 rows[0].devices, rows[0].mode, rows[i].steps_per_s() / rows[0].steps_per_s());
    exit_code = 0;
  });
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench =
      app.add_subcommand("bench", "Benchmarks (not tests): figures for docs/PERFORMANCE.md");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand(
      "envs", "Env steps/s per id, VectorEnv overhead, and VectorEnv scaling with threads");
  struct Args {
    EnvBenchConfig config;
    bool json = false;
    std::vector<std::string> plugins;
    std::string policy;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--env", args->config.ids, "Env ids (repeatable; default: all)");
  cmd->add_option("--policy", args->policy,
                  "A run directory or checkpoint: instead of the tables, its env stepped with its "
                  "policy's actions and with random ones (--num-envs envs, --steps each, one "
                  "thread): what a step costs in the states the trained policy reaches");
  cmd->add_option("--steps", args->config.steps, "Env steps per timed repetition")
      ->capture_default_str();
  cmd->add_option("--num-envs", args->config.num_envs, "Envs in the VectorEnv comparison")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--repeats", args->config.repeats, "Timed repetitions (median reported)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--threads", args->config.threads,
                  "Thread counts of a VectorEnv scaling table, static and dynamic schedule "
                  "(e.g. 1,2,4; 1 alone: no table)")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  cmd->add_option("--chunks-per-thread", args->config.chunks_per_thread,
                  "Chunks per thread of the dynamic schedule")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--act-us", args->config.act_us,
                  "Busy-wait this long between steps (a policy act the workers must bridge)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--spin-us", args->config.spin_us,
                  "Worker spin and yield budget, each, in us (-1: the pool's default)")
      ->check(CLI::Range(-1, 1'000'000))
      ->capture_default_str();
  cmd->add_flag("--groups", args->config.groups,
                "Also time the collection loop with the envs in one group and in two "
                "(env.groups: 2, double-buffered), each act a --act-us wait, at each --threads");
  cmd->add_flag("--json", args->json, "One JSON object per env");
  add_plugin_option(cmd, args->plugins);
  cmd->callback([args, &exit_code] {
    const auto& [config, json, plugins, policy] = *args;
    load_cli_plugins(plugins);
    if (!policy.empty()) {
      const EnvPolicyBenchConfig pc{policy, config.num_envs, config.steps};
      fmt::print("{}", format_env_policy(bench_env_policy(pc), pc));
      exit_code = 0;
      return;
    }
    const auto rows = bench_envs(config);
    if (json) {
      for (const auto& r : rows) {
        std::string scaling;
        for (const auto& s : r.scaling) {
          scaling += fmt::format(
              "{}{{\"threads\": {}, \"static_steps_per_s\": {:.0f}, "
              "\"dynamic_steps_per_s\": {:.0f}, \"static_efficiency\": {:.4f}, "
              "\"dynamic_efficiency\": {:.4f}}}",
              scaling.empty() ? "" : ", ", s.threads, s.static_steps_per_s, s.dynamic_steps_per_s,
              r.efficiency(s, s.static_steps_per_s), r.efficiency(s, s.dynamic_steps_per_s));
        }
        std::string groups;
        for (const auto& g : r.groups)
          groups += fmt::format(
              "{}{{\"threads\": {}, \"one_group_steps_per_s\": {:.0f}, "
              "\"two_groups_steps_per_s\": {:.0f}}}",
              groups.empty() ? "" : ", ", g.threads, g.one_group_steps_per_s,
              g.two_groups_steps_per_s);
        fmt::print(
            "{{\"id\": \"{}\", \"single_steps_per_s\": {:.0f}, \"bare_steps_per_s\": {:.0f}, "
            "\"vector_steps_per_s\": {:.0f}, \"vector_overhead\": {:.4f}, \"num_envs\": {}, "
            "\"chunks_per_thread\": {}, \"act_us\": {}, \"scaling\": [{}], \"groups\": [{}]}}\n",
            r.id, r.single_steps_per_s, r.bare_steps_per_s, r.vector_steps_per_s,
            r.vector_overhead(), config.num_envs, config.chunks_per_thread, config.act_us, scaling,
            groups);
      }
      exit_code = 0;
      return;
    }
    fmt::print("{:<28} {:>12} {:>12} {:>12} {:>9}\n", "env", "1 env M/s",
               fmt::format("bare x{} M/s", config.num_envs), "VectorEnv M/s", "overhead");
    for (const auto& r : rows) {
      fmt::print("{:<28} {:>12.2f} {:>12.2f} {:>12.2f} {:>8.1f}%\n", r.id,
                 r.single_steps_per_s / 1e6, r.bare_steps_per_s / 1e6, r.vector_steps_per_s / 1e6,
                 100.0 * r.vector_overhead());
    }
    if (!rows.empty() && !rows.front().scaling.empty()) {
      // Efficiency = (steps/s at k threads) / (k x steps/s at 1 thread); static = one slice per
      // thread, dynamic = chunks claimed by free threads.
      fmt::print("\nVectorEnv x{} by threads ({} chunks/thread dynamic{}; time inside step only)\n",
                 config.num_envs, config.chunks_per_thread,
                 config.act_us > 0 ? fmt::format(", {} us act between steps", config.act_us) : "");
      fmt::print("{:<28} {:>7} {:>11} {:>11} {:>8} {:>8} {:>10}\n", "env", "threads", "static M/s",
                 "dynamic M/s", "st eff", "dyn eff", "dyn/static");
      for (const auto& r : rows) {
        for (const auto& s : r.scaling) {
          fmt::print("{:<28} {:>7} {:>11.3f} {:>11.3f} {:>7.0f}% {:>7.0f}% {:>9.2f}x\n", r.id,
                     s.threads, s.static_steps_per_s / 1e6, s.dynamic_steps_per_s / 1e6,
                     100.0 * r.efficiency(s, s.static_steps_per_s),
                     100.0 * r.efficiency(s, s.dynamic_steps_per_s),
                     s.dynamic_steps_per_s / s.static_steps_per_s);
        }
      }
    }
    if (!rows.empty() && !rows.front().groups.empty()) {
      fmt::print(
          "\nCollection loop x{} envs, each act a {} us wait on the calling thread (wall time, act "
          "included): one group vs two (env.groups: 2)\n",
          config.num_envs, config.act_us);
      fmt::print("{:<28} {:>7} {:>13} {:>14} {:>8}\n", "env", "threads", "1 group M/s",
                 "2 groups M/s", "ratio");
      for (const auto& r : rows)
        for (const auto& g : r.groups)
          fmt::print("{:<28} {:>7} {:>13.3f} {:>14.3f} {:>7.2f}x\n", r.id, g.threads,
                     g.one_group_steps_per_s / 1e6, g.two_groups_steps_per_s / 1e6,
                     g.two_groups_steps_per_s / g.one_group_steps_per_s);
    }
    exit_code = 0;
  });

  add_rnn_bench(*bench, exit_code);
  add_rnn_gpu_bench(*bench, exit_code);
  add_scan_bench(*bench, exit_code);
  add_devices_bench(*bench, exit_code);
  add_train_bench(*bench, exit_code);
}

}  // namespace recur::cli
