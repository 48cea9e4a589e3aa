// gpt4d's options and data sources: bad input is rejected with a message naming the problem.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "config.hpp"
#include "data/loader.hpp"
#include "kernels/kernels.hpp"  // cudnn_attention_built
#include "ovb/error.hpp"

using namespace ovb;
using namespace ovb::gpt;

namespace {

// Parses argv (without the program name) and finishes the config for `backend`; returns the
// UsageError's message, or "" when accepted.
std::string parse(std::vector<std::string> args, Config* out = nullptr,
                  const char* backend = "host") {
  Config cfg;
  CLI::App app{"test", "gpt4d"};
  add_options(app, cfg);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
    finish_config(app, cfg, backend);
  } catch (const CLI::ParseError& e) {
    return std::string("parse: ") + e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  if (out) *out = cfg;
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string data_error(const std::string& spec, std::int64_t vocab = 256) {
  GptShape m;
  m.seq = 8;
  m.vocab = vocab;
  try {
    DataSource d(spec, m, 2, 1);
    std::vector<std::int32_t> tok(16), tgt(16);
    d.batch(0, 0, 2, tok.data(), tgt.data());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, PresetWithOverridesAndDefaults) {
  Config cfg;
  ASSERT_EQ(parse({"--preset", "gpt-125m", "--layers", "3", "--batch", "4"}, &cfg), "");
  EXPECT_EQ(cfg.model.layers, 3);
  EXPECT_EQ(cfg.model.hidden, 768);
  EXPECT_EQ(cfg.model.preset, "125M");
  EXPECT_EQ(cfg.plan.act_dtype, DType::f32);
  EXPECT_DOUBLE_EQ(cfg.optim.min_lr, cfg.optim.lr / 10);
  EXPECT_EQ(cfg.optim.lr_decay_iters, cfg.iters);
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4", "--data", "text:x"}, &cfg), "");
  EXPECT_EQ(cfg.model.vocab, 256);
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4", "--overlap", "oag,oar", "--recompute",
                   "--no-cache-weights"},
                  &cfg),
            "");
  EXPECT_TRUE(cfg.plan.oar && cfg.plan.oag && !cfg.plan.ors && cfg.plan.recompute &&
              !cfg.plan.cache_weights);
  EXPECT_EQ(overlap_string(cfg.plan), "oar,oag");
  // The spellings ovb-model takes: all and none.
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4", "--overlap", "all"}, &cfg), "");
  EXPECT_TRUE(cfg.plan.oar && cfg.plan.ors && cfg.plan.oag);
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4", "--overlap", "none"}, &cfg), "");
  EXPECT_TRUE(!cfg.plan.oar && !cfg.plan.ors && !cfg.plan.oag);
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4"}, &cfg, "cuda"), "");
  EXPECT_EQ(cfg.plan.act_dtype, DType::bf16);
}

