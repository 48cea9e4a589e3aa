// The run configuration: its table (unique flags and keys), its CLI (groups, presets, overlap
// spellings, messages), its validation (the plan's rules) and its JSON form (exact keys, round
// trip, strict reading).
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <set>

#include "ovb/error.hpp"
#include "ovb/run_config.hpp"

using namespace ovb;
using nlohmann::json;

namespace {

// Parses args (without the program name) with the given groups and finishes the model; returns
// the error message, or "" when accepted.
std::string parse(std::vector<std::string> args, RunConfig* out = nullptr,
                  unsigned groups = kAllRunGroups) {
  RunConfig cfg;
  CLI::App app{"test", "test"};
  add_run_options(app, cfg, groups);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
    finish_run_config(app, cfg);
  } catch (const CLI::ParseError& e) {
    return std::string("parse: ") + e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  if (out) *out = cfg;
  return "";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A configuration where every field differs from its default.
RunConfig sample() {
  RunConfig c;
  c.model = gpt_preset("tiny");
  c.model.layers = 3;
  c.model.seq = 32;
  c.model.vocab = 256;
  c.plan.grid = GridShape::parse("2x1x2x1:y,x,z");
  c.plan.batch = 4;
  c.plan.micro_batch = 1;
  c.plan.oar = c.plan.oag = true;
  c.plan.recompute = true;
  c.plan.cache_weights = false;
  c.dtype = "bf16";
  c.plan.act_dtype = DType::bf16;
  c.plan.grad_dtype = DType::bf16;
  return c;
}

}  // namespace

TEST(RunConfig, TableHasOneRowPerFlagAndKey) {
  std::set<std::string> flags, keys;
  for (const RunOption& r : run_options()) {
    EXPECT_TRUE(flags.insert(r.flag).second) << r.flag;
    EXPECT_TRUE(keys.insert(r.key).second) << r.key;
  }
  // Registering a group registers exactly its rows.
  RunConfig cfg;
  CLI::App app{"test", "test"};
  add_run_options(app, cfg, kGridGroup);
  for (const RunOption& r : run_options()) {
    bool found = true;
    try {
      app.get_option(r.flag);
    } catch (const CLI::OptionNotFound&) {
      found = false;
    }
    EXPECT_EQ(found, r.group == kGridGroup) << r.flag;
  }
}

TEST(RunConfig, JsonFormIsTheSchemasKeys) {
  const json expected = {
      {"model",
       {{"layers", 3},
        {"hidden", 64},
        {"heads", 4},
        {"seq", 32},
        {"vocab", 256},
        {"preset", "tiny"},
        {"arch", "gpt"},
        {"kv_heads", 4},      // the resolved K/V heads: as many as query heads
        {"ffn_hidden", 256},  // the resolved MLP width: 4h
        {"rope_theta", kDefaultRopeTheta}}},
      {"grid", {{"gx", 2}, {"gy", 1}, {"gz", 2}, {"gdata", 1}, {"order", "y,x,z"}}},
      {"batch", 4},
      {"micro_batch", 1},
      {"overlap", json::array({"oar", "oag"})},
      {"recompute", true},
      {"cache_weights", false},
      {"ors_window", kDefaultOrsWindow},
      {"tp_chunks", kDefaultTpChunks},
      {"shard_optimizer", false},
      {"shard_gradients", false},
      {"dtype", "bf16"},
      {"grad_dtype", "bf16"}};
  EXPECT_EQ(to_json(sample()), expected) << to_json(sample()).dump();
  RunConfig none = sample();
  none.model.preset.clear();
  parse_overlap("none", none.plan);
  EXPECT_TRUE(to_json(none)["model"]["preset"].is_null());
  EXPECT_EQ(to_json(none)["overlap"], json::array());
  EXPECT_EQ(grid_json(GridShape::parse("1x2x3x4")),
            json({{"gx", 1}, {"gy", 2}, {"gz", 3}, {"gdata", 4}, {"order", "x,y,z"}}));
}

TEST(RunConfig, JsonRoundTrips) {
  const RunConfig c = sample();
  const RunConfig back = run_config_from_json(to_json(c), "t: '");
  EXPECT_EQ(back.model.layers, c.model.layers);
  EXPECT_EQ(back.model.hidden, c.model.hidden);
  EXPECT_EQ(back.model.heads, c.model.heads);
  EXPECT_EQ(back.model.seq, c.model.seq);
  EXPECT_EQ(back.model.vocab, c.model.vocab);
  EXPECT_EQ(back.model.preset, c.model.preset);
  EXPECT_EQ(back.plan.grid.str(), "2x1x2x1:y,x,z");
  EXPECT_EQ(back.plan.batch, 4);
  EXPECT_EQ(back.plan.micro_batch, 1);
  EXPECT_TRUE(back.plan.oar && !back.plan.ors && back.plan.oag);
  EXPECT_TRUE(back.plan.recompute);
  EXPECT_FALSE(back.plan.cache_weights);
  EXPECT_EQ(back.plan.act_dtype, DType::bf16);
  EXPECT_EQ(back.plan.grad_dtype, DType::bf16);
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(grid_from_json(grid_json(c.plan.grid), "g: '").str(), c.plan.grid.str());
}

TEST(RunConfig, JsonReaderIsStrict) {
  json j = to_json(sample());
  j["model"].erase("hidden");
  EXPECT_EQ(error_of([&] { run_config_from_json(j, "run.json: 'config."); }),
            "run.json: 'config.model.hidden' is missing");
  j = to_json(sample());
  j["grid"].erase("gdata");  // a grid without Gdata is refused, not taken as 1
  EXPECT_EQ(error_of([&] { run_config_from_json(j, "r: '"); }), "r: 'grid.gdata' is missing");
  EXPECT_EQ(error_of([&] { grid_from_json(j["grid"], "c.json: 'context.grid."); }),
            "c.json: 'context.grid.gdata' is missing");
  j = to_json(sample());
  j["batch"] = "4";
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }),
                  "'batch' must be a whole number, got \"4\""));
  j = to_json(sample());
  j["model"]["seq"] = 32.5;
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }), "'model.seq' must be"));
  j = to_json(sample());
  j["overlap"] = {"oar", "fast"};
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }), "unknown flag 'fast'"));
  j["overlap"] = "ors";  // the --overlap spelling is read too
  EXPECT_TRUE(run_config_from_json(j, "r: '").plan.ors);
  j = to_json(sample());
  j["model"] = 3;
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }), "'model' must be an object"));
  // Optional keys keep the defaults given.
  j = to_json(sample());
  for (const char* k :
       {"overlap", "recompute", "cache_weights", "ors_window", "shard_optimizer",
        "shard_gradients", "dtype", "grad_dtype"})
    j.erase(k);
  RunConfig defaults;
  defaults.plan.act_dtype = DType::bf16;
  defaults.plan.cache_weights = true;  // sample() has false: the given default must win
  defaults.plan.ors_window = 7;
  const RunConfig c = run_config_from_json(j, "r: '", defaults);
  EXPECT_TRUE(!c.plan.oar && !c.plan.recompute && c.plan.cache_weights);
  EXPECT_EQ(c.plan.ors_window, 7);
  EXPECT_EQ(c.plan.act_dtype, DType::bf16);
  EXPECT_EQ(c.plan.grad_dtype, DType::f32);
}

