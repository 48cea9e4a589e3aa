// Shared benchmark environment (see env.hpp).
#include "harness/env.hpp"

#include <mpi.h>

#include <vector>

#include "harness/ranks.hpp"

namespace ovb::mb {

BenchEnv::BenchEnv(const LaunchContext& ctx, Backend& backend, const CommonOptions& opts)
    : ctx_(ctx), backend_(backend), opts_(opts) {}

BenchEnv::~BenchEnv() {
  // Workload buffers and plans before the GEMM and communicators they may use.
  prepared_.clear();
  comms_.clear();
  gemm_.reset();
}

Gemm& BenchEnv::gemm() {
  if (!gemm_) gemm_ = make_gemm(backend_);
  return *gemm_;
}

std::size_t BenchEnv::memory_budget() {
  if (!device_) device_ = backend_.device_info();
  const bool gpu = backend_.name() != "host";
  const double sharers = gpu ? backend_.ranks_per_gpu() : ctx_.local_size;
  const double share = gpu ? 0.85 : 0.5;  // host: the OS and other programs need memory too
  return static_cast<std::size_t>(static_cast<double>(device_->memory_bytes) * share /
                                  std::max(1.0, sharers));
}

const std::string& BenchEnv::device_name() {
  if (!device_) device_ = backend_.device_info();
  return device_->name;
}

Stream& BenchEnv::stream(int role, Priority p) {
  auto& s = streams_[{role, p}];
  if (!s) s = backend_.create_stream(p);
  return *s;
}

std::string BenchEnv::set_grid(const GridShape& shape) {
  grid_ = shape;
  process_grid_.reset();
  comms_.clear();
  if (shape.world() != ctx_.world) {
    grid_problem_ = "grid " + shape.str() + " has " + std::to_string(shape.world()) +
                    " ranks but the world has " + std::to_string(ctx_.world);
  } else {
    grid_problem_.clear();
    process_grid_ = std::make_unique<ProcessGrid>(shape);
  }
  return grid_problem_;
}

std::string BenchEnv::group_problem(const GroupSpec& g) const {
  return g.world ? std::string() : grid_problem_;
}

int BenchEnv::group_size(const GroupSpec& g) const {
  return g.world ? ctx_.world : grid_.size(g.dim);
}

Communicator& BenchEnv::comm(const GroupSpec& g, const CommConfig& cfg) {
  if (const std::string why = group_problem(g); !why.empty()) throw UsageError(why);
  auto& c = comms_[{g.name(), cfg.min_ctas, cfg.max_ctas, cfg.cta_policy}];
  if (!c) {
    CommConfig named = cfg;
    if (named.name.empty()) named.name = g.name();
    c = backend_.create_communicator(mpi_comm(g), named);
  }
  return *c;
}

MPI_Comm BenchEnv::mpi_comm(const GroupSpec& g) const {
  if (const std::string why = group_problem(g); !why.empty()) throw UsageError(why);
  return g.world ? MPI_COMM_WORLD : process_grid_->comm(g.dim);
}

void BenchEnv::add_wrong(const std::string& benchmark, std::int64_t wrong) {
  if (wrong > 0) wrong_[benchmark] += wrong;
}

std::string agree_on_skip(const std::string& local_reason) {
  int world = 1, rank = 0;
  OVB_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world));
  OVB_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  const int mine = local_reason.empty() ? world : rank;
  int root = world;
  OVB_CHECK_MPI(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (root == world) return "";
  int len = static_cast<int>(local_reason.size());
  OVB_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD));
  std::vector<char> text(local_reason.begin(), local_reason.end());
  text.resize(static_cast<std::size_t>(len));
  OVB_CHECK_MPI(MPI_Bcast(text.data(), len, MPI_CHAR, root, MPI_COMM_WORLD));
  std::string reason(text.begin(), text.end());
  if (root != 0) reason = "rank " + std::to_string(root) + ": " + reason;
  return reason;
}

void check_iterations_agree(const benchmark::State& state) {
  require_same_on_all_ranks(static_cast<std::int64_t>(state.max_iterations),
                            "Google Benchmark's iteration count");
}

}  // namespace ovb::mb
