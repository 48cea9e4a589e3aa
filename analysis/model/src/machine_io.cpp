// Machine files: JSON <-> ovb::model::Machine, with one clear message per missing or bad field
// (format: docs/model-machines.md, "Machine file").
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/comm_cost.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

// Reads fields below one object, naming the file and the full key path in every error.
class Reader {
 public:
  Reader(const json& j, std::string origin, std::string path)
      : j_(j), origin_(std::move(origin)), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_.empty() ? "the top level" : path_, "is not a JSON object");
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  double number(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(key_path(key), "is not a number");
    return v.get<double>();
  }
  double positive(const char* key) const {
    const double v = number(key);
    if (!(v > 0)) fail(key_path(key), "must be > 0, got " + std::to_string(v));
    return v;
  }
  double number_or(const char* key, double dflt) const { return has(key) ? number(key) : dflt; }
  int integer(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
      fail(key_path(key), "must be an integer >= 1");
    return v.get<int>();
  }
  std::string string(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key_path(key), "is not a string");
    return v.get<std::string>();
  }
  bool boolean_or(const char* key, bool dflt) const {
    if (!has(key)) return dflt;
    if (!j_.at(key).is_boolean()) fail(key_path(key), "is not true or false");
    return j_.at(key).get<bool>();
  }
  Reader child(const char* key) const { return Reader(at(key), origin_, key_path(key)); }
  const json& array(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key_path(key), "is not a list");
    return v;
  }
  Reader element(const json& v, std::size_t i, const char* key) const {
    return Reader(v, origin_, key_path(key) + "[" + std::to_string(i) + "]");
  }
  const json& raw() const { return j_; }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw UsageError("machine file " + origin_ + ": '" + key + "' " + what);
  }
  // The same, naming the key by its full path below the top level.
  [[noreturn]] void fail_key(const char* key, const std::string& what) const {
    fail(key_path(key), what);
  }

 private:
  const json& at(const char* key) const {
    if (!has(key)) fail(key_path(key), "is missing (see docs/model-machines.md, \"Machine file\")");
    return j_.at(key);
  }
  std::string key_path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  const json& j_;
  std::string origin_, path_;
};

int ip_or_any(const Reader& r) {
  return r.has("ip") ? r.integer("ip") : 0;
}

AlgoLatency read_algo_latency(const Reader& r) {
  AlgoLatency a{r.number("base_us"), r.number("intra_hop_us"), r.number("inter_hop_us")};
  for (const char* f : {"base_us", "intra_hop_us", "inter_hop_us"})
    if (r.number(f) < 0) r.fail_key(f, "must be >= 0");
  return a;
}

LatencyModel read_latency(const Reader& r) {
  LatencyModel l;
  l.ring = read_algo_latency(r.child("ring"));
  if (r.has("tree")) {
    const Reader t = r.child("tree");
    l.tree = read_algo_latency(t);
    l.tree_bw_factor = t.has("bw_factor") ? t.positive("bw_factor") : l.tree_bw_factor;
  }
  return l;
}

json latency_to_json(const LatencyModel& l) {
  auto algo = [](const AlgoLatency& a) {
    return json{{"base_us", a.base_us},
                {"intra_hop_us", a.intra_hop_us},
                {"inter_hop_us", a.inter_hop_us}};
  };
  json j = {{"ring", algo(l.ring)}};
  if (l.tree) {
    j["tree"] = algo(*l.tree);
    j["tree"]["bw_factor"] = l.tree_bw_factor;
  }
  return j;
}

