// The run-configuration table and its CLI, validation and JSON (see ovb/run_config.hpp).
#include "ovb/run_config.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace ovb {

using nlohmann::json;

// ---- Overlap flags ----

const std::vector<OverlapFlag>& overlap_flags() {
  static const std::vector<OverlapFlag> flags = {
      {"oar", "all-reduce of dX behind dW", &GptPlanOptions::oar},
      {"ors", "deferred Z reduce-scatter of dW", &GptPlanOptions::ors},
      {"oag", "Z all-gather one layer ahead", &GptPlanOptions::oag},
      {"tp", "forward tensor-parallel all-reduce chunked under its GEMM", &GptPlanOptions::otp,
       false},
  };
  return flags;
}

namespace {

std::string flag_names() {
  std::string s;
  for (const OverlapFlag& f : overlap_flags()) s += (s.empty() ? "" : ",") + std::string(f.name);
  return s;
}

}  // namespace

void parse_overlap(std::string_view s, GptPlanOptions& o) {
  for (const OverlapFlag& f : overlap_flags()) o.*f.field = false;
  if (s == "none" || s.empty()) return;
  std::istringstream in{std::string(s)};
  for (std::string item; std::getline(in, item, ',');) {
    const bool all = item == "all";
    bool known = all;
    for (const OverlapFlag& f : overlap_flags())
      if (item == f.name || (all && f.in_all)) o.*f.field = known = true;
    if (!known)
      throw UsageError("--overlap '" + std::string(s) + "': unknown flag '" + item +
                       "' (expected none, all, or a comma-separated subset of " + flag_names() +
                       ")");
  }
}

std::vector<std::string> overlap_list(const GptPlanOptions& o) {
  std::vector<std::string> out;
  for (const OverlapFlag& f : overlap_flags())
    if (o.*f.field) out.emplace_back(f.name);
  return out;
}

std::string overlap_string(const GptPlanOptions& o) {
  std::string s;
  for (const std::string& f : overlap_list(o)) s += (s.empty() ? "" : ",") + f;
  return s.empty() ? "none" : s;
}

// ---- The table ----

