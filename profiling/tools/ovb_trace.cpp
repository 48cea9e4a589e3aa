// ovb-trace: overlap analysis and merging of per-rank traces (this suite's, Kineto's, PyTorch
// profiler's). See profiling/README.md.
//
//   ovb-trace analyze traces/ [--json analysis.json] [--top 20]   # table (+ JSON, SCHEMA.md)
//   ovb-trace analyze rank-00000.trace.json rank-00001.trace.json
//   ovb-trace merge traces/ -o merged.json                         # one file for Perfetto
//   ovb-trace merge traces/ predicted.trace.json -o side-by-side.json  # model beside measurement
#include <iostream>
#include <string>
#include <vector>

#include "analyze/analysis_report.hpp"
#include "analyze/merge.hpp"
#include "analyze/trace_reader.hpp"
#include "ovb/cli.hpp"
#include "ovb/context.hpp"
#include "ovb/io.hpp"
#include "ovb/run_main.hpp"
#include "ovb/trace_writer.hpp"

int main(int argc, char** argv) {
  return ovb::run_main("ovb-trace", argc, argv, [&](const ovb::LaunchContext& ctx) {
    if (ctx.rank != 0) return 0;  // a serial tool: extra ranks of an mpirun have nothing to do

    CLI::App app{"Overlap analysis of per-rank Chrome/Kineto traces, and merging them for Perfetto",
                 "ovb-trace"};
    app.require_subcommand(1);
    std::vector<std::string> inputs;
    std::string json_out, merge_out;
    int top = 20;
    int warmup = -1;
    auto* analyze = app.add_subcommand(
        "analyze",
        "Span, busy, idle, compute, communication, overlapped and exposed "
        "communication per rank and across ranks, per collective kind and group, and "
        "per range (NVTX / ScopedRange)");
    analyze->add_option("traces", inputs, "Trace files, or folders of them (*trace.json[.gz])")
        ->required();
    analyze->add_option("--json", json_out, "Also write the analysis as JSON (results/SCHEMA.md)");
    analyze->add_option("--top", top, "Ranges listed in the table (all go to the JSON)")
        ->check(ovb::non_negative());
    analyze
        ->add_option("--warmup", warmup,
                     "Marked iterations left out at the start (default: the warm-up rule, "
                     "max(3, ceil(n/10)) of n); traces without iteration marks are analysed whole")
        ->check(ovb::non_negative());
    auto* merge = app.add_subcommand(
        "merge",
        "Combine per-rank traces into one file, ranks as processes, for Perfetto; predicted "
        "traces (ovb-model explain --timeline) beside measured ones, aligned at an iteration");
    merge->add_option("traces", inputs, "Trace files, or folders of them")->required();
    merge->add_option("-o,--out", merge_out, "Merged trace to write")->required();
    ovb::parse_cli(app, argc, argv, ctx);

    const std::vector<std::string> paths = ovb::trace::expand_trace_paths(inputs);
    if (merge->parsed()) {
      const auto s = ovb::trace::merge_traces(paths, merge_out);
      std::cout << "ovb-trace: merged " << s.ranks << (s.ranks == 1 ? " rank" : " ranks");
      if (s.predicted > 0) std::cout << " and " << s.predicted << " predicted";
      std::cout << " (" << s.events << " events) into " << merge_out << "\n";
      if (const auto& a = s.alignment)
        std::cout << "ovb-trace: predicted iteration aligned with measured rank " << a->rank
                  << "'s " << a->rule
                  << (a->iteration >= 0 ? " (index " + std::to_string(a->iteration) + " of " +
                                              std::to_string(a->iterations) + " iterations, " +
                                              std::to_string(a->warmup) + " warm-up)"
                                        : std::string())
                  << ": measured " << ovb::trace::format_us(a->measured_ns) << " us, predicted "
                  << ovb::trace::format_us(a->predicted_ns) << " us\n";
      return 0;
    }
    const auto reports = ovb::trace::analyze_traces(paths, &std::cerr, warmup);
    if (!json_out.empty()) {  // first: a failed write is then the only thing printed
      nlohmann::json j = {{"context", ovb::run_context(nullptr, ctx)}};
      j.update(ovb::trace::report_json(reports, paths));
      ovb::write_json(json_out, j);
    }
    std::cout << "ovb-trace: " << paths.size() << " trace" << (paths.size() == 1 ? "" : "s")
              << ", times in microseconds\n\n";
    ovb::trace::print_report(std::cout, reports, top);
    if (!json_out.empty()) std::cout << "\nwrote " << json_out << "\n";
    return 0;
  });
}
