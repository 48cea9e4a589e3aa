// launcher_rank: rank and world size from the launcher's environment, read without MPI (the
// injected tracer names its files by it; run_main starts MPI only where it says world > 1).
#include <gtest/gtest.h>

#include "ovb/fake_env.hpp"
#include "ovb/launcher_env.hpp"

using Env = ovb::test::FakeEnv;

TEST(LauncherRank, FirstLauncherVariableWins) {
  using ovb::launcher_rank;
  Env e;
  EXPECT_EQ(launcher_rank(e.fn()).rank, 0);  // started by hand
  EXPECT_EQ(launcher_rank(e.fn()).world, 1);
  EXPECT_EQ(launcher_rank(e.fn()).source, "");
  // An allocation's task count alone is not a launch: it counts with a task id (srun).
  e.vars = {{"SLURM_NTASKS", "16"}};
  EXPECT_EQ(launcher_rank(e.fn()).world, 1);
  e.vars = {{"RANK", "3"}, {"WORLD_SIZE", "8"}};
  EXPECT_EQ(launcher_rank(e.fn()).rank, 3);
  EXPECT_EQ(launcher_rank(e.fn()).world, 8);
  e.vars["SLURM_PROCID"] = "5";
  e.vars["SLURM_NTASKS"] = "16";
  EXPECT_EQ(launcher_rank(e.fn()).rank, 5);
  EXPECT_EQ(launcher_rank(e.fn()).world, 16);
  EXPECT_EQ(launcher_rank(e.fn()).source, "SLURM_PROCID");
  e.vars["PMI_RANK"] = "6";
  EXPECT_EQ(launcher_rank(e.fn()).rank, 6);
  EXPECT_EQ(launcher_rank(e.fn()).world, 7);  // no PMI_SIZE: at least rank + 1
  e.vars["OMPI_COMM_WORLD_RANK"] = "bad";     // not a number: skipped
  EXPECT_EQ(launcher_rank(e.fn()).rank, 6);
  e.vars["OMPI_COMM_WORLD_RANK"] = "0";
  for (const char* bad : {"", "4x", "-2", "many"}) {  // a size that is not a count: rank + 1
    e.vars["OMPI_COMM_WORLD_SIZE"] = bad;
    EXPECT_EQ(launcher_rank(e.fn()).world, 1) << "OMPI_COMM_WORLD_SIZE='" << bad << "'";
  }
  e.vars = {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "6"}};
  EXPECT_EQ(launcher_rank(e.fn()).rank, 1);
  EXPECT_EQ(launcher_rank(e.fn()).world, 2);
}
