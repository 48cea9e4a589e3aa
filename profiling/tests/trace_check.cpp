// ovb-trace-check: assertions on traces and their analyses for the pipeline and GPU tests.
//
//   ovb-trace-check collectives --analysis A.json --gx 2 --gy 2 ... --iters 3 [--check-bytes]
//                               [--check-gemms]
//     Every rank's collective count (and bytes) per kind and group equals ovb::gpt_collectives()
//     for that model and grid times the traced iterations (--iters auto: the same whole number of
//     iterations for every kind and group, at most --max-iters). --check-gemms (host traces of
//     gpt4d): every rank's gemm kernels number the GEMM calls of the plan's linear layers - three
//     per layer (forward, dX, dW) for each block's layers and the LM head, one more forward per
//     block layer with --recompute - times the iterations.
//   ovb-trace-check streams --traces DIR [--min-overlap-ranks 1]
//     CUDA traces: kernels on at least two streams, NCCL kernels on a stream of their own with the
//     suite's collective metadata joined on, and communication overlapping compute on at least
//     --min-overlap-ranks ranks.
//   ovb-trace-check injected --trace FILE --kernel NAME --ranges NAME=COUNT
//     A trace written by libovb-inject.so: NAME's kernels present, copies and sets present,
//     exactly COUNT ranges named NAME (the capture window), on two streams.
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "analyze/analysis.hpp"
#include "analyze/trace_reader.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/io.hpp"
#include "ovb/run_config.hpp"
#include "ovb/run_main.hpp"

