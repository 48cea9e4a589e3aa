// One gpt4d rank (see trainer.hpp).
#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "data/loader.hpp"
#include "kernels/kernels.hpp"
#include "model/layout.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "train/dw_window.hpp"
#include "train/gather.hpp"
#include "train/grad_buckets.hpp"
#include "train/model.hpp"
#include "train/optimizer.hpp"
#include "train/schedule.hpp"
#include "train/state.hpp"

namespace ovb::gpt {

namespace {
std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

// UsageError when the plan's memory does not fit what this rank can use.
void check_memory(const Config& cfg, Backend& backend) {
  const GptMemory need = gpt_memory(cfg.model, cfg.plan);
  const double free = free_device_memory(backend, query_launch_context());
  if (need.total() <= free) return;
  throw UsageError("GPT " + std::to_string(cfg.model.layers) + "x" +
                   std::to_string(cfg.model.hidden) + " with batch " +
                   std::to_string(cfg.plan.batch) + " on grid " + cfg.plan.grid.str() + " needs " +
                   gib(need.total()) + " per rank (params " + gib(need.params) + ", grads " +
                   gib(need.grads) + ", optimizer " + gib(need.optimizer) + ", gathered weights " +
                   gib(need.gathered) + ", dW blocks " + gib(need.grad_blocks) + ", activations " +
                   gib(need.activations) + ", workspace " + gib(need.workspace) + ") but only " +
                   gib(free) + " is free for it on " + std::string(backend.name()) +
                   "; use more ranks (Gx, Gy, Gz), --recompute, a smaller --batch or --micro-batch" +
                   (cfg.plan.cache_weights ? ", no --cache-weights" : "") +
                   (cfg.plan.grid.gdata > 1 && !cfg.plan.shard_optimizer ? ", --shard-optimizer"
                                                                         : "") +
                   (optimizer_sharded(cfg.plan) && !cfg.plan.shard_gradients
                        ? ", --shard-gradients"
                        : "") +
                   (cfg.plan.ors && cfg.plan.grid.gz > 1 ? " or a smaller --ors-window" : ""));
}
}  // namespace

Trainer::Trainer(const Config& cfg, Backend& backend, const ProcessGrid& grid)
    : cfg_(cfg), backend_(backend), grid_(grid), mem_(backend) {
  validate_gpt_plan(cfg.model, cfg.plan);
  if (grid.grid().shape().str() != cfg.plan.grid.str())
    throw Error("gpt4d internal error: process grid " + grid.grid().shape().str() +
                " differs from the configured " + cfg.plan.grid.str());
  check_memory(cfg, backend);
  layout_ = std::make_unique<ParamLayout>(make_layout(cfg.model, cfg.plan, grid.coords()));
  data_ = std::make_unique<DataSource>(cfg.data, cfg.model, cfg.plan.batch, cfg.seed);
  kernels_ = make_kernels(backend, cfg.plan.act_dtype, &mem_, parse_attention(cfg.attention),
                          cfg.gemm_autotune);
  comm_ = std::make_unique<CommEngine>(backend, grid, cfg);
  state_ = std::make_unique<ModelState>(cfg.model, cfg.plan, *layout_, mem_);
  gather_ =
      std::make_unique<WeightGatherer>(cfg.model, cfg.plan, *layout_, *comm_, mem_, state_->work());
  dw_ = std::make_unique<DwWindow>(cfg.model, cfg.plan, *layout_, *comm_, mem_);
  // Gradients written with += (everything but the linear layers' weights and biases), merged
  // into contiguous ranges.
  std::vector<bool> overwritten(layout_->tensors.size(), false);
  auto mark = [&](const LinearParams& lp) {
    overwritten[static_cast<std::size_t>(lp.weight)] = true;
    if (lp.bias >= 0) overwritten[static_cast<std::size_t>(lp.bias)] = true;
  };
  for (const BlockParams& b : layout_->blocks)
    for (int i = 0; i < 4; ++i) mark(b.linear(i));
  mark(layout_->head.lm_head);
  for (std::size_t i = 0; i < layout_->tensors.size(); ++i) {
    const TensorDesc& t = layout_->tensors[i];
    if (overwritten[i] || t.count == 0) continue;
    if (!accumulated_grads_.empty() &&
        accumulated_grads_.back().first + accumulated_grads_.back().second == t.offset)
      accumulated_grads_.back().second += t.count;
    else
      accumulated_grads_.emplace_back(t.offset, t.count);
  }
  buckets_ = std::make_unique<GradBuckets>(cfg.plan, *layout_, accumulated_grads_, *comm_,
                                           *kernels_, mem_, state_->grads());
  model_ = std::make_unique<Model>(cfg, *layout_, *state_, *kernels_, *comm_, *gather_, *dw_,
                                   *buckets_);
  optimizer_ = std::make_unique<Optimizer>(cfg, *layout_, *state_, *kernels_, *comm_);
  // The attention's implementation, chosen (and cuDNN's graphs built) before the first iteration.
  const std::int64_t tokens = tokens_per_rank(cfg.model, cfg.plan);
  attention_ = kernels_->prepare_attention(
      tokens / cfg.model.seq, cfg.model.seq, cfg.model.heads / cfg.plan.grid.gy,
      cfg.model.kv() / cfg.plan.grid.gy, cfg.model.head_dim());

  // Weights by global index; moments zero; the working copy cast from the full weights. Every
  // buffer starts at zero, so the padding of sharded buckets stays zero (and finite).
  Stream& s = comm_->compute();
  const std::size_t n = static_cast<std::size_t>(layout_->total);
  const std::size_t own = static_cast<std::size_t>(layout_->shard_total);
  const bool grads_sharded = gradients_sharded(cfg.plan);
  kernels_->zero(s, state_->grads(), (grads_sharded ? own : n) * 4);
  kernels_->zero(s, state_->adam_m(), own * 4);
  kernels_->zero(s, state_->adam_v(), own * 4);
  if (!state_->separate_work()) {
    kernels_->zero(s, state_->params(), n * 4);
    for (const TensorDesc& t : layout_->tensors)
      kernels_->init_tensor(s, state_->params(), t, cfg.seed);
  } else {
    // The full weights go through a gradient buffer (unused until the first backward): the
    // working copy needs all of them, the master only the rank's chunks. With sharded gradients
    // bucket by bucket, through the bucket buffers.
    if (!grads_sharded) {
      for (const TensorDesc& t : layout_->tensors)
        kernels_->init_tensor(s, state_->grads(), t, cfg.seed);
      kernels_->to_act(s, state_->grads(), state_->work(), layout_->total);
    } else {
      const std::size_t a = size_of(cfg.plan.act_dtype);
      for (std::size_t bi = 0; bi < layout_->buckets.size(); ++bi) {
        const Bucket& b = layout_->buckets[bi];
        float* scratch = buckets_->scratch(static_cast<int>(bi));
        kernels_->zero(s, scratch, static_cast<std::size_t>(b.extent) * 4);
        for (const TensorDesc& t : layout_->tensors) {
          const TensorDesc part = slice(t, b.offset, b.offset + b.count, 0);
          if (part.count > 0) kernels_->init_tensor(s, scratch, part, cfg.seed);
        }
        kernels_->to_act(s, scratch, static_cast<char*>(state_->work()) + b.offset * a,
                         b.extent);
      }
      buckets_->clear();
    }
    kernels_->zero(s, state_->params(), own * 4);
    for (const Bucket& b : layout_->buckets)
      for (const TensorDesc& t : layout_->tensors) {
        const TensorDesc part = slice(t, b.own_offset, b.own_offset + b.own_count, b.shard_offset);
        if (part.count > 0) kernels_->init_tensor(s, state_->params(), part, cfg.seed);
      }
    if (!grads_sharded) kernels_->zero(s, state_->grads(), n * 4);
  }
  s.synchronize();
  const std::int64_t iter_tokens = local_batch(cfg.plan) * cfg.model.seq;
  host_tokens_.resize(static_cast<std::size_t>(iter_tokens));
  host_targets_.resize(static_cast<std::size_t>(iter_tokens));
}

Trainer::~Trainer() = default;

std::string Trainer::kernels_description() const {
  return kernels_->description();
}
std::string Trainer::data_description() const {
  return data_->describe();
}
const std::vector<CollOp>& Trainer::collective_log() const {
  return comm_->log();
}
const std::vector<CommEvent>& Trainer::comm_sequence() const {
  return comm_->sequence();
}

void Trainer::load_batch(int iter) {
  // This rank's sequences: (d*Gz + z) * B_local onwards (loader.hpp), every micro-step's at once
  // (micro-step k takes B_local / steps of them from k * micro-batch on).
  const GridShape& g = cfg_.plan.grid;
  const std::int64_t b_local = local_batch(cfg_.plan);
  const Coords c = grid_.coords();
  const std::int64_t first = (static_cast<std::int64_t>(c[Dim::data]) * g.gz + c[Dim::z]) * b_local;
  data_->batch(iter, first, b_local, host_tokens_.data(), host_targets_.data());
  const std::size_t bytes = host_tokens_.size() * sizeof(std::int32_t);
  backend_.upload(state_->tokens_buf, host_tokens_.data(), bytes);
  backend_.upload(state_->targets_buf, host_targets_.data(), bytes);
  // A copy from pageable memory may still be in flight (on the legacy stream) when upload()
  // returns; the compute stream does not order with it. Between iterations the device is idle
  // (hence one upload per iteration, not per micro-step).
  backend_.synchronize();
}

void Trainer::forward_backward(int iter) {
  load_batch(iter);
  comm_->begin_iteration();
  dw_->begin_iteration();
  buckets_->begin_iteration();
  Stream& s = comm_->compute();
  // Sharded gradients: the bucket buffers zero these ranges when taken, every micro-step.
  if (!gradients_sharded(cfg_.plan))
    for (const auto& [offset, count] : accumulated_grads_)
      kernels_->zero(s, state_->grads() + offset, static_cast<std::size_t>(count) * 4);
  kernels_->zero(s, state_->scalars, 2 * sizeof(float));
  const int steps = static_cast<int>(micro_steps(cfg_.plan));
  for (int k = 0; k < steps; ++k) {
    model_->begin_micro_step(k);
    model_->forward();
    model_->backward();
  }
  comm_->wait_all();
  buckets_->finish();
}

IterStats Trainer::run_iteration(int iter) {
  // Marks the iteration in traces, so that their analysis can leave the warm-up out.
  ScopedRange range("iteration", "iteration");
  const double t0 = MPI_Wtime();
  forward_backward(iter);
  optimizer_->step(iter);
  comm_->compute().synchronize();
  float scalars[2];
  backend_.download(scalars, state_->scalars_buf, sizeof scalars);
  IterStats st;
  st.time_s = MPI_Wtime() - t0;
  st.iter = iter;
  st.loss = scalars[0] / static_cast<double>(cfg_.plan.batch * cfg_.model.seq);
  st.grad_norm = std::sqrt(static_cast<double>(scalars[1]));
  st.lr = learning_rate(cfg_.optim, iter);
  st.collectives = comm_->end_iteration();
  return st;
}

double Trainer::compute_gradients(int iter) {
  forward_backward(iter);
  comm_->compute().synchronize();
  comm_->end_iteration();
  float loss = 0;
  backend_.download(&loss, state_->scalars_buf, sizeof loss);
  float total = 0;
  OVB_CHECK_MPI(MPI_Allreduce(&loss, &total, 1, MPI_FLOAT, MPI_SUM, grid_.world()));
  return total / static_cast<double>(cfg_.plan.batch * cfg_.model.seq);
}

const TensorDesc& Trainer::tensor(const std::string& name) const {
  for (const TensorDesc& d : layout_->tensors)
    if (d.name == name) return d;
  throw Error("no tensor named '" + name + "'");
}

void Trainer::set_global_tensor(const std::string& name, const std::vector<float>& values) {
  if (state_->separate_work() && optimizer_sharded(cfg_.plan))
    throw Error(
        "set_global_tensor: the master weights are split over data (--shard-optimizer); "
        "it needs fp32 activations or no sharding");
  const TensorDesc& t = tensor(name);
  if (static_cast<std::int64_t>(values.size()) != t.rows * t.cols)
    throw Error("set_global_tensor: '" + name + "' has " + std::to_string(t.rows * t.cols) +
                " elements, " + std::to_string(values.size()) + " given");
  if (t.count == 0) return;
  std::vector<float> local(static_cast<std::size_t>(t.count));
  for (std::int64_t e = 0; e < t.count; ++e)
    local[static_cast<std::size_t>(e)] = values[static_cast<std::size_t>(t.global_index(e))];
  const std::size_t off = static_cast<std::size_t>(t.offset) * 4;
  backend_.upload(state_->params_buffer(), local.data(), local.size() * 4, off);
  backend_.synchronize();
  if (state_->separate_work()) {
    Stream& s = comm_->compute();
    kernels_->to_act(s, state_->params() + t.offset,
                     static_cast<char*>(state_->work()) +
                         static_cast<std::size_t>(t.offset) * size_of(cfg_.plan.act_dtype),
                     t.count);
    s.synchronize();
  }
}

std::vector<float> Trainer::global_tensor(const std::string& name, bool gradient) {
  const TensorDesc* t = &tensor(name);
  const bool sharded = optimizer_sharded(cfg_.plan);
  if (!gradient && sharded && state_->separate_work())
    throw Error("global_tensor: the master weights are split over data (--shard-optimizer) and "
                "kept apart from the working copy; read them with fp32 activations");
  std::vector<float> global(static_cast<std::size_t>(t->rows * t->cols), 0.0f);
  // Which elements this rank contributes: its copy when it owns the tensor; for sharded
  // gradients, the owned elements of its data chunk (the only reduced ones).
  std::int64_t lo = t->offset, hi = t->offset + t->count;
  bool contributes = t->owner;
  if (gradient && sharded) {
    contributes = t->owner_in_data_rank;
    for (const Bucket& b : layout_->buckets)
      if (t->offset >= b.offset && t->offset < b.offset + b.count) {
        lo = std::max(lo, b.own_offset);
        hi = std::min(hi, b.own_offset + b.own_count);
      }
  }
  if (contributes && hi > lo) {
    // Sharded gradients are kept at the chunk's shard offset.
    std::int64_t at = lo;
    if (gradient && gradients_sharded(cfg_.plan))
      for (const Bucket& b : layout_->buckets)
        if (lo >= b.own_offset && lo < b.own_offset + b.own_count)
          at = b.shard_offset + (lo - b.own_offset);
    std::vector<float> local(static_cast<std::size_t>(hi - lo));
    backend_.download(local.data(), gradient ? state_->grads_buffer() : state_->params_buffer(),
                      local.size() * 4, static_cast<std::size_t>(at) * 4);
    for (std::int64_t e = lo - t->offset; e < hi - t->offset; ++e)
      global[static_cast<std::size_t>(t->global_index(e))] =
          local[static_cast<std::size_t>(e - (lo - t->offset))];
  }
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, global.data(), static_cast<int>(global.size()),
                              MPI_FLOAT, MPI_SUM, grid_.world()));
  return global;
}

}  // namespace ovb::gpt
