// launcher_world_size: the processes a launcher says it started, read from its environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "ovb/launch.hpp"

namespace {

// Sets the launcher variables for one check and puts back what was there (this binary may itself
// run under mpirun).
class LauncherEnv {
 public:
  LauncherEnv() {
    for (const char* n : kNames) {
      const char* v = std::getenv(n);
      saved_[n] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(n);
    }
  }
  ~LauncherEnv() {
    for (const auto& [n, v] : saved_) {
      if (v)
        setenv(n.c_str(), v->c_str(), 1);
      else
        unsetenv(n.c_str());
    }
  }
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                           "SLURM_PROCID", "SLURM_NTASKS"};

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(Launch, LauncherWorldSizeFromTheEnvironment) {
  LauncherEnv env;
  EXPECT_EQ(ovb::launcher_world_size(), 1);  // started by hand
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(ovb::launcher_world_size(), 4);
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  setenv("PMI_SIZE", "8", 1);
  EXPECT_EQ(ovb::launcher_world_size(), 8);
  unsetenv("PMI_SIZE");
  setenv("PMIX_SIZE", "2", 1);
  EXPECT_EQ(ovb::launcher_world_size(), 2);
  unsetenv("PMIX_SIZE");
  // SLURM_NTASKS alone is an allocation, not a launch: it counts with a task id (srun).
  setenv("SLURM_NTASKS", "16", 1);
  EXPECT_EQ(ovb::launcher_world_size(), 1);
  setenv("SLURM_PROCID", "3", 1);
  EXPECT_EQ(ovb::launcher_world_size(), 16);
  // Values that are not a positive count say nothing.
  for (const char* bad : {"", "4x", "-2", "0", "many"}) {
    setenv("SLURM_NTASKS", bad, 1);
    EXPECT_EQ(ovb::launcher_world_size(), 1) << "SLURM_NTASKS='" << bad << "'";
  }
}

}  // namespace
