// Rank reductions (see ranks.hpp).
#include "harness/ranks.hpp"

#include <mpi.h>

#include <string>

#include "ovb/error.hpp"

namespace ovb::mb {

double max_over_ranks(double v) {
  double out = 0;
  OVB_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

void max_over_ranks(double* v, int n) {
  OVB_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}

double sum_over_ranks(double v) {
  double out = 0;
  OVB_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return out;
}

std::int64_t sum_over_ranks(std::int64_t v) {
  std::int64_t out = 0;
  OVB_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return out;
}

MeanMax mean_max_over_ranks(double v) {
  // max(v) and max(-v) would give min, not the sum: use one MAX and one SUM reduction.
  int world = 1;
  OVB_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world));
  return {sum_over_ranks(v) / world, max_over_ranks(v)};
}

void require_same_on_all_ranks(std::int64_t v, const char* what) {
  std::int64_t in[2] = {v, -v}, out[2] = {0, 0};
  OVB_CHECK_MPI(MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  if (out[0] != -out[1])
    throw Error(std::string("ranks disagree on ") + what + " (" + std::to_string(-out[1]) + " to " +
                std::to_string(out[0]) + ")");
}

void barrier() {
  OVB_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

}  // namespace ovb::mb
