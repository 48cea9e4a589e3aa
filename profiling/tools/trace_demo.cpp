// ovb-trace-demo: a stand-in for one training iteration of the 4D algorithm, for the tracer's own
// tests and its overhead measurement. Each iteration issues exactly the collectives of
// ovb::gpt_collectives() for the given model and grid (kind, group, count, dtype), each on a
// communication stream inside a ScopedRange of category "collective", with a GEMM on the compute
// stream (category "compute") before each one, so communication overlaps compute as in gpt4d.
// Communicators are named like gpt4d's: x, y, z, z-allgather (own stream), data, world.
//
//   mpirun -np 4 ovb-trace-demo --backend host --gx 2 --gy 2 --iters 3 --trace traces/
//   ovb-trace analyze traces/ --json analysis.json
//
// The model, grid, batch, schedule and dtype options are the run configuration's
// (ovb/run_config.hpp), as in gpt4d; the default model is tiny with seq 32 and vocab 256.
// --out FILE writes per-iteration times (for the traced-vs-untraced overhead on a GPU).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "ovb/annotate.hpp"
#include "ovb/backend.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/gemm.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/io.hpp"
#include "ovb/process_grid.hpp"
#include "ovb/run_config.hpp"
#include "ovb/run_main.hpp"
#include "ovb/trace.hpp"

namespace {

using namespace ovb;

struct DemoOptions {
  BackendOptions backend;
  RunConfig run;  // plan.batch 0: Gdata * Gz sequences
  int iters = 3, warmup = 1;
  std::int64_t gemm = 128;  // M = N = K of the GEMM before each collective
  std::string trace_dir, out;
};

// The communicators of the 4D algorithm, named as gpt4d names them.
struct Comms {
  std::map<std::string, std::unique_ptr<Communicator>> by_name;
  Communicator& of(const CollOp& op) {
    const std::string name = op.group == Group::z && op.kind == CollKind::all_gather
                                 ? "z-allgather"
                                 : std::string(name_of(op.group));
    return *by_name.at(name);
  }
};

Comms make_comms(Backend& b, const ProcessGrid& pg) {
  Comms c;
  auto add = [&](const std::string& name, MPI_Comm group) {
    CommConfig cfg;
    cfg.name = name;
    c.by_name[name] = b.create_communicator(group, cfg);
  };
  add("x", pg.comm(Dim::x));
  add("y", pg.comm(Dim::y));
  add("z", pg.comm(Dim::z));
  add("z-allgather", pg.comm(Dim::z));
  add("data", pg.comm(Dim::data));
  add("world", pg.world());
  return c;
}

// Elements a buffer must hold for any op of the list (all-gather / reduce-scatter: count * n).
std::size_t max_elements(const std::vector<CollOp>& ops) {
  std::size_t m = 1;
  for (const CollOp& op : ops)
    m = std::max<std::size_t>(m, static_cast<std::size_t>(op.count) *
                                     (op.kind == CollKind::all_reduce ? 1 : op.group_size));
  return m;
}

class Iteration {
 public:
  Iteration(Backend& b, Comms& comms, std::vector<CollOp> ops, std::int64_t gemm_size)
      : b_(b),
        comms_(comms),
        ops_(std::move(ops)),
        gemm_(make_gemm(b)),
        compute_(b.create_stream(Priority::normal)),
        comm_(b.create_stream(Priority::high)),
        gather_(b.create_stream(Priority::high)),
        ready_(b.create_event()),
        done_(b.create_event()) {
    dtype_ = b.supports(DType::bf16) ? DType::bf16 : DType::f32;
    shape_ = {gemm_size, gemm_size, gemm_size, Trans::n, Trans::n};
    const std::size_t gemm_bytes = static_cast<std::size_t>(gemm_size * gemm_size) * 4;
    a_ = b.allocate(gemm_bytes);
    bm_ = b.allocate(gemm_bytes);
    c_ = b.allocate(gemm_bytes);
    for (Buffer* buf : {&a_, &bm_, &c_}) b.memset_zero(*buf);
    const std::size_t coll_bytes = max_elements(ops_) * 4;
    send_ = b.allocate(coll_bytes);
    recv_ = b.allocate(coll_bytes);
    b.memset_zero(send_);
    b.memset_zero(recv_);
  }

  void run() {
    Phase phase = ops_.empty() ? Phase::forward : ops_.front().phase;
    auto phase_range = std::make_unique<ScopedRange>(std::string(name_of(phase)), "phase");
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const CollOp& op = ops_[i];
      if (op.phase != phase) {
        phase_range.reset();
        phase = op.phase;
        phase_range = std::make_unique<ScopedRange>(std::string(name_of(phase)), "phase");
      }
      {
        ScopedRange r("gemm " + op.op, "compute");
        gemm_->run(*compute_, shape_, dtype_ == DType::bf16 ? DType::bf16 : DType::f32, a_.data(),
                   bm_.data(), c_.data());
      }
      ready_->record(*compute_);
      Stream& s = op.group == Group::z && op.kind == CollKind::all_gather ? *gather_ : *comm_;
      b_.wait_event(s, *ready_);
      Communicator& comm = comms_.of(op);
      RangeInfo info{std::string(name_of(op.kind)) + " " + std::string(name_of(op.group)),
                     "collective",
                     std::string(name_of(op.kind)),
                     std::string(name_of(op.group)),
                     static_cast<std::int64_t>(op.bytes()),
                     comm.size()};
      ScopedRange r(info);
      comm.run(op.kind, send_.data(), recv_.data(), static_cast<std::size_t>(op.count), op.dtype,
               s);
      // Every fourth op the compute stream waits for communication, as a layer waits for its
      // inputs: bounded in-flight work, and exposed communication to measure.
      if (i % 4 == 3) {
        done_->record(s);
        b_.wait_event(*compute_, *done_);
      }
    }
    phase_range.reset();
    b_.synchronize();
  }

