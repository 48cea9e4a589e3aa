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
// Overlap tp (the forward GEMMs in row slices, each slice's all-reduce in flight under the next)
// gives the losses and gradients of the same run without it, on every grid.
// TrainerRun: mpirun -np 8 ovb-gpt4d-parallel-tests
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/layout.hpp"
#include "ovb/error.hpp"
#include "ovb/finite_difference.hpp"
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

// Tolerances: rounding bounds of the computation compared (ovb/rounding.hpp; rounding_chain in
// parallel_test_util.hpp counts the summed terms N). They hold for any correct summation order:
// another OpenBLAS kernel, another grid, micro-batches, cuBLASLt's algorithms on the GPU.

// Relative bound on |loss(run) - loss(reference)| at iteration `iter`. One forward pass: the loss
// is a mean of positive cross-entropies, so its terms' absolute sum is the loss itself, and with
// rounding errors independent and of mean zero each run is within lambda sqrt(N) u of the exact
// loss with probability at least 1 - 2 N exp(-lambda^2 / 2) (Higham and Mary, SIAM J. Sci.
// Comput. 41(5), 2019, Thm. 2.4): lambda = 7 makes that 1 - 1e-7 for N = 2080 (GPT tiny), and
// two runs differ by at most twice it. Each earlier AdamW step adds at most one pass's relative
// rounding (the update is the normalised gradient, rounded as it is; elements whose gradient is
// pure rounding noise - the key bias, invariant under softmax - have no first-order effect on
// the loss), hence the factor iter + 1. GPT tiny: 3.8e-5 at iteration 0, 3.8e-4 at 9. A wrong
// micro-step moved the loss by 3.7e-4 at iteration 0, a missed reduce-scatter chunk by 7.5e-3 at
// iteration 1; a gradient scaled by the wrong group size does not move it (AdamW is invariant to
// the gradient's scale): the gradient tests catch that (endtoend/README.md, Tests).
double loss_tolerance(const Config& cfg, int iter) {
  const double lambda = 7;
  const std::int64_t n = rounding_chain(cfg.model, cfg.plan.batch * cfg.model.seq, false);
  return 2 * lambda * std::sqrt(static_cast<double>(n)) * ovb::testing::kFp32Unit * (iter + 1);
}

// The losses of a run against the reference's (same model and batch), iteration by iteration,
// within loss_tolerance. Returns the largest deviation as a fraction of its tolerance.
double expect_losses_match(const Config& cfg, const std::vector<double>& ref,
                           const std::vector<double>& got, const std::string& what) {
  EXPECT_EQ(got.size(), ref.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < std::min(ref.size(), got.size()); ++i) {
    const double dev = std::abs(got[i] - ref[i]) / std::abs(ref[i]);
    const double tol = loss_tolerance(cfg, static_cast<int>(i));
    worst = std::max(worst, dev / tol);
    EXPECT_LT(dev, tol) << what << " iteration " << i << ": " << got[i] << " vs " << ref[i];
  }
  return worst;
}

// Loads the serial run's parameters into `run`, so that one forward and backward of each start
// from the same weights: the gradients then differ by that pass's rounding only. (After
// optimizer steps of their own they would not: AdamW moves an element whose gradient is itself
// rounding noise by up to the learning rate, and the gradients one step later differed by up to
// 2.0e-4 of a tensor's largest element with OpenBLAS's SkylakeX kernels, 7.6e-5 with Haswell's.)
void load_weights(TrainerRun& serial, TrainerRun& run) {
  for (const TensorDesc& t : serial.trainer.layout().tensors)
    run.trainer.set_global_tensor(t.name, serial.trainer.global_tensor(t.name, false));
}