TEST(Config, BadOptionsNameTheProblem) {
  EXPECT_TRUE(has(parse({"--batch", "4"}), "--preset NAME or as --layers"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--overlap", "oar,xyz"}),
                  "unknown flag 'xyz'"));
  EXPECT_TRUE(has(parse({"--preset", "7B", "--batch", "4"}), "unknown GPT preset '7B'"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--iters", "3", "--warmup", "3"}),
                  "--warmup must be >= 0 and less than --iters"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--dtype", "bf16"}),
                  "needs the cuda backend"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--lr", "0"}), "--lr must be > 0"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--dtype", "fp16"}, nullptr, "cuda"),
                  "--dtype fp16: gpt4d trains in fp32 or bf16"));
  EXPECT_TRUE(has(
      parse({"--layers", "1", "--hidden", "1024", "--heads", "2", "--batch", "4"}, nullptr, "cuda"),
      "head size hidden/heads = 512 is larger than 256"));
  // Llama runs on both backends; its grouped-query attention takes every --attention, cuDNN's
  // where the build has it (whether cuDNN runs the shape is decided on the device).
  EXPECT_EQ(parse({"--preset", "llama-tiny", "--batch", "4"}, nullptr, "cuda"), "");
  EXPECT_EQ(
      parse({"--preset", "llama-tiny", "--batch", "4", "--attention", "simt"}, nullptr, "cuda"),
      "");
  const std::string llama_cudnn =
      parse({"--preset", "llama-tiny", "--batch", "4", "--attention", "cudnn"}, nullptr, "cuda");
  if (ovb::gpt::cudnn_attention_built())
    EXPECT_EQ(llama_cudnn, "");
  else
    EXPECT_TRUE(has(llama_cudnn, "--attention cudnn: this gpt4d was built without cuDNN"))
        << llama_cudnn;
  EXPECT_TRUE(has(
      parse({"--preset", "llama-tiny", "--batch", "4", "--attention", "cudnn", "--dtype", "fp32"},
            nullptr, "cuda"),
      ovb::gpt::cudnn_attention_built() ? "--attention cudnn needs bf16 activations"
                                        : "built without cuDNN"));
  EXPECT_EQ(parse({"--preset", "llama-tiny", "--batch", "4"}), "");
  // --gemm-autotune: cuda only above 1, bounded, an integer.
  Config tuned;
  ASSERT_EQ(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "8"}, &tuned, "cuda"),
            "");
  EXPECT_EQ(tuned.gemm_autotune, 8);
  EXPECT_EQ(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "1"}), "");
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "4"}),
                  "--gemm-autotune 4 needs the cuda backend"));
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "-1"}, nullptr, "cuda"),
          "--gemm-autotune must be in [0, 64], got -1"));
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "65"}, nullptr, "cuda"),
          "--gemm-autotune must be in [0, 64], got 65"));
  EXPECT_TRUE(
      has(parse({"--preset", "tiny", "--batch", "4", "--gemm-autotune", "many"}), "parse: "));
  EXPECT_TRUE(has(parse({"--preset", "tiny"}), "--batch is required"));
  EXPECT_TRUE(has(parse({"--preset", "tiny", "--batch", "4", "--frobnicate"}), "frobnicate"));
}

TEST(Data, BadSourcesNameTheProblem) {
  EXPECT_TRUE(has(data_error("parquet:x"), "unknown source 'parquet:x'"));
  EXPECT_TRUE(has(data_error("text:/nonexistent/file.txt"), "cannot open '/nonexistent/file.txt'"));
  EXPECT_TRUE(has(data_error("text:" + temp_file("short.txt", "abc")), "fewer than seq + 1 = 9"));
  EXPECT_TRUE(has(data_error("tokens:" + temp_file("odd.bin", "abcdefghijklmnopqrs")),
                  "not a whole number of uint16 tokens"));
  EXPECT_TRUE(has(data_error("text:" + temp_file("t.txt", "hello world, hello"), 100),
                  "--vocab must be >= 256"));
  // 300 is >= vocab 256.
  std::string toks;
  for (int i = 0; i < 20; ++i)
    toks += std::string{static_cast<char>(i == 5 ? 300 & 0xFF : 1),
                        static_cast<char>(i == 5 ? 300 >> 8 : 0)};
  EXPECT_TRUE(has(data_error("tokens:" + temp_file("big.bin", toks)), "token id 300"));
}

TEST(Data, WindowsAreTheSameWhateverTheSplit) {
  GptShape m;
  m.seq = 4;
  m.vocab = 256;
  const std::string path = temp_file("abc.txt", "the quick brown fox jumps over the lazy dog");
  DataSource d("text:" + path, m, 4, 1);
  std::vector<std::int32_t> all(16), all_t(16), part(8), part_t(8);
  d.batch(3, 0, 4, all.data(), all_t.data());
  d.batch(3, 2, 2, part.data(), part_t.data());
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(part[i], all[8 + i]);
    EXPECT_EQ(part_t[i], all_t[8 + i]);
  }
  EXPECT_EQ(all_t[0], all[1]);  // targets are the next tokens
  DataSource syn("synthetic", m, 4, 9);
  syn.batch(1, 0, 4, all.data(), all_t.data());
  syn.batch(1, 1, 2, part.data(), part_t.data());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(part[i], all[4 + i]);
}