namespace {

using namespace ovb;
using nlohmann::json;

struct Failures {
  std::ostringstream text;
  int count = 0;
  template <class... T>
  void add(const T&... parts) {
    ((text << parts), ...);
    text << "\n";
    ++count;
  }
  int finish(const char* what) {
    if (count == 0) {
      std::cout << "ovb-trace-check " << what << ": ok\n";
      return 0;
    }
    std::cerr << "ovb-trace-check " << what << ": " << count << " failure(s)\n" << text.str();
    return 1;
  }
};

// "z-allgather" (a communicator's name) -> "z" (its group).
std::string group_of(const std::string& g) {
  return g.substr(0, g.find('-'));
}

struct Expected {
  std::int64_t count = 0;
  double bytes = 0;
};

int check_collectives(const std::string& analysis, const GptShape& m, const GptPlanOptions& o,
                      const std::string& iters_text, int max_iters, bool check_bytes,
                      bool check_gemms) {
  Failures f;
  std::map<std::pair<std::string, std::string>, Expected> per_iter;
  for (const CollOp& op : gpt_collectives(m, o)) {
    auto& e = per_iter[{std::string(name_of(op.kind)), std::string(name_of(op.group))}];
    ++e.count;
    e.bytes += op.bytes();
  }
  const json a = read_json(analysis);
  const int world = o.grid.world();
  if (a["ranks"].size() != static_cast<std::size_t>(world))
    f.add("expected ", world, " ranks in the analysis, found ", a["ranks"].size());
  for (const json& r : a["ranks"]) {
    std::map<std::pair<std::string, std::string>, Expected> seen;
    for (const json& c : r["collectives"]) {
      auto& s = seen[{c["kind"].get<std::string>(), group_of(c["group"].get<std::string>())}];
      s.count += c["count"].get<std::int64_t>();
      s.bytes += c["bytes"].is_null() ? -1e300 : c["bytes"].get<double>();
    }
    std::int64_t k = 0;  // iterations traced
    if (iters_text == "auto") {
      if (!per_iter.empty() && seen.count(per_iter.begin()->first))
        k = seen[per_iter.begin()->first].count / per_iter.begin()->second.count;
      if (k < 1 || k > max_iters)
        f.add("rank ", r["rank"], ": cannot tell the traced iterations (", k, ")");
    } else {
      k = std::stoll(iters_text);
    }
    for (const auto& [key, e] : per_iter) {
      const Expected s = seen.count(key) ? seen[key] : Expected{};
      if (s.count != k * e.count)
        f.add("rank ", r["rank"], " ", key.first, " ", key.second, ": ", s.count,
              " collectives traced, expected ", k, " x ", e.count);
      if (check_bytes && s.count == k * e.count && std::abs(s.bytes - k * e.bytes) > 0.5)
        f.add("rank ", r["rank"], " ", key.first, " ", key.second, ": ", s.bytes,
              " bytes traced, expected ", k * e.bytes);
    }
    for (const auto& [key, s] : seen)
      if (!per_iter.count(key))
        f.add("rank ", r["rank"], ": ", s.count, " unexpected ", key.first, " ", key.second);
    if (check_gemms) {
      const auto block = static_cast<std::int64_t>(block_linears(m).size()) * m.layers;
      const std::int64_t want = k * (3 * (block + 1) + (o.recompute ? block : 0));
      const json& g = r["kernel_breakdown"]["gemm"];
      if (g["count"].get<double>() != static_cast<double>(want) || !(g["total_us"] > 0.0))
        f.add("rank ", r["rank"], ": ", g["count"], " gemm kernels (", g["total_us"],
              " us) traced, expected ", want);
    }
    if (r["rank"] == 0)
      std::cout << "rank 0: " << k << " iterations x " << per_iter.size()
                << " (kind, group) pairs checked" << (check_gemms ? ", and the GEMMs" : "") << "\n";
  }
  return f.finish("collectives");
}

int check_streams(const std::string& dir, int min_overlap_ranks) {
  Failures f;
  const auto paths = trace::expand_trace_paths({dir});
  int overlapping = 0;
  for (const std::string& p : paths) {
    std::set<std::int64_t> compute_streams, comm_streams;
    std::int64_t comm_kernels = 0, with_metadata = 0;
    trace::read_trace(p, [&](trace::RawEvent& e) {
      const json& j = e.json;
      if (!j.is_object() || j.value("cat", "") != "kernel") return;
      const std::string name = j.value("name", "");
      const std::int64_t tid = j.value("tid", std::int64_t{-1});
      if (name.rfind("nccl", 0) == 0) {
        ++comm_kernels;
        comm_streams.insert(tid);
        if (j.contains("args") && j["args"].contains("collective") && j["args"].contains("group"))
          ++with_metadata;
      } else {
        compute_streams.insert(tid);
      }
    });
    if (compute_streams.empty()) f.add(p, ": no compute kernels");
    if (comm_kernels == 0) f.add(p, ": no NCCL kernels");
    for (std::int64_t s : comm_streams)
      if (compute_streams.count(s)) f.add(p, ": NCCL kernels share stream ", s, " with compute");
    if (with_metadata != comm_kernels)
      f.add(p, ": ", comm_kernels - with_metadata, " of ", comm_kernels,
            " NCCL kernels lack the collective kind/group of their range");
    const auto r = trace::analyze_traces({p});
    if (r[0].overlap.comm <= 0) f.add(p, ": no communication time (NCCL kernels not classified)");
    if (r[0].overlap.overlapped_comm > 0) ++overlapping;
    std::cout << p << ": " << compute_streams.size() << " compute stream(s), "
              << comm_streams.size() << " NCCL stream(s), " << comm_kernels
              << " NCCL kernels, overlap " << r[0].overlap.overlap_pct << " %\n";
  }
  if (overlapping < min_overlap_ranks)
    f.add("communication overlapped compute on ", overlapping, " rank(s), expected at least ",
          min_overlap_ranks);
  return f.finish("streams");
}

int check_injected(const std::string& path, const std::string& kernel, const std::string& ranges) {
  Failures f;
  const auto eq = ranges.find('=');
  if (eq == std::string::npos) throw UsageError("--ranges wants NAME=COUNT");
  const std::string range = ranges.substr(0, eq);
  const long want = std::stol(ranges.substr(eq + 1));
  long kernels = 0, copies = 0, sets = 0, annotated = 0;
  std::set<std::int64_t> streams;
  const auto info = trace::read_trace(path, [&](trace::RawEvent& e) {
    const json& j = e.json;
    if (!j.is_object() || j.value("ph", "") != "X") return;
    const std::string cat = j.value("cat", ""), name = j.value("name", "");
    if (cat == "kernel" && name.find(kernel) != std::string::npos) ++kernels;
    if (cat == "gpu_memcpy") ++copies;
    if (cat == "gpu_memset") ++sets;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset")
      streams.insert(j.value("tid", std::int64_t{-1}));
    if (cat == "user_annotation" && name == range) ++annotated;
  });
  if (info.top.value("ovbTracer", json::object()).value("mode", "") != "injected")
    f.add(path, ": not written by the injected tracer");
  if (kernels != want) f.add(path, ": ", kernels, " '", kernel, "' kernels, expected ", want);
  if (copies != want) f.add(path, ": ", copies, " copies, expected ", want);
  if (sets != want) f.add(path, ": ", sets, " memsets, expected ", want);
  if (annotated != want) f.add(path, ": ", annotated, " '", range, "' ranges, expected ", want);
  if (streams.size() < 2) f.add(path, ": GPU work on ", streams.size(), " stream(s), expected 2");
  return f.finish("injected");
}

}  // namespace