CommParams read_comm(const Reader& r, bool is_default) {
  CommParams c;
  if (r.has("latency")) c.latency = read_latency(r.child("latency"));
  // The default section needs some latency: NCCL-like, or the linear per-rank term.
  if ((is_default && !c.latency) || r.has("alpha_us_per_gpu")) {
    c.alpha_us_per_gpu = r.number("alpha_us_per_gpu");
    if (*c.alpha_us_per_gpu < 0) r.fail("alpha_us_per_gpu", "must be >= 0");
  }
  if (is_default || r.has("intra")) {
    const json& a = r.array("intra");
    if (is_default && a.empty()) r.fail("intra", "must list at least one group size");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader e = r.element(a[i], i, "intra");
      c.intra.push_back(
          {e.integer("p"), ip_or_any(e), e.positive("gbps"), e.number_or("alpha_us", -1)});
    }
  }
  if (r.has("inter_node_gbps")) c.inter_node_gbps = r.positive("inter_node_gbps");
  if (r.has("inter")) {
    const json& a = r.array("inter");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader e = r.element(a[i], i, "inter");
      c.inter.push_back(
          {e.integer("p"), ip_or_any(e), e.positive("node_gbps"), e.number_or("alpha_us", -1)});
    }
  }
  return c;
}

json comm_to_json(const CommParams& c) {
  json j = json::object();
  if (c.latency) j["latency"] = latency_to_json(*c.latency);
  if (c.alpha_us_per_gpu) j["alpha_us_per_gpu"] = *c.alpha_us_per_gpu;
  auto entry = [](int p, int ip, const char* bw_key, double bw, double alpha) {
    json e = {{"p", p}};
    if (ip > 0) e["ip"] = ip;
    e[bw_key] = bw;
    if (alpha >= 0) e["alpha_us"] = alpha;
    return e;
  };
  if (!c.intra.empty()) {
    j["intra"] = json::array();
    for (const IntraEntry& e : c.intra)
      j["intra"].push_back(entry(e.p, e.ip, "gbps", e.gbps, e.alpha_us));
  }
  if (c.inter_node_gbps) j["inter_node_gbps"] = *c.inter_node_gbps;
  if (!c.inter.empty()) {
    j["inter"] = json::array();
    for (const InterEntry& e : c.inter)
      j["inter"].push_back(entry(e.p, e.ip, "node_gbps", e.node_gbps, e.alpha_us));
  }
  return j;
}

}  // namespace

double Machine::peak() const {
  if (peak_tflops) return *peak_tflops;
  if (auto p = metrics::peak_tflops(gpu_name, precision)) return *p;
  throw UsageError("machine " + name + ": peak unknown for device '" + gpu_name + "' (" +
                   precision + "): give gpu.peak_tflops or a GEMM table (ovb-model calibrate)");
}

std::optional<double> Machine::gemm_ceiling_tflops() const {
  if (gemm_max_efficiency <= 0) return std::nullopt;
  return peak() * gemm_max_efficiency;
}

double Machine::memory_efficiency_for(MemClass c) const {
  const auto it = memory_efficiency_by_class.find(c);
  return it != memory_efficiency_by_class.end() ? it->second : memory_efficiency;
}

double Machine::blocking_wait_us(double compute_us) const {
  double c0 = 0, w0 = 0;
  for (const BlockingWaitPoint& p : blocking_wait) {
    if (compute_us <= p.compute_us)
      return p.compute_us > c0 ? w0 + (p.wait_us - w0) * (compute_us - c0) / (p.compute_us - c0)
                               : p.wait_us;
    c0 = p.compute_us;
    w0 = p.wait_us;
  }
  return w0;
}

