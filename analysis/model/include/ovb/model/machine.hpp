// The machine description of the performance model: node shape, device compute and memory, GEMM
// efficiency data, communication parameters per collective kind and placement, and the
// interference of overlapped compute and communication. Read from / written to the JSON format of
// docs/model-machines.md ("Machine file"); presets live in analysis/machines/.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/mem_class.hpp"

namespace ovb::model {

// Bandwidth of a group that fits in one node, for a group size p (and a stride ip, 0 = any).
struct IntraEntry {
  int p = 0;
  int ip = 0;
  double gbps = 0;       // "bus" bandwidth: bytes moved by the ring per rank / time
  double alpha_us = -1;  // latency of one collective of this group; < 0: alpha_us_per_gpu * p
};

// Node bandwidth shared by the groups that cross the node boundary, for a group size p (and a
// stride ip, 0 = any): a crossing group gets node_gbps / min(ip, ranks_per_node).
struct InterEntry {
  int p = 0;
  int ip = 0;
  double node_gbps = 0;
  double alpha_us = -1;
};

// Latency of one NCCL algorithm, as NCCL's own tuning model (src/graph/tuning.cc) states it: a
// base latency plus one hop latency per pipeline step, NVLink hops inside a node and network hops
// between nodes (docs/model-costs.md, "Latency").
struct AlgoLatency {
  double base_us = 0;
  double intra_hop_us = 0;
  double inter_hop_us = 0;
};

// NCCL's algorithms: the ring for every kind; the (double binary) tree for all-reduce only, at
// `tree_bw_factor` of the ring's bus bandwidth (NCCL: busBw * 0.92 for trees).
struct LatencyModel {
  AlgoLatency ring;
  std::optional<AlgoLatency> tree;
  double tree_bw_factor = 0.92;
};

// Communication parameters of one collective kind (or the defaults every kind falls back to).
struct CommParams {
  std::optional<LatencyModel> latency;  // NCCL-like latency; absent: alpha_us_per_gpu * p
  std::optional<double> alpha_us_per_gpu;
  std::vector<IntraEntry> intra;
  std::optional<double> inter_node_gbps;
  std::vector<InterEntry> inter;
};

// One measured GEMM: C[m,n] += A[m,k] B[k,n] at `tflops`.
struct GemmPoint {
  std::int64_t m = 0, n = 0, k = 0;
  double tflops = 0;
  std::string dtype;  // "bf16", "fp32", ...; empty = any
};

// One measured wait of a blocking collective after compute (metrics::blocking_wait): after
// compute_us of compute on every rank, the collective waited wait_us beyond its own cost.
struct BlockingWaitPoint {
  double compute_us = 0;
  double wait_us = 0;
};

struct Machine {
  std::string name, description;
  std::string origin;  // the file it was read from (for messages)

  int gpus_per_node = 0;
  int ranks_per_device = 1;  // ranks sharing one device's compute and memory bandwidth

