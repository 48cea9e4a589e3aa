// gpt4d's output: the per-iteration line on rank 0, and the JSON result (results/SCHEMA.md,
// "gpt4d result") with config, context, iterations and summary. Throughput from ovb::metrics:
// model FLOP per iteration F = GptShape::model_flop(B) (transformer_model_flop), hardware FLOP
// with recompute F*4/3, TFLOP/s per GPU over world / ranks_per_gpu devices, MFU against the
// device's dense peak.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "config.hpp"
#include "ovb/launch.hpp"
#include "train/trainer.hpp"

namespace ovb::gpt {

class Reporter {
 public:
  Reporter(const Config& cfg, const LaunchContext& ctx, Backend& backend, Trainer& trainer,
           MPI_Comm world);
  // Records one iteration (time: the slowest rank's) and prints its line on rank 0.
  void add(IterStats st);
  // The result document (collective: reduces the collective statistics over ranks).
  nlohmann::json finish();
  // The collectives of one iteration as JSON lines (for --dump-collectives and tests).
  static std::string collectives_jsonl(const std::vector<CollOp>& log);

 private:
  nlohmann::json config_json() const;
  double model_flop() const;

  const Config& cfg_;
  const LaunchContext& ctx_;
  Backend& backend_;
  Trainer& trainer_;
  MPI_Comm world_;
  int n_devices_;
  double peak_ = -1;  // TFLOP/s, < 0 when unknown
  std::vector<IterStats> iters_;
};

}  // namespace ovb::gpt
