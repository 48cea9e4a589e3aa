// GoogleTest main for tests that may run under mpirun: initialises MPI, runs the tests on every
// rank, prints rank 0's report plus every other rank's failures, and exits non-zero when any rank
// failed (so one failing rank fails the test).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <iostream>
#include <string>

#include "ovb/test_main.hpp"

namespace ovb::testing {
namespace {
Options g_options;
LaunchContext g_launch;

// On ranks other than 0: print only failures, prefixed with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::cerr << "[rank " << rank_ << "] " << (r.file_name() ? r.file_name() : "?") << ':'
                << r.line_number() << ": " << r.summary() << std::endl;
  }

 private:
  int rank_;
};
}  // namespace

const Options& options() { return g_options; }
const LaunchContext& launch() { return g_launch; }

}  // namespace ovb::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  using ovb::testing::g_options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* key) -> const char* {
      const std::size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--backend=")) g_options.backend = v;
    else if (const char* v = value("--grid=")) g_options.grid = v;
    else if (const char* v = value("--ranks-per-gpu=")) g_options.ranks_per_gpu = std::stoi(v);
    else {
      std::cerr << "unknown test option '" << a << "'" << std::endl;
      return 2;
    }
  }
  ovb::MpiSession session(&argc, &argv);
  ovb::testing::g_launch = session.context();
  const int rank = session.context().rank;
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new ovb::testing::FailurePrinter(rank));
  }
  const int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !local_failed)
    std::cerr << "tests failed on another rank (see above)" << std::endl;
  return any_failed;
}
