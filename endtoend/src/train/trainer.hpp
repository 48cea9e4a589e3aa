// One gpt4d rank: builds everything from a Config (layout, buffers, kernels, streams and
// communicators, weights initialised by global index) and runs training iterations.
// Usable in-process on any MPI communicator (tests run a 1-rank reference on MPI_COMM_SELF
// beside a multi-rank grid on MPI_COMM_WORLD).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "ovb/process_grid.hpp"
#include "ovb/tracked_memory.hpp"
#include "train/comm.hpp"

namespace ovb::gpt {

struct IterStats {
  int iter = 0;
  double loss = 0;       // mean cross-entropy over the global batch (before this step)
  double grad_norm = 0;  // global gradient norm before clipping
  double lr = 0;
  double time_s = 0;  // wall clock of the iteration on this rank (data to synchronised step)
  std::vector<CollStat> collectives;
};

class DataSource;
class DwWindow;
class GradBuckets;
class Kernels;
class Model;
class ModelState;
class Optimizer;
class WeightGatherer;
struct ParamLayout;
struct TensorDesc;

class Trainer {
 public:
  // Validates the plan, checks that the memory estimate fits the device (UsageError when not),
  // allocates and initialises. Collective over grid.world().
  Trainer(const Config& cfg, Backend& backend, const ProcessGrid& grid);
  ~Trainer();

  IterStats run_iteration(int iter);

  // Test hooks. Forward and backward of iteration `iter` with every gradient complete (no step);
  // returns the global mean loss. Collective.
  double compute_gradients(int iter);
  // The whole global tensor `name` (layout.hpp names), parameters or gradients, assembled on
  // every rank from the owners' pieces. Collective.
  std::vector<float> global_tensor(const std::string& name, bool gradient);
  // Sets parameter `name` to the whole global tensor `values` (row-major, as global_tensor
  // returns it) on every rank holding a piece (master and working copy): a test starts from
  // another run's weights, or perturbs one element for a finite difference. Needs fp32
  // activations or an unsharded optimizer.
  void set_global_tensor(const std::string& name, const std::vector<float>& values);

  const std::vector<CollOp>& collective_log() const;  // of the last iteration
  // Its issues and waits in order (CommEngine::sequence()): gpt_schedule()'s, step by step.
  const std::vector<CommEvent>& comm_sequence() const;
  const TrackedMemory& memory() const { return mem_; }
  const ParamLayout& layout() const { return *layout_; }
  std::string kernels_description() const;
  // The attention that runs: "cudnn", "simt" (CUDA-core kernels) or "host".
  const std::string& attention() const { return attention_; }
  std::string data_description() const;

 private:
  const TensorDesc& tensor(const std::string& name) const;
  void load_batch(int iter);
  void forward_backward(int iter);

  const Config& cfg_;
  Backend& backend_;
  const ProcessGrid& grid_;
  TrackedMemory mem_;
  std::unique_ptr<ParamLayout> layout_;
  std::unique_ptr<DataSource> data_;
  std::unique_ptr<Kernels> kernels_;
  std::unique_ptr<CommEngine> comm_;
  std::unique_ptr<ModelState> state_;
  std::unique_ptr<WeightGatherer> gather_;
  std::unique_ptr<DwWindow> dw_;
  std::unique_ptr<GradBuckets> buckets_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::int32_t> host_tokens_, host_targets_;
  std::string attention_;
  // Ranges of the flat gradient buffer that backward accumulates into (layer norms, embeddings;
  // offset, count), zeroed each iteration. Linear weights and biases are overwritten by their
  // GEMMs (or Z reduce-scatters) in the first micro-step and added to in later ones, so the
  // 4-bytes-per-parameter memset of the rest is skipped.
  std::vector<std::pair<std::int64_t, std::int64_t>> accumulated_grads_;
};

// Bytes free for this rank's buffers: the device's free memory on CUDA; on the host the
// available memory divided among the node's ranks.
double free_memory_bytes(Backend& backend, const LaunchContext& ctx);

}  // namespace ovb::gpt