 private:
  Backend& b_;
  Comms& comms_;
  std::vector<CollOp> ops_;
  std::unique_ptr<Gemm> gemm_;
  std::unique_ptr<Stream> compute_, comm_, gather_;
  std::unique_ptr<Event> ready_, done_;
  DType dtype_ = DType::f32;
  GemmShape shape_;
  Buffer a_, bm_, c_, send_, recv_;
};

// The configuration's collectives; "--dtype auto" is bf16 where the backend has it, else fp32.
std::vector<CollOp> plan(DemoOptions& o, Backend& b) {
  RunConfig& r = o.run;
  if (r.plan.batch == 0)
    r.plan.batch = static_cast<std::int64_t>(r.plan.grid.gdata) * r.plan.grid.gz;
  resolve_dtype(r, b.supports(DType::bf16) ? DType::bf16 : DType::f32);
  validate(r);
  return gpt_collectives(r.model, r.plan);
}

}  // namespace

int main(int argc, char** argv) {
  return ovb::run_main("ovb-trace-demo", argc, argv, [&](const LaunchContext& ctx) {
    DemoOptions o;
    o.run.model.preset = "tiny";
    o.run.model.seq = 32;
    o.run.model.vocab = 256;
    CLI::App app{"Replays the collectives of one 4D GPT iteration with GEMMs in between, traced",
                 "ovb-trace-demo"};
    add_backend_options(app, o.backend);
    add_run_options(app, o.run, kAllRunGroups);
    app.get_option("--preset")->default_str("tiny");
    app.get_option("--batch")->description(
        "Global batch in sequences (split over Gdata*Gz, whole sequences per rank; default "
        "Gdata*Gz)");
    app.add_option("--iters", o.iters, "traced iterations")
        ->check(ovb::positive())
        ->capture_default_str();
    app.add_option("--warmup", o.warmup, "untraced iterations first")
        ->check(ovb::non_negative())
        ->capture_default_str();
    app.add_option("--gemm", o.gemm, "M = N = K of the GEMM before each collective")
        ->check(ovb::positive())
        ->capture_default_str();
    app.add_option("--trace", o.trace_dir, "write one trace per rank into this folder");
    app.add_option("--out", o.out, "write per-iteration times as JSON (rank 0)");
    parse_cli(app, argc, argv, ctx);
    finish_run_config(app, o.run);

    auto backend = make_backend(o.backend, ctx);
    const ProcessGrid pg(o.run.plan.grid);
    const std::vector<CollOp> ops = plan(o, *backend);
    // Before NCCL and the warm-up: the CUDA tracer must see the kernels' modules load.
    std::optional<TraceSession> trace;
    if (!o.trace_dir.empty())
      trace.emplace(TraceOptions{o.trace_dir, ctx.rank, ctx.world, backend.get()});
    Comms comms = make_comms(*backend, pg);
    Iteration it(*backend, comms, ops, o.gemm);
    for (int i = 0; i < o.warmup; ++i) it.run();
    MPI_Barrier(MPI_COMM_WORLD);
    if (trace) trace->start();
    std::vector<double> times_ms;
    for (int i = 0; i < o.iters; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      it.run();
      MPI_Barrier(MPI_COMM_WORLD);
      times_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (ctx.rank == 0)
        std::cout << "iter " << i << ": " << ops.size() << " collectives, " << times_ms.back()
                  << " ms" << std::endl;
    }
    if (trace) {
      trace->stop();
      const std::string path = trace->write();
      if (ctx.rank == 0) std::cout << "trace: " << path << " (one per rank)" << std::endl;
    }
    if (!o.out.empty() && ctx.rank == 0) {
      std::vector<double> sorted = times_ms;
      std::sort(sorted.begin(), sorted.end());
      nlohmann::json j = {{"context", run_context(backend.get(), ctx)},
                          {"config",
                           {{"grid", o.run.plan.grid.str()},
                            {"layers", o.run.model.layers},
                            {"hidden", o.run.model.hidden},
                            {"gemm", o.gemm},
                            {"iters", o.iters},
                            {"traced", !o.trace_dir.empty()},
                            {"collectives_per_iter", ops.size()}}},
                          {"iterations", nlohmann::json::array()},
                          {"summary", {{"median_time_ms", sorted[sorted.size() / 2]}}}};
      for (std::size_t i = 0; i < times_ms.size(); ++i)
        j["iterations"].push_back({{"iter", i}, {"time_ms", times_ms[i]}});
      write_json(o.out, j);
    }
    return 0;
  });
}