// Every tensor's gradient in `run` against the serial run's from the same weights, element by
// element. Bound: each element is a sum over the iteration's tokens of products computed
// through the chain of N summed terms (rounding_chain), so each run is within gamma_N times the
// absolute sum of its terms of the exact value (worst case, any order). The absolute sum is not
// visible here; the tensor's largest gradient element stands for it, and the worst case N u
// exceeds the probabilistic lambda sqrt(N) u (see loss_tolerance) by sqrt(N) / lambda (9.4 for
// GPT tiny), which covers that much cancellation. GPT tiny: 2 gamma_4352 = 5.2e-4 of the largest
// element; observed <= 13 u = 7.7e-7 (every grid, OpenBLAS SkylakeX, Haswell and Zen). A dropped
// micro-step, a wrong group scale or a missed reduce-scatter chunk is > 1e-2 of it. Returns the
// largest deviation as a fraction of the tolerance.
double expect_gradients_equal_serial(TrainerRun& serial, TrainerRun& run, const std::string& what) {
  const Config& cfg = serial.cfg;
  const std::int64_t n = rounding_chain(cfg.model, cfg.plan.batch * cfg.model.seq, true);
  double worst = 0;
  for (const TensorDesc& t : serial.trainer.layout().tensors) {
    const std::vector<float> want = serial.trainer.global_tensor(t.name, true);
    const std::vector<float> got = run.trainer.global_tensor(t.name, true);
    EXPECT_EQ(got.size(), want.size()) << what << " " << t.name;
    if (got.size() != want.size()) return worst;
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::abs(v));
    EXPECT_GT(scale, 0.0f) << t.name << " has a zero gradient";
    const double tol = ovb::testing::fp32_two_orders_bound(n, scale);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double dev = std::abs(static_cast<double>(got[i]) - want[i]);
      worst = std::max(worst, dev / tol);
      if (dev > tol) {
        ADD_FAILURE() << what << " " << t.name << "[" << i << "]: " << got[i] << " vs " << want[i]
                      << " (tolerance " << tol << ")";
        return worst;
      }
    }
  }
  return worst;
}

// Every tensor's largest gradient element (the best signal over fp32 rounding of the loss)
// against a central finite difference of the loss (step 1e-2), within the difference's own error
// bound (ovb/finite_difference.hpp: truncation from a second step, the loss's rounding noise from
// nearby evaluations) plus the gradient's rounding (gamma_N of the tensor's largest element, as
// in expect_gradients_equal_serial). A wrong backward (a missing factor, a transposed operand,
// a dropped term) moves the gradient by a fraction of itself; the bound is < 1e-2 of it for
// every tensor here. Returns the number of tensors checked.
int expect_gradients_match_finite_differences(TrainerRun& run) {
  const Config& cfg = run.cfg;
  const std::int64_t n = rounding_chain(cfg.model, cfg.plan.batch * cfg.model.seq, true);
  const double eps = 1e-2;
  // Every rank runs the serial model; the tensors are dealt out among them (a rank that waited
  // for another in MPI would spin on a shared core).
  const auto& launch = ovb::testing::launch();
  int tensors = 0;
  double worst = 0;
  for (const TensorDesc& t : run.trainer.layout().tensors) {
    if (tensors++ % launch.world != launch.rank) continue;
    // At the unperturbed weights (the previous tensor's evaluations overwrote the gradients).
    const double loss = run.trainer.compute_gradients(0);
    const std::vector<float> g = run.trainer.global_tensor(t.name, true);
    const auto it = std::max_element(g.begin(), g.end(),
                                     [](float a, float b) { return std::abs(a) < std::abs(b); });
    const std::size_t i = static_cast<std::size_t>(it - g.begin());
    std::vector<float> w = run.trainer.global_tensor(t.name, false);
    const float w0 = w[i];
    const auto loss_at = [&](double d, double* applied) {
      w[i] = static_cast<float>(w0 + d);
      *applied = static_cast<double>(w[i]) - w0;
      run.trainer.set_global_tensor(t.name, w);
      return run.trainer.compute_gradients(0);
    };
    const ovb::testing::FiniteDifference fd = ovb::testing::central_difference(
        loss_at, eps, eps / 2, ovb::testing::fp32_last_place(loss));
    w[i] = w0;
    run.trainer.set_global_tensor(t.name, w);
    const double tol = fd.tolerance() + ovb::testing::fp32_dot_bound(n, std::abs(*it));
    worst = std::max(worst, std::abs(*it - fd.value) / tol);
    EXPECT_NEAR(*it, fd.value, tol) << t.name << "[" << i << "]: truncation " << fd.truncation
                                    << ", noise " << fd.noise << " (sigma " << fd.sigma << ")";
  }
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  if (launch.rank == 0)
    std::printf(
        "finite differences: %d tensors over %d rank(s), largest deviation %.3f of its "
        "tolerance\n",
        tensors, launch.world, worst);
  return tensors;
}

}  // namespace

