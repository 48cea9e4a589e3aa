// The model's entry point: compute, communication, overlap and memory of one configuration
// (see predict.hpp).
#include "ovb/model/predict.hpp"

#include <iomanip>
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/model/flops.hpp"

namespace ovb::model {

double memory_limit_bytes(const Machine& mc) {
  return mc.memory_bytes * mc.memory_usable_fraction / mc.ranks_per_device;
}

Prediction predict(const GptShape& m, const GptPlanOptions& o, const Machine& mc) {
  validate_gpt_plan(m, o);
  Prediction p;
  p.shape = m;
  p.options = o;
  p.machine = mc.name;
  p.compute = compute_terms(m, o, mc);
  p.comm = plan_comm(m, o, mc);
  p.timeline = simulate(m, p.compute, p.comm, o, mc);
  p.memory = gpt_memory(m, o);
  p.memory_limit_bytes = memory_limit_bytes(mc);
  p.fits = p.memory.total() <= p.memory_limit_bytes;
  try {
    p.peak_tflops = mc.peak();
  } catch (const UsageError&) {
    p.peak_tflops = 0;  // a machine without a peak still predicts times
  }
  return p;
}

namespace {

FlopReport flops_of(const Prediction& p) {
  return flop_report(p.shape, p.options.batch,
                     p.options.recompute ? Recompute::full : Recompute::none,
                     p.timeline.iteration_us, p.options.grid.world(), p.peak_tflops);
}

}  // namespace

nlohmann::json summary_json(const Prediction& p) {
  nlohmann::json j =
      config_json(p.options.grid, p.timeline, p.memory.total(), p.memory_limit_bytes, p.fits);
  j["strategy"] = "4d";
  j["recompute"] = p.options.recompute ? "full" : "none";
  j.update(choice_json(p.options));
  if (p.peak_tflops > 0) j["flops"] = flops_json(flops_of(p));
  return j;
}

nlohmann::json choice_json(const GptPlanOptions& o) {
  return {{"micro_batch", micro_batch(o)},
          {"micro_steps", micro_steps(o)},
          {"shard_optimizer", o.shard_optimizer},
          {"shard_gradients", gradients_sharded(o)},
          {"tp_chunks", o.otp ? o.tp_chunks : 0}};
}

nlohmann::json config_json(const GridShape& g, const Timeline& t, double memory_bytes,
                           double memory_limit_bytes, bool fits) {
  nlohmann::json comm = nlohmann::json::object(), exposed = nlohmann::json::object();
  for (Group gr : kGroups) {
    comm[std::string(name_of(gr))] = t.comm_group_us(gr) / 1e3;
    exposed[std::string(name_of(gr))] = t.exposed_group_us(gr) / 1e3;
  }
  nlohmann::json j = grid_json(g);
  j.update({{"predicted_ms", t.iteration_us / 1e3},
          {"compute_ms", t.compute_us / 1e3},
          {"interference_ms", t.interference_us / 1e3},
          {"comm_ms", comm},
          {"exposed_comm_ms", t.exposed_total_us() / 1e3},
          {"exposed_ms", exposed},
          {"memory_bytes", memory_bytes},
          {"memory_limit_bytes", memory_limit_bytes},
          {"fits", fits}});
  return j;
}

std::string format_breakdown(const Prediction& p) {
  const Timeline& t = p.timeline;
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  os << "model (" << p.machine << ") " << p.options.grid.str() << ": iteration "
     << t.iteration_us / 1e3 << " ms = compute " << t.compute_us / 1e3 << " + interference "
     << t.interference_us / 1e3 << " + exposed comm " << t.exposed_total_us() / 1e3 << " ms\n";
  os << "  comm ms (total / exposed):";
  for (Group gr : kGroups)
    if (t.comm_group_us(gr) > 0)
      os << ' ' << name_of(gr) << ' ' << t.comm_group_us(gr) / 1e3 << '/'
         << t.exposed_group_us(gr) / 1e3;
  if (p.peak_tflops > 0) {
    const FlopReport f = flops_of(p);
    os << std::setprecision(1) << "\n  " << f.model_tflops_per_gpu
       << " TFLOP/s per GPU in model FLOPs (MFU " << 100 * f.mfu << " %), "
       << f.hardware_tflops_per_gpu << " in hardware FLOPs (HFU " << 100 * f.hfu << " %)";
  }
  os << "\n  memory per GPU " << std::setprecision(2) << p.memory.total() / 1e9 << " GB of "
     << p.memory_limit_bytes / 1e9 << " GB usable" << (p.fits ? "" : " - DOES NOT FIT") << '\n';
  return os.str();
}

}  // namespace ovb::model
