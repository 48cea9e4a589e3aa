// A GEMM cut into chunks as the model costs it; the measured decomposition points (gemm_chunks.hpp).
#include "ovb/model/gemm_chunks.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"

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

std::vector<MeasuredChunks> read_decomposition(const nlohmann::json& doc, const std::string& what) {
  std::vector<MeasuredChunks> out;
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw UsageError(what + ": not a Google Benchmark result (no benchmarks array)");
  for (const nlohmann::json& b : doc["benchmarks"]) {
    if (b.value("error_occurred", false) || b.value("run_type", "iteration") != "iteration")
      continue;
    // The label's words: "coll=all_reduce ... dtype=bf16 ... scenario=decomposition chunks=2 split=m"
    std::istringstream words(b.value("label", ""));
    std::string w, scenario, split, dtype, coll;
    while (words >> w) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = w.substr(0, eq), v = w.substr(eq + 1);
      if (key == "scenario") scenario = v;
      else if (key == "split") split = v;
      else if (key == "dtype") dtype = v;
      else if (key == "coll") coll = v;
    }
    if (scenario != metrics::kDecompositionScenario) continue;
    for (const char* c : {"m", "n", "k", "chunks", "t_compute_us", "t_compute_whole_us"})
      if (!b.contains(c))
        throw UsageError(what + ": decomposition point " + b.value("name", "?") + " has no " + c);
    MeasuredChunks p;
    p.m = static_cast<std::int64_t>(b["m"].get<double>());
    p.n = static_cast<std::int64_t>(b["n"].get<double>());
    p.k = static_cast<std::int64_t>(b["k"].get<double>());
    p.chunks = static_cast<int>(b["chunks"].get<double>());
    p.split = split == "n" ? 'n' : 'm';
    p.dtype = dtype;
    p.coll = coll;
    p.whole_us = b["t_compute_whole_us"].get<double>();
    p.chunks_us = b["t_compute_us"].get<double>();
    out.push_back(p);
  }
  if (out.empty()) throw UsageError(what + ": no decomposition point (ovb-overlap --scenarios decomposition)");
  return out;
}

}  // namespace ovb::model