namespace {

template <class T>
using Field = T& (*)(RunConfig&);

template <class T>
const T& get(const RunConfig& c, Field<T> f) {
  return f(const_cast<RunConfig&>(c));
}

[[noreturn]] void bad_type(const std::string& what, const char* expected, const json& v) {
  throw UsageError(what + "' must be " + expected + ", got " + v.dump());
}

// A whole number (int or std::int64_t field), registered with an optional check.
template <class T>
RunOption number(const char* flag, const char* key, const char* help, unsigned group, bool required,
                 Field<T> field, const CLI::Validator* check, bool show_default) {
  return {flag,
          key,
          help,
          group,
          required,
          [field, check, show_default](CLI::App& app, RunConfig& c, const RunOption& r) {
            CLI::Option* o = app.add_option(r.flag, field(c), r.help);
            if (check) o->check(*check);
            if (show_default) o->capture_default_str();
            return o;
          },
          [field](const RunConfig& c) { return json(get(c, field)); },
          [field](const json& v, RunConfig& c, const std::string& what) {
            if (!v.is_number_integer()) bad_type(what, "a whole number", v);
            field(c) = v.get<T>();
          }};
}

RunOption boolean(const char* flag, const char* key, const char* help, bool inverted,
                  Field<bool> field) {
  return {flag,
          key,
          help,
          kScheduleGroup,
          false,
          [field, inverted](CLI::App& app, RunConfig& c, const RunOption& r) {
            if (!inverted) return app.add_flag(r.flag, field(c), r.help);
            return app.add_flag_function(
                r.flag, [&c, field](std::int64_t) { field(c) = false; }, r.help);
          },
          [field](const RunConfig& c) { return json(get(c, field)); },
          [field](const json& v, RunConfig& c, const std::string& what) {
            if (!v.is_boolean()) bad_type(what, "true or false", v);
            field(c) = v.get<bool>();
          }};
}

std::string order_string(const GridShape& g) {
  std::string s;
  for (Dim d : g.order) s += (s.empty() ? "" : ",") + std::string(name_of(d));
  return s;
}

std::string need_string(const json& v, const std::string& what) {
  if (!v.is_string()) bad_type(what, "a string", v);
  return v.get<std::string>();
}

// The grid's rows also register on a bare GridShape (add_grid_options, for programs that take a
// grid but no model): each row's field found by its key.
int& grid_factor(GridShape& g, std::string_view key) {
  if (key == "grid.gx") return g.gx;
  if (key == "grid.gy") return g.gy;
  if (key == "grid.gz") return g.gz;
  return g.gdata;
}

CLI::Option* add_grid_row(CLI::App& app, GridShape& g, const RunOption& r) {
  if (std::string_view(r.key) == "grid.order")
    return app.add_option_function<std::string>(
        r.flag, [&g](const std::string& s) { g.order = GridShape::parse_order(s); }, r.help);
  return app.add_option(r.flag, grid_factor(g, r.key), r.help)->capture_default_str();
}

// --micro-batch: a whole number >= 0, or auto (refused later where the binary does not choose).
// A whole number that `base` accepts, or auto (--micro-batch, --tp-chunks).
CLI::Validator whole_or_auto(const CLI::Validator& base) {
  return CLI::Validator(
      [base](std::string& s) {
        if (s == "auto") return std::string();
        std::int64_t n = 0;
        if (!CLI::detail::lexical_cast(s, n)) return "must be a whole number or auto, got " + s;
        return base(s);
      },
      "INT|auto");
}

// A whole number that ovb-model also takes as "auto" (its choice per configuration: `chosen`
// is set), registered with `check` (whole_or_auto()), written and read back as the number or
// "auto". A value beyond T is held as T's largest (a count nothing divides).
template <class T>
RunOption number_or_auto(const char* flag, const char* key, const char* help, unsigned group,
                         Field<T> field, Field<bool> chosen, const CLI::Validator& check,
                         std::string default_text) {
  return {flag,
          key,
          help,
          group,
          false,
          [field, chosen, &check, default_text](CLI::App& app, RunConfig& c, const RunOption& r) {
            return app
                .add_option_function<std::string>(
                    r.flag,
                    [&c, field, chosen](const std::string& s) {
                      chosen(c) = s == "auto";
                      if (!chosen(c))  // checked by `check`
                        field(c) = static_cast<T>(std::min<long long>(
                            std::stoll(s), std::numeric_limits<T>::max()));
                    },
                    r.help)
                ->check(check)
                ->default_str(default_text);
          },
          [field, chosen](const RunConfig& c) {
            return get(c, chosen) ? json("auto") : json(get(c, field));
          },
          [field, chosen](const json& v, RunConfig& c, const std::string& what) {
            chosen(c) = v.is_string() && v.get<std::string>() == "auto";
            if (chosen(c)) return;
            if (!v.is_number_integer()) bad_type(what, "a whole number or \"auto\"", v);
            field(c) = v.get<T>();
          },
          true};
}

const CLI::Validator& micro_batch_check() {
  static const CLI::Validator v = whole_or_auto(ovb::non_negative());
  return v;
}

const CLI::Validator& tp_chunks_check() {
  static const CLI::Validator v = whole_or_auto(ovb::positive());
  return v;
}

std::vector<RunOption> make_table() {
  const CLI::Validator* pos = &ovb::positive();
  std::vector<RunOption> t;
  // Model shape.
  t.push_back({"--preset", "model.preset",
               "Model size by name (tiny, 125M, 350M, 760M, 1.3B, 2.7B, 6.7B, 13B, ... 175B, 1T; "
               "llama-tiny, llama3-8B, llama3-70B, llama3-405B); shape options given as well "
               "override it",
               kModelGroup, false,
               [](CLI::App& app, RunConfig& c, const RunOption& r) {
                 return app.add_option(r.flag, c.model.preset, r.help);
               },
               [](const RunConfig& c) {
                 return c.model.preset.empty() ? json(nullptr) : json(c.model.preset);
               },
               [](const json& v, RunConfig& c, const std::string& what) {
                 c.model.preset = v.is_null() ? "" : need_string(v, what);
               }});
  t.push_back(number<std::int64_t>(
      "--layers", "model.layers", "Transformer blocks L", kModelGroup, true,
      [](RunConfig & c) -> auto& { return c.model.layers; }, pos, false));
  t.push_back(number<std::int64_t>(
      "--hidden", "model.hidden", "Hidden size h", kModelGroup, true,
      [](RunConfig & c) -> auto& { return c.model.hidden; }, pos, false));
  t.push_back(number<std::int64_t>(
      "--heads", "model.heads", "Attention heads", kModelGroup, true,
      [](RunConfig & c) -> auto& { return c.model.heads; }, pos, false));
  t.push_back(number<std::int64_t>(
      "--seq", "model.seq", "Sequence length", kModelGroup, true,
      [](RunConfig & c) -> auto& { return c.model.seq; }, pos, true));
  t.push_back(number<std::int64_t>(
      "--vocab", "model.vocab", "Vocabulary size", kModelGroup, true,
      [](RunConfig & c) -> auto& { return c.model.vocab; }, pos, true));
  // Architecture (Llama: docs/algorithm.md, "Llama"). Shape rules are the plan's.
  t.push_back(
      {"--arch", "model.arch",
       "Architecture: gpt (LayerNorm, GELU MLP, learned positions) or llama (RMSNorm, "
       "SwiGLU MLP, rotary positions, grouped-query attention, no biases); a preset sets it",
       kModelGroup, false,
       [](CLI::App& app, RunConfig& c, const RunOption& r) {
         return app
             .add_option_function<std::string>(
                 r.flag, [&c](const std::string& s) { c.model.arch = parse_arch(s); }, r.help)
             ->default_str("gpt");
       },
       [](const RunConfig& c) { return json(name_of(c.model.arch)); },
       [](const json& v, RunConfig& c, const std::string& what) {
         try {
           c.model.arch = parse_arch(need_string(v, what));
         } catch (const UsageError& e) {
           throw UsageError(what + "': " + e.what());
         }
       }});
  RunOption kv = number<std::int64_t>(
      "--kv-heads", "model.kv_heads",
      "K/V heads of grouped-query attention (llama; divides --heads; default: --heads)",
      kModelGroup, false, [](RunConfig & c) -> auto& { return c.model.kv_heads; }, pos, false);
  kv.write = [](const RunConfig& c) { return json(c.model.kv()); };
  t.push_back(kv);
  RunOption ffn = number<std::int64_t>(
      "--ffn-hidden", "model.ffn_hidden",
      "MLP width (llama: the SwiGLU width, required without a preset; gpt: 4*hidden)", kModelGroup,
      false, [](RunConfig & c) -> auto& { return c.model.ffn_hidden; }, pos, false);
  ffn.write = [](const RunConfig& c) { return json(c.model.ffn()); };
  t.push_back(ffn);
  t.push_back(
      {"--rope-theta", "model.rope_theta",
       "Base of the rotary position embedding (llama; default 10000, Llama 3 presets "
       "500000)",
       kModelGroup, false,
       [](CLI::App& app, RunConfig& c, const RunOption& r) {
         return app.add_option(r.flag, c.model.rope_theta, r.help)->check(CLI::PositiveNumber);
       },
       [](const RunConfig& c) { return json(c.model.rope_theta); },
       [](const json& v, RunConfig& c, const std::string& what) {
         if (!v.is_number()) bad_type(what, "a number", v);
         c.model.rope_theta = v.get<double>();
       }});
  // Grid. The factors are checked by validate() (and the process grid), which names the factor.
  t.push_back(number<int>(
      "--gx", "grid.gx", "Tensor-parallel size along X", kGridGroup, true,
      [](RunConfig & c) -> auto& { return c.plan.grid.gx; }, nullptr, true));
  t.push_back(number<int>(
      "--gy", "grid.gy", "Tensor-parallel size along Y", kGridGroup, true,
      [](RunConfig & c) -> auto& { return c.plan.grid.gy; }, nullptr, true));
  t.push_back(number<int>(
      "--gz", "grid.gz", "Tensor-parallel size along Z (weights sharded, FSDP-like)", kGridGroup,
      true, [](RunConfig & c) -> auto& { return c.plan.grid.gz; }, nullptr, true));
  t.push_back(number<int>(
      "--gdata", "grid.gdata", "Data-parallel size", kGridGroup, true,
      [](RunConfig & c) -> auto& { return c.plan.grid.gdata; }, nullptr, true));
  t.push_back({"--grid-order", "grid.order",
               "Order of X/Y/Z placement, fastest-varying first (default x,y,z)", kGridGroup, false,
               [](CLI::App& app, RunConfig& c, const RunOption& r) {
                 return app.add_option_function<std::string>(
                     r.flag,
                     [&c](const std::string& s) { c.plan.grid.order = GridShape::parse_order(s); },
                     r.help);
               },
               [](const RunConfig& c) { return json(order_string(c.plan.grid)); },
               [](const json& v, RunConfig& c, const std::string& what) {
                 c.plan.grid.order = GridShape::parse_order(need_string(v, what));
               }});
  for (RunOption& r : t)
    if (r.group == kGridGroup)
      r.add = [](CLI::App& app, RunConfig& c, const RunOption& row) {
        return add_grid_row(app, c.plan.grid, row);
      };
  // Batch.
  t.push_back(number<std::int64_t>(
      "--batch", "batch",
      "Global batch in sequences (split over Gdata*Gz, whole sequences per rank)", kBatchGroup,
      true, [](RunConfig & c) -> auto& { return c.plan.batch; }, pos, false));
  t.push_back(number_or_auto<std::int64_t>(
      "--micro-batch", "micro_batch",
      "Sequences per data-and-Z shard per micro-step (gradient accumulation over batch / "
      "(micro-batch x Gdata x Gz) micro-steps; batch must be divisible by micro-batch x Gdata x "
      "Gz); 0, the default: the whole local batch in one micro-step; auto (ovb-model search "
      "and explain): the fastest that fits per configuration, among 0 and every divisor of the "
      "local batch",
      kBatchGroup, [](RunConfig & c) -> auto& { return c.plan.micro_batch; },
      [](RunConfig & c) -> auto& { return c.micro_batch_auto; }, micro_batch_check(), "0"));
  // Schedule.
  std::string overlap_help = "Overlap optimisations: none, all, or a comma-separated subset of";
  std::string in_all, named;
  for (const OverlapFlag& f : overlap_flags()) {
    overlap_help +=
        std::string(&f == &overlap_flags().front() ? " " : ", ") + f.name + " (" + f.help + ")";
    std::string& list = f.in_all ? in_all : named;
    list += (list.empty() ? "" : ",") + std::string(f.name);
  }
  overlap_help += "; all is " + in_all + ", the others are added by name (all," + named + ")";
  static const std::string overlap_help_kept = overlap_help;
  t.push_back({"--overlap", "overlap", overlap_help_kept.c_str(), kScheduleGroup, false,
               [](CLI::App& app, RunConfig& c, const RunOption& r) {
                 return app
                     .add_option_function<std::string>(
                         r.flag, [&c](const std::string& s) { parse_overlap(s, c.plan); }, r.help)
                     ->default_str("none");
               },
               [](const RunConfig& c) { return json(overlap_list(c.plan)); },
               [](const json& v, RunConfig& c, const std::string& what) {
                 // A list of flag names (as written), or the --overlap text.
                 std::string s;
                 if (v.is_array()) {
                   for (const json& f : v) s += (s.empty() ? "" : ",") + need_string(f, what);
                 } else {
                   s = need_string(v, what);
                 }
                 try {
                   parse_overlap(s, c.plan);
                 } catch (const UsageError& e) {
                   throw UsageError(what + "': " + e.what());
                 }
               }});
  t.push_back(boolean(
      "--recompute", "recompute",
      "Full activation recomputation: keep block inputs only, recompute each "
      "block's forward (with its collectives) before its backward",
      false, [](RunConfig & c) -> auto& { return c.plan.recompute; }));
  // Memory (docs/memory.md).
  RunOption cache = boolean(
      "--cache-weights", "cache_weights",
      "Keep each layer's Z-gathered weight block from forward to backward (memory: every "
      "layer's block) instead of gathering it again in backward; --no-cache-weights (the "
      "default) gathers again",
      false, [](RunConfig & c) -> auto& { return c.plan.cache_weights; });
  cache.add = [](CLI::App& app, RunConfig& c, const RunOption& r) {
    return app.add_flag(std::string(r.flag) + ",!--no-cache-weights", c.plan.cache_weights,
                        r.help);
  };
  t.push_back(cache);
  t.push_back(number<int>(
      "--ors-window", "ors_window",
      "With --overlap ors: dW blocks whose Z reduce-scatter may be in flight at once (a ring of "
      "this many fp32 blocks of the largest layer; a dW GEMM first waits for the reduce-scatter "
      "issued this many layers earlier)",
      kScheduleGroup, false, [](RunConfig & c) -> auto& { return c.plan.ors_window; }, pos,
      true));
  t.push_back(number_or_auto<int>(
      "--tp-chunks", "tp_chunks",
      "With --overlap tp: row slices (of the tokens per rank and micro-step, which it must "
      "divide) that each forward GEMM with an output all-reduce is cut into, each slice's "
      "all-reduce running while the next slice computes; auto (ovb-model search and explain): "
      "the fastest that fits per configuration, among tp off and tp with 2, 4 or 8 slices "
      "(those that divide the tokens; only where the tensor-parallel group is larger than 1)",
      kScheduleGroup, [](RunConfig & c) -> auto& { return c.plan.tp_chunks; },
      [](RunConfig & c) -> auto& { return c.tp_chunks_auto; }, tp_chunks_check(),
      std::to_string(kDefaultTpChunks)));
  // A flag that also takes a value: --shard-optimizer alone is "on", as it always was.
  t.push_back(
      {"--shard-optimizer", "shard_optimizer",
       "Split the fp32 master weights and AdamW moments over the data group (ZeRO-1): each "
       "gradient bucket is reduce-scattered over data instead of all-reduced, every data rank "
       "updates its chunk, and the updated weights are all-gathered over data in the step. "
       "Alone: on; or off, on, auto (ovb-model search and explain: the faster that fits, per "
       "configuration)",
       kScheduleGroup, false,
       [](CLI::App& app, RunConfig& c, const RunOption& r) {
         return app
             .add_option_function<std::string>(
                 r.flag,
                 [&c](const std::string& s) {
                   c.shard_optimizer_auto = s == "auto";
                   c.plan.shard_optimizer = s.empty() || s == "on";
                 },
                 r.help)
             ->expected(0, 1)
             ->check(CLI::Validator(
                 [](std::string& s) {
                   return s.empty() || s == "on" || s == "off" || s == "auto"
                              ? std::string()
                              : "expected on, off or auto, got '" + s + "'";
                 },
                 "[on|off|auto]"));
       },
       [](const RunConfig& c) {
         return c.shard_optimizer_auto ? json("auto") : json(c.plan.shard_optimizer);
       },
       [](const json& v, RunConfig& c, const std::string& what) {
         c.shard_optimizer_auto = v.is_string() && v.get<std::string>() == "auto";
         if (c.shard_optimizer_auto) return;
         if (!v.is_boolean()) bad_type(what, "true, false or \"auto\"", v);
         c.plan.shard_optimizer = v.get<bool>();
       },
       true});
  t.push_back(boolean(
      "--shard-gradients", "shard_gradients",
      "With --shard-optimizer: split the fp32 gradients over the data group as well (ZeRO-2): "
      "each bucket's gradient is computed in a bucket buffer, reduce-scattered over data every "
      "micro-step and only the rank's chunk is kept",
      false, [](RunConfig & c) -> auto& { return c.plan.shard_gradients; }));
  // Precisions.
  t.push_back(
      {"--dtype", "dtype",
       "Weights and activations: auto, fp32, bf16 or fp16 (auto: gpt4d fp32 on host and bf16 on "
       "cuda; ovb-model the machine's precision)",
       kDtypeGroup, false,
       [](CLI::App& app, RunConfig& c, const RunOption& r) {
         return app.add_option(r.flag, c.dtype, r.help)
             ->check(CLI::IsMember({"auto", "fp32", "bf16", "fp16"}))
             ->capture_default_str();
       },
       [](const RunConfig& c) { return json(name_of(c.plan.act_dtype)); },
       [](const json& v, RunConfig& c, const std::string& what) {
         c.dtype = need_string(v, what);
         c.plan.act_dtype = parse_dtype(c.dtype);
       }});
  t.push_back({"--grad-dtype", "grad_dtype",
               "Weight gradients (Z reduce-scatter, data all-reduce): fp32, bf16 or fp16",
               kGradDtypeGroup, false,
               [](CLI::App& app, RunConfig& c, const RunOption& r) {
                 return app
                     .add_option_function<std::string>(
                         r.flag, [&c](const std::string& s) { c.plan.grad_dtype = parse_dtype(s); },
                         r.help)
                     ->default_str("fp32");
               },
               [](const RunConfig& c) { return json(name_of(c.plan.grad_dtype)); },
               [](const json& v, RunConfig& c, const std::string& what) {
                 c.plan.grad_dtype = parse_dtype(need_string(v, what));
               }});
  return t;
}

// The object at the dotted path's parent, created when absent.
json& parent_of(json& j, std::string_view key, std::string* leaf) {
  json* at = &j;
  std::size_t pos = 0;
  for (std::size_t dot; (dot = key.find('.', pos)) != std::string_view::npos; pos = dot + 1)
    at = &(*at)[std::string(key.substr(pos, dot - pos))];
  *leaf = std::string(key.substr(pos));
  return *at;
}

// The value at a dotted path, or nullptr when absent (null counts as absent, except for keys whose
// null means something: model.preset).
const json* find(const json& j, std::string_view key, const std::string& where) {
  const json* at = &j;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t dot = key.find('.', pos);
    const std::string part(key.substr(pos, dot == std::string_view::npos ? dot : dot - pos));
    if (!at->is_object()) {
      throw UsageError(where + std::string(key.substr(0, pos == 0 ? 0 : pos - 1)) +
                       "' must be an object, got " + at->dump());
    }
    const auto it = at->find(part);
    if (it == at->end()) return nullptr;
    at = &*it;
    if (dot == std::string_view::npos) return at;
    pos = dot + 1;
  }
}

}  // namespace

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> table = make_table();
  return table;
}