TEST(Equivalence, LossOfEveryGridAndFlagSetEqualsOneRank) {
  const std::vector<double> ref = losses(test_config({}), MPI_COMM_SELF);
  ASSERT_GT(ref.front() - ref.back(), 0.1) << "the reference run must learn for the test to bite";
  double worst = 0;
  for (const Case& c : equivalence_cases()) {
    const std::vector<double> got = losses(test_config(c), MPI_COMM_WORLD);
    worst = std::max(worst, expect_losses_match(test_config(c), ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("largest loss deviation from 1 rank: %.3f of its tolerance\n", worst);
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
    worst = std::max(worst, expect_losses_match(test_config(c), ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf(
        "micro-batches: %zu cases, largest loss deviation from 1 rank: %.3f of its "
        "tolerance\n",
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
      std::vector<double> got;
      for (int it = 0; it < cfg.iters; ++it) got.push_back(run.trainer.run_iteration(it).loss);
      expect_losses_match(cfg, ref, got, c.str());
    }
}

// Weights equal exactly at initialisation (global-index initialiser); gradients from the serial
// run's weights after 3 steps (so that biases and LN parameters are no longer at their initial
// values) up to the pass's rounding (the grids' own steps: the loss tests above).
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
  double worst = 0;
  for (const Case& c : cases) {
    TrainerRun run(test_config(c), MPI_COMM_WORLD);
    for (const TensorDesc& t : serial.trainer.layout().tensors)
      ASSERT_EQ(run.trainer.global_tensor(t.name, false), init[t.name]) << c.str() << " " << t.name;
    load_weights(serial, run);
    run.trainer.compute_gradients(steps);
    worst = std::max(worst, expect_gradients_equal_serial(serial, run, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("gradients: %zu cases, largest deviation from 1 rank: %.4f of its tolerance\n",
                cases.size(), worst);
}

// The accumulated gradients themselves (every linear weight and bias, layer norms, embeddings)
// from the serial run's weights after one step, against the serial run without micro-batches:
// one micro-step per sequence. The loss of that pass within one pass's bound.
TEST(Equivalence, MicroBatchGradientsMatchSerialTensorByTensor) {
  TrainerRun serial(test_config({}), MPI_COMM_SELF);
  serial.trainer.run_iteration(0);
  const double serial_loss = serial.trainer.compute_gradients(1);
  const auto grids = grids_for(world_size());
  double worst = 0;
  for (std::size_t g = 0; g < std::min<std::size_t>(grids.size(), on_gpu() ? 1 : 3); ++g) {
    const Case c{grids[g], g % 2 ? "none" : "oar,ors,oag", g == 1, g != 2, 4, false, 1};
    if (local_sequences(c.grid) < 2) continue;
    TrainerRun run(test_config(c), MPI_COMM_WORLD);
    load_weights(serial, run);
    EXPECT_NEAR(run.trainer.compute_gradients(1), serial_loss,
                loss_tolerance(serial.cfg, 0) * serial_loss)
        << c.str();
    worst = std::max(worst, expect_gradients_equal_serial(serial, run, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("micro-batch gradients: largest deviation from 1 rank: %.4f of its tolerance\n",
                worst);
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
    worst =
        std::max(worst, expect_losses_match(cfg, c.hidden == 50 ? uneven_ref : ref, got, c.str()));
  }
  EXPECT_GT(uneven, 0) << "no case with uneven chunks";
  EXPECT_GT(micro, 0) << "no case with micro-steps";
  if (ovb::testing::launch().rank == 0)
    std::printf(
        "sharded gradients: %zu cases (%d uneven, %d with micro-steps), largest loss deviation "
        "from 1 rank: %.3f of its tolerance\n",
        cases.size(), uneven, micro, worst);
}

// The rank's gradient chunks themselves from the serial run's weights after 3 steps, with and
// without micro-batches and ORS: each data rank's chunk of every tensor equals the serial
// gradient (global_tensor assembles them from the shards).
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
    load_weights(serial, run);
    run.trainer.compute_gradients(steps);
    expect_gradients_equal_serial(serial, run, c.str());
  }
}

// Overlap tp on every grid (the AxoNN flag subsets, recompute and weight caching in turn; 2, 4
// and 16 row slices - 16 is one token per slice where a rank holds 16), and on the Llama model's
// first grid: the losses of the same case without tp, and the gradients from the same weights,
// within the bounds above (two runs of the same computation in any summation order). Row slices
// change no dot product: the GEMMs compute every element alike; what may differ is the order in
// which an all-reduce of 4 or 8 ranks adds a chunk against the whole (MPI picks its algorithm by
// message size). The test prints how many losses and gradient elements came out bit-identical.
TEST(Equivalence, TpChunksKeepTheLossesAndGradients) {
  const auto grids = grids_for(world_size());
  const auto& subsets = overlap_subsets();
  static const int chunks[] = {2, 4, 16};
  std::vector<Case> cases;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    if (on_gpu() && g >= 2) break;
    cases.push_back({grids[g], subsets[(g * 3) % subsets.size()], g % 2 == 1, g % 3 != 2});
  }
  cases.push_back({grids[0], "oar,ors,oag", true, false, kDefaultOrsWindow, true});  // Llama
  double worst_loss = 0, worst_grad = 0;
  int losses_compared = 0, losses_equal = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& base = cases[i];
    const Case tp = with_tp(base, chunks[i % 3]);
    const std::vector<double> ref = losses(test_config(base), MPI_COMM_WORLD);
    const std::vector<double> got = losses(test_config(tp), MPI_COMM_WORLD);
    worst_loss = std::max(worst_loss, expect_losses_match(test_config(tp), ref, got, tp.str()));
    int differ = 0;
    for (std::size_t it = 0; it < std::min(ref.size(), got.size()); ++it) {
      ++losses_compared;
      differ += got[it] == ref[it] ? 0 : 1;
    }
    losses_equal += static_cast<int>(std::min(ref.size(), got.size())) - differ;
    if (differ > 0 && ovb::testing::launch().rank == 0)
      std::printf("tp: %s: %d losses differ from the run without tp in the last bits\n",
                  tp.str().c_str(), differ);
    if (i >= 4) continue;  // gradients on the first four grids
    TrainerRun a(test_config(base), MPI_COMM_WORLD), b(test_config(tp), MPI_COMM_WORLD);
    a.trainer.run_iteration(0);
    load_weights(a, b);
    a.trainer.compute_gradients(1);
    b.trainer.compute_gradients(1);
    worst_grad = std::max(worst_grad, expect_gradients_equal_serial(a, b, tp.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf(
        "tp: %zu cases, %d of %d losses bit-identical to the run without tp, largest loss "
        "deviation %.3f of its tolerance, largest gradient deviation %.4f of its tolerance\n",
        cases.size(), losses_equal, losses_compared, worst_loss, worst_grad);
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
    worst = std::max(worst, expect_losses_match(test_config(c), ref, got, c.str()));
  }
  if (ovb::testing::launch().rank == 0)
    std::printf("Llama: largest loss deviation from 1 rank: %.3f of its tolerance\n", worst);
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
