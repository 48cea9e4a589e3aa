// Learning: on the committed text (bytes as tokens) a tiny GPT's and a tiny Llama's loss falls by
// a clear margin within a bounded number of steps (1 rank, host backend, in-process).
#include <gtest/gtest.h>

#include <numeric>

#include "parallel_test_util.hpp"

using namespace ovb;
using namespace ovb::gpt;
using namespace ovb::gpt::testing;

TEST(Learning, LossFallsOnText) {
  Config cfg = test_config({}, 120);
  cfg.model.seq = 32;
  cfg.optim.lr_warmup_iters = 10;
  TrainerRun run(cfg, MPI_COMM_SELF);
  std::vector<double> loss;
  for (int i = 0; i < cfg.iters; ++i) loss.push_back(run.trainer.run_iteration(i).loss);
  const double last10 = std::accumulate(loss.end() - 10, loss.end(), 0.0) / 10;
  // Uniform over 256 bytes is ln 256 = 5.55; English bytes are far more predictable.
  EXPECT_NEAR(loss.front(), 5.55, 0.2);
  EXPECT_LT(last10, loss.front() - 2.0) << "first " << loss.front() << ", last 10 " << last10;
}

TEST(Learning, LlamaLossFallsOnText) {
  Case c;
  c.llama = true;
  Config cfg = test_config(c, 120);
  cfg.model.seq = 32;
  cfg.optim.lr_warmup_iters = 10;
  TrainerRun run(cfg, MPI_COMM_SELF);
  std::vector<double> loss;
  for (int i = 0; i < cfg.iters; ++i) loss.push_back(run.trainer.run_iteration(i).loss);
  const double last10 = std::accumulate(loss.end() - 10, loss.end(), 0.0) / 10;
  EXPECT_NEAR(loss.front(), 5.55, 0.2);  // ln 256: uniform over bytes at initialisation
  EXPECT_LT(last10, loss.front() - 2.0) << "first " << loss.front() << ", last 10 " << last10;
}