void add_run_options(CLI::App& app, RunConfig& cfg, unsigned groups) {
  // A binary that runs one configuration has nothing to choose among.
  static const CLI::Validator no_auto(
      [](std::string& s) {
        if (s != "auto") return std::string();
        return std::string("auto is ovb-model's choice (search, explain); give a value");
      },
      "");
  for (const RunOption& r : run_options())
    if (r.group & groups) {
      CLI::Option* o = r.add(app, cfg, r);
      if (r.auto_choice && !(groups & kAutoChoices)) o->check(no_auto);
    }
}

void add_grid_options(CLI::App& app, GridShape& shape) {
  for (const RunOption& r : run_options())
    if (r.group == kGridGroup) add_grid_row(app, shape, r);
}

void finish_run_config(const CLI::App& app, RunConfig& cfg) {
  GptShape& m = cfg.model;
  auto given = [&](const char* flag) {
    try {
      return app.count(flag) > 0;
    } catch (const CLI::OptionNotFound&) {
      return false;
    }
  };
  if (!m.preset.empty()) {
    const GptShape p = gpt_preset(m.preset);
    if (given("--arch") && m.arch != p.arch)
      throw UsageError("--arch " + std::string(name_of(m.arch)) + " contradicts --preset " +
                       p.preset + " (a " + std::string(name_of(p.arch)) + " model)");
    m.arch = p.arch;
    if (!given("--layers")) m.layers = p.layers;
    if (!given("--hidden")) m.hidden = p.hidden;
    if (!given("--heads")) m.heads = p.heads;
    if (!given("--kv-heads")) m.kv_heads = p.kv_heads;
    if (!given("--ffn-hidden")) m.ffn_hidden = p.ffn_hidden;
    if (!given("--rope-theta")) m.rope_theta = p.rope_theta;
    // gpt_preset() left the default vocabulary where the preset names none.
    if (!given("--vocab") && p.vocab != GptShape{}.vocab) m.vocab = p.vocab;
    m.preset = p.preset;
  } else if (!given("--layers") || !given("--hidden") || !given("--heads")) {
    throw UsageError("give the model with --preset NAME or as --layers, --hidden and --heads");
  }
}

