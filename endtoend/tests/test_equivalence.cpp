// Multi-rank equivalence on the host backend: the per-iteration loss of every grid (same global
// batch) equals the 1-rank run's up to fp32 reordering, for every overlap-flag subset with
// recompute on and off, weight caching on and off and ORS windows of 1, 2 and 4 dW blocks, with
// micro-batches of 1 and 2 sequences (gradient accumulation), with the optimizer state sharded
// over data and not (also with buckets that Gdata does not divide); the gradients of one step
// equal the serial ones tensor by tensor (with micro-batches; sharded: each data rank's chunk);
// the serial gradients equal finite differences of the loss. With the gradients sharded as well
// (ZeRO-2): the serial losses on every data-parallel grid, with micro-batches and uneven chunks,
// and the gradient chunks tensor by tensor. The same for a small Llama
// (RMSNorm, RoPE, grouped-query attention, SwiGLU) on every grid that keeps whole K/V groups,
// with every overlap-flag subset.
// TrainerRun: mpirun -np 8 ovb-gpt4d-parallel-tests
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/layout.hpp"
#include "ovb/error.hpp"
#include "parallel_test_util.hpp"

using namespace ovb;
using namespace ovb::gpt;
using namespace ovb::gpt::testing;

namespace {

int world_size() {
  return ovb::testing::launch().world;
}

// On the host: every grid with every overlap-flag subset (recompute and weight caching varied over
// them), and the first two grids with every subset both with and without recompute. On the GPU:
// the first three grids, no overlap and all of it.
std::vector<Case> equivalence_cases() {
  std::vector<Case> cases;
  const auto grids = grids_for(world_size());
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (on_gpu() && g >= 3) break;
    if (g < 2 && !on_gpu()) {
      for (bool rc : {false, true})
        for (const std::string& ov : overlap_subsets()) cases.push_back({grids[g], ov, rc, true});
      cases.push_back({grids[g], "oar,ors,oag", true, false});
      cases.push_back({grids[g], "none", false, false});
      // The ORS window at its smallest (every dW slot reused by the next layer) and between.
      for (int w : {1, 2}) {
        cases.push_back({grids[g], "ors", false, false, w});
        cases.push_back({grids[g], "oar,ors,oag", true, false, w});
      }
    } else if (!on_gpu()) {
      const auto& subsets = overlap_subsets();
      for (std::size_t i = 0; i < subsets.size(); ++i)
        cases.push_back({grids[g], subsets[i], (g + i) % 2 == 0, (g + i) % 3 != 0});
    } else {
      cases.push_back({grids[g], "none", g % 2 == 0, true});
      cases.push_back({grids[g], "oar,ors,oag", g % 2 == 1, g % 3 != 0});
    }
  }
  // The sharded optimizer: on the first two grids with Gdata > 1 every overlap-flag subset, on
  // the others every other one (recompute, caching and the window varied over them); on a grid
  // without data ranks it changes nothing.
  int data_grids = 0;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (gdata_of(grids[g]) == 1) {
      if (!on_gpu() && g == 0)
        cases.push_back({grids[g], "oar,ors,oag", true, false, 4, false, 0, true});
      continue;
    }
    const bool all_subsets = data_grids++ < 2;
    const auto& subsets = overlap_subsets();
    for (std::size_t i = 0; i < subsets.size(); ++i) {
      if (on_gpu() && i != 0 && i + 1 != subsets.size()) continue;
      if (!all_subsets && (i + g) % 2 != 0) continue;
      cases.push_back({grids[g], subsets[i], (g + i) % 2 == 1, (g + i) % 3 == 0,
                       i % 3 == 2 ? 1 : kDefaultOrsWindow, false, 0, true});
    }
  }
  return cases;
}

// The losses of a run against the reference, iteration by iteration: fp32 reordering only (on
// the GPU cuBLASLt picks other algorithms per shape as well). Returns the largest relative
// deviation.
double expect_losses_match(const std::vector<double>& ref, const std::vector<double>& got,
                           const std::string& what) {
  EXPECT_EQ(got.size(), ref.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < std::min(ref.size(), got.size()); ++i) {
    const double dev = std::abs(got[i] - ref[i]) / std::abs(ref[i]);
    worst = std::max(worst, dev);
    EXPECT_LT(dev, on_gpu() ? 1e-4 : 2e-5)
        << what << " iteration " << i << ": " << got[i] << " vs " << ref[i];
  }
  return worst;
}

