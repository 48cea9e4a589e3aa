// Combining per-rank values over MPI_COMM_WORLD, so every rank sees the same numbers and takes the
// same decisions (Google Benchmark's iteration count, skips, the exit status).
#pragma once

#include <cstdint>

namespace ovb::mb {

double max_over_ranks(double v);
// In place, element-wise.
void max_over_ranks(double* v, int n);
double sum_over_ranks(double v);
std::int64_t sum_over_ranks(std::int64_t v);

// Per-rank value v combined into (mean, max) with one call.
struct MeanMax {
  double mean = 0, max = 0;
};
MeanMax mean_max_over_ranks(double v);

// Throws Error when the ranks disagree on v (e.g. an iteration count): a mismatch would otherwise
// make the ranks issue different collectives and hang.
void require_same_on_all_ranks(std::int64_t v, const char* what);

void barrier();

}  // namespace ovb::mb
