// Options shared by `search` and `explain` (see model_options.hpp).
#include "model_options.hpp"

#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model::cli {

void ModelArgs::add(CLI::App& app) {
  app.add_option("--machine", machine,
                 "Machine file, or a preset name from analysis/machines (e.g. perlmutter-a100)")
      ->required();
  app.add_option("--preset", preset, "GPT preset (tiny, 125M, ..., 1.3B, ..., 175B, 1T)");
  app.add_option("--layers", layers, "Transformer blocks (overrides the preset)")
      ->check(ovb::positive());
  app.add_option("--hidden", hidden, "Hidden size (overrides the preset)")->check(ovb::positive());
  app.add_option("--heads", heads, "Attention heads (overrides the preset)")
      ->check(ovb::positive());
  app.add_option("--seq", seq, "Sequence length")->check(ovb::positive())->capture_default_str();
  app.add_option("--vocab", vocab, "Vocabulary size")
      ->check(ovb::positive())
      ->capture_default_str();
  app.add_option("--batch", batch, "Global batch, sequences")->required()->check(ovb::positive());
  app.add_option("--overlap", overlap, "Overlap flags: none, all, or a list of oar,ors,oag")
      ->capture_default_str();
  app.add_flag("--recompute", recompute, "Full activation recomputation");
  add_memory_options(app, memory);
  app.add_option("--dtype", dtype,
                 "Weights and activations: bf16, fp16 or fp32 (default: the machine's precision)");
  app.add_option("--grad-dtype", grad_dtype, "Weight gradients (reduce-scatter, data all-reduce)")
      ->capture_default_str();
  app.add_option("--ranks-per-device", ranks_per_device,
                 "Ranks sharing one device (overrides the machine file)")
      ->check(ovb::positive());
}

GptShape ModelArgs::shape() const {
  GptShape m;
  if (!preset.empty()) m = gpt_preset(preset);
  if (layers) m.layers = layers;
  if (hidden) m.hidden = hidden;
  if (heads) m.heads = heads;
  m.seq = seq;
  m.vocab = vocab;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0)
    throw UsageError("give the model with --preset NAME or --layers, --hidden and --heads");
  return m;
}

Machine ModelArgs::load() const {
  Machine mc = load_machine(machine);
  if (ranks_per_device > 0) mc.ranks_per_device = ranks_per_device;
  return mc;
}

GptPlanOptions ModelArgs::plan(const Machine& mc) const {
  GptPlanOptions o;
  o.batch = batch;
  o.recompute = recompute;
  memory.apply(o);
  o.act_dtype = parse_dtype(dtype.empty() ? mc.precision : dtype);
  o.grad_dtype = parse_dtype(grad_dtype);
  parse_overlap(overlap, o);
  return o;
}

nlohmann::json ModelArgs::inputs_json(const GptShape& m, const GptPlanOptions& o,
                                      const Machine& mc) const {
  nlohmann::json model = {{"layers", m.layers},
                          {"hidden", m.hidden},
                          {"heads", m.heads},
                          {"seq", m.seq},
                          {"vocab", m.vocab}};
  model["preset"] = m.preset.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.preset);
  return {{"model", model},
          {"batch", o.batch},
          {"machine", mc.name},
          {"machine_file", mc.origin},
          {"ranks_per_device", mc.ranks_per_device},
          {"overlap", overlap_string(o)},
          {"recompute", o.recompute},
          {"cache_weights", o.cache_weights},
          {"ors_window", o.ors_window},
          {"dtype", name_of(o.act_dtype)},
          {"grad_dtype", name_of(o.grad_dtype)}};
}

}  // namespace ovb::model::cli