TEST(RunConfig, CliFillsTheSameFields) {
  RunConfig c;
  ASSERT_EQ(parse({"--preset", "tiny",      "--layers",     "3",           "--seq",
                   "32",       "--vocab",   "256",          "--gx",        "2",
                   "--gz",     "2",         "--grid-order", "y,x,z",       "--batch",
                   "4",        "--overlap", "oag,oar",      "--recompute", "--no-cache-weights",
                   "--dtype",  "bf16",      "--grad-dtype", "bf16",        "--micro-batch",
                   "1"},
                  &c),
            "");
  resolve_dtype(c, DType::f32);
  EXPECT_EQ(to_json(c), to_json(sample()));
  // Every overlap spelling: all, none, a subset.
  ASSERT_EQ(parse({"--preset", "tiny", "--overlap", "all"}, &c), "");
  EXPECT_TRUE(c.plan.oar && c.plan.ors && c.plan.oag);
  EXPECT_FALSE(c.plan.otp);  // all: AxoNN's three; tp is named
  ASSERT_EQ(parse({"--preset", "tiny", "--overlap", "all,tp", "--tp-chunks", "4"}, &c), "");
  EXPECT_TRUE(c.plan.oar && c.plan.ors && c.plan.oag && c.plan.otp);
  EXPECT_EQ(overlap_string(c.plan), "oar,ors,oag,tp");
  EXPECT_EQ(c.plan.tp_chunks, 4);
  const RunConfig back = run_config_from_json(to_json(c), "r: '");
  EXPECT_TRUE(back.plan.otp && back.plan.oag);
  EXPECT_EQ(back.plan.tp_chunks, 4);
  ASSERT_EQ(parse({"--preset", "tiny", "--overlap", "tp"}, &c), "");
  EXPECT_TRUE(c.plan.otp && !c.plan.oar && !c.plan.ors && !c.plan.oag);
  EXPECT_EQ(c.plan.tp_chunks, kDefaultTpChunks);
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--tp-chunks", "0"}, &c), "--tp-chunks"));
  ASSERT_EQ(parse({"--preset", "tiny", "--overlap", "none"}, &c), "");
  EXPECT_TRUE(!c.plan.oar && !c.plan.ors && !c.plan.oag && !c.plan.otp);
  EXPECT_EQ(overlap_string(c.plan), "none");
  // auto leaves the dtype to the binary.
  ASSERT_EQ(parse({"--layers", "2", "--hidden", "8", "--heads", "2"}, &c), "");
  EXPECT_EQ(c.model.preset, "");
  resolve_dtype(c, DType::bf16);
  EXPECT_EQ(c.plan.act_dtype, DType::bf16);
  // Memory options: weights are gathered again unless --cache-weights; the ORS window.
  EXPECT_FALSE(c.plan.cache_weights);
  EXPECT_EQ(c.plan.ors_window, kDefaultOrsWindow);
  ASSERT_EQ(parse({"--preset", "tiny", "--cache-weights", "--ors-window", "2"}, &c), "");
  EXPECT_TRUE(c.plan.cache_weights);
  EXPECT_EQ(c.plan.ors_window, 2);
  EXPECT_EQ(run_config_from_json(to_json(c), "r: '").plan.ors_window, 2);
  EXPECT_NE(parse({"--preset", "tiny", "--ors-window", "0"}, &c).find("--ors-window"),
            std::string::npos);
  // Micro-batches: 0 (the default) is the whole local batch; negative is refused at parsing.
  ASSERT_EQ(parse({"--preset", "tiny"}, &c), "");
  EXPECT_EQ(c.plan.micro_batch, 0);
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--micro-batch", "-1"}, &c), "--micro-batch"));
  // The sharded optimizer: off unless asked for, and kept in the JSON form.
  EXPECT_FALSE(c.plan.shard_optimizer);
  ASSERT_EQ(parse({"--preset", "tiny", "--shard-optimizer"}, &c), "");
  EXPECT_TRUE(c.plan.shard_optimizer);
  EXPECT_TRUE(run_config_from_json(to_json(c), "r: '").plan.shard_optimizer);
  // Sharded gradients (ZeRO-2) likewise; the plan refuses them without the sharded optimizer.
  EXPECT_FALSE(c.plan.shard_gradients);
  ASSERT_EQ(parse({"--preset", "tiny", "--shard-optimizer", "--shard-gradients"}, &c), "");
  EXPECT_TRUE(c.plan.shard_optimizer && c.plan.shard_gradients);
  EXPECT_TRUE(run_config_from_json(to_json(c), "r: '").plan.shard_gradients);
}

