// Options of the Megatron-LM strategy (see megatron_options.hpp).
#include "megatron_options.hpp"

#include "ovb/cli.hpp"

namespace ovb::model::cli {

void MegatronArgs::add(CLI::App& app, bool with_strategy) {
  if (with_strategy)
    app.add_option("--strategy", strategy,
                   "4d (AxoNN's 4D algorithm), megatron (TP+SP, PP, DP) or all (both, side by side)")
        ->check(CLI::IsMember({"4d", "megatron", "all"}))
        ->capture_default_str();
  app.add_option("--megatron-recompute", recompute,
                 "Megatron activation recomputation: any (search all), none, selective or full")
      ->check(CLI::IsMember({"any", "none", "selective", "full"}))
      ->capture_default_str();
  app.add_option("--megatron-era", era,
                 "Megatron-LM release whose code paths are costed: sc21 (2021: unfused gradient "
                 "accumulation, data-parallel reduction after the pipeline flush), 2022 (to Aug "
                 "2023: fused accumulation, reduction after the flush) or core (today's "
                 "Megatron-Core: overlapped reduction and parameter gather); docs/model-megatron.md")
      ->check(CLI::IsMember({"sc21", "2022", "core"}))
      ->capture_default_str();
  app.add_option("--megatron-tp", tp, "Pin Megatron's tensor-parallel size (0 = search)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-pp", pp, "Pin Megatron's pipeline-parallel size (0 = search)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-micro-batch", micro_batch,
                 "Pin Megatron's micro-batch size in sequences (0 = search powers of two)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-virtual-stages", virtual_stages,
                 "Pin the interleaved schedule's model chunks per stage (0 = search, 1 = plain 1F1B)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-first-stage-layers", first_stage_layers,
                 "Layers of the first pipeline stage, the other stages sharing the rest evenly "
                 "(Megatron-Core's --decoder-first-pipeline-num-layers; 0 = an even split)")
      ->check(ovb::non_negative());
  app.add_option("--megatron-last-stage-layers", last_stage_layers,
                 "Layers of the last pipeline stage, the other stages sharing the rest evenly "
                 "(Megatron-Core's --decoder-last-pipeline-num-layers; 0 = an even split)")
      ->check(ovb::non_negative());
  app.add_flag("--no-sequence-parallel", no_sequence_parallel,
               "Megatron without sequence parallelism (TP all-reduces, replicated LN/dropout)");
  app.add_flag("--no-distributed-optimizer", no_distributed_optimizer,
               "Megatron with the optimizer state replicated on every data rank");
  app.add_flag("--megatron-tp-across-nodes", tp_across_nodes,
               "Also search Megatron tensor-parallel sizes larger than a node (their TP "
               "collectives cross the network)");
}

MegatronSearchOptions MegatronArgs::search_options(int gpus, std::int64_t batch,
                                                   DType act_dtype) const {
  MegatronSearchOptions o;
  o.gpus = gpus;
  o.batch = batch;
  o.act_dtype = act_dtype;
  if (recompute != "any") o.recompute = {parse_recompute(recompute)};
  o.tp = tp;
  o.pp = pp;
  o.micro_batch = micro_batch;
  o.virtual_stages = virtual_stages;
  o.first_stage_layers = first_stage_layers;
  o.last_stage_layers = last_stage_layers;
  o.sequence_parallel = !no_sequence_parallel;
  o.distributed_optimizer = !no_distributed_optimizer;
  o.tp_across_nodes = tp_across_nodes;
  o.features = megatron_era(era);
  return o;
}

nlohmann::json MegatronArgs::inputs_json() const {
  return {{"era", era},
          {"recompute", recompute},
          {"tp", tp},
          {"pp", pp},
          {"micro_batch", micro_batch},
          {"virtual_stages", virtual_stages},
          {"first_stage_layers", first_stage_layers},
          {"last_stage_layers", last_stage_layers},
          {"sequence_parallel", !no_sequence_parallel},
          {"distributed_optimizer", !no_distributed_optimizer},
          {"tp_across_nodes", tp_across_nodes}};
}

}  // namespace ovb::model::cli
