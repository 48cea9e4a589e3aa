// The predicted iteration as a trace (see timeline_trace.hpp).
#include "ovb/model/timeline_trace.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>

#include "ovb/dtype.hpp"
#include "ovb/trace_writer.hpp"

namespace ovb::model {

namespace {

constexpr std::int64_t kPid = 0;
// Ranges: tid kRangeTid + depth (iteration, phase, layer), as the CUDA tracer lays out GPU spans.
constexpr std::int64_t kRangeTid = 1000000;
constexpr const char* kRangeNames[] = {"iteration", "phases", "layers"};

std::int64_t ns(double us) {
  return std::llround(us * 1e3);
}

std::int64_t tid_of(StreamId s) {
  return static_cast<std::int64_t>(s);
}

// A linear layer's GEMM (the forward, dX and dW passes): named "gemm <op>", so that ovb-trace's
// kernel breakdown counts it under gemm as it counts cuBLAS or host GEMMs.
bool is_gemm(std::string_view op) {
  for (std::string_view pass : {".fwd", ".dx", ".dw"})
    if (op.size() > pass.size() && op.substr(op.size() - pass.size()) == pass) return true;
  return false;
}

// A collective's costed slot by (op, group, kind): its bytes, ranks, count and dtype. Every block
// has the same collectives, so the first block's stand for all.
using SlotKey = std::tuple<std::string, Group, CollKind>;
std::map<SlotKey, const CommSlot*> slots_by_op(const PlanComm& pc) {
  std::map<SlotKey, const CommSlot*> out;
  for_each_slot(pc, [&](const CommSlot& s, double) {
    out.emplace(SlotKey{s.op.op, s.op.group, s.op.kind}, &s);
  });
  return out;
}

struct Range {
  std::string name, category;
  double start, end;
  int depth;
};

// Iteration, phases (one per micro-step's forward and backward, and the step) and blocks, from the
// compute stream's spans (which tile the iteration in time order). A block's range is a run of
// its compute spans with the waits between them and the waits of the same block right before.
// The LM head is a block too, named as gpt4d's ranges name it ("head", "head backward"): the
// spans outside the blocks that come after them in a forward and before them in a backward (the
// others outside the blocks are the embedding's). The step's per-block optimizer work has no block
// range, as in gpt4d.
std::vector<Range> ranges_of(const std::vector<Span>& spans, double iteration_us) {
  std::vector<Range> out{{"iteration", "iteration", 0, iteration_us, 0}};
  std::vector<const Span*> cs;
  for (const Span& s : spans)
    if (s.stream == StreamId::compute) cs.push_back(&s);
  std::tuple<int, Phase> phase_key{-1, Phase::forward};
  for (const Span* s : cs) {
    const std::tuple<int, Phase> k{s->micro_step, s->phase};
    if (out.size() > 1 && k == phase_key) {
      out.back().end = s->end_us;
      continue;
    }
    out.push_back({std::string(name_of(s->phase)), "phase", s->start_us, s->end_us, 1});
    phase_key = k;
  }
  constexpr int kHead = -2;       // the block key of the LM head's spans
  std::size_t open = out.size();  // index of the block range being extended, out.size(): none
  std::tuple<int, Phase, int> block_key{-1, Phase::forward, -1};
  std::tuple<int, Phase> in_phase{-1, Phase::forward};
  bool blocks_seen = false;    // a block's span seen in this phase so far
  std::size_t waits_from = 0;  // first of the waits since the last compute span
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const Span& s = *cs[i];
    if (s.comm) continue;
    if (std::tuple<int, Phase>{s.micro_step, s.phase} != in_phase) {
      in_phase = {s.micro_step, s.phase};
      blocks_seen = false;
    }
    blocks_seen = blocks_seen || s.layer >= 0;
    const bool head = s.layer < 0 && s.phase != Phase::step &&
                      (s.phase == Phase::backward) != blocks_seen;
    const std::tuple<int, Phase, int> k{s.micro_step, s.phase, head ? kHead : s.layer};
    if (open < out.size() && k == block_key) {
      out[open].end = s.end_us;
    } else if ((s.layer >= 0 && s.phase != Phase::step) || head) {  // gpt4d ranges no step
      double start = s.start_us;
      for (std::size_t j = i; j > waits_from && cs[j - 1]->comm && cs[j - 1]->layer == s.layer; --j)
        start = cs[j - 1]->start_us;
      const std::string block = head ? "head" : "layer" + std::to_string(s.layer);
      out.push_back({block + (s.phase == Phase::backward ? " backward" : ""), "layer", start,
                     s.end_us, 2});
      open = out.size() - 1;
      block_key = k;
    } else {
      open = out.size();
    }
    waits_from = i + 1;
  }
  return out;
}

}  // namespace

