// Calibration: a machine description fitted to the suite's microbenchmark results.
//  - ovb-collective: per (kind, group size p, stride ip) series, least squares of
//      time_max_us = alpha + moved_bytes / bw,  moved = S * F(kind, p)   (comm_cost.hpp),
//    relative (weights 1/t^2, so that small sizes, which decide alpha, count as much as large
//    ones); a group inside a node (ip * p <= ranks per node) gives an "intra" entry (bw), one
//    across nodes an "inter" entry with node_gbps = bw * min(ip, ranks per node);
//  - ovb-gemm: the GEMM table (m, n, k, TFLOP/s of the device, dtype; a rate measured by ranks
//    that shared the device, times the ranks per device: ranks_per_device_of);
//  - ovb-overlap: the interference factors, mean compute_slowdown and comm_slowdown of one
//    scenario's rows (by default the GEMM + collective one, kDefaultOverlapScenario);
//  - ovb-overlap, scenario blocking_wait (host backend): the blocking_wait table, per GEMM shape
//    (mean t_compute_mean_us, mean wait_us, 0 when negative); untouched when the files have none;
//  - ovb-membw: per memory-bound kernel class (ovb/mem_class.hpp) the device GB/s (a rate measured
//    by ranks that shared the device, times the ranks per device) over memory_bandwidth_gbps,
//    which is the base file's, or with mem_bandwidth_from_copy the copy class's device GB/s.
// What no microbenchmark measures (memory size, the other efficiencies) comes from a base
// machine file. Fit quality (R^2, max relative error; for the GEMM table the leave-one-out
// interpolation error) is returned and stored in the machine's "calibration" object, with the
// placement each input was measured under ("measured_under": ranks, CPUs, ranks per device), which
// ovb-model compare checks against every run.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ovb/grid.hpp"
#include "ovb/metrics.hpp"  // kDefaultOverlapScenario
#include "ovb/model/comm_cost.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

struct CollectiveFile {
  std::string path;
  std::optional<GridShape> grid;  // the grid of the run when its groups are grid dimensions
};

struct CalibrateOptions {
  std::vector<CollectiveFile> collective;
  std::vector<std::string> gemm, overlap, mem;
  Machine base;                         // supplies what is not measured
  std::string name;                     // of the new machine (default: base name + "-calibrated")
  std::optional<int> gpus_per_node;     // default: context.local_size / ranks_per_gpu
  std::optional<int> ranks_per_device;  // default: ranks_per_device_of the collective run's context
  std::string overlap_filter;           // keep ovb-overlap rows whose label contains it
  // Keep ovb-overlap rows of this scenario only (a row without one: kDefaultOverlapScenario).
  std::string overlap_scenario = metrics::kDefaultOverlapScenario;
  bool mem_bandwidth_from_copy = false;  // memory_bandwidth_gbps := the copy class's device GB/s
};

// Ranks sharing one compute device in a run, from its result's context (results/SCHEMA.md): on a
// GPU `ranks_per_gpu`; on the host backend a device is one CPU core, which the OS time-slices
// among its ranks (one BLAS thread each): ceil(local_size / cpus). 1 when the context lacks them.
int ranks_per_device_of(const nlohmann::json& context);

// The placement a result was measured under, as calibration.measured_under and ovb-model compare
// record it: backend, host, world_size, local_size, cpus, ranks_per_device, blas_threads.
nlohmann::json placement_of(const nlohmann::json& context);

struct SeriesFit {
  CollKind kind = CollKind::all_reduce;
  int p = 0, ip = 0;
  Placement placement = Placement::intra;
  int points = 0;
  double alpha_us = 0, bw_gbps = 0;
  double node_gbps = 0;  // inter only: bw * min(ip, ranks per node)
  std::optional<double> r2;
  double max_rel_err = 0;
};

struct CollectivePoint {
  CollKind kind;
  int p, ip;
  double bytes;    // S
  double time_us;  // time_max_us
};

// The points of the collective files (kind, p, ip, S, time); throws UsageError for a row without
// the needed counters, a group whose stride cannot be known, or inconsistent busbw/algbw.
std::vector<CollectivePoint> read_collective_points(const CollectiveFile& f);
// Fits every (kind, p, ip) series; ranks_per_node decides intra/inter.
std::vector<SeriesFit> fit_collectives(const std::vector<CollectivePoint>& pts, int ranks_per_node);

// The rate of one memory-bound kernel class in ovb-membw results.
struct MemClassRate {
  MemClass c = MemClass::copy;
  std::string dtype;
  double size = 0;           // bytes of the main tensor
  double gbps_rank = 0;      // the file's gbps: bytes moved / time of one rank
  int ranks_per_device = 1;  // ranks_per_device_of the run (1 for a one-rank run)
  double gbps_device = 0;    // gbps_rank * ranks_per_device
  double efficiency = 0;     // gbps_device / memory_bandwidth_gbps (set by calibrate_memory)
  std::string file;
};

// One rate per class measured in the files: rows of dtype `precision` when there are any, and of
// those the largest size. Throws UsageError for a row whose label names no known class.
std::vector<MemClassRate> read_mem_rates(const std::vector<std::string>& files,
                                         const std::string& precision);

// Sets mc's memory bandwidth (bandwidth_from_copy), its per-class efficiencies, its default
// memory_efficiency (the median of the measured classes but copy) and their sources; returns the
// report ("memory" of the calibration). Throws UsageError when the files measure nothing.
nlohmann::json calibrate_memory(Machine& mc, const std::vector<std::string>& files,
                                bool bandwidth_from_copy);

// Sets mc.blocking_wait from the blocking_wait rows of ovb-overlap files (and its source);
// returns the report ("blocking_wait" of the calibration), null when the files have no such row.
nlohmann::json calibrate_blocking_wait(Machine& mc, const std::vector<std::string>& files);

struct Calibration {
  Machine machine;
  std::vector<SeriesFit> series;
  nlohmann::json report;  // also stored as machine.calibration
};

Calibration calibrate(const CalibrateOptions& opt);

}  // namespace ovb::model
