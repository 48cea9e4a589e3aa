// GEMM cases: explicit shapes and the local GEMMs of a GPT on a 4D grid (see gemm_cases.hpp).
#include "harness/gemm_cases.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "harness/sizes.hpp"
#include "ovb/error.hpp"
#include "ovb/gpt_plan.hpp"

namespace ovb::mb {

void add_gpt_options(CLI::App& app, GptGemmOptions& o) {
  const char* g = "GPT-derived GEMMs";
  add_run_options(app, o.run, kModelGroup | kBatchGroup);
  app.remove_option(app.get_option("--layers"));  // a block count: the GEMMs are per layer
  for (const RunOption& r : run_options())
    if (r.group & (kModelGroup | kBatchGroup))
      if (CLI::Option* opt = app.get_option_no_throw(r.flag)) opt->group(g);
  app.get_option("--batch")->capture_default_str();
  app.get_option("--preset")
      ->description(
          "GPT size whose local layer GEMMs to run on the grid (tiny, 125M, ..., 13B, ..., 1T); "
          "--hidden/--heads given as well override it");
  o.linears.add_to(app)->group(g);
  o.passes.add_to(app)->group(g);
}

namespace {
// The model as given: the preset with the shape options given over it; one block and, where
// neither gives the heads, one head (they do not change a layer's GEMMs).
GptShape model_of(const GptGemmOptions& o) {
  const GptShape& given = o.run.model;
  GptShape m;
  if (!given.preset.empty()) m = gpt_preset(given.preset);
  if (given.hidden > 0) m.hidden = given.hidden;
  if (given.heads > 0) m.heads = given.heads;
  if (m.heads == 0) m.heads = 1;
  if (m.layers == 0) m.layers = 1;
  if (given.arch == Arch::llama) m.arch = Arch::llama;
  if (given.kv_heads > 0) m.kv_heads = given.kv_heads;
  if (given.ffn_hidden > 0) m.ffn_hidden = given.ffn_hidden;
  m.seq = given.seq;
  // A Llama preset brings its vocabulary; --vocab given (not the default) wins.
  if (!m.llama() || given.vocab != GptShape{}.vocab) m.vocab = given.vocab;
  return m;
}
}  // namespace

std::vector<GemmCase> gpt_gemm_cases(const GptGemmOptions& o, const GridShape& grid) {
  const GptShape m = model_of(o);
  GptPlanOptions plan;
  plan.grid = grid;
  plan.batch = o.run.plan.batch;
  validate_gpt_plan(m, plan);
  const std::int64_t T = tokens_per_rank(m, plan);

  std::vector<LinearSpec> specs = block_linears(m);
  specs.push_back(lm_head_linear(m));
  std::vector<GemmCase> out;
  for (const std::string& layer : o.linears.values()) {
    const LinearSpec* spec = nullptr;
    for (const LinearSpec& s : specs)
      if (name_of(s.id) == layer) spec = &s;
    if (!spec) throw UsageError("unknown GPT layer '" + layer + "'");
    const LinearGeom L = linear_geom(*spec, grid);
    for (const std::string& pass : o.passes.values()) {
      GemmShape s;
      if (pass == "fwd")
        s = {T, L.out_local, L.in_local, Trans::n, Trans::t};
      else if (pass == "dx")
        s = {T, L.in_local, L.out_local, Trans::n, Trans::n};
      else if (pass == "dw")
        s = {L.out_local, L.in_local, T, Trans::t, Trans::n};
      else
        throw UsageError("unknown GEMM pass '" + pass + "' (expected fwd, dx or dw)");
      out.push_back({layer + "." + pass, s});
    }
  }
  return out;
}

void add_gemm_selection_options(CLI::App& app, GemmSelection& sel, const std::string& dtype_note) {
  sel.shapes.add_to(app)->default_str("");
  sel.dtypes.add_to(app)->description(
      "GEMM precisions: fp32, tf32, fp16, bf16, fp8 (e4m3 inputs, bf16 output, sm_89+); "
      "default: bf16 on CUDA, fp32 on host" +
      (dtype_note.empty() ? "" : "; " + dtype_note));
  add_gpt_options(app, sel.gpt);
}

std::vector<GemmCase> gemm_cases(const GemmSelection& sel, const GridShape& grid,
                                 std::string* label) {
  if (sel.shapes.size() == 0 && !sel.gpt.enabled())
    throw UsageError("no GEMMs to run: give --shapes, --preset (or --hidden), or --sweep");
  std::vector<GemmCase> cases;
  for (const GemmShape& s : sel.shapes.values()) cases.push_back({"", s});
  if (sel.gpt.enabled())
    for (GemmCase& c : gpt_gemm_cases(sel.gpt, grid)) cases.push_back(std::move(c));
  if (label) *label = sel.gpt.enabled() ? gpt_label(sel.gpt, grid) : "";
  return cases;
}

std::vector<GemmType> gemm_types(const GemmSelection& sel, std::string_view backend_name) {
  std::vector<GemmType> out;
  for (const std::optional<GemmType>& d : sel.dtypes.values()) {
    const GemmType t = d ? *d : backend_name == "host" ? GemmType::fp32 : GemmType::bf16;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

std::string gpt_label(const GptGemmOptions& o, const GridShape& grid) {
  const GptShape m = model_of(o);
  const std::string& preset = o.run.model.preset;
  return "gpt=" + (preset.empty() ? "custom" : preset) + " hidden=" + std::to_string(m.hidden) +
         " grid=" + grid.str() + " batch=" + std::to_string(o.run.plan.batch) +
         " seq=" + std::to_string(m.seq);
}

}  // namespace ovb::mb