void resolve_dtype(RunConfig& cfg, DType auto_dtype) {
  cfg.plan.act_dtype = cfg.dtype == "auto" ? auto_dtype : parse_dtype(cfg.dtype);
}

void validate(const RunConfig& cfg) {
  const GridShape& g = cfg.plan.grid;
  const char* names[4] = {"Gx", "Gy", "Gz", "Gdata"};
  for (Dim d : kAllDims)
    if (g.size(d) < 1)
      throw UsageError("grid " + g.str() + ": " + names[static_cast<int>(d)] +
                       " must be >= 1, got " + std::to_string(g.size(d)));
  g.world();  // throws when the product overflows
  if (cfg.micro_batch_auto || cfg.shard_optimizer_auto || cfg.tp_chunks_auto)
    throw UsageError(std::string(cfg.micro_batch_auto       ? "micro_batch"
                                 : cfg.shard_optimizer_auto ? "shard_optimizer"
                                                            : "tp_chunks") +
                     " is auto: only ovb-model chooses it; give a value");
  validate_gpt_plan(cfg.model, cfg.plan);
}

// ---- JSON ----

json to_json(const RunConfig& cfg) {
  json j = json::object();
  for (const RunOption& r : run_options()) {
    std::string leaf;
    parent_of(j, r.key, &leaf)[leaf] = r.write(cfg);
  }
  return j;
}

