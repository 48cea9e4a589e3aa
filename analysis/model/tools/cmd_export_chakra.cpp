// ovb-model export-chakra CONFIG --out DIR: the schedule of one iteration as Chakra execution
// traces, DIR/PREFIX.<rank>.et for every rank of --ranks, the communicator groups as
// DIR/PREFIX.comm_groups.json (ASTRA-sim's --comm-group-configuration) and DIR/PREFIX.json (what
// was exported, with the run context). docs/chakra.md.
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "model_options.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/io.hpp"
#include "ovb/model/chakra_trace.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/exec_graph.hpp"
#include "ovb/model/graph_replay.hpp"
#include "ovb/model/step_cost.hpp"

namespace ovb::model::cli {

namespace {

// "all", or ranks and ranges "0,5,8-11", each inside [0, world).
std::vector<int> parse_ranks(const std::string& text, int world) {
  std::vector<int> out;
  if (text == "all") {
    for (int r = 0; r < world; ++r) out.push_back(r);
    return out;
  }
  std::vector<bool> seen(static_cast<std::size_t>(world), false);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    const std::size_t dash = item.find('-', 1);
    int lo = 0, hi = 0;
    try {
      std::size_t used = 0;
      lo = std::stoi(item.substr(0, dash), &used);
      if (used != item.substr(0, dash).size()) throw std::invalid_argument(item);
      hi = lo;
      if (dash != std::string::npos) {
        const std::string tail = item.substr(dash + 1);
        hi = std::stoi(tail, &used);
        if (used != tail.size()) throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw UsageError("--ranks: '" + item +
                       "' is not a rank or a range A-B (e.g. 0,5,8-11 or all)");
    }
    for (int r : {lo, hi})
      if (r < 0 || r >= world)
        throw UsageError("--ranks: rank " + std::to_string(r) + " is not in the grid's " +
                         std::to_string(world) + " ranks (0-" + std::to_string(world - 1) + ")");
    if (hi < lo) throw UsageError("--ranks: range '" + item + "' ends before it starts");
    for (int r = lo; r <= hi; ++r)
      if (!seen[static_cast<std::size_t>(r)]) {
        seen[static_cast<std::size_t>(r)] = true;
        out.push_back(r);
      }
    pos = end + 1;
  }
  return out;
}

class ExportChakra : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.add_option("config", config_, "Grid GXxGYxGZxGDATA[:order], e.g. 2x2x2x4 or 2x2x2x4:y,x,z")
        ->required();
    args_.add(sub);
    sub.add_option("--out", out_, "Folder of the traces (created when missing)")->required();
    sub.add_option("--prefix", prefix_, "File name prefix: OUT/PREFIX.<rank>.et")
        ->default_val(prefix_);
    sub.add_option("--ranks", ranks_,
                   "Ranks to write: all, or a list of ranks and ranges, e.g. 0,5,8-11")
        ->default_val(ranks_);
  }

  int run(const LaunchContext& ctx) override {
    const auto t0 = std::chrono::steady_clock::now();
    const Machine mc = args_.load();
    const GptShape m = args_.shape();
    GptPlanOptions o = args_.plan(mc);
    o.grid = GridShape::parse(config_);
    const Prediction p = choose(m, o, args_.choices(), mc);  // --micro-batch/--shard-optimizer auto
    const Grid grid(p.options.grid, p.options.grid.world());
    const std::vector<int> ranks = parse_ranks(ranks_, grid.shape().world());
    const std::string base = out_ + "/" + prefix_;
    check_writable(base + ".json");  // an unwritable folder: one line before any work

    const GptSchedule sched = gpt_schedule(m, p.options);
    const StepCoster coster(m, p.options, mc);
    const ExecGraph g = exec_graph(sched, coster, mc, grid);
    const CommGroups groups(grid);
    ChakraTraceWriter writer(g, sched, groups, static_cast<int>(size_of(p.options.act_dtype)),
                             {{"generator", "ovb-model export-chakra"},
                              {"config", p.options.grid.str()},
                              {"machine", mc.name}});
    std::size_t bytes = 0;
    for (int r : ranks) {
      const std::string data = writer.encode(r);
      atomic_write(base + "." + std::to_string(r) + ".et", data);
      bytes += data.size();
    }
    nlohmann::json cg = nlohmann::json::object();
    for (const CommGroup& c : groups.all()) cg[std::to_string(c.id)] = c.ranks;
    write_json(base + ".comm_groups.json", cg);

    double exact_us = 0, rounded_us = 0;
    for (const ExecNode& n : g.nodes)
      if (!n.collective) {
        exact_us += n.duration_us;
        rounded_us += static_cast<double>(std::llround(n.duration_us));
      }
    // What ASTRA-sim's limits do to this graph (docs/chakra.md): one collective in flight, whole
    // microseconds.
    const double streams_us = replay_us(g, {});
    const double queue_us = replay_us(g, {.one_comm_queue = true});
    const double queue_whole_us =
        replay_us(g, {.one_comm_queue = true, .whole_microseconds = true});
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json j;
    j["context"] = run_context(nullptr, ctx);
    j["inputs"] = args_.inputs_json(m, p.options, mc);
    j["inputs"]["grid"] = p.options.grid.str();
    j["chakra_version"] = kChakraVersion;
    j["ranks"] = ranks_;  // as given: "all" or the list
    j["rank_count"] = ranks.size();
    j["files"] = {{"trace", prefix_ + ".<rank>.et"},
                  {"comm_groups", prefix_ + ".comm_groups.json"}};
    j["nodes"] = {{"compute", g.compute_nodes}, {"collective", g.collective_nodes}};
    j["bytes_written"] = bytes;
    j["compute_us"] = {{"model", exact_us}, {"whole_microseconds", rounded_us}};
    j["predicted_iteration_us"] = p.timeline.iteration_us;
    j["replay_us"] = {{"streams", streams_us},
                      {"one_comm_queue", queue_us},
                      {"one_comm_queue_whole_microseconds", queue_whole_us}};
    j["seconds"] = secs;
    write_json(base + ".json", j);
    std::cout << "wrote " << ranks.size() << " trace file" << (ranks.size() == 1 ? "" : "s") << " ("
              << g.compute_nodes << " compute and " << g.collective_nodes
              << " collective nodes each, " << bytes / ranks.size() << " bytes each) to " << base
              << ".<rank>.et, " << groups.all().size() << " communicator groups to " << base
              << ".comm_groups.json in " << secs << " s\n"
              << "compute per iteration: " << exact_us << " us in the model, " << rounded_us
              << " us in whole microseconds\n"
              << "graph replay (no interference): " << streams_us / 1e3
              << " ms with a queue per stream, " << queue_us / 1e3
              << " ms with one collective in flight (ASTRA-sim), " << queue_whole_us / 1e3
              << " ms with that and whole microseconds; the model predicts "
              << p.timeline.iteration_us / 1e3 << " ms\n";
    return 0;
  }

 private:
  ModelArgs args_;
  std::string config_, out_, prefix_ = "ovb", ranks_ = "all";
};

}  // namespace

std::unique_ptr<Command> make_export_chakra() {
  return std::make_unique<ExportChakra>();
}

}  // namespace ovb::model::cli
