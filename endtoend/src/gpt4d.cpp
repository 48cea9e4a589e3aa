// gpt4d: GPT training with the 4D hybrid-parallel algorithm (3D tensor parallelism X/Y/Z + data
// parallelism) and its overlap optimisations, on the host (CPU, OpenBLAS, MPI) or CUDA backend.
//
//   mpirun -np 8 gpt4d --backend host --gx 2 --gy 2 --gz 2 --gdata 1 --preset tiny --seq 32
//          --vocab 256 --batch 8 --iters 10 --overlap oar,ors,oag --out result.json
//          [--predict host-cpu]   (the model's prediction beside the measurement)
//   gpt4d --check-config --json --preset 1.3B --batch 16 --gx 4 --gz 2   (no ranks needed)
//
// See endtoend/README.md for every option and the JSON result.
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "config.hpp"
#include "io/gradients.hpp"
#include "io/prediction.hpp"
#include "io/report.hpp"
#include "io/trace_run.hpp"
#include "ovb/cli.hpp"
#include "ovb/device_connections.hpp"
#include "ovb/error.hpp"
#include "ovb/grid.hpp"
#include "ovb/io.hpp"
#include "ovb/process_grid.hpp"
#include "ovb/run_main.hpp"
#include "train/comm.hpp"
#include "train/trainer.hpp"

