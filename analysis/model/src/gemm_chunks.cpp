// A GEMM cut into chunks as the model costs it; the measured decomposition points (gemm_chunks.hpp).
#include "ovb/model/gemm_chunks.hpp"

#include <nlohmann/json.hpp>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/gbench.hpp"

namespace ovb::model {

ChunkedGemm chunked_gemm(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::string_view dtype, int chunks, char split) {
  if (chunks < 1) throw UsageError("chunk count " + std::to_string(chunks) + ": must be >= 1");
  if (split != 'm' && split != 'n')
    throw UsageError(std::string("split '") + split + "': expected m or n");
  const std::int64_t dim = split == 'm' ? m : n;
  if (dim % chunks != 0)
    throw UsageError(std::to_string(chunks) + " chunks do not divide " + split + " = " +
                     std::to_string(dim));
  ChunkedGemm c;
  c.chunks = chunks;
  c.split = split;
  c.whole = gemm_term(mc, m, n, k, dtype);
  c.chunk = split == 'm' ? gemm_term(mc, m / chunks, n, k, dtype)
                         : gemm_term(mc, m, n / chunks, k, dtype);
  c.chunks_us = chunks * c.chunk.time_us;
  c.loss_us = c.chunks_us - c.whole.time_us;
  return c;
}

MeasuredDecomposition read_decomposition(const std::string& path) {
  const nlohmann::json doc = read_gbench(path);
  MeasuredDecomposition d;
  // As calibration reads a run that shared the device (ovb-gemm's table).
  if (doc.value("context", nlohmann::json::object()).value("world_size", 1) > 1)
    d.ranks_per_device = ranks_per_device_of(doc["context"]);
  for (const BenchRow& r : benchmark_rows(doc, "overlap/", path)) {
    if (overlap_scenario(r) != metrics::kDecompositionScenario) continue;
    MeasuredChunks p;
    p.m = static_cast<std::int64_t>(r.number("m"));
    p.n = static_cast<std::int64_t>(r.number("n"));
    p.k = static_cast<std::int64_t>(r.number("k"));
    p.chunks = static_cast<int>(r.number("chunks"));
    p.split = r.tag("split") == "n" ? 'n' : 'm';
    p.dtype = r.tag("dtype");
    p.coll = r.tag("coll");
    p.whole_us = r.number("t_compute_whole_us");
    p.chunks_us = r.number("t_compute_us");
    d.points.push_back(p);
  }
  if (d.points.empty())
    throw UsageError(path + ": no decomposition point (ovb-overlap --scenarios decomposition)");
  return d;
}

}  // namespace ovb::model