TEST(RunConfig, AutoChoicesOnlyWhereTheBinaryChooses) {
  const unsigned choosing = kAllRunGroups | kAutoChoices;
  RunConfig c;
  // --shard-optimizer alone is on, as before; =off, =on, a separate value and auto.
  ASSERT_EQ(parse({"--preset", "tiny", "--shard-optimizer=off"}, &c), "");
  EXPECT_FALSE(c.plan.shard_optimizer);
  ASSERT_EQ(parse({"--preset", "tiny", "--shard-optimizer", "on"}, &c), "");
  EXPECT_TRUE(c.plan.shard_optimizer);
  EXPECT_FALSE(c.shard_optimizer_auto);
  ASSERT_EQ(parse({"--preset", "tiny", "--shard-optimizer", "auto", "--micro-batch", "auto"}, &c,
                  choosing),
            "");
  EXPECT_TRUE(c.shard_optimizer_auto && c.micro_batch_auto);
  // The JSON form says auto and reads it back; a value clears it.
  const json j = to_json(c);
  EXPECT_EQ(j["micro_batch"], "auto");
  EXPECT_EQ(j["shard_optimizer"], "auto");
  const RunConfig back = run_config_from_json(j, "r: '");
  EXPECT_TRUE(back.micro_batch_auto && back.shard_optimizer_auto);
  ASSERT_EQ(parse({"--preset", "tiny", "--micro-batch", "4"}, &c, choosing), "");
  EXPECT_FALSE(c.micro_batch_auto);
  EXPECT_EQ(c.plan.micro_batch, 4);
  // Binaries that run one configuration refuse auto, at parsing and in validate().
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--micro-batch", "auto"}), "auto is ovb-model's choice"));
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--shard-optimizer=auto"}), "auto is ovb-model's choice"));
  RunConfig s = sample();
  s.micro_batch_auto = true;
  EXPECT_TRUE(has(error_of([&] { validate(s); }), "micro_batch is auto"));
  // Bad values name the option and the value.
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--micro-batch", "two"}, nullptr, choosing),
                  "must be a whole number or auto, got two"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--micro-batch", "-2"}, nullptr, choosing),
                  "must be >= 0, got -2"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--shard-optimizer=maybe"}, nullptr, choosing),
                  "expected on, off or auto, got 'maybe'"));
  // --tp-chunks auto likewise: chosen by ovb-model, refused elsewhere, said in the JSON.
  ASSERT_EQ(parse({"--preset", "tiny", "--tp-chunks", "auto"}, &c, choosing), "");
  EXPECT_TRUE(c.tp_chunks_auto);
  EXPECT_EQ(to_json(c)["tp_chunks"], "auto");
  EXPECT_TRUE(run_config_from_json(to_json(c), "r: '").tp_chunks_auto);
  ASSERT_EQ(parse({"--preset", "tiny", "--tp-chunks", "8"}, &c, choosing), "");
  EXPECT_FALSE(c.tp_chunks_auto);
  EXPECT_EQ(c.plan.tp_chunks, 8);
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--tp-chunks", "auto"}), "auto is ovb-model's choice"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--tp-chunks", "x"}, nullptr, choosing),
                  "must be a whole number or auto, got x"));
  s = sample();
  s.tp_chunks_auto = true;
  EXPECT_TRUE(has(error_of([&] { validate(s); }), "tp_chunks is auto"));
  json bad = to_json(sample());
  bad["tp_chunks"] = "four";
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(bad, "r: '"); }),
                  "'tp_chunks' must be a whole number or \"auto\""));
  bad = to_json(sample());
  bad["micro_batch"] = "four";
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(bad, "r: '"); }),
                  "'micro_batch' must be a whole number or \"auto\""));
}

