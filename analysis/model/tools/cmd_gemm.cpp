// ovb-model gemm: GEMMs as the model costs them (rate, its source, time), whole and cut into
// chunks; with --measured, against ovb-overlap's decomposition scenario point by point.
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <map>
#include <tuple>

#include "commands.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/gemm.hpp"
#include "ovb/io.hpp"
#include "ovb/model/gemm_chunks.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model::cli {

namespace {

class Gemm : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("--machine", machine_, "Machine file or preset (e.g. dgx-h100)")->required();
    sub.add_option("--shapes", shapes_, "GEMM shapes MxNxK, comma-separated")->delimiter(',');
    sub.add_option("--chunks", chunks_, "Chunk counts to cut each GEMM into (1: whole)")
        ->delimiter(',')
        ->check(ovb::positive())
        ->capture_default_str();
    sub.add_option("--split", split_, "Dimensions of C to cut: m (rows), n (columns)")
        ->delimiter(',')
        ->check(CLI::IsMember({"m", "n"}))
        ->capture_default_str();
    sub.add_option("--dtype", dtype_, "GEMM precision (the machine table's dtype)")
        ->capture_default_str();
    sub.add_option("--measured", measured_,
                   "ovb-overlap result with decomposition points: each point's shape, chunks and "
                   "split predicted and compared (replaces --shapes/--chunks/--split)");
    sub.add_option("--ranks-per-device", rpd_,
                   "Ranks sharing the device (default: the machine's; with --measured, the "
                   "file's, as calibrate reads it)")
        ->check(ovb::positive());
    sub.add_option("--json", json_, "Write every row as JSON");
  }

  int run(const LaunchContext& ctx) override {
    Machine mc = load_machine(machine_);
    if (measured_.empty() && shapes_.empty())
      throw UsageError("ovb-model gemm: give --shapes or --measured");
    if (!measured_.empty() && !shapes_.empty())
      throw UsageError("ovb-model gemm: --measured names its own shapes; drop --shapes");
    nlohmann::json rows = nlohmann::json::array();
    if (measured_.empty()) {
      if (rpd_) mc.ranks_per_device = rpd_;
      TextTable t({"shape", "chunks", "split", "TFLOP/s", "source", "time us", "chunks us",
                   "loss us", "loss %"});
      for (const std::string& s : shapes_) {
        const GemmShape g = parse_gemm_shape(s);
        for (int c : chunks_)
          for (const std::string& sp : split_) {
            if (c == 1 && sp != split_.front()) continue;  // one whole GEMM
            const ChunkedGemm r = chunked_gemm(mc, g.m, g.n, g.k, dtype_, c, sp[0]);
            t.row({s, std::to_string(c), sp, fmt(r.chunk.tflops, 1),
                   std::string(name_of(r.chunk.source)), fmt(r.chunk.time_us, 1),
                   fmt(r.chunks_us, 1), fmt(r.loss_us, 1),
                   fmt(100 * r.loss_us / r.whole.time_us, 1)});
            rows.push_back(row_json(s, r));
          }
      }
      std::cout << "model " << mc.name << ", " << dtype_ << ", " << mc.ranks_per_device
                << " rank(s) per device\n"
                << t.str();
    } else {
      const MeasuredDecomposition measured = read_decomposition(measured_);
      const std::vector<MeasuredChunks>& pts = measured.points;
      mc.ranks_per_device = rpd_ ? rpd_ : measured.ranks_per_device;
      // The points are a microbenchmark's GEMMs, timed alone and back to back as the GEMM table
      // was: compared at the table's rates, not at training's (gpu.gemm_training_factor).
      const double training_factor = mc.gemm_training_factor;
      mc.gemm_training_factor = 1;
      // Points of several collectives share a GEMM: one row per shape, chunks, split (the mean
      // of the points' measurements).
      std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int, char, std::string>,
               std::vector<const MeasuredChunks*>>
          by;
      for (const MeasuredChunks& p : pts) by[{p.m, p.n, p.k, p.chunks, p.split, p.dtype}].push_back(&p);
      TextTable t({"shape", "chunks", "split", "points", "meas whole us", "meas chunks us",
                   "meas loss %", "pred whole us", "pred chunks us", "pred loss %", "chunks err %"});
      double abs_err = 0;
      for (const auto& [key, v] : by) {
        const auto& [m, n, k, c, sp, dt] = key;
        double whole = 0, chunks = 0;
        for (const MeasuredChunks* p : v) {
          whole += p->whole_us / v.size();
          chunks += p->chunks_us / v.size();
        }
        const ChunkedGemm r = chunked_gemm(mc, m, n, k, dt.empty() ? dtype_ : dt, c, sp);
        const std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        const double err = 100 * (r.chunks_us - chunks) / chunks;
        abs_err += std::fabs(err) / by.size();
        t.row({s, std::to_string(c), std::string(1, sp), std::to_string(v.size()), fmt(whole, 1),
               fmt(chunks, 1), fmt(100 * (chunks - whole) / whole, 1), fmt(r.whole.time_us, 1),
               fmt(r.chunks_us, 1), fmt(100 * r.loss_us / r.whole.time_us, 1), fmt(err, 1)});
        nlohmann::json j = row_json(s, r);
        j["measured"] = {{"points", v.size()}, {"whole_us", whole}, {"chunks_us", chunks}};
        rows.push_back(j);
      }
      std::cout << "model " << mc.name << " vs " << measured_ << " (" << mc.ranks_per_device
                << " rank(s) per device"
                << (training_factor != 1 ? "; at the table's rates, without the machine's "
                                           "training factor of " + fmt(training_factor, 3)
                                         : std::string())
                << ")\n"
                << t.str() << "mean |error| of the chunk GEMMs' time: " << fmt(abs_err, 1)
                << " % over " << by.size() << " rows\n";
    }
    if (!json_.empty()) {
      nlohmann::json j = {{"machine", mc.name}, {"dtype", dtype_}, {"rows", rows}};
      j["context"] = run_context(nullptr, ctx);
      write_json(json_, j);
      std::cout << "wrote " << json_ << "\n";
    }
    return 0;
  }

 private:
  static nlohmann::json row_json(const std::string& shape, const ChunkedGemm& r) {
    return {{"shape", shape},
            {"chunks", r.chunks},
            {"split", std::string(1, r.split)},
            {"whole_us", r.whole.time_us},
            {"chunk_tflops", r.chunk.tflops},
            {"chunk_source", std::string(name_of(r.chunk.source))},
            {"chunks_us", r.chunks_us},
            {"loss_us", r.loss_us}};
  }

  std::string machine_, dtype_ = "bf16", measured_, json_;
  std::vector<std::string> shapes_, split_{"m"};
  std::vector<int> chunks_{1, 2, 4, 8};
  int rpd_ = 0;
};

}  // namespace

std::unique_ptr<Command> make_gemm() {
  return std::make_unique<Gemm>();
}

}  // namespace ovb::model::cli