// Every tensor's accumulated gradient in `run` against the serial run's, element by element and
// relative to the tensor's largest element: some elements are ~0 by symmetry (the key bias cannot
// change a softmax) and carry only rounding noise.
void expect_gradients_equal_serial(TrainerRun& serial, TrainerRun& run, const std::string& what) {
  for (const TensorDesc& t : serial.trainer.layout().tensors) {
    const std::vector<float> want = serial.trainer.global_tensor(t.name, true);
    const std::vector<float> got = run.trainer.global_tensor(t.name, true);
    ASSERT_EQ(got.size(), want.size()) << what << " " << t.name;
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::abs(v));
    ASSERT_GT(scale, 0.0f) << t.name << " has a zero gradient";
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], (on_gpu() ? 1e-3f : 1e-4f) * scale)
          << what << " " << t.name << "[" << i << "]";
  }
}

// Every tensor's largest gradient element (the best signal over fp32 rounding of the loss)
// against a central finite difference of the loss; returns the number of tensors checked.
int expect_gradients_match_finite_differences(TrainerRun& run) {
  run.trainer.compute_gradients(0);
  const float eps = 1e-2f;
  int tensors = 0;
  for (const TensorDesc& t : run.trainer.layout().tensors) {
    ++tensors;
    const std::vector<float> g = run.trainer.global_tensor(t.name, true);
    const auto it = std::max_element(g.begin(), g.end(),
                                     [](float a, float b) { return std::abs(a) < std::abs(b); });
    const std::int64_t i = it - g.begin();
    run.trainer.perturb(t.name, i, eps);
    const double lp = run.trainer.compute_gradients(0);
    run.trainer.perturb(t.name, i, -2 * eps);
    const double lm = run.trainer.compute_gradients(0);
    run.trainer.perturb(t.name, i, eps);
    const double fd = (lp - lm) / (2 * eps);
    EXPECT_NEAR(*it, fd, 0.03 * std::abs(fd) + 2e-4) << t.name << "[" << i << "]";
  }
  return tensors;
}

}  // namespace

