// libovb-inject.so: the injected entry point of the CUDA tracer. Any CUDA program - gpt4d,
// ovb-overlap, Megatron-LM under PyTorch - is traced without relinking:
//
//   CUDA_INJECTION64_PATH=build/cuda/libovb-inject.so OVB_TRACE_DIR=traces/ mpirun -np 4 ./prog
//
// The CUDA driver calls InitializeInjection() from cuInit. Configuration (environment):
//   OVB_TRACE_DIR        output folder (required; without it the library only says so)
//   OVB_TRACE_CAPTURE    time (default) | range | profiler_api  - see capture_window.hpp
//   OVB_TRACE_START_S, OVB_TRACE_DURATION_S, OVB_TRACE_RANGE, OVB_TRACE_START_ITER, OVB_TRACE_ITERS
//   OVB_TRACE_API=1      also record CUDA runtime/driver API calls
//   OVB_TRACE_BUFFER_MB  activity buffer size, 1..8 (default 4)
// NVTX ranges reach the tracer through CUPTI's NVTX injection: when NVTX_INJECTION64_PATH is unset
// this library sets it to the CUPTI library it uses (effective if the program's first NVTX call
// comes after CUDA initialisation; set it yourself otherwise).
// The rank comes from the launcher (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK); the
// trace is DIR/rank-NNNNN.trace.json, written at exit or on SIGTERM/SIGINT. A process without a
// launcher rank that ran nothing on the GPU writes no trace (rank_env.hpp, writes_trace): the
// launcher itself may initialise CUDA (mpirun's hwloc GPU plugins) and, exiting after the ranks,
// would otherwise replace rank 0's trace with an empty one.
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "../rank_env.hpp"
#include "../signal_flush.hpp"
#include "cupti_tracer.hpp"
#include "ovb/error.hpp"

namespace {

using ovb::trace::cuda::CuptiTracer;

struct InjectState {
  std::string path;
  bool launcher_rank = false;  // the rank came from the launcher's environment
  ovb::trace::TraceHeader header;
  std::atomic<bool> written{false};
};
InjectState* g_state = nullptr;  // leaked on purpose: used during exit

void write_trace(const char* why) {
  if (!g_state || g_state->written.exchange(true)) return;
  try {
    if (!ovb::trace::writes_trace(g_state->launcher_rank,
                                  CuptiTracer::get().has_device_activity())) {
      std::fprintf(stderr,
                   "ovb-inject: pid %ld has no launcher rank and ran nothing on the GPU: no "
                   "trace written (not to replace rank 0's)\n",
                   static_cast<long>(getpid()));
      return;
    }
    CuptiTracer::get().write(g_state->path, g_state->header);
    if (g_state->header.rank == 0)
      std::fprintf(stderr, "ovb-inject: wrote %s (%s)\n", g_state->path.c_str(), why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ovb-inject: rank %d: could not write %s: %s\n", g_state->header.rank,
                 g_state->path.c_str(), e.what());
  }
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : all)
    if (c == '\0') c = ' ';
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

std::size_t buffer_bytes() {
  const char* v = std::getenv("OVB_TRACE_BUFFER_MB");
  if (!v || !*v) return 4u << 20;
  const long mb = std::strtol(v, nullptr, 10);
  if (mb < 1 || mb > 8)
    throw ovb::Error("OVB_TRACE_BUFFER_MB must be 1..8, not '" + std::string(v) + "'");
  return static_cast<std::size_t>(mb) << 20;
}

// NVTX hands its calls to the library named by NVTX_INJECTION64_PATH: CUPTI's own.
void point_nvtx_at_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) && info.dli_fname)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  const char* dir = std::getenv("OVB_TRACE_DIR");
  if (!dir || !*dir) {
    std::fprintf(stderr, "ovb-inject: OVB_TRACE_DIR is not set: not tracing\n");
    return 1;
  }
  try {
    const auto rank = ovb::trace::launcher_rank();
    ovb::trace::cuda::TracerConfig cfg;
    cfg.window = ovb::trace::WindowConfig::from_env();
    cfg.nvtx_callbacks = true;
    cfg.api_records =
        std::getenv("OVB_TRACE_API") && std::string(std::getenv("OVB_TRACE_API")) == "1";
    cfg.buffer_bytes = buffer_bytes();
    cfg.mode = "injected";
    point_nvtx_at_cupti();
    CuptiTracer::get().start(cfg);

    g_state = new InjectState;
    g_state->path = ovb::trace::rank_trace_path(dir, rank.rank);
    g_state->launcher_rank = !rank.source.empty();
    auto& h = g_state->header;
    h.rank = rank.rank;
    h.world_size = rank.world;
    h.backend = "nccl";
    h.extra["traceName"] = g_state->path;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    h.extra["ovbProcess"] = {{"host", host},
                             {"pid", static_cast<long>(getpid())},
                             {"command", command_line()},
                             {"rank_from", rank.source.empty() ? "none (rank 0)" : rank.source}};
    std::atexit([] { write_trace("at exit"); });
    ovb::trace::on_termination_signal(
        [](int signo) { write_trace(signo == SIGTERM ? "on SIGTERM" : "on SIGINT"); });
    if (rank.rank == 0)
      std::fprintf(stderr, "ovb-inject: tracing into %s, capture %s\n", dir,
                   cfg.window.describe().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ovb-inject: error: %s; not tracing\n", e.what());
  }
  return 1;
}
