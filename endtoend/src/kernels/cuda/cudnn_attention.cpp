// cuDNN fused flash attention through cudnn-frontend's graph API (see cudnn_attention.hpp).
// Compiled with CUDNN_FRONTEND_SKIP_JSON_LIB: the frontend's bundled nlohmann-json (and its
// adl_serializer specialisation) stays out of the suite, which uses the system's.
#include "kernels/cuda/cudnn_attention.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <unordered_map>
#include <vector>

#include "kernels/cuda/cudnn_check.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt::cuda {

namespace fe = cudnn_frontend;

namespace {

// Tensor ids of the variant packs.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kdO, kdQ, kdK, kdV };

using Dims = CudnnAttnView::Dims;

std::shared_ptr<fe::graph::Graph> new_graph(DType act) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(act == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

std::shared_ptr<fe::graph::Tensor_attributes> input(fe::graph::Graph& g, const char* name,
                                                    std::int64_t uid, const Dims& dims,
                                                    const Dims& strides) {
  return g.tensor(
      fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(strides));
}

float attn_scale(const AttnShape& a) {
  return 1.0f / std::sqrt(static_cast<float>(a.D));  // as the CUDA-core kernels (attention.cu)
}

std::shared_ptr<fe::graph::Graph> forward_graph(const AttnShape& a, DType act) {
  const CudnnAttnView l(a);
  auto g = new_graph(act);
  auto Q = input(*g, "Q", kQ, l.q_dims, l.qkv);
  auto K = input(*g, "K", kK, l.kv_dims, l.qkv);
  auto V = input(*g, "V", kV, l.kv_dims, l.qkv);
  auto opts = fe::graph::SDPA_attributes()
                  .set_name("flash_attention")
                  .set_generate_stats(true)  // training: the log-sum-exp for backward
                  .set_causal_mask(true)
                  .set_attn_scale(attn_scale(a));
  auto [O, Stats] = g->sdpa(Q, K, V, opts);
  O->set_output(true).set_uid(kO).set_dim(l.out_dims).set_stride(l.out);
  Stats->set_output(true)
      .set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim(l.stats_dims)
      .set_stride(l.stats);
  return g;
}

std::shared_ptr<fe::graph::Graph> backward_graph(const AttnShape& a, DType act) {
  const CudnnAttnView l(a);
  auto g = new_graph(act);
  auto Q = input(*g, "Q", kQ, l.q_dims, l.qkv);
  auto K = input(*g, "K", kK, l.kv_dims, l.qkv);
  auto V = input(*g, "V", kV, l.kv_dims, l.qkv);
  auto O = input(*g, "O", kO, l.out_dims, l.out);
  auto dO = input(*g, "dO", kdO, l.out_dims, l.out);
  auto Stats = input(*g, "Stats", kStats, l.stats_dims, l.stats);
  Stats->set_data_type(fe::DataType_t::FLOAT);
  auto opts = fe::graph::SDPA_backward_attributes()
                  .set_name("flash_attention_backward")
                  .set_causal_mask(true)
                  .set_attn_scale(attn_scale(a));
  auto [dQ, dK, dV] = g->sdpa_backward(Q, K, V, O, dO, Stats, opts);
  dQ->set_output(true).set_uid(kdQ).set_dim(l.q_dims).set_stride(l.qkv);
  dK->set_output(true).set_uid(kdK).set_dim(l.kv_dims).set_stride(l.qkv);
  dV->set_output(true).set_uid(kdV).set_dim(l.kv_dims).set_stride(l.qkv);
  return g;
}

// validate, build_operation_graph, create_execution_plans (heuristic A), check_support,
// build_plans: "" when every step succeeded, else the failed step and cuDNN's message.
std::string build(fe::graph::Graph& g, cudnnHandle_t h) {
  auto step = [](const char* what, fe::error_t e) -> std::string {
    return e.is_good() ? std::string() : std::string(what) + ": " + e.get_message();
  };
  std::string err = step("validate", g.validate());
  if (err.empty()) err = step("build_operation_graph", g.build_operation_graph(h));
  if (err.empty())
    err = step("create_execution_plans", g.create_execution_plans({fe::HeurMode_t::A}));
  if (err.empty()) err = step("check_support", g.check_support());
  if (err.empty()) err = step("build_plans", g.build_plans());
  return err;
}

using Pack = std::unordered_map<std::int64_t, void*>;  // variant pack: tensor id -> pointer

// Element `at` of a buffer of activations.
void* at(const void* base, std::int64_t i, DType act) {
  return const_cast<char*>(static_cast<const char*>(base) +
                           i * static_cast<std::int64_t>(size_of(act)));
}

// The three views q, k, v (or dq, dk, dv) of one qkv buffer, from element `q` on.
void add_qkv(Pack& pack, Uid first, const void* base, std::int64_t q, const CudnnAttnView& l,
             DType act) {
  pack[first] = at(base, q, act);
  pack[first + 1] = at(base, q + l.k_at, act);
  pack[first + 2] = at(base, q + l.v_at, act);
}

}  // namespace

struct CudnnAttention::Graphs {
  std::shared_ptr<fe::graph::Graph> fwd, bwd;
  std::string error;  // why cuDNN cannot run this shape ("" when it can)
};

CudnnAttention::CudnnAttention(Backend& backend, TrackedMemory* mem)
    : backend_(backend), mem_(mem) {}

CudnnAttention::~CudnnAttention() {
  cache_.clear();
  if (handle_) cudnnDestroy(static_cast<cudnnHandle_t>(handle_));
}

std::string CudnnAttention::versions() {
  const std::size_t v = cudnnGetVersion();  // e.g. 91900
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100) + ", cudnn-frontend " +
         std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
         std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
}