int main(int argc, char** argv) {
  return ovb::run_main("ovb-trace-check", argc, argv, [&](const LaunchContext& ctx) {
    CLI::App app{"Checks on traces and analyses for the profiling tests", "ovb-trace-check"};
    app.require_subcommand(1);
    std::string analysis, dir, trace_file, kernel, ranges, iters = "1";
    // The run configuration's options (ovb/run_config.hpp), defaults as ovb-trace-demo's.
    RunConfig run;
    run.model.preset = "tiny";
    run.model.seq = 32;
    run.model.vocab = 256;
    bool check_bytes = false, check_gemms = false;
    int max_iters = 1000, min_overlap = 1;
    auto* c = app.add_subcommand("collectives", "collective counts equal gpt_collectives()");
    c->add_option("--analysis", analysis, "ovb-trace analyze --json output")->required();
    add_run_options(*c, run, kAllRunGroups);
    c->get_option("--preset")->default_str("tiny");
    c->get_option("--batch")->description("Global batch in sequences (default Gdata*Gz)");
    c->add_option("--iters", iters, "traced iterations, or auto");
    c->add_option("--max-iters", max_iters, "with --iters auto: the most there can be");
    c->add_flag("--check-bytes", check_bytes, "also compare bytes (fp32 collectives)");
    c->add_flag("--check-gemms", check_gemms, "also count the GEMM kernels (host gpt4d traces)");
    auto* s = app.add_subcommand("streams", "CUDA traces: streams, NCCL metadata, overlap");
    s->add_option("--traces", dir, "folder of per-rank traces")->required();
    s->add_option("--min-overlap-ranks", min_overlap);
    auto* i = app.add_subcommand("injected", "a trace of ovb-inject-sample by libovb-inject.so");
    i->add_option("--trace", trace_file)->required();
    i->add_option("--kernel", kernel)->required();
    i->add_option("--ranges", ranges, "NAME=COUNT")->required();
    parse_cli(app, argc, argv, ctx);
    if (c->parsed()) {
      finish_run_config(*c, run);
      GridShape& g = run.plan.grid;
      if (run.plan.batch == 0) run.plan.batch = static_cast<std::int64_t>(g.gdata) * g.gz;
      resolve_dtype(run, DType::f32);  // auto: the host backend's, which --check-bytes runs use
      validate(run);
      return check_collectives(analysis, run.model, run.plan, iters, max_iters, check_bytes,
                               check_gemms);
    }
    if (s->parsed()) return check_streams(dir, min_overlap);
    return check_injected(trace_file, kernel, ranges);
  });
}
