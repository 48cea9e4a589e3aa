// GPU selection and the opt-in for several ranks per GPU (no GPU needed).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ovb/device_plan.hpp"
#include "ovb/error.hpp"

static ovb::EnvLookup env_of(std::map<std::string, std::string> m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

static ovb::LaunchContext ctx(int rank, int local_rank, int local_size) {
  ovb::LaunchContext c;
  c.rank = rank;
  c.world = local_size;
  c.local_rank = local_rank;
  c.local_size = local_size;
  c.host = "node7";
  return c;
}

TEST(DevicePlan, OneRankPerGpuUsesLocalRank) {
  const auto p = ovb::plan_device(ctx(13, 5, 8), 8, 0, env_of({}));
  EXPECT_EQ(p.device, 5);
  EXPECT_FALSE(p.oversubscribed);
  EXPECT_TRUE(p.env_to_set.empty());
  EXPECT_TRUE(p.warning.empty());
}

TEST(DevicePlan, OversubscribedWithoutOptInIsAnErrorSayingHow) {
  try {
    ovb::plan_device(ctx(3, 3, 4), 1, 0, env_of({}));
    FAIL() << "expected an error";
  } catch (const ovb::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("4 ranks on node7 but only 1 GPU(s) visible"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--ranks-per-gpu 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("OVB_RANKS_PER_GPU=4"), std::string::npos) << msg;
  }
}

TEST(DevicePlan, RanksBoundToGpusOfTheirOwnAreNotOversubscribed) {
  // srun --gpus-per-task=1 --gpu-bind=closest: 4 ranks, each sees 1 GPU, all different.
  const std::vector<std::string> ids = {"GPU-a", "GPU-b", "GPU-c", "GPU-d"};
  const auto p = ovb::plan_device(ctx(6, 2, 4), 1, 0, env_of({}), ids);
  EXPECT_EQ(p.device, 0);
  EXPECT_FALSE(p.oversubscribed);
  EXPECT_EQ(p.ranks_per_gpu, 1);
  EXPECT_TRUE(p.env_to_set.empty());
  EXPECT_TRUE(p.warning.empty());
}

TEST(DevicePlan, RanksThatShareAGpuCountByIdentity) {
  // 4 ranks, 1 visible GPU each, but two pairs land on the same physical GPU: 2 per GPU.
  const std::vector<std::string> ids = {"GPU-a", "GPU-a", "GPU-b", "GPU-b"};
  try {
    ovb::plan_device(ctx(1, 1, 4), 1, 0, env_of({}), ids);
    FAIL() << "expected an error";
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--ranks-per-gpu 2"), std::string::npos) << e.what();
  }
  const auto p = ovb::plan_device(ctx(1, 1, 4), 1, 2, env_of({}), ids);
  EXPECT_TRUE(p.oversubscribed);
  EXPECT_EQ(p.ranks_per_gpu, 2);
  // A list that does not cover every local rank is ignored: the count rule applies.
  EXPECT_THROW(ovb::plan_device(ctx(1, 1, 4), 1, 0, env_of({}), {"GPU-a", "GPU-b"}),
               ovb::UsageError);
}

TEST(DevicePlan, OptInTooSmallIsRejected) {
  EXPECT_THROW(ovb::plan_device(ctx(0, 0, 8), 2, 2, env_of({})), ovb::UsageError);  // needs 4
}

TEST(DevicePlan, OptInSetsHostIdAndLoopbackAndWarns) {
  const auto p = ovb::plan_device(ctx(6, 2, 4), 1, 4, env_of({}));
  EXPECT_EQ(p.device, 0);
  EXPECT_TRUE(p.oversubscribed);
  EXPECT_EQ(p.ranks_per_gpu, 4);
  ASSERT_EQ(p.env_to_set.size(), 2u);
  EXPECT_EQ(p.env_to_set[0], (std::pair<std::string, std::string>{"NCCL_HOSTID", "node7-r6"}));
  EXPECT_EQ(p.env_to_set[1], (std::pair<std::string, std::string>{"NCCL_SOCKET_IFNAME", "lo"}));
  EXPECT_NE(p.warning.find("emulated"), std::string::npos);
}

TEST(DevicePlan, OptInFromEnvironmentAndUserSettingsKept) {
  const auto p = ovb::plan_device(ctx(1, 1, 2), 1, 0,
                                  env_of({{"OVB_RANKS_PER_GPU", "2"}, {"NCCL_SOCKET_IFNAME", "eth0"}}));
  EXPECT_TRUE(p.oversubscribed);
  ASSERT_EQ(p.env_to_set.size(), 1u);  // the user's NCCL_SOCKET_IFNAME is not overridden
  EXPECT_EQ(p.env_to_set[0].first, "NCCL_HOSTID");
  EXPECT_THROW(ovb::plan_device(ctx(1, 1, 2), 1, 0, env_of({{"OVB_RANKS_PER_GPU", "two"}})),
               ovb::UsageError);
}

TEST(DevicePlan, SeveralGpusSharedRoundRobin) {
  const auto p = ovb::plan_device(ctx(5, 5, 8), 2, 4, env_of({}));
  EXPECT_EQ(p.device, 1);
  EXPECT_EQ(p.ranks_per_gpu, 4);
}

TEST(DevicePlan, NoGpuIsAnError) {
  EXPECT_THROW(ovb::plan_device(ctx(0, 0, 1), 0, 0, env_of({})), ovb::UsageError);
}