RunConfig run_config_from_json(const json& j, const std::string& where) {
  static const RunConfig defaults;
  return run_config_from_json(j, where, defaults);
}

RunConfig run_config_from_json(const json& j, const std::string& where, const RunConfig& defaults) {
  RunConfig c = defaults;
  for (const RunOption& r : run_options()) {
    const json* v = find(j, r.key, where);
    const bool null_is_value = std::string_view(r.key) == "model.preset";
    if (!v || (v->is_null() && !null_is_value)) {
      if (r.required_in_json) throw UsageError(where + r.key + "' is missing");
      continue;
    }
    r.read(*v, c, where + r.key);
  }
  return c;
}

json grid_json(const GridShape& g) {
  RunConfig c;
  c.plan.grid = g;
  return to_json(c)["grid"];
}

GridShape grid_from_json(const json& j, const std::string& where) {
  RunConfig c;
  for (const RunOption& r : run_options()) {
    const std::string_view key = r.key;
    if (!key.starts_with("grid.")) continue;
    const json* v = find(j, key.substr(5), where);
    if (!v || v->is_null()) {
      if (r.required_in_json) throw UsageError(where + std::string(key.substr(5)) + "' is missing");
      continue;
    }
    r.read(*v, c, where + std::string(key.substr(5)));
  }
  return c.plan.grid;
}

}  // namespace ovb
