// gpt4d's per-iteration lines and JSON result (see report.hpp).
#include "io/report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>

#include "kernels/kernels.hpp"
#include "ovb/backend_measures.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/metrics.hpp"
#include "ovb/timing_stats.hpp"

namespace ovb::gpt {

namespace {
nlohmann::json or_null(double v) {
  return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
}
}  // namespace

Reporter::Reporter(const Config& cfg, const LaunchContext& ctx, Backend& backend, Trainer& trainer,
                   MPI_Comm world)
    : cfg_(cfg), ctx_(ctx), backend_(backend), trainer_(trainer), world_(world) {
  int size = 1;
  MPI_Comm_size(world, &size);
  n_devices_ = std::max(1, size / std::max(1, backend.ranks_per_gpu()));
  const auto p = metrics::peak_tflops(backend.device_info().name,
                                      cfg.plan.act_dtype == DType::f32 ? "fp32" : "bf16");
  if (p) peak_ = *p;
}

double Reporter::model_flop() const {
  return cfg_.model.model_flop(cfg_.plan.batch);
}

void Reporter::add(IterStats st) {
  double slowest = st.time_s;
  OVB_CHECK_MPI(MPI_Allreduce(&st.time_s, &slowest, 1, MPI_DOUBLE, MPI_MAX, world_));
  st.time_s = slowest;
  if (ctx_.rank == 0 && !cfg_.quiet) {
    const double tok = metrics::tokens_per_s(static_cast<double>(cfg_.plan.batch),
                                             static_cast<double>(cfg_.model.seq), st.time_s);
    const double tf = metrics::tflops_per_gpu(model_flop(), st.time_s, n_devices_);
    char mfu[32] = "n/a";
    if (peak_ > 0) std::snprintf(mfu, sizeof mfu, "%.1f%%", 100 * metrics::mfu(tf, peak_));
    std::printf(
        "iter %4d/%d  loss %.4f  norm %.3f  lr %.2e  time %.1f ms  tokens/s %.0f  "
        "TFLOP/s/GPU %.2f  MFU %s\n",
        st.iter + 1, cfg_.iters, st.loss, st.grad_norm, st.lr, st.time_s * 1e3, tok, tf, mfu);
    std::fflush(stdout);
  }
  iters_.push_back(std::move(st));
}

std::string Reporter::collectives_jsonl(const std::vector<CollOp>& log) {
  std::string out;
  for (const CollOp& c : log) {
    nlohmann::json j{
        {"phase", name_of(c.phase)},  {"layer", c.layer},          {"op", c.op},
        {"role", name_of(c.role)},    {"kind", name_of(c.kind)},   {"group", name_of(c.group)},
        {"group_size", c.group_size}, {"count", c.count},          {"dtype", name_of(c.dtype)},
        {"recompute", c.recompute},   {"micro_step", c.micro_step}};
    out += j.dump() + "\n";
  }
  return out;
}

nlohmann::json Reporter::config_json() const {
  // The run configuration's JSON form (model, grid, batch, overlap, recompute, cache_weights,
  // dtype, grad_dtype) and what is gpt4d's own.
  nlohmann::json j = to_json(cfg_);
  j["model"]["parameters"] = cfg_.model.parameter_count();
  j.update({
      {"iters", cfg_.iters},
      {"warmup", cfg_.warmup},
      {"seed", cfg_.seed},
      {"lr", cfg_.optim.lr},
      {"min_lr", cfg_.optim.min_lr},
      {"lr_warmup_iters", cfg_.optim.lr_warmup_iters},
      {"lr_decay_iters", cfg_.optim.lr_decay_iters},
      {"weight_decay", cfg_.optim.weight_decay},
      {"beta1", cfg_.optim.beta1},
      {"beta2", cfg_.optim.beta2},
      {"clip", cfg_.optim.clip},
      {"data", trainer_.data_description()},
      {"attention", trainer_.attention()},
      {"attention_option", cfg_.attention},
      {"gemm_autotune", cfg_.gemm_autotune},
      {"comm_priority", name_of(cfg_.comm_priority)},
      {"compute_priority", name_of(cfg_.compute_priority)},
      {"nccl",
       {{"min_ctas", cfg_.nccl.min_ctas},
        {"max_ctas", cfg_.nccl.max_ctas},
        {"cta_policy", cfg_.nccl.cta_policy}}},
      {"kernels", trainer_.kernels_description()},
      {"world_size", cfg_.plan.grid.world()},
      {"devices", n_devices_}});
  return j;
}

nlohmann::json Reporter::finish() {
  auto tokens_per_s = [&](double seconds) {
    return metrics::tokens_per_s(static_cast<double>(cfg_.plan.batch),
                                 static_cast<double>(cfg_.model.seq), seconds);
  };
  const double F = model_flop();
  const double F_hw = metrics::gpt_hardware_flop(F, cfg_.plan.recompute);
  nlohmann::json iters = nlohmann::json::array();
  std::vector<double> all_ms;  // every iteration, the warm-up rule picks the timed ones
  // Collective statistics: kind x group, summed over measured iterations, then over ranks.
  constexpr int kKinds = 3, kGroups = 5;
  std::array<double, kKinds * kGroups * 4> coll{};
  for (const IterStats& st : iters_) {
    const double tf = metrics::tflops_per_gpu(F, st.time_s, n_devices_);
    iters.push_back({{"iter", st.iter},
                     {"loss", st.loss},
                     {"grad_norm", st.grad_norm},
                     {"lr", st.lr},
                     {"time_ms", st.time_s * 1e3},
                     {"tokens_per_s", tokens_per_s(st.time_s)},
                     {"tflops_per_gpu", tf},
                     {"hw_tflops_per_gpu", metrics::tflops_per_gpu(F_hw, st.time_s, n_devices_)},
                     {"mfu", peak_ > 0 ? nlohmann::json(metrics::mfu(tf, peak_)) : nullptr}});
    all_ms.push_back(st.time_s * 1e3);
    if (st.iter < cfg_.warmup) continue;
    for (const CollStat& c : st.collectives) {
      double* e = &coll[static_cast<std::size_t>(
          (static_cast<int>(c.kind) * kGroups + static_cast<int>(c.group)) * 4)];
      e[0] += c.count;
      e[1] += c.bytes;
      e[2] += c.time_ms;
      e[3] += c.exposed_ms;
    }
  }
  int world = 1;
  MPI_Comm_size(world_, &world);
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, coll.data(), static_cast<int>(coll.size()), MPI_DOUBLE,
                              MPI_SUM, world_));
  const stats::TimingSummary timing = stats::summarize_ms(all_ms, cfg_.warmup);
  const double n_it = static_cast<double>(std::max(1, timing.iterations_timed));
  nlohmann::json colls = nlohmann::json::array();
  double comm_ms = 0, exposed_ms = 0;
  for (int k = 0; k < kKinds; ++k)
    for (int g = 0; g < kGroups; ++g) {
      const double* e = &coll[static_cast<std::size_t>((k * kGroups + g) * 4)];
      if (e[0] == 0) continue;
      const double per = n_it * world;  // per iteration, mean over ranks
      colls.push_back({{"kind", name_of(static_cast<CollKind>(k))},
                       {"group", name_of(static_cast<Group>(g))},
                       {"count", e[0] / per},
                       {"bytes", e[1] / per},
                       {"time_ms", e[2] / per},
                       {"exposed_ms", e[3] / per}});
      comm_ms += e[2] / per;
      exposed_ms += e[3] / per;
    }

  const double median = timing.p50_ms / 1e3;
  const double tf = metrics::tflops_per_gpu(F, median, n_devices_);
  double peak_mem = trainer_.memory().total();
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &peak_mem, 1, MPI_DOUBLE, MPI_MAX, world_));
  const GptMemory est = gpt_memory(cfg_.model, cfg_.plan);
  const GptMemory got = trainer_.memory().as_gpt_memory();
  nlohmann::json mem;
  for (auto [name, a, b] : {std::tuple{"params", got.params, est.params},
                            {"grads", got.grads, est.grads},
                            {"optimizer", got.optimizer, est.optimizer},
                            {"gathered", got.gathered, est.gathered},
                            {"grad_blocks", got.grad_blocks, est.grad_blocks},
                            {"activations", got.activations, est.activations},
                            {"workspace", got.workspace, est.workspace}})
    mem[name] = {{"allocated_bytes", a}, {"estimate_bytes", b}};
  double device_used = -1;
  if (backend_.name() == "cuda")
    device_used = static_cast<double>(backend_.device_info().memory_bytes) -
                  free_device_memory(backend_, ctx_);
  // The driver's view, not the tracked buffers (which are allocated from the estimate itself and
  // so cannot disagree with it): the largest rank's peak.
  double device_peak = device_memory_peak_bytes(backend_).value_or(-1);
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &device_peak, 1, MPI_DOUBLE, MPI_MAX, world_));
  // The timing fields of docs/metrics.md ("Timed figures"); median/p10/p90_time_ms and
  // measured_iters repeat them under the names older readers use.
  nlohmann::json summary = stats::to_json(timing);
  summary.update(
      nlohmann::json{{"warmup_iters", cfg_.warmup},
                     {"measured_iters", timing.iterations_timed},
                     {"median_time_ms", timing.p50_ms},
                     {"p10_time_ms", timing.p10_ms},
                     {"p90_time_ms", timing.p90_ms},
                     {"tokens_per_s", tokens_per_s(median)},
                     {"tflops_per_gpu", tf},
                     {"hw_tflops_per_gpu", metrics::tflops_per_gpu(F_hw, median, n_devices_)},
                     {"mfu", peak_ > 0 ? nlohmann::json(metrics::mfu(tf, peak_)) : nullptr},
                     {"peak_tflops", or_null(peak_)},
                     {"model_flop_per_iter", F},
                     {"first_loss", iters_.empty() ? 0.0 : iters_.front().loss},
                     {"final_loss", iters_.empty() ? 0.0 : iters_.back().loss},
                     {"peak_memory_bytes", peak_mem},
                     {"memory_estimate_bytes", est.total()},
                     {"device_memory_used_bytes", or_null(device_used)},
                     {"device_memory_peak_bytes", or_null(device_peak)},
                     {"device_memory_peak_over_estimate",
                      device_peak >= 0 ? nlohmann::json(device_peak / est.total()) : nullptr},
                     {"memory", mem},
                     {"comm_time_ms", comm_ms},
                     {"exposed_comm_ms", exposed_ms},
                     {"collectives", colls}});
  return {{"context", run_context(&backend_, ctx_)},
          {"config", config_json()},
          {"iterations", iters},
          {"summary", summary}};
}

}  // namespace ovb::gpt
