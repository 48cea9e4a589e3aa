// A GEMM cut into chunks as the model costs it, and the measured chunked GEMMs it is checked
// against (ovb-overlap's decomposition scenario). C[m, n] is cut into `chunks` equal pieces along
// m (rows) or n (columns); each piece is a GEMM of its own shape priced by gemm_term (table,
// interpolation or the quantized peak, plus the kernel overhead), so the decomposition loss the
// model predicts, sum of chunks - whole, comes from the smaller GEMMs' rates and the launches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ovb/model/compute_cost.hpp"

namespace ovb::model {

struct ChunkedGemm {
  GemmTerm whole, chunk;  // chunk: one piece's shape and time
  int chunks = 1;
  char split = 'm';
  double chunks_us = 0;  // chunks x the piece's time
  double loss_us = 0;    // chunks_us - whole.time_us
};
// A UsageError when chunks < 1, split is not 'm' or 'n', or chunks does not divide the dimension.
ChunkedGemm chunked_gemm(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::string_view dtype, int chunks, char split);

// One point of an ovb-overlap decomposition result: the GEMM, its chunking, and what was
// measured (t_compute_whole_us: the whole GEMM alone; t_compute_us: the chunk GEMMs back to back).
struct MeasuredChunks {
  std::int64_t m = 0, n = 0, k = 0;
  int chunks = 1;
  char split = 'm';
  std::string dtype, coll;
  double whole_us = 0, chunks_us = 0;
};
// The decomposition points of an ovb-overlap result file (read as calibration reads its files:
// gbench.hpp), and the ranks that shared the device in that run (ranks_per_device_of; 1 for a
// one-rank run). A UsageError naming the file when it has none.
struct MeasuredDecomposition {
  std::vector<MeasuredChunks> points;
  int ranks_per_device = 1;
};
MeasuredDecomposition read_decomposition(const std::string& path);

}  // namespace ovb::model