TEST(RunConfig, BadOptionsNameTheProblem) {
  EXPECT_TRUE(has(parse({"--batch", "4"}), "give the model with --preset NAME or as --layers"));
  EXPECT_TRUE(has(parse({"--layers", "2", "--hidden", "8"}), "--hidden and --heads"));
  EXPECT_TRUE(has(parse({"--preset", "7B"}), "unknown GPT preset '7B'"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--overlap", "oar,xyz"}),
                  "--overlap 'oar,xyz': unknown flag 'xyz' (expected none, all, or a "
                  "comma-separated subset of oar,ors,oag,tp)"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--seq", "0"}), "--seq: must be > 0, got 0"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--dtype", "fp64"}), "--dtype: fp64 not in"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--grid-order", "x,x,z"}), "must name x, y and z"));
  // Options of groups not registered are unknown.
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--gx", "2"}, nullptr, kModelGroup), "--gx"));
}

TEST(RunConfig, ValidationIsThePlans) {
  RunConfig c = sample();
  EXPECT_EQ(error_of([&] { validate(c); }), "");
  c.plan.micro_batch = 3;  // 2 sequences per data-and-Z shard
  EXPECT_TRUE(has(error_of([&] { validate(c); }),
                  "batch 4 is not divisible by micro-batch x Gdata x Gz = 3 x 2"));
  c.plan.micro_batch = 2;
  EXPECT_EQ(error_of([&] { validate(c); }), "");
  // tp cuts the 2 x 32 tokens per rank and micro-step into even row slices.
  c.plan.otp = true;
  c.plan.tp_chunks = 3;
  EXPECT_TRUE(has(error_of([&] { validate(c); }),
                  "--tp-chunks 3 does not divide the 64 tokens per rank and micro-step"));
  c.plan.tp_chunks = 64;
  EXPECT_EQ(error_of([&] { validate(c); }), "");
  c.plan.otp = false;
  c.plan.grid.gy = 0;
  EXPECT_TRUE(has(error_of([&] { validate(c); }), "Gy must be >= 1, got 0"));
  // The weight-block rule: attention-out's 64x64 block is not divisible by Gz = 3.
  c.plan = GptPlanOptions{};
  c.model = gpt_preset("tiny");
  c.model.layers = 1;
  c.model.seq = 8;
  c.model.vocab = 256;
  c.plan.grid = GridShape::parse("1x1x3x1");
  c.plan.batch = 3;
  EXPECT_TRUE(has(error_of([&] { validate(c); }),
                  "attn_out weight block of 4096 elements is not divisible by Gz = 3"));
  c.plan.grid = GridShape::parse("1x3x1x1");
  EXPECT_TRUE(has(error_of([&] { validate(c); }), "hidden 64 is not divisible by Gx*Gy = 3"));
}