  // Device.
  std::string gpu_name;
  std::optional<double> peak_tflops;  // when absent: ovb::metrics::peak_tflops(gpu_name, precision)
  std::string precision = "bf16";
  double memory_bytes = 0;
  double memory_usable_fraction = 0.9;  // of memory_bytes, for the fit check
  double memory_bandwidth_gbps = 0;
  double memory_efficiency = 0.8;     // achieved fraction of memory_bandwidth_gbps
  // Measured efficiency per memory-bound kernel class (ovb-membw, calibrate --mem); a class not
  // listed takes memory_efficiency.
  std::map<MemClass, double> memory_efficiency_by_class;
  double gemm_efficiency = 0;         // fraction of peak when the GEMM table has no data
  // The most any GEMM reaches on training data, as a fraction of peak: the best shape of a sweep
  // timed on random inputs. Every rate (table, interpolated, quantized) is capped at it: a table
  // measured on low-switching inputs (ovb-gemm's exact -1/0/1) runs above what a power-capped
  // device sustains on real data. 0: no ceiling.
  double gemm_max_efficiency = 0;
  // A GEMM's rate inside a training step over the rate gemm_table and gemm_efficiency give for
  // its shape: they were measured the way ovb-gemm measures (each shape alone, back to back, the
  // fastest of its autotuned algorithms, exact inputs by default); a trainer runs the GEMM
  // library's heuristic choice on training data in a GPU drawing training's power. Every rate
  // below the ceiling is multiplied by it; 1: the table is already training's.
  double gemm_training_factor = 1;
  double attention_efficiency = 1.0;  // attention throughput relative to GEMMs of its shapes
  // Without flash attention: the batched GEMMs of the unfused products (Megatron's baddbmm and
  // bmm) relative to GEMMs of their shapes; 0: as attention_efficiency.
  double unfused_attention_efficiency = 0;
  double kernel_overhead_us = 0;      // fixed cost per kernel (launch, tail)
  bool flash_attention = true;        // false: the s x s scores go through memory
  // The efficiency attention's products run at: the fused kernel's, or the unfused GEMMs'.
  double attention_products_efficiency() const {
    return !flash_attention && unfused_attention_efficiency > 0 ? unfused_attention_efficiency
                                                                 : attention_efficiency;
  }
  // The 4D trainer's linears fuse their bias, GELU and GELU's backward into the GEMM (gpt4d on
  // CUDA: cuBLASLt epilogues); false: each is a pass over the GEMM's output (gpt4d on the host).
  bool fused_epilogues = false;
  // Wave and tile quantization of a GEMM costed at peak x gemm_efficiency (no table entry): the
  // device's streaming multiprocessors and the output tiles (rows x columns of C per thread
  // block) its GEMM library chooses among; either empty: no quantization.
  int sms = 0;
  std::vector<std::array<int, 2>> gemm_tiles;

  std::vector<GemmPoint> gemm_table;

  CommParams comm_default;
  std::array<std::optional<CommParams>, 3> comm_kind;  // indexed by CollKind

  double compute_slowdown = 0;  // t_c'/t_c - 1 under overlap (metrics.md)
  double comm_slowdown = 0;     // t_m'/t_m - 1 under overlap
  // Host backend: what a blocking collective right after compute waits, beyond its own cost, for
  // partner ranks still computing or descheduled on shared cores, by the compute time before it
  // (metrics::blocking_wait, from ovb-overlap's blocking_wait scenario; calibrate_blocking_wait),
  // sorted by compute_us. Empty where nothing measured it (GPU machines: ranks do not share a
  // core): no wait.
  std::vector<BlockingWaitPoint> blocking_wait;

  nlohmann::json sources;      // where each number comes from (kept as written)
  nlohmann::json calibration;  // fit report of ovb-model calibrate (kept as written)

  int ranks_per_node() const { return gpus_per_node * ranks_per_device; }
  // The achieved fraction of memory_bandwidth_gbps for kernels of class c: its measured
  // efficiency when the file has one, else memory_efficiency.
  double memory_efficiency_for(MemClass c) const;
  // The blocking wait after compute_us of compute: linear between (0, 0) and the measured points,
  // the last point's wait beyond it (a partner is late by at most a scheduler slice); 0 without
  // points.
  double blocking_wait_us(double compute_us) const;
  // Peak TFLOP/s of one device; throws UsageError "peak unknown" when neither given nor in the
  // table.
  double peak() const;
  // The GEMM ceiling in TFLOP/s (peak x gemm_max_efficiency); nullopt without one (the peak is
  // then never asked for, so a table on a device of unknown peak works).
  std::optional<double> gemm_ceiling_tflops() const;
};

// Parses a machine description; throws UsageError naming `origin` and the missing/bad field.
Machine machine_from_json(const nlohmann::json& j, const std::string& origin);
nlohmann::json machine_to_json(const Machine& m);

// Loads a machine file. `name_or_path` is a file path, or the name of a preset in the machines
// folder (OVB_MACHINES_DIR in the environment, else analysis/machines/ of the source tree).
Machine load_machine(const std::string& name_or_path);
std::string machines_dir();
std::vector<std::string> preset_machine_names();

}  // namespace ovb::model