Machine machine_from_json(const json& j, const std::string& origin) {
  const Reader top(j, origin, "");
  Machine m;
  m.origin = origin;
  m.name = top.string("name");
  if (top.has("description")) m.description = top.string("description");
  m.gpus_per_node = top.integer("gpus_per_node");
  if (top.has("ranks_per_device")) m.ranks_per_device = top.integer("ranks_per_device");

  const Reader gpu = top.child("gpu");
  m.gpu_name = gpu.string("name");
  if (gpu.has("peak_tflops")) m.peak_tflops = gpu.positive("peak_tflops");
  if (gpu.has("precision")) m.precision = gpu.string("precision");
  m.memory_bytes = gpu.positive("memory_bytes");
  m.memory_usable_fraction = gpu.number_or("memory_usable_fraction", m.memory_usable_fraction);
  m.memory_bandwidth_gbps = gpu.positive("memory_bandwidth_gbps");
  m.memory_efficiency = gpu.number_or("memory_efficiency", m.memory_efficiency);
  m.gemm_efficiency = gpu.positive("gemm_efficiency");
  if (gpu.has("gemm_max_efficiency")) {
    m.gemm_max_efficiency = gpu.positive("gemm_max_efficiency");
    if (m.gemm_max_efficiency > 1)
      gpu.fail_key("gemm_max_efficiency", "must be at most 1 (a fraction of peak)");
  }
  if (gpu.has("gemm_training_factor")) {
    m.gemm_training_factor = gpu.positive("gemm_training_factor");
    if (m.gemm_training_factor > 1)
      gpu.fail_key("gemm_training_factor",
                   "must be at most 1 (training's GEMM rate over the table's)");
  }
  m.attention_efficiency = gpu.number_or("attention_efficiency", m.attention_efficiency);
  m.unfused_attention_efficiency = gpu.number_or("unfused_attention_efficiency", 0);
  m.kernel_overhead_us = gpu.number_or("kernel_overhead_us", 0);
  m.flash_attention = gpu.boolean_or("flash_attention", true);
  m.fused_epilogues = gpu.boolean_or("fused_epilogues", false);
  if (gpu.has("sms")) m.sms = gpu.integer("sms");
  if (gpu.has("gemm_tiles")) {
    const json& a = gpu.array("gemm_tiles");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader e = gpu.element(a[i], i, "gemm_tiles");
      m.gemm_tiles.push_back({e.integer("m"), e.integer("n")});
    }
  }
  for (const char* f : {"memory_usable_fraction", "memory_efficiency", "attention_efficiency",
                        "unfused_attention_efficiency"})
    if (gpu.has(f)) gpu.positive(f);
  if (gpu.has("memory_efficiency_by_class")) {
    const Reader by = gpu.child("memory_efficiency_by_class");
    for (const auto& [key, value] : by.raw().items()) {
      const auto c = find_mem_class(key);
      if (!c) by.fail_key(key.c_str(), "is not a memory-bound kernel class (one of " +
                                           mem_class_names() + ")");
      m.memory_efficiency_by_class[*c] = by.positive(key.c_str());
    }
  }

  if (top.has("gemm_table")) {
    const json& a = top.array("gemm_table");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader e = top.element(a[i], i, "gemm_table");
      GemmPoint g{static_cast<std::int64_t>(e.positive("m")),
                  static_cast<std::int64_t>(e.positive("n")),
                  static_cast<std::int64_t>(e.positive("k")), e.positive("tflops"), ""};
      if (e.has("dtype")) g.dtype = e.string("dtype");
      m.gemm_table.push_back(g);
    }
  }

  const Reader comm = top.child("comm");
  m.comm_default = read_comm(comm.child("default"), true);
  for (CollKind k : kKinds) {
    const std::string key(name_of(k));
    if (comm.has(key.c_str()))
      m.comm_kind[static_cast<int>(k)] = read_comm(comm.child(key.c_str()), false);
  }

  const Reader inter = top.child("interference");
  m.compute_slowdown = inter.number("compute_slowdown");
  m.comm_slowdown = inter.number("comm_slowdown");
  if (inter.has("blocking_wait")) {
    const json& a = inter.array("blocking_wait");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader e = inter.element(a[i], i, "blocking_wait");
      BlockingWaitPoint p{e.positive("compute_us"), e.number("wait_us")};
      if (!(p.wait_us >= 0))
        e.fail_key("wait_us", "must be >= 0, got " + std::to_string(p.wait_us));
      if (!m.blocking_wait.empty() && p.compute_us <= m.blocking_wait.back().compute_us)
        e.fail_key("compute_us", "must grow from one point to the next");
      m.blocking_wait.push_back(p);
    }
  }
  if (top.has("sources")) m.sources = j.at("sources");
  if (top.has("calibration")) m.calibration = j.at("calibration");
  return m;
}

