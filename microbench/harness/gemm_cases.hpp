// The GEMMs to benchmark: explicit shapes ("MxNxK[:TATB]"), or the local GEMMs of a GPT layer on
// a 4D grid (forward, dX and dW of QKV, attention-out, MLP-up, MLP-down, optionally the LM head),
// derived from ovb/gpt_plan.hpp so they are exactly the GEMMs gpt4d runs on one rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/axes.hpp"
#include "ovb/cli_fwd.hpp"
#include "ovb/gemm.hpp"
#include "ovb/grid.hpp"
#include "ovb/run_config.hpp"

namespace ovb::mb {

struct GemmCase {
  std::string tag;  // "" for an explicit shape, else "<layer>.<pass>", e.g. "qkv.fwd"
  GemmShape shape;
};

// The shape text (parse_gemm_shape, shape_text) is core's, ovb/gemm.hpp.

struct GptGemmOptions {
  // The run configuration's model and batch (ovb/run_config.hpp): model.preset (e.g. "1.3B";
  // empty: no GPT GEMMs unless hidden is set), hidden and heads (override or, without a preset,
  // define the model; heads 1 when neither gives it), seq, vocab, plan.batch (8 here). The grid is
  // the program's; the block count does not change a layer's GEMMs.
  RunConfig run = default_run();
  Axis<std::string> linears = enum_axis<std::string>(
      "--linears",
      "Fully connected layers whose GEMMs to run on the grid (--gx..--gdata): qkv, attn_out, "
      "mlp_up, mlp_down, lm_head",
      {"qkv", "attn_out", "mlp_up", "mlp_down"},
      {{"qkv", "qkv"},
       {"attn_out", "attn_out"},
       {"mlp_up", "mlp_up"},
       {"mlp_down", "mlp_down"},
       {"lm_head", "lm_head"}});
  Axis<std::string> passes =
      enum_axis<std::string>("--passes", "Passes: fwd (Y=XW^T), dx (dX=dY W), dw (dW=dY^T X)",
                             {"fwd", "dx", "dw"}, {{"fwd", "fwd"}, {"dx", "dx"}, {"dw", "dw"}});
  bool enabled() const { return !run.model.preset.empty() || run.model.hidden > 0; }
  static RunConfig default_run() {
    RunConfig r;
    r.plan.batch = 8;
    return r;
  }
};

// The run configuration's --preset --hidden --heads --seq --vocab --batch, and --linears --passes.
void add_gpt_options(CLI::App& app, GptGemmOptions& o);

// Per layer L with local sizes in = in/G(in_dim), out = out/G(out_dim), T tokens per rank:
//   fwd: Y[T,out] = X[T,in] W[out,in]^T    -> m=T,   n=out, k=in,  ta=n tb=t
//   dx:  dX[T,in] = dY[T,out] W[out,in]    -> m=T,   n=in,  k=out, ta=n tb=n
//   dw:  dW[out,in] = dY[T,out]^T X[T,in]  -> m=out, n=in,  k=T,   ta=t tb=n
// Throws UsageError when the model does not fit the grid (validate_gpt_plan) or a name is unknown.
std::vector<GemmCase> gpt_gemm_cases(const GptGemmOptions& o, const GridShape& grid);

// What a program's GEMM options select: shapes, GPT layers, precisions (nullopt: the backend's
// default).
struct GemmSelection {
  Axis<GemmShape> shapes{"--shapes",
                         "GEMM shapes MxNxK[:TATB], comma-separated; row-major C[M,N] = op(A) "
                         "op(B), TATB = transposes of A and B, n or t (default nn)",
                         {},
                         [](const std::string& s) { return std::vector{parse_gemm_shape(s)}; }};
  Axis<std::optional<GemmType>> dtypes =
      enum_axis<std::optional<GemmType>>("--dtypes", "", {"default"},
                                         {{"default", std::nullopt},
                                          {"fp32", GemmType::fp32},
                                          {"tf32", GemmType::tf32},
                                          {"fp16", GemmType::fp16},
                                          {"bf16", GemmType::bf16},
                                          {"fp8", GemmType::fp8}});
  GptGemmOptions gpt;
};

// --shapes, --dtypes (dtype_note: what the precision also decides, may be empty), and the GPT
// options.
void add_gemm_selection_options(CLI::App& app, GemmSelection& sel, const std::string& dtype_note);

// The cases (explicit shapes, then GPT GEMMs on the grid). Throws UsageError for a bad shape, an
// invalid GPT configuration, or nothing selected. gpt_label, when given, gets gpt_label(...) or "".
std::vector<GemmCase> gemm_cases(const GemmSelection& sel, const GridShape& grid,
                                 std::string* gpt_label = nullptr);

// The precisions, once each; "default" is bf16 on CUDA and fp32 on host.
std::vector<GemmType> gemm_types(const GemmSelection& sel, std::string_view backend_name);

// A description of the GPT configuration for labels: "gpt=1.3B hidden=2048 grid=2x2x1x1 batch=8
// seq=2048".
std::string gpt_label(const GptGemmOptions& o, const GridShape& grid);

}  // namespace ovb::mb
