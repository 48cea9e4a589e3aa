// Options of the MPI GoogleTest main (mpi_test_main.cpp), read from the arguments GoogleTest
// leaves: --backend=NAME --grid=GXxGYxGZxGD --ranks-per-gpu=N.
#pragma once

#include <string>

#include "ovb/launch.hpp"

namespace ovb::testing {

struct Options {
  std::string backend = "host";
  std::string grid = "1x1x1x1";
  int ranks_per_gpu = 0;
};

const Options& options();
const LaunchContext& launch();

}  // namespace ovb::testing