std::vector<Span> predicted_spans(const Prediction& p, const Machine& mc) {
  std::vector<Span> spans;
  simulate(p.shape, p.compute, p.comm, p.options, mc, std::numeric_limits<double>::infinity(),
           &spans);
  return spans;
}

void write_timeline_trace(const std::string& path, const Prediction& p,
                          const std::vector<Span>& spans, nlohmann::json context) {
  const int world = p.options.grid.world();
  context["ranks"] = "one rank stands for all " + std::to_string(world) + ": every rank of grid " +
                     p.options.grid.str() + " runs this schedule";
  context["prediction"] = summary_json(p);
  trace::TraceHeader h;
  h.rank = 0;
  h.world_size = world;
  h.backend = "model";
  h.base_ns = 0;
  h.extra = {{"traceName", "ovb-model predicted iteration, " + p.options.grid.str()},
             {"context", nlohmann::ordered_json(context)},
             {"ovbTracer", {{"tracer", "model"}, {"mode", trace::kPredictedMode}}}};
  trace::TraceWriter w(path, h);
  w.process_name(kPid, "ovb-model (" + p.machine + ", grid " + p.options.grid.str() + ")", 0);
  for (StreamId s : {StreamId::compute, StreamId::tp, StreamId::gather, StreamId::grad})
    w.thread_name(kPid, tid_of(s), std::string(name_of(s)) + " stream", tid_of(s));
  for (int d = 0; d < 3; ++d) w.thread_name(kPid, kRangeTid + d, kRangeNames[d], kRangeTid + d);

  const auto slots = slots_by_op(p.comm);
  for (const Span& s : spans) {
    nlohmann::ordered_json args = {{"stream", tid_of(s.stream)},
                                   {"phase", name_of(s.phase)},
                                   {"micro_step", s.micro_step},
                                   {"layer", s.layer}};
    std::string name = s.name;
    std::string_view cat = trace::cat::kernel;
    if (!s.comm && is_gemm(s.name)) {
      name = "gemm " + s.name;
    } else if (s.comm && s.stream == StreamId::compute) {
      cat = "cuda_sync";  // the compute stream waiting: not a kernel
      args["collective"] = name_of(s.kind);
      args["group"] = name_of(s.group);
    } else if (s.comm) {
      name = s.name + " " + std::string(name_of(s.kind)) + " " + std::string(name_of(s.group));
      args["collective"] = name_of(s.kind);
      args["group"] = name_of(s.group);
      args["op"] = s.name;
      if (auto it = slots.find(SlotKey{s.name, s.group, s.kind}); it != slots.end()) {
        const CollOp& op = it->second->op;
        args["bytes"] = op.bytes();
        args["ranks"] = op.group_size;
        args["count"] = op.count;
        args["dtype"] = name_of(op.dtype);
      }
    }
    w.complete({name, cat, kPid, tid_of(s.stream), ns(s.start_us), ns(s.end_us), &args});
  }
  for (const Range& r : ranges_of(spans, p.timeline.iteration_us)) {
    const nlohmann::ordered_json args = {{"category", r.category}};
    w.complete({r.name, trace::cat::gpu_annotation, kPid, kRangeTid + r.depth, ns(r.start),
                ns(r.end), &args});
  }
  w.finish();
}

}  // namespace ovb::model
