// What the benchmarks of one program share: the backend, its GEMM, streams, communicators per
// (group, NCCL config), the one prepared workload kept across Google Benchmark's calls of a
// benchmark, and the tally of wrong results that decides the exit status.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "harness/ranks.hpp"
#include "ovb/backend.hpp"
#include "ovb/error.hpp"
#include "ovb/gemm.hpp"
#include "ovb/grid.hpp"
#include "ovb/launch.hpp"
#include "ovb/process_grid.hpp"

namespace ovb::mb {

// Options every microbenchmark has (see add_common_options in bench_main.hpp).
struct CommonOptions {
  BackendOptions backend;
  std::string sweep;
  int repetitions = 0;          // 0: Google Benchmark's --benchmark_repetitions (default 1)
  double min_time = 0;          // seconds of measured time per benchmark; 0: --benchmark_min_time
  std::int64_t iterations = 0;  // fixed iteration count; 0: adaptive
  int warmup = 3;               // untimed runs before the first sample
  bool inject_wrong = false;    // hidden, tests only: corrupt one result element before the check
};

// A collective group: the world, or this rank's group along one grid dimension.
struct GroupSpec {
  bool world = true;
  Dim dim = Dim::x;
  std::string name() const { return world ? "world" : std::string(name_of(dim)); }
};

// One workload object at a time, kept while Google Benchmark calls the same benchmark again
// (iteration-count growth, repetitions) and freed when another benchmark starts. It also
// remembers whether a call of this benchmark was already reported: Google Benchmark runs every
// repetition after the first with the first one's iteration count and reports it, whatever its
// time (samples.hpp tops such runs up too).
class PreparedSlot {
 public:
  template <class T>
  T& get(const std::string& key, const std::function<std::unique_ptr<T>()>& make) {
    if (key != key_ || !value_) {
      clear();  // free the previous workload's memory first
      value_ = std::shared_ptr<void>(make().release(), [](void* p) { delete static_cast<T*>(p); });
      key_ = key;
    }
    return *static_cast<T*>(value_.get());
  }
  void clear() {
    value_.reset();
    key_.clear();
    reported_ = false;
  }
  bool reported() const { return reported_; }
  void set_reported() { reported_ = true; }

 private:
  std::string key_;
  std::shared_ptr<void> value_;
  bool reported_ = false;
};

class BenchEnv {
 public:
  BenchEnv(const LaunchContext& ctx, Backend& backend, const CommonOptions& opts);
  ~BenchEnv();
  const LaunchContext& ctx() const { return ctx_; }
  Backend& backend() { return backend_; }
  const CommonOptions& opts() const { return opts_; }
  Gemm& gemm();
  // Bytes one workload may allocate: this rank's share of device memory (of host memory on the
  // host backend), with headroom for the libraries.
  std::size_t memory_budget();
  const std::string& device_name();
  // Streams by role (0 compute, 1 communication) and priority, created once.
  Stream& stream(int role, Priority p);

  // The grid that x/y/z/data groups refer to. Returns "" when it fits the world, else why not
  // (benchmarks over its dimensions are then skipped with that reason).
  std::string set_grid(const GridShape& shape);
  const GridShape& grid() const { return grid_; }
  // "" when the group exists here, else why not.
  std::string group_problem(const GroupSpec& g) const;
  int group_size(const GroupSpec& g) const;
  // Communicator over g with cfg, created on first use (collective over the group's ranks).
  Communicator& comm(const GroupSpec& g, const CommConfig& cfg);
  // The MPI communicator of group g (which must exist here), e.g. for Backend::map_peers.
  MPI_Comm mpi_comm(const GroupSpec& g) const;

  PreparedSlot& prepared() { return prepared_; }
  // Records the wrong-element count (already summed over ranks) of one benchmark.
  void add_wrong(const std::string& benchmark, std::int64_t wrong);
  const std::map<std::string, std::int64_t>& wrong() const { return wrong_; }

 private:
  const LaunchContext& ctx_;
  Backend& backend_;
  const CommonOptions& opts_;
  std::unique_ptr<Gemm> gemm_;
  std::optional<DeviceInfo> device_;
  std::map<std::pair<int, Priority>, std::unique_ptr<Stream>> streams_;
  GridShape grid_;
  std::string grid_problem_;
  std::unique_ptr<ProcessGrid> process_grid_;
  std::map<std::tuple<std::string, int, int, int>, std::unique_ptr<Communicator>> comms_;
  PreparedSlot prepared_;
  std::map<std::string, std::int64_t> wrong_;
};

// Runs `make` (local work only: no collectives) through the prepared slot. A UsageError from it,
// on any rank, skips the benchmark on every rank with the first failing rank's reason, so that
// all ranks keep issuing the same collectives. Returns nullptr when skipped.
template <class T>
T* prepare_or_skip(benchmark::State& state, BenchEnv& env, const std::string& key,
                   const std::function<std::unique_ptr<T>()>& make);

// Agrees on a skip reason: "" on every rank when no rank has one, else the lowest such rank's.
std::string agree_on_skip(const std::string& local_reason);

// Fails (Error) unless all ranks run the same number of iterations in this call.
void check_iterations_agree(const benchmark::State& state);

// The untimed start of a prepared workload (anything with run(Stream&) and check(bool)): one run,
// the correctness check (wrong elements summed over ranks, recorded under `benchmark`), then
// --warmup runs. Returns the wrong count.
template <class W>
std::int64_t check_and_warm_up(BenchEnv& env, const std::string& benchmark, W& work, Stream& s);

template <class W>
std::int64_t check_and_warm_up(BenchEnv& env, const std::string& benchmark, W& work, Stream& s) {
  work.run(s);
  s.synchronize();
  const std::int64_t wrong = sum_over_ranks(work.check(env.opts().inject_wrong));
  env.add_wrong(benchmark, wrong);
  for (int i = 0; i < env.opts().warmup; ++i) work.run(s);
  s.synchronize();
  return wrong;
}

template <class T>
T* prepare_or_skip(benchmark::State& state, BenchEnv& env, const std::string& key,
                   const std::function<std::unique_ptr<T>()>& make) {
  check_iterations_agree(state);
  std::string why;
  T* p = nullptr;
  try {
    p = &env.prepared().get<T>(key, make);
  } catch (const UsageError& e) {
    why = e.what();
    env.prepared().clear();
  }
  why = agree_on_skip(why);
  if (!why.empty()) {
    env.prepared().clear();
    state.SkipWithError(why.c_str());
    return nullptr;
  }
  return p;
}

}  // namespace ovb::mb
