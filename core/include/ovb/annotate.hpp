// Annotated ranges around phases, layers, collectives and measured regions.
// In CUDA builds every range is an NVTX range in the suite's own domain ("OverlapBench"), so
// Nsight and the suite's CUPTI tracer see it. In any build, a RangeRecorder installed by the
// profiler (host timeline) receives the same ranges, so the host backend writes the same traces.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace ovb {

// What a range is about; collectives carry their kind, group and bytes.
struct RangeInfo {
  std::string name;              // e.g. "fwd/layer3/qkv", "all_reduce x"
  std::string category;          // "phase", "layer", "collective", "compute", "measure"
  std::string coll_kind;         // collectives only: "all_reduce", ...
  std::string group;             // collectives only: "x", "y", "z", "data", "world"
  std::int64_t bytes = -1;       // collectives only: S of docs/metrics.md
  int ranks = -1;                // collectives only: size of the group, when the caller knows it
};

// The NVTX message of a range. Plain ranges: the name. Collectives (coll_kind set) also carry their
// metadata, "<name> #ovb kind=all_reduce group=x bytes=1048576 ranks=4" (unknown fields left
// out), so a tool that sees only NVTX messages - the injected tracer, Nsight - can label them.
// Header-only so that the injected tracer (profiling/) parses it without linking the core library.
inline std::string nvtx_message(const RangeInfo& r) {
  if (r.coll_kind.empty()) return r.name;
  std::string m = r.name + " #ovb kind=" + r.coll_kind;
  if (!r.group.empty()) m += " group=" + r.group;
  if (r.bytes >= 0) m += " bytes=" + std::to_string(r.bytes);
  if (r.ranks > 0) m += " ranks=" + std::to_string(r.ranks);
  return m;
}

// Inverse of nvtx_message: fills name, and for a message with the " #ovb " suffix the collective
// fields (category "collective"). Returns whether the message carried collective metadata.
inline bool parse_nvtx_message(std::string_view msg, RangeInfo& out) {
  const auto at = msg.find(" #ovb ");
  out.name = std::string(msg.substr(0, at));
  if (at == std::string_view::npos) return false;
  out.category = "collective";
  std::string_view rest = msg.substr(at + 6);
  while (!rest.empty()) {
    const auto sp = rest.find(' ');
    const std::string_view tok = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    const auto eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = tok.substr(0, eq), val = tok.substr(eq + 1);
    if (key == "kind") out.coll_kind = std::string(val);
    if (key == "group") out.group = std::string(val);
    if (key == "bytes") std::from_chars(val.data(), val.data() + val.size(), out.bytes);
    if (key == "ranks") std::from_chars(val.data(), val.data() + val.size(), out.ranks);
  }
  return !out.coll_kind.empty();
}

class RangeRecorder {
 public:
  virtual ~RangeRecorder() = default;
  virtual void begin(const RangeInfo& info) = 0;
  virtual void end() = 0;
};

// Installs (or removes, with nullptr) the process-wide recorder. Not owned.
void set_range_recorder(RangeRecorder* r);
RangeRecorder* range_recorder();

// RAII range: NVTX push/pop (CUDA builds) and recorder begin/end (when one is installed).
class ScopedRange {
 public:
  explicit ScopedRange(const RangeInfo& info);
  explicit ScopedRange(const std::string& name, const char* category = "phase");
  ~ScopedRange();
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

}  // namespace ovb