TEST(Equivalence, LossOfEveryGridAndFlagSetEqualsOneRank) {
  const std::vector<double> ref = losses(test_config({}), MPI_COMM_SELF);
  ASSERT_GT(ref.front() - ref.back(), 0.1) << "the reference run must learn for the test to bite";
  double worst = 0;
  for (const Case& c : equivalence_cases()) {
    const std::vector<double> got = losses(test_config(c), MPI_COMM_WORLD);
    worst = std::max(worst, expect_losses_match(ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("largest relative loss deviation from 1 rank: %.2e\n", worst);
}

// Micro-batches (gradient accumulation over micro-steps) on every grid against the 1-rank run
// without them: micro-batches of 1 and 2 sequences (where they divide the rank's batch; the
// whole batch is the test above), each over the overlap-flag subsets in turn, with recompute,
// weight caching and the ORS window varied. The serial run with micro-batches as well.
TEST(Equivalence, MicroBatchesKeepTheLossOfOneRank) {
  const std::vector<double> ref = losses(test_config({}), MPI_COMM_SELF);
  std::vector<Case> cases;
  for (std::int64_t mb : {1, 2}) cases.push_back({"1x1x1x1", "none", mb == 2, true, 4, false, mb});
  const auto grids = grids_for(world_size());
  const auto& subsets = overlap_subsets();
  std::size_t turn = 0;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (on_gpu() && g >= 2) break;
    for (std::int64_t mb : {1, 2}) {
      if (local_sequences(grids[g]) % mb != 0 || local_sequences(grids[g]) == mb) continue;
      // Two flag subsets per grid and micro-batch (every subset over the grids), always one
      // with ORS, whose deferred reduce-scatters the accumulation has to wait for.
      for (int k = 0; k < 2; ++k, ++turn) {
        const std::string& ov = k == 0 ? subsets[turn % subsets.size()] : "oar,ors,oag";
        // The optimizer sharded over data in every other case: accumulation and the data
        // reduce-scatter together.
        cases.push_back({grids[g], ov, turn % 2 == 0, turn % 3 == 0, turn % 4 == 1 ? 1 : 4, false,
                         mb, turn % 2 == 1});
      }
    }
  }
  double worst = 0;
  for (const Case& c : cases) {
    const bool serial = c.grid == "1x1x1x1";
    const std::vector<double> got = losses(test_config(c), serial ? MPI_COMM_SELF : MPI_COMM_WORLD);
    worst = std::max(worst, expect_losses_match(ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("micro-batches: %zu cases, largest relative loss deviation from 1 rank: %.2e\n",
                cases.size(), worst);
}

// Buckets that Gdata does not divide (hidden 50, 2 heads: a block bucket of 30650 elements on
// 1x1x1xD, 15475 on 1x2x1xD, 7975 on 1x2x2x2): the padded chunks give the serial losses, for
// every overlap subset on the first grid and two on the others.
TEST(Equivalence, ShardedOptimizerWithUnevenChunksEqualsOneRank) {
  Case base;
  base.hidden = 50;
  base.heads = 2;
  const std::vector<double> ref = losses(test_config(base), MPI_COMM_SELF);
  ASSERT_GT(ref.front() - ref.back(), 0.1) << "the reference run must learn for the test to bite";
  std::vector<std::string> grids;
  if (world_size() == 8) grids = {"1x1x1x8", "1x2x1x4", "1x2x2x2"};
  if (world_size() == 4) grids = {"1x1x1x4", "1x2x1x2"};
  if (grids.empty()) GTEST_SKIP() << "needs 4 or 8 ranks";
  const auto& subsets = overlap_subsets();
  for (std::size_t g = 0; g < grids.size(); ++g)
    for (std::size_t i = 0; i < subsets.size(); ++i) {
      if ((on_gpu() || g > 0) && i % 4 != 3) continue;
      Case c = base;
      c.grid = grids[g];
      c.overlap = subsets[i];
      c.recompute = i % 2 == 1;
      c.cache = i % 3 == 0;
      c.shard = true;
      const Config cfg = test_config(c);
      TrainerRun run(cfg, MPI_COMM_WORLD);
      int padded = 0;
      for (const Bucket& b : run.trainer.layout().buckets)
        padded += b.count % cfg.plan.grid.gdata != 0 ? 1 : 0;
      ASSERT_GT(padded, 0) << c.str() << ": every bucket divides evenly, not the case under test";
      for (int it = 0; it < cfg.iters; ++it) {
        const double got = run.trainer.run_iteration(it).loss;
        EXPECT_LT(std::abs(got - ref[static_cast<std::size_t>(it)]) /
                      std::abs(ref[static_cast<std::size_t>(it)]),
                  on_gpu() ? 1e-4 : 2e-5)
            << c.str() << " iteration " << it << ": " << got << " vs "
            << ref[static_cast<std::size_t>(it)];
      }
    }
}

// Weights equal exactly at initialisation (global-index initialiser); gradients after 3 steps (so
// that biases and LN parameters are no longer at their initial values) up to reordering.
TEST(Equivalence, GradientsOfOneStepMatchSerialTensorByTensor) {
  const int steps = 3;
  TrainerRun serial(test_config({}), MPI_COMM_SELF);
  std::map<std::string, std::vector<float>> init;
  for (const TensorDesc& t : serial.trainer.layout().tensors)
    init[t.name] = serial.trainer.global_tensor(t.name, false);
  for (int i = 0; i < steps; ++i) serial.trainer.run_iteration(i);
  serial.trainer.compute_gradients(steps);
  const auto grids = grids_for(world_size());
  std::vector<Case> cases;
  for (std::size_t g = 0; g < std::min<std::size_t>(grids.size(), 6); ++g)
    cases.push_back({grids[g], g % 2 ? "oar,ors,oag" : "none", g % 3 == 1, g % 4 != 3});
  // Sharded: the reduced gradients live in each data rank's chunk (global_tensor assembles them).
  for (std::size_t g = 0, n = 0; g < grids.size() && n < 2; ++g)
    if (gdata_of(grids[g]) > 1)
      cases.push_back({grids[g], n++ ? "oar,ors,oag" : "none", g % 2 == 0, false, kDefaultOrsWindow,
                       false, 0, true});
  for (const Case& c : cases) {
    TrainerRun run(test_config(c), MPI_COMM_WORLD);
    for (const TensorDesc& t : serial.trainer.layout().tensors)
      ASSERT_EQ(run.trainer.global_tensor(t.name, false), init[t.name]) << c.str() << " " << t.name;
    for (int i = 0; i < steps; ++i) run.trainer.run_iteration(i);
    run.trainer.compute_gradients(steps);
    ASSERT_NO_FATAL_FAILURE(expect_gradients_equal_serial(serial, run, c.str()));
  }
}

// The accumulated gradients themselves (every linear weight and bias, layer norms, embeddings)
// after one step, against the serial run without micro-batches: one micro-step per sequence.
TEST(Equivalence, MicroBatchGradientsMatchSerialTensorByTensor) {
  TrainerRun serial(test_config({}), MPI_COMM_SELF);
  serial.trainer.run_iteration(0);
  const double serial_loss = serial.trainer.compute_gradients(1);
  const auto grids = grids_for(world_size());
  for (std::size_t g = 0; g < std::min<std::size_t>(grids.size(), on_gpu() ? 1 : 3); ++g) {
    const Case c{grids[g], g % 2 ? "none" : "oar,ors,oag", g == 1, g != 2, 4, false, 1};
    if (local_sequences(c.grid) < 2) continue;
    TrainerRun run(test_config(c), MPI_COMM_WORLD);
    run.trainer.run_iteration(0);
    EXPECT_NEAR(run.trainer.compute_gradients(1), serial_loss, 2e-5 * serial_loss) << c.str();
    ASSERT_NO_FATAL_FAILURE(expect_gradients_equal_serial(serial, run, c.str()));
  }
}

// Sharded gradients (ZeRO-2): every grid with Gdata > 1, the overlap subsets in turn (recompute,
// caching and the ORS window varied), with one micro-step and with micro-batches of 1 and 2
// sequences (the chunks reduce-scattered every micro-step and added), and buckets that Gdata
// does not divide (hidden 50): the serial losses.
TEST(Equivalence, ShardedGradientsEqualOneRank) {
  const std::vector<double> ref = losses(test_config({}), MPI_COMM_SELF);
  Case uneven_base;
  uneven_base.hidden = 50;
  uneven_base.heads = 2;
  const std::vector<double> uneven_ref = losses(test_config(uneven_base), MPI_COMM_SELF);
  std::vector<Case> cases;
  const auto& subsets = overlap_subsets();
  std::size_t turn = 0;
  for (const std::string& grid : grids_for(world_size())) {
    if (gdata_of(grid) == 1) continue;
    if (on_gpu() && turn >= 4) break;
    for (std::int64_t mb : {0, 1, 2}) {
      if (mb > 0 && (local_sequences(grid) % mb != 0 || local_sequences(grid) == mb)) continue;
      const std::string& ov = turn % 2 ? "oar,ors,oag" : subsets[(turn / 2) % subsets.size()];
      cases.push_back({grid, ov, turn % 3 == 1, turn % 4 == 0,
                       turn % 5 == 2 ? 1 : kDefaultOrsWindow, false, mb, true, true});
      ++turn;
    }
  }
  // Uneven chunks (hidden 50, 2 heads: see ShardedOptimizerWithUnevenChunksEqualsOneRank), one
  // micro-step and several.
  std::vector<std::pair<std::string, std::int64_t>> uneven_grids;
  if (world_size() == 8) uneven_grids = {{"1x1x1x8", 0}, {"1x2x2x2", 1}};
  if (world_size() == 4) uneven_grids = {{"1x2x1x2", 0}, {"1x2x1x2", 2}};
  for (const auto& [grid, mb] : uneven_grids) {
    Case c{grid, mb ? "oar,ors,oag" : "ors", mb > 0, false, kDefaultOrsWindow, false, mb, true,
           true};
    c.hidden = 50;
    c.heads = 2;
    cases.push_back(c);
  }
  ASSERT_GT(cases.size(), 0u);
  double worst = 0;
  int uneven = 0, micro = 0;
  for (const Case& c : cases) {
    const Config cfg = test_config(c);
    TrainerRun run(cfg, MPI_COMM_WORLD);
    for (const Bucket& b : run.trainer.layout().buckets)
      if (b.count % cfg.plan.grid.gdata != 0) {
        ++uneven;
        break;
      }
    micro += micro_steps(cfg.plan) > 1 ? 1 : 0;
    std::vector<double> got;
    for (int i = 0; i < cfg.iters; ++i) got.push_back(run.trainer.run_iteration(i).loss);
    worst = std::max(worst, expect_losses_match(c.hidden == 50 ? uneven_ref : ref, got, c.str()));
  }
  EXPECT_GT(uneven, 0) << "no case with uneven chunks";
  EXPECT_GT(micro, 0) << "no case with micro-steps";
  if (ovb::testing::launch().rank == 0)
    std::printf(
        "sharded gradients: %zu cases (%d uneven, %d with micro-steps), largest relative "
        "loss deviation from 1 rank: %.2e\n",
        cases.size(), uneven, micro, worst);
}

// The rank's gradient chunks themselves after 3 steps, with and without micro-batches and ORS:
// each data rank's chunk of every tensor equals the serial gradient (global_tensor assembles
// them from the shards).
TEST(Equivalence, ShardedGradientsMatchSerialTensorByTensor) {
  const int steps = 3;
  TrainerRun serial(test_config({}), MPI_COMM_SELF);
  for (int i = 0; i < steps; ++i) serial.trainer.run_iteration(i);
  serial.trainer.compute_gradients(steps);
  std::vector<Case> cases;
  for (const std::string& grid : grids_for(world_size())) {
    if (gdata_of(grid) == 1 || local_sequences(grid) < 2) continue;
    const bool first = cases.empty();
    cases.push_back({grid, first ? "none" : "oar,ors,oag", !first, first, kDefaultOrsWindow, false,
                     first ? 0 : 1, true, true});
    if (cases.size() == (on_gpu() ? 1u : 2u)) break;
  }
  ASSERT_GT(cases.size(), 0u);
  for (const Case& c : cases) {
    TrainerRun run(test_config(c), MPI_COMM_WORLD);
    for (int i = 0; i < steps; ++i) run.trainer.run_iteration(i);
    run.trainer.compute_gradients(steps);
    ASSERT_NO_FATAL_FAILURE(expect_gradients_equal_serial(serial, run, c.str()));
  }
}

TEST(Equivalence, SerialGradientsMatchFiniteDifferences) {
  TrainerRun run(test_config({}), MPI_COMM_SELF);
  expect_gradients_match_finite_differences(run);
}

// ---- Llama

namespace {

// Every grid valid for the Llama test model (Gy <= 4: whole K/V groups) with no overlap and all of
// it; every overlap-flag subset on the first, recompute and weight caching varied.
std::vector<Case> llama_cases() {
  std::vector<Case> cases;
  int valid = 0;
  for (const std::string& grid : grids_for(world_size())) {
    Config cfg = test_config({grid, "none", false, true, kDefaultOrsWindow, true});
    if (GridShape::parse(grid).gy > 1 && llama_test_model().kv() % GridShape::parse(grid).gy) {
      EXPECT_THROW(validate_gpt_plan(cfg.model, cfg.plan), UsageError) << grid;
      continue;
    }
    const auto& subsets = overlap_subsets();
    for (std::size_t i = 0; i < subsets.size(); ++i)
      if (valid < 1 || i == 0 || i + 1 == subsets.size())
        cases.push_back({grid, subsets[i], (valid + i) % 2 == 1, (valid + i) % 3 != 2,
                         kDefaultOrsWindow, true});
    ++valid;
  }
  return cases;
}

}  // namespace

TEST(Equivalence, LlamaLossOfEveryGridAndFlagSetEqualsOneRank) {
  Case serial;
  serial.llama = true;
  const std::vector<double> ref = losses(test_config(serial), MPI_COMM_SELF);
  ASSERT_GT(ref.front() - ref.back(), 0.1) << "the reference run must learn for the test to bite";
  double worst = 0;
  for (const Case& c : llama_cases()) {
    const std::vector<double> got = losses(test_config(c), MPI_COMM_WORLD);
    worst = std::max(worst, expect_losses_match(ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("Llama: largest relative loss deviation from 1 rank: %.2e\n", worst);
}

TEST(Equivalence, LlamaSerialGradientsMatchFiniteDifferences) {
  // On the GPU the Llama kernels are checked against the host kernels (gpt4d.cuda.kernels).
  if (on_gpu()) GTEST_SKIP() << "finite differences are checked on the host backend";
  Case c;
  c.llama = true;
  TrainerRun run(test_config(c), MPI_COMM_SELF);
  const int tensors = expect_gradients_match_finite_differences(run);
  // Per block 4 weights and 2 RMSNorm gains; head: LM head, final gain, token embedding.
  EXPECT_EQ(tensors, 2 * 6 + 3);
}