json machine_to_json(const Machine& m) {
  json j;
  j["name"] = m.name;
  if (!m.description.empty()) j["description"] = m.description;
  j["gpus_per_node"] = m.gpus_per_node;
  j["ranks_per_device"] = m.ranks_per_device;
  json gpu = {{"name", m.gpu_name},
              {"precision", m.precision},
              {"memory_bytes", m.memory_bytes},
              {"memory_usable_fraction", m.memory_usable_fraction},
              {"memory_bandwidth_gbps", m.memory_bandwidth_gbps},
              {"memory_efficiency", m.memory_efficiency},
              {"gemm_efficiency", m.gemm_efficiency},
              {"attention_efficiency", m.attention_efficiency},
              {"kernel_overhead_us", m.kernel_overhead_us},
              {"flash_attention", m.flash_attention}};
  if (m.peak_tflops) gpu["peak_tflops"] = *m.peak_tflops;
  if (m.gemm_max_efficiency > 0) gpu["gemm_max_efficiency"] = m.gemm_max_efficiency;
  if (m.gemm_training_factor != 1) gpu["gemm_training_factor"] = m.gemm_training_factor;
  if (m.unfused_attention_efficiency > 0)
    gpu["unfused_attention_efficiency"] = m.unfused_attention_efficiency;
  if (m.fused_epilogues) gpu["fused_epilogues"] = true;
  if (!m.memory_efficiency_by_class.empty()) {
    json by = json::object();
    for (const auto& [c, e] : m.memory_efficiency_by_class) by[std::string(name_of(c))] = e;
    gpu["memory_efficiency_by_class"] = by;
  }
  if (m.sms > 0) gpu["sms"] = m.sms;
  for (const auto& t : m.gemm_tiles) gpu["gemm_tiles"].push_back({{"m", t[0]}, {"n", t[1]}});
  j["gpu"] = gpu;
  if (!m.gemm_table.empty()) {
    j["gemm_table"] = json::array();
    for (const GemmPoint& g : m.gemm_table) {
      json e = {{"m", g.m}, {"n", g.n}, {"k", g.k}, {"tflops", g.tflops}};
      if (!g.dtype.empty()) e["dtype"] = g.dtype;
      j["gemm_table"].push_back(e);
    }
  }
  j["comm"]["default"] = comm_to_json(m.comm_default);
  for (CollKind k : kKinds)
    if (const auto& c = m.comm_kind[static_cast<int>(k)])
      j["comm"][std::string(name_of(k))] = comm_to_json(*c);
  j["interference"] = {{"compute_slowdown", m.compute_slowdown},
                       {"comm_slowdown", m.comm_slowdown}};
  for (const BlockingWaitPoint& p : m.blocking_wait)
    j["interference"]["blocking_wait"].push_back(
        {{"compute_us", p.compute_us}, {"wait_us", p.wait_us}});
  if (!m.sources.is_null()) j["sources"] = m.sources;
  if (!m.calibration.is_null()) j["calibration"] = m.calibration;
  return j;
}

std::string machines_dir() {
  if (const char* env = std::getenv("OVB_MACHINES_DIR"); env && *env) return env;
  return OVB_MACHINES_DIR;
}

std::vector<std::string> preset_machine_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(machines_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine load_machine(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::string path = name_or_path;
  if (!fs::exists(path)) {
    const fs::path preset = fs::path(machines_dir()) / (name_or_path + ".json");
    if (name_or_path.find('/') == std::string::npos && fs::exists(preset)) {
      path = preset.string();
    } else {
      std::string known;
      for (const std::string& n : preset_machine_names()) known += (known.empty() ? "" : ", ") + n;
      throw UsageError("machine '" + name_or_path + "': no such file, and not a preset (known: " +
                       (known.empty() ? "none in " + machines_dir() : known) + ")");
    }
  }
  return machine_from_json(read_json(path), path);
}

}  // namespace ovb::model
