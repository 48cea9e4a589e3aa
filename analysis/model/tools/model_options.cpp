// Options shared by `search` and `explain` (see model_options.hpp).
#include "model_options.hpp"

#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model::cli {

void ModelArgs::add(CLI::App& sub) {
  app = &sub;
  sub.add_option("--machine", machine,
                 "Machine file, or a preset name from analysis/machines (e.g. perlmutter-a100)")
      ->required();
  // The grid is the search's result (search) or the positional CONFIG (explain).
  add_run_options(sub, run, (kAllRunGroups & ~kGridGroup) | kAutoChoices);
  sub.get_option("--batch")->required();
  sub.add_option("--ranks-per-device", ranks_per_device,
                 "Ranks sharing one device (overrides the machine file)")
      ->check(ovb::positive());
  sub.add_option("--epilogues", epilogues,
                 "The 4D trainer's bias, GELU and GELU backward: fused (inside the GEMMs, as gpt4d "
                 "on CUDA), separate (passes of their own, as gpt4d on the host and AxoNN's "
                 "Megatron-derived layers) or machine (the machine file's gpu.fused_epilogues); "
                 "Megatron-LM's layers are always separate")
      ->check(CLI::IsMember({"machine", "fused", "separate"}))
      ->capture_default_str();
}

GptShape ModelArgs::shape() const {
  RunConfig c = run;
  finish_run_config(*app, c);
  return c.model;
}

Machine ModelArgs::load() const {
  Machine mc = load_machine(machine);
  if (ranks_per_device > 0) mc.ranks_per_device = ranks_per_device;
  if (epilogues != "machine") mc.fused_epilogues = epilogues == "fused";
  return mc;
}

GptPlanOptions ModelArgs::plan(const Machine& mc) const {
  RunConfig c = run;
  resolve_dtype(c, parse_dtype(mc.precision));
  // --shard-optimizer auto --shard-gradients: the variants choose the sharding; the base plan
  // must be valid with the gradients sharded, which needs the optimizer sharded.
  if (c.shard_optimizer_auto && c.plan.shard_gradients) c.plan.shard_optimizer = true;
  return c.plan;
}

Choices ModelArgs::choices() const {
  Choices c;
  c.micro_batch = run.micro_batch_auto;
  c.shard_optimizer = run.shard_optimizer_auto;
  c.tp_chunks = run.tp_chunks_auto;
  return c;
}

nlohmann::json ModelArgs::inputs_json(const GptShape& m, const GptPlanOptions& o,
                                      const Machine& mc) const {
  RunConfig c;
  c.model = m;
  c.plan = o;
  c.micro_batch_auto = run.micro_batch_auto;  // as given: "auto", the choices are per config
  c.shard_optimizer_auto = run.shard_optimizer_auto;
  c.tp_chunks_auto = run.tp_chunks_auto;
  nlohmann::json j = to_json(c);
  j["model"]["parameters"] = m.parameter_count();  // as gpt4d's result reports it
  j.erase("grid");  // one per configuration, in "configs"
  j["machine"] = mc.name;
  j["machine_file"] = mc.origin;
  j["ranks_per_device"] = mc.ranks_per_device;
  j["fused_epilogues"] = mc.fused_epilogues;
  return j;
}

}  // namespace ovb::model::cli
