// The suite's metric formulas (see ovb/metrics.hpp and docs/metrics.md).
#include "ovb/metrics.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace ovb::metrics {

double collective_bytes(CollKind k, std::size_t count_per_rank, int n, std::size_t elem_size) {
  const double per_rank = static_cast<double>(count_per_rank) * static_cast<double>(elem_size);
  return k == CollKind::all_reduce ? per_rank : per_rank * n;
}

double bus_factor(CollKind k, int n) {
  const double dn = n;
  return k == CollKind::all_reduce ? 2.0 * (dn - 1) / dn : (dn - 1) / dn;
}

double algbw_gbps(double bytes, double seconds) { return bytes / seconds / 1e9; }

double busbw_gbps(CollKind k, int n, double bytes, double seconds) {
  return algbw_gbps(bytes, seconds) * bus_factor(k, n);
}

double gemm_flop(double m, double n, double k) { return 2.0 * m * n * k; }

double tflops(double flop, double seconds) { return flop / seconds / 1e12; }

namespace {
struct PeakRow {
  const char* name_part;  // matched as a substring of the device name, first row wins
  double fp8, bf16, fp16, tf32, fp32;  // dense TFLOP/s; 0 = not supported / unknown
};
// Dense (no sparsity) vendor peaks per device.
constexpr PeakRow kPeaks[] = {
    {"H100 PCIe", 1513, 756, 756, 378, 51},
    {"H100", 1979, 989, 989, 494, 67},   // SXM
    {"H200", 1979, 989, 989, 494, 67},
    {"GH200", 1979, 989, 989, 494, 67},
    {"A100", 0, 312, 312, 156, 19.5},
    {"MI250X", 0, 191.5, 191.5, 0, 47.9},  // per GCD; a module (2 GCDs) is 383
};
}  // namespace

std::optional<double> peak_tflops(std::string_view device_name, std::string_view precision) {
  for (const PeakRow& row : kPeaks) {
    if (device_name.find(row.name_part) == std::string_view::npos) continue;
    double v = 0;
    if (precision == "fp8") v = row.fp8;
    else if (precision == "bf16") v = row.bf16;
    else if (precision == "fp16") v = row.fp16;
    else if (precision == "tf32") v = row.tf32;
    else if (precision == "fp32") v = row.fp32;
    if (v > 0) return v;
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {
struct BandwidthRow {
  const char* name_part;  // matched as a substring of the device name, first row wins
  double gbps;
};
// Vendor datasheets (the machine files cite the same numbers).
constexpr BandwidthRow kBandwidths[] = {
    {"GH200", 4000}, {"H200", 4800},    {"H100 PCIe", 2000}, {"H100", 3350},
    {"A100 80GB", 2039}, {"A100-SXM4-80GB", 2039}, {"A100", 1555}, {"MI250X", 1638},
};
}  // namespace

std::optional<double> peak_memory_gbps(std::string_view device_name) {
  for (const BandwidthRow& row : kBandwidths)
    if (device_name.find(row.name_part) != std::string_view::npos) return row.gbps;
  return std::nullopt;
}

double percent_of_peak(double achieved_tflops, double peak) { return 100.0 * achieved_tflops / peak; }

OverlapMetrics overlap_metrics(const OverlapTimes& t) {
  OverlapMetrics m{};
  m.ideal = std::max(t.t_compute, t.t_comm);
  m.serial = t.t_compute + t.t_comm;
  m.speedup_vs_serial = m.serial / t.t_overlap;
  m.overlap_efficiency = (m.serial - t.t_overlap) / std::min(t.t_compute, t.t_comm);
  m.fraction_of_ideal = fraction_of_ideal(m.serial, m.ideal, t.t_overlap);
  m.compute_slowdown = t.t_compute_under / t.t_compute - 1.0;
  m.comm_slowdown = t.t_comm_under / t.t_comm - 1.0;
  m.exposed_comm = t.t_overlap - t.t_compute_under;
  return m;
}

double fraction_of_ideal(double serial, double ideal, double t_overlap) {
  const double ideal_gain = serial / ideal - 1.0;
  return ideal_gain > 0 ? (serial / t_overlap - 1.0) / ideal_gain
                        : std::numeric_limits<double>::quiet_NaN();
}

double blocking_wait(double t_sequence, double t_compute, double t_comm) {
  return t_sequence - t_compute - t_comm;
}

double decomposition_loss(double t_compute_chunks, double t_compute_whole) {
  return t_compute_chunks - t_compute_whole;
}

double pipeline_fraction_of_ideal(double t_compute_whole, double t_comm_whole, double t_overlap) {
  return fraction_of_ideal(t_compute_whole + t_comm_whole, std::max(t_compute_whole, t_comm_whole),
                           t_overlap);
}

double gpt_model_flop(double batch, double seq, double layers, double hidden, double vocab) {
  return 72.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (12.0 * hidden) + vocab / (12.0 * layers * hidden));
}

double transformer_model_flop(double batch, double seq, double layers, double hidden, double vocab,
                              double block_linear_params) {
  return 6.0 * batch * seq * (layers * block_linear_params + hidden * vocab) +
         6.0 * batch * seq * seq * layers * hidden;
}

double gpt_hardware_flop(double model_flop, bool full_recompute) {
  return full_recompute ? model_flop * 4.0 / 3.0 : model_flop;
}

double narayanan_flop(double batch, double seq, double layers, double hidden, double vocab) {
  return 96.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

double gpt_selective_recompute_flop(double batch, double seq, double layers, double hidden) {
  return 2.0 * batch * seq * seq * layers * hidden;
}

double tflops_per_gpu(double flop, double seconds, int n_gpus) {
  return flop / seconds / n_gpus / 1e12;
}

double mfu(double tflops_per_gpu_value, double peak) { return tflops_per_gpu_value / peak; }

double tokens_per_s(double batch, double seq, double seconds) { return batch * seq / seconds; }

}  // namespace ovb::metrics