// Creates the handle once; "" or why not (e.g. a cuDNN that does not run on this GPU or driver),
// so that --attention auto falls back instead of failing.
std::string CudnnAttention::ensure_handle() {
  if (handle_) return "";
  cudnnHandle_t h = nullptr;
  const cudnnStatus_t st = cudnnCreate(&h);
  if (st != CUDNN_STATUS_SUCCESS) return std::string("cudnnCreate: ") + cudnnGetErrorString(st);
  handle_ = h;
  return "";
}

std::string CudnnAttention::prepare(const AttnShape& shape, DType act) {
  const auto key = std::make_pair(shape, static_cast<int>(act));
  if (auto it = cache_.find(key); it != cache_.end()) return it->second->error;
  auto g = std::make_unique<Graphs>();
  if (act != DType::bf16 && act != DType::f16)
    g->error =
        "cuDNN's fused attention takes bf16 or fp16 tensors, not " + std::string(name_of(act));
  else if (shape.Hkv < 1 || shape.H % shape.Hkv != 0)
    g->error = std::to_string(shape.H) + " query heads do not split into " +
               std::to_string(shape.Hkv) + " K/V heads";
  else
    g->error = ensure_handle();
  if (g->error.empty()) {
    const auto h = static_cast<cudnnHandle_t>(handle_);
    try {
      g->fwd = forward_graph(shape, act);
      g->error = build(*g->fwd, h);
      if (g->error.empty()) {
        g->bwd = backward_graph(shape, act);
        g->error = build(*g->bwd, h);
        if (!g->error.empty()) g->error = "backward " + g->error;
      } else {
        g->error = "forward " + g->error;
      }
    } catch (const std::exception& e) {  // the frontend reports by status; this is a safety net
      g->error = e.what();
    }
  }
  if (g->error.empty()) {
    std::int64_t fwd_ws = 0, bwd_ws = 0;
    OVB_CHECK_CUDNN_FE(g->fwd->get_workspace_size(fwd_ws));
    OVB_CHECK_CUDNN_FE(g->bwd->get_workspace_size(bwd_ws));
    const auto need = static_cast<std::size_t>(std::max(fwd_ws, bwd_ws));
    if (need > workspace_.bytes()) {
      // Freeing the smaller workspace waits for the device (cudaFree), so no work still uses it.
      // Only the set-up of a new shape gets here, never an iteration's hot path.
      workspace_.reset();
      workspace_ = mem_ ? mem_->allocate(need, MemKind::workspace) : backend_.allocate(need);
    }
  }
  // One line, whatever cuDNN's message holds.
  std::replace(g->error.begin(), g->error.end(), '\n', ' ');
  std::string err = g->error;
  cache_.emplace(key, std::move(g));
  return err;
}

void CudnnAttention::execute(Stream& s, fe::graph::Graph& graph,
                             std::unordered_map<std::int64_t, void*>& pack) {
  const auto h = static_cast<cudnnHandle_t>(handle_);
  OVB_CHECK_CUDNN(cudnnSetStream(h, static_cast<cudaStream_t>(s.native())));
  OVB_CHECK_CUDNN_FE(graph.execute(h, pack, workspace_.data()));
}

CudnnAttention::Graphs& CudnnAttention::ready(const AttnShape& shape, DType act) {
  const std::string err = prepare(shape, act);
  if (!err.empty())
    throw Error("cuDNN attention cannot run " + shape.str() + " (" + std::string(name_of(act)) +
                "): " + err);
  return *cache_.at(std::make_pair(shape, static_cast<int>(act)));
}

void CudnnAttention::forward(Stream& s, const void* qkv, void* out, float* lse,
                             const AttnShape& shape, DType act) {
  fe::graph::Graph& graph = *ready(shape, act).fwd;
  const CudnnAttnView l(shape);
  for (std::int64_t i = 0; i < l.runs; ++i) {
    Pack pack{{kO, at(out, i * l.out_step, act)}, {kStats, lse + i * l.stats_step}};
    add_qkv(pack, kQ, qkv, i * l.qkv_step, l, act);
    execute(s, graph, pack);
  }
}

void CudnnAttention::backward(Stream& s, const void* qkv, const void* out, const void* dout,
                              const float* lse, void* dqkv, const AttnShape& shape, DType act) {
  fe::graph::Graph& graph = *ready(shape, act).bwd;
  const CudnnAttnView l(shape);
  for (std::int64_t i = 0; i < l.runs; ++i) {
    Pack pack{{kO, at(out, i * l.out_step, act)},
              {kdO, at(dout, i * l.out_step, act)},
              {kStats, const_cast<float*>(lse + i * l.stats_step)}};
    add_qkv(pack, kQ, qkv, i * l.qkv_step, l, act);
    add_qkv(pack, kdQ, dqkv, i * l.qkv_step, l, act);
    execute(s, graph, pack);
  }
}

}  // namespace ovb::gpt::cuda
