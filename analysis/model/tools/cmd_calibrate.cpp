// ovb-model calibrate: a machine description fitted to microbenchmark results.
#include <iostream>

#include "commands.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/io.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model::cli {

namespace {

class Calibrate : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("--base", base_,
                   "Machine file or preset supplying what no microbenchmark measures (memory, "
                   "memory bandwidth, efficiencies); e.g. generic-h100-8nic, host-cpu")
        ->required();
    sub.add_option("--collective", collective_,
                   "ovb-collective result, FILE or FILE@GXxGYxGZxGD[:order] (the grid of the run, "
                   "needed for groups x/y/z/data)");
    sub.add_option("--gemm", gemm_, "ovb-gemm result");
    sub.add_option("--overlap", overlap_, "ovb-overlap result");
    sub.add_option("--mem", mem_,
                   "ovb-membw result: per-class memory efficiencies (gpu.memory_efficiency_by_class)");
    sub.add_flag("--mem-bandwidth-from-copy", mem_bw_from_copy_,
                 "Set gpu.memory_bandwidth_gbps to the copy class's device GB/s (a machine whose "
                 "bandwidth has no datasheet, e.g. host-cpu); default: keep the base's");
    sub.add_option("--overlap-filter", filter_,
                   "Use only ovb-overlap rows whose label contains this text, e.g. prio=equal");
    sub.add_option("--overlap-scenario", scenario_,
                   std::string("Use only ovb-overlap rows of this scenario (a row without one: ") +
                       metrics::kDefaultOverlapScenario + ")")
        ->capture_default_str();
    sub.add_option("--gpus-per-node", gpn_,
                   "Devices per node (default: context.local_size / ranks_per_gpu)")
        ->check(ovb::positive());
    sub.add_option(
           "--ranks-per-device", rpd_,
           "Ranks sharing one device (default: context.ranks_per_gpu of the collective run)")
        ->check(ovb::positive());
    sub.add_option("--name", name_, "Name of the new machine (default: BASE-calibrated)");
    sub.add_option("--out", out_, "Machine file to write")->required();
  }

  int run(const LaunchContext& ctx) override {
    CalibrateOptions opt;
    opt.base = load_machine(base_);
    for (const std::string& c : collective_) {
      CollectiveFile f;
      const auto at = c.rfind('@');
      f.path = c.substr(0, at);
      if (at != std::string::npos) f.grid = GridShape::parse(c.substr(at + 1));
      opt.collective.push_back(f);
    }
    opt.gemm = gemm_;
    opt.overlap = overlap_;
    opt.overlap_filter = filter_;
    opt.overlap_scenario = scenario_;
    opt.mem = mem_;
    opt.mem_bandwidth_from_copy = mem_bw_from_copy_;
    opt.name = name_;
    if (gpn_ > 0) opt.gpus_per_node = gpn_;
    if (rpd_ > 0) opt.ranks_per_device = rpd_;
    const Calibration cal = calibrate(opt);
    const Machine& mc = cal.machine;

    std::cout << "machine " << mc.name << ": " << mc.gpus_per_node << " devices per node, "
              << mc.ranks_per_device << " rank(s) per device\n";
    if (!cal.series.empty()) {
      std::cout << "collectives: t = alpha + S*F/bw per (kind, p, ip)\n";
      TextTable t({"kind", "p", "ip", "place", "points", "alpha us", "bw GB/s", "node GB/s", "R^2",
                   "max rel err"});
      for (const SeriesFit& f : cal.series)
        t.row({std::string(name_of(f.kind)), std::to_string(f.p), std::to_string(f.ip),
               std::string(name_of(f.placement)), std::to_string(f.points), fmt(f.alpha_us, 2),
               fmt(f.bw_gbps, 3), f.placement == Placement::inter ? fmt(f.node_gbps, 3) : "-",
               f.r2 ? fmt(*f.r2, 4) : "-", fmt(f.max_rel_err, 3)});
      std::cout << t.str("  ");
    }
    const auto& g = cal.report["gemm"];
    std::cout << "GEMM table: " << mc.gemm_table.size() << " shapes";
    if (g["loo_max_rel_err"].is_number())
      std::cout << ", leave-one-out interpolation error max "
                << fmt(g["loo_max_rel_err"].get<double>(), 3) << " mean "
                << fmt(g["loo_mean_rel_err"].get<double>(), 3);
    if (g.contains("training_factor"))
      std::cout << "; used at x" << fmt(g["training_factor"].get<double>(), 3)
                << ", training's rate (gpu.gemm_training_factor, the base's)";
    if (g.contains("above_ceiling") && g["above_ceiling"].get<int>() > 0)
      std::cout << "; " << g["above_ceiling"].get<int>() << " above the machine's ceiling of "
                << fmt(g["ceiling_tflops"].get<double>(), 1)
                << " TFLOP/s (gpu.gemm_max_efficiency), which caps them where used";
    std::cout << "\ninterference: compute slowdown " << fmt(mc.compute_slowdown, 3)
              << ", comm slowdown " << fmt(mc.comm_slowdown, 3) << " ("
              << cal.report["interference"]["rows"].get<int>() << " overlap rows)\n";
    if (cal.report.contains("blocking_wait")) {
      std::cout << "blocking wait after compute (" << cal.report["blocking_wait"]["rows"].size()
                << " blocking_wait rows):";
      for (const BlockingWaitPoint& p : mc.blocking_wait)
        std::cout << " " << fmt(p.wait_us, 1) << " us after " << fmt(p.compute_us, 1) << " us;";
      std::cout << "\n";
    }
    if (cal.report.contains("memory")) {
      std::cout << "memory-bound kernels: bandwidth " << fmt(mc.memory_bandwidth_gbps, 2)
                << " GB/s, efficiency per class (default " << fmt(mc.memory_efficiency, 3)
                << ")\n";
      TextTable t({"class", "dtype", "size", "GB/s per rank", "ranks/device", "GB/s device",
                   "efficiency"});
      for (const auto& r : cal.report["memory"]["classes"])
        t.row({r["class"].get<std::string>(), r["dtype"].get<std::string>(),
               fmt(r["size"].get<double>(), 0), fmt(r["gbps_per_rank"].get<double>(), 3),
               std::to_string(r["ranks_per_device"].get<int>()),
               fmt(r["gbps_device"].get<double>(), 3), fmt(r["efficiency"].get<double>(), 3)});
      std::cout << t.str("  ");
    }
    nlohmann::json j = machine_to_json(mc);
    j["calibration"]["context"] = run_context(nullptr, ctx);  // who fitted it, when, which build
    write_json(out_, j);
    std::cout << "wrote " << out_ << "\n";
    return 0;
  }

 private:
  std::string base_, filter_, name_, out_, scenario_ = metrics::kDefaultOverlapScenario;
  std::vector<std::string> collective_, gemm_, overlap_, mem_;
  bool mem_bw_from_copy_ = false;
  int gpn_ = 0, rpd_ = 0;
};

}  // namespace

std::unique_ptr<Command> make_calibrate() {
  return std::make_unique<Calibrate>();
}

}  // namespace ovb::model::cli