TEST(RunConfig, LlamaPresetSetsItsShapeAndOptionsOverrideIt) {
  RunConfig c;
  ASSERT_EQ(parse({"--preset", "llama3-8b", "--seq", "64"}, &c), "");
  EXPECT_EQ(c.model.arch, Arch::llama);
  EXPECT_EQ(c.model.layers, 32);
  EXPECT_EQ(c.model.hidden, 4096);
  EXPECT_EQ(c.model.heads, 32);
  EXPECT_EQ(c.model.kv_heads, 8);
  EXPECT_EQ(c.model.ffn_hidden, 14336);
  EXPECT_EQ(c.model.vocab, 128256);
  EXPECT_EQ(c.model.rope_theta, 500000.0);
  EXPECT_EQ(c.model.preset, "llama3-8B");
  // Shape options given beside the preset win; a GPT preset keeps the vocabulary given or default.
  ASSERT_EQ(parse({"--preset", "llama3-8B", "--layers", "2", "--kv-heads", "4", "--ffn-hidden",
                   "1024", "--rope-theta", "10000", "--vocab", "1024"},
                  &c),
            "");
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.model.kv_heads, 4);
  EXPECT_EQ(c.model.ffn_hidden, 1024);
  EXPECT_EQ(c.model.rope_theta, 10000.0);
  EXPECT_EQ(c.model.vocab, 1024);
  ASSERT_EQ(parse({"--preset", "1.3B"}, &c), "");
  EXPECT_EQ(c.model.arch, Arch::gpt);
  EXPECT_EQ(c.model.vocab, 50304);
  // Without a preset: --arch and the Llama options; the JSON form round-trips them.
  ASSERT_EQ(parse({"--arch", "llama", "--layers", "2", "--hidden", "64", "--heads", "4",
                   "--kv-heads", "2", "--ffn-hidden", "176", "--rope-theta", "5e5"},
                  &c),
            "");
  EXPECT_EQ(c.model.arch, Arch::llama);
  const json j = to_json(c);
  EXPECT_EQ(j["model"]["arch"], "llama");
  EXPECT_EQ(j["model"]["kv_heads"], 2);
  EXPECT_EQ(j["model"]["ffn_hidden"], 176);
  EXPECT_EQ(j["model"]["rope_theta"], 500000.0);
  const RunConfig back = run_config_from_json(j, "r: '");
  EXPECT_EQ(back.model.arch, Arch::llama);
  EXPECT_EQ(back.model.kv_heads, 2);
  EXPECT_EQ(back.model.ffn_hidden, 176);
  EXPECT_EQ(back.model.rope_theta, 500000.0);
  EXPECT_EQ(to_json(back), j);
  // A result file from before the architecture existed reads as GPT.
  json old = to_json(sample());
  for (const char* k : {"arch", "kv_heads", "ffn_hidden", "rope_theta"}) old["model"].erase(k);
  EXPECT_EQ(run_config_from_json(old, "r: '").model.arch, Arch::gpt);
}

TEST(RunConfig, BadLlamaOptionsNameTheProblem) {
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--arch", "mamba"}),
                  "unknown architecture 'mamba' (expected gpt or llama)"));
  EXPECT_TRUE(has(parse({"--preset", "llama3-8B", "--arch", "gpt"}),
                  "--arch gpt contradicts --preset llama3-8B (a llama model)"));
  EXPECT_TRUE(has(parse({"--preset", "llama-tiny", "--kv-heads", "0"}), "--kv-heads"));
  EXPECT_TRUE(has(parse({"--preset", "llama-tiny", "--rope-theta", "-1"}), "--rope-theta"));
  json j = to_json(sample());
  j["model"]["arch"] = "bert";
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }),
                  "r: 'model.arch': unknown architecture 'bert'"));
  j["model"]["arch"] = "llama";
  j["model"]["rope_theta"] = "big";
  EXPECT_TRUE(has(error_of([&] { run_config_from_json(j, "r: '"); }),
                  "'model.rope_theta' must be a number"));
}
