// The run configuration the suite's binaries share: GPT shape, 4D grid, batch, overlap flags,
// recomputation, weight caching and dtypes. Each option is defined once, as one row of
// run_options() (flag, JSON key, help, the binaries' group, how it is registered, written and
// read); gpt4d, ovb-model and ovb-gemm register the groups they use from that table, validate with
// the plan's rules (validate_gpt_plan) and write and read the one JSON form below.
//
// Adding an option: a field (GptPlanOptions or GptShape, or RunConfig for what is not the plan's)
// and one row in run_config.cpp. Adding an overlap flag: a bool in GptPlanOptions and one row of
// overlap_flags(), and its name in analysis/ovb_analysis/overlap_flags.py, the Python side's one
// list (which plans without a build; ctest gpt4d.config_parity compares the two); a flag that
// "all" leaves out (in_all = false) goes to that module's OPT_IN.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ovb/cli_fwd.hpp"
#include "ovb/gpt_plan.hpp"

namespace ovb {

// ---- Overlap flags ----

struct OverlapFlag {
  const char* name;  // as in --overlap and the JSON list, e.g. "oar"
  const char* help;
  bool GptPlanOptions::*field;
  // Set by "all": AxoNN's three optimisations. A flag outside it (tp) is named to be used, so
  // that "all" keeps meaning the schedule the committed results were measured with.
  bool in_all = true;
};
const std::vector<OverlapFlag>& overlap_flags();  // oar, ors, oag, tp

// "none", or a comma-separated list of flags and "all" ("oar,ors", "all", "all,tp"). Throws
// UsageError naming the bad flag.
void parse_overlap(std::string_view s, GptPlanOptions& o);
std::string overlap_string(const GptPlanOptions& o);             // "oar,ors" or "none"
std::vector<std::string> overlap_list(const GptPlanOptions& o);  // ["oar", "ors"], [] for none

// ---- The configuration ----

struct RunConfig {
  GptShape model;
  GptPlanOptions plan;  // grid, batch, overlap flags, recompute, cache_weights, dtypes
  // --dtype as given: "auto" leaves plan.act_dtype to the binary (gpt4d: host fp32, cuda bf16;
  // ovb-model: the machine's precision); resolve_dtype() applies it.
  std::string dtype = "auto";
  // --micro-batch auto, --shard-optimizer auto, --tp-chunks auto: ovb-model chooses the value per
  // configuration (plan.micro_batch, plan.shard_optimizer, plan.otp and plan.tp_chunks are then
  // ignored). Only binaries that register with kAutoChoices accept them; validate() refuses them.
  bool micro_batch_auto = false;
  bool shard_optimizer_auto = false;
  bool tp_chunks_auto = false;
};

// Which binaries register an option: each binary passes the groups it uses.
enum RunOptionGroup : unsigned {
  kModelGroup = 1,      // --preset --layers --hidden --heads --seq --vocab --arch --kv-heads
                        // --ffn-hidden --rope-theta
  kGridGroup = 2,       // --gx --gy --gz --gdata --grid-order
  kBatchGroup = 4,      // --batch --micro-batch
  kScheduleGroup = 8,   // --overlap --recompute --cache-weights --ors-window --tp-chunks
                        // --shard-optimizer --shard-gradients
  kDtypeGroup = 16,     // --dtype
  kGradDtypeGroup = 32  // --grad-dtype
};
inline constexpr unsigned kAllRunGroups = 63;
// Not a group of options: the binary chooses --micro-batch, --shard-optimizer and --tp-chunks
// itself, so they accept "auto" (ovb-model search and explain). Without it "auto" is refused at
// parsing.
inline constexpr unsigned kAutoChoices = 64;

struct RunOption {
  const char* flag;  // "--layers"
  const char* key;   // path in the JSON form, "model.layers"
  const char* help;
  unsigned group;
  bool required_in_json;  // the strict reader refuses a configuration without it
  // Registers the option on app, writing into cfg.
  std::function<CLI::Option*(CLI::App&, RunConfig&, const RunOption&)> add;
  // Writes the field's value; reads it back (the value at `key`, present; throws UsageError with
  // `what` = "FILE: 'config.model.layers'" when the value has the wrong type).
  std::function<nlohmann::json(const RunConfig&)> write;
  std::function<void(const nlohmann::json&, RunConfig&, const std::string& what)> read;
  bool auto_choice = false;  // accepts "auto" where the binary registers kAutoChoices
};
const std::vector<RunOption>& run_options();

// Registers the options of `groups` (a mask of RunOptionGroup, plus kAutoChoices) on app.
void add_run_options(CLI::App& app, RunConfig& cfg, unsigned groups);

// After parsing: applies --preset with the shape options that were given (those win) and requires
// a complete model otherwise. Throws UsageError.
void finish_run_config(const CLI::App& app, RunConfig& cfg);

// plan.act_dtype from cfg.dtype, "auto" meaning `auto_dtype`. Throws UsageError for a bad name.
void resolve_dtype(RunConfig& cfg, DType auto_dtype);

// The plan's rules (validate_gpt_plan), after checking every grid factor is >= 1 and that no
// choice is left "auto". Throws UsageError naming the first failed condition.
void validate(const RunConfig& cfg);

// ---- JSON form ----
// {"model": {"layers", "hidden", "heads", "seq", "vocab", "preset", "arch", "kv_heads",
//  "ffn_hidden", "rope_theta"}, "grid": {"gx", "gy", "gz", "gdata", "order"}, "batch",
//  "micro_batch", "overlap": ["oar", ...], "recompute", "cache_weights", "ors_window",
//  "tp_chunks", "shard_optimizer", "dtype", "grad_dtype"}: results/SCHEMA.md's gpt4d config.
//  "micro_batch" and "shard_optimizer" are "auto" where ovb-model chooses them.

nlohmann::json to_json(const RunConfig& cfg);
// Strict: every required key present with the right type, others keep `defaults`' values.
// `where` names the object in messages, e.g. "run.json: 'config." (closed by the key and "'").
RunConfig run_config_from_json(const nlohmann::json& j, const std::string& where,
                               const RunConfig& defaults);
RunConfig run_config_from_json(const nlohmann::json& j, const std::string& where);

nlohmann::json grid_json(const GridShape& g);
// {"gx", "gy", "gz", "gdata"} required, "order" optional; strict like run_config_from_json.
GridShape grid_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace ovb