int main(int argc, char** argv) {
  // --check-config needs no ranks: started by hand it runs without MPI (no singleton start-up).
  bool check_only = false;
  for (int i = 1; i < argc; ++i)
    check_only = check_only || std::string_view(argv[i]) == "--check-config";
  return ovb::run_main("gpt4d", argc, argv, check_only, [&](const ovb::LaunchContext& ctx) {
    using namespace ovb;
    using namespace ovb::gpt;
    Config cfg;
    CLI::App app{
        "gpt4d: GPT training with the 4D hybrid-parallel algorithm (AxoNN) and its "
        "overlap optimisations (OAR, ORS, OAG), on the host or CUDA backend.",
        "gpt4d"};
    add_options(app, cfg);
    try {
      parse_cli(app, argc, argv, ctx);
    } catch (const UsageError&) {
      // CLI11 stores the values it parsed before it checks required options: a grid that does
      // not fit the ranks is the more basic mistake (e.g. --gx 3 on 4 ranks), so it is said first
      // (not by --check-config, which has no ranks).
      if (!check_only) Grid(cfg.plan.grid, ctx.world);
      throw;
    }
    if (cfg.check_config) return check_config(app, cfg, ctx.rank);
    check_trace_support(cfg);
    auto backend = make_backend(cfg.backend, ctx);
    finish_config(app, cfg, backend->name());
    // One hardware queue for every stream cannot overlap: said at start, kept in the result.
    const DeviceConnections connections = check_device_connections(
        std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), backend->name(), CommEngine::kStreams);
    if (ctx.rank == 0)
      for (const std::string& w : connections.warnings)
        std::cerr << "gpt4d: warning: " << w << "\n";
    ProcessGrid grid(cfg.plan.grid);  // names the factor when the grid does not match the world
    validate(cfg);
    // Output places are checked now, not after the run (a folder that cannot be written fails
    // here with one line).
    if (ctx.rank == 0)
      for (const std::string& f : {cfg.out, cfg.dump_collectives, cfg.dump_gradients})
        if (!f.empty()) check_writable(f);
    if (!cfg.trace_dir.empty()) check_writable(cfg.trace_dir + "/rank-" + std::to_string(ctx.rank));
    const PredictionRun prediction(cfg, *backend, ctx);  // --predict: a bad machine fails here
    Trainer trainer(cfg, *backend, grid);
    if (ctx.rank == 0 && !cfg.quiet)
      std::cout << "gpt4d: "
                << (cfg.model.llama() ? "Llama (kv-heads " + std::to_string(cfg.model.kv()) +
                                            ", ffn " + std::to_string(cfg.model.ffn()) + "), "
                                      : std::string())
                << cfg.model.layers << " layers, hidden " << cfg.model.hidden << ", heads "
                << cfg.model.heads << ", seq " << cfg.model.seq << ", vocab " << cfg.model.vocab
                << " (" << cfg.model.parameter_count() << " parameters), batch " << cfg.plan.batch
                << (micro_steps(cfg.plan) > 1
                        ? " (" + std::to_string(micro_steps(cfg.plan)) + " micro-steps of " +
                              std::to_string(micro_batch(cfg.plan)) + ")"
                        : std::string())
                << ", grid " << cfg.plan.grid.str() << ", overlap " << overlap_string(cfg.plan)
                << (cfg.plan.recompute ? ", recompute" : "")
                << (cfg.plan.cache_weights ? ", weights cached" : "")
                << (cfg.plan.ors ? ", ORS window " + std::to_string(cfg.plan.ors_window) : "")
                << (cfg.plan.otp ? ", tp chunks " + std::to_string(cfg.plan.tp_chunks) : "")
                << (optimizer_sharded(cfg.plan) ? ", optimizer sharded over data" : "")
                << (gradients_sharded(cfg.plan) ? ", gradients too" : "") << ", "
                << name_of(cfg.plan.act_dtype) << ", data " << trainer.data_description()
                << "\n  attention: " << trainer.attention()
                << "\n  kernels: " << trainer.kernels_description()
                << (cfg.predict.empty() ? "" : "\n" + prediction.headline()) << std::endl;
    Reporter reporter(cfg, ctx, *backend, trainer, grid.world());
    // Before the trace and the timed loop: an extra forward and backward that changes nothing.
    if (!cfg.dump_gradients.empty()) dump_gradients(trainer, 0, cfg.dump_gradients, ctx.rank);
    TraceRun trace(cfg, ctx, *backend);
    for (int i = 0; i < cfg.iters; ++i) {
      IterStats st = trainer.run_iteration(i);
      if (i == 0 && ctx.rank == 0 && !cfg.dump_collectives.empty())
        atomic_write(cfg.dump_collectives, Reporter::collectives_jsonl(trainer.collective_log()));
      reporter.add(std::move(st));
    }
    trace.finish();
    nlohmann::json result = reporter.finish();
    record_device_connections(result["context"], connections);
    const std::string predicted = prediction.finish(result);
    if (ctx.rank == 0) {
      if (!cfg.out.empty()) write_json(cfg.out, result);
      const auto& s = result["summary"];
      if (!cfg.quiet)
        std::cout
            << "summary: p50 " << s["p50_ms"].get<double>() << " ms/iteration (p10 "
            << s["p10_ms"].get<double>() << ", p90 " << s["p90_ms"].get<double>() << ", "
            << s["iterations_timed"].get<int>() << " timed after " << s["warmup"].get<int>()
            << " warm-up"
            << (s["enough_samples"].get<bool>() ? "" : ": fewer than 20, not a figure to quote")
            << "), " << s["tokens_per_s"].get<double>() << " tokens/s, "
            << s["tflops_per_gpu"].get<double>() << " TFLOP/s per GPU, memory "
            << s["peak_memory_bytes"].get<double>() / (1 << 20) << " MiB per rank (estimate "
            << s["memory_estimate_bytes"].get<double>() / (1 << 20) << " MiB"
            << (s["device_memory_peak_bytes"].is_null()
                    ? std::string()
                    : ", device peak " +
                          std::to_string(s["device_memory_peak_bytes"].get<double>() / (1 << 20)) +
                          " MiB measured")
            << "), exposed comm " << s["exposed_comm_ms"].get<double>() << " of "
            << s["comm_time_ms"].get<double>() << " ms"
            << (cfg.out.empty() ? "" : ", result in " + cfg.out) << std::endl;
      std::cout << predicted << std::flush;  // printed with --quiet too: it was asked for
    }
    return 0;
  });
}
