// Streaming Chrome-trace reader: a SAX handler that builds one event at a time (see
// trace_reader.hpp).
#include "trace_reader.hpp"

#include <cctype>
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <streambuf>

#include "ovb/error.hpp"

#ifdef OVB_TRACE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ovb::trace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::optional<std::int64_t> us_text_to_ns(std::string_view t) {
  if (t.empty()) return std::nullopt;
  if (t.find_first_of("eE") != std::string_view::npos) {
    char* end = nullptr;
    const std::string s(t);
    const double v = std::strtod(s.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(v * 1000.0));
  }
  std::size_t i = 0;
  const bool neg = t[0] == '-';
  if (neg || t[0] == '+') ++i;
  std::int64_t whole = 0, frac = 0;
  bool digits = false;
  for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i, digits = true)
    whole = whole * 10 + (t[i] - '0');
  int frac_digits = 0;
  bool round_up = false;
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i, digits = true) {
      if (frac_digits < 3)
        frac = frac * 10 + (t[i] - '0'), ++frac_digits;
      else if (frac_digits++ == 3)
        round_up = t[i] >= '5';  // nearest nanosecond: only the 4th decimal decides
    }
  }
  if (i != t.size() || !digits) return std::nullopt;
  for (int d = std::min(frac_digits, 3); d < 3; ++d) frac *= 10;
  const std::int64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
  return neg ? -ns : ns;
}

namespace {

#ifdef OVB_TRACE_HAVE_ZLIB
// gzip input as a streambuf, so compressed traces (.json.gz, as PyTorch writes them) stream too.
class GzBuf : public std::streambuf {
 public:
  explicit GzBuf(const std::string& path) : f_(gzopen(path.c_str(), "rb")) {}
  ~GzBuf() override {
    if (f_) gzclose(f_);
  }
  bool ok() const { return f_ != nullptr; }

 protected:
  int_type underflow() override {
    const int n = gzread(f_, buf_, sizeof buf_);
    if (n <= 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  gzFile f_;
  char buf_[1 << 16];
};
#endif

// Builds the events of traceEvents one at a time and the other top-level values whole.
class TraceSax {
 public:
  TraceSax(std::string path, const std::function<void(RawEvent&)>& cb)
      : path_(std::move(path)), cb_(cb) {}

  bool null() { return scalar(json(nullptr), {}); }
  bool boolean(bool v) { return scalar(json(v), {}); }
  bool number_integer(json::number_integer_t v) {
    return scalar(json(v), std::optional<std::int64_t>(v * 1000));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar(json(v), std::optional<std::int64_t>(static_cast<std::int64_t>(v) * 1000));
  }
  bool number_float(json::number_float_t v, const json::string_t& raw) {
    return scalar(json(v), us_text_to_ns(raw));
  }
  bool string(json::string_t& v) {
    auto ns = us_text_to_ns(v);  // some writers quote their times
    return scalar(json(std::move(v)), ns);
  }
  bool binary(json::binary_t&) { return scalar(json(nullptr), {}); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) {
    if (depth_ == 0) {  // the bare array form: the whole file is the event list
      top_array_ = true;
      events_depth_ = depth_ = 1;
      saw_events_ = true;
      return true;
    }
    if (!building() && depth_ == 1 && !top_array_ && key_ == "traceEvents") {
      events_depth_ = depth_ = 2;
      saw_events_ = true;
      return true;
    }
    return open(json::array());
  }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    if (stack_.size() == 1 && in_event_) event_key_ = key_;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() {
    if (!building() && events_depth_ > 0 && depth_ == events_depth_) {
      events_depth_ = 0;  // end of traceEvents
      --depth_;
      return true;
    }
    return close();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    if (const auto p = what.find("] "); what.rfind("[json.exception", 0) == 0 && p != what.npos)
      what = what.substr(p + 2);
    throw UsageError("'" + path_ + "': malformed JSON at byte " + std::to_string(position) + ": " +
                     what);
  }

  TraceFileInfo finish(std::size_t bytes) {
    if (!saw_events_)
      throw UsageError("'" + path_ + "' is not a Chrome trace: it has no \"traceEvents\" array");
    info_.bytes = bytes;
    return std::move(info_);
  }

 private:
  bool building() const { return !stack_.empty(); }

  bool open(json value) {
    if (depth_ == 0) {  // the top-level object
      depth_ = 1;
      return true;
    }
    ++depth_;
    if (building()) {
      json& parent = *stack_.back();
      json* child = parent.is_array() ? &parent.emplace_back(std::move(value))
                                      : &(parent[key_] = std::move(value));
      stack_.push_back(child);
      return true;
    }
    // A new root: an event (element of traceEvents) or a top-level value.
    in_event_ = events_depth_ > 0 && depth_ == events_depth_ + 1;
    root_ = std::move(value);
    stack_.push_back(&root_);
    if (in_event_) {
      event_ = RawEvent{};
      event_key_.clear();
    } else {
      top_key_ = key_;
    }
    return true;
  }

  bool close() {
    --depth_;
    if (!building()) return true;  // the top-level object
    stack_.pop_back();
    if (!stack_.empty()) return true;
    if (in_event_) {
      event_.json = std::move(root_);
      deliver();
    } else {
      info_.top[top_key_] = std::move(root_);
    }
    in_event_ = false;
    return true;
  }

  bool scalar(json v, std::optional<std::int64_t> as_ns) {
    if (building()) {
      json& parent = *stack_.back();
      if (parent.is_array()) {
        parent.push_back(std::move(v));
      } else {
        if (in_event_ && stack_.size() == 1) {
          if (event_key_ == "ts") event_.ts_ns = as_ns;
          if (event_key_ == "dur") event_.dur_ns = as_ns;
        }
        parent[key_] = std::move(v);
      }
    } else if (events_depth_ > 0 && depth_ == events_depth_) {
      event_ = RawEvent{std::move(v), std::nullopt, std::nullopt};  // not an object: malformed
      deliver();
    } else if (depth_ == 1 && !top_array_) {
      info_.top[key_] = std::move(v);
    } else {
      throw UsageError("'" + path_ + "' is not a Chrome trace: its JSON is not an object or array");
    }
    return true;
  }

  void deliver() {
    ++info_.events;
    cb_(event_);
  }

  std::string path_;
  const std::function<void(RawEvent&)>& cb_;
  TraceFileInfo info_;
  int depth_ = 0;         // containers open
  int events_depth_ = 0;  // depth of the traceEvents array while inside it, else 0
  bool top_array_ = false;
  bool saw_events_ = false;
  bool in_event_ = false;  // the value being built is an event
  std::vector<json*> stack_;
  json root_;
  RawEvent event_;
  std::string key_, event_key_, top_key_;
};

// Counts the bytes the parser consumed (for the report and the byte position of errors).
struct CountingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  std::istreambuf_iterator<char> it;
  std::size_t* count;
  char operator*() const { return *it; }
  CountingIterator& operator++() {
    ++it;
    ++*count;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return it == o.it; }
  bool operator!=(const CountingIterator& o) const { return it != o.it; }
};

bool is_gzip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char m[2] = {0, 0};
  f.read(reinterpret_cast<char*>(m), 2);
  return f.gcount() == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

}  // namespace

TraceFileInfo read_trace(const std::string& path, const std::function<void(RawEvent&)>& on_event) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError("'" + path + "' is a folder, not a trace file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError("cannot read trace '" + path + "': " + std::strerror(errno));
  std::streambuf* buf = file.rdbuf();
#ifdef OVB_TRACE_HAVE_ZLIB
  std::unique_ptr<GzBuf> gz;
  if (is_gzip(path)) {
    gz = std::make_unique<GzBuf>(path);
    if (!gz->ok()) throw UsageError("cannot open compressed trace '" + path + "'");
    buf = gz.get();
  }
#else
  if (is_gzip(path))
    throw UsageError("'" + path + "' is gzip-compressed and this build has no zlib: gunzip it");
#endif
  // Binary data (a core file, a .nsys-rep) is said as such, not as the JSON parser's complaint
  // about some byte; text that is not JSON still gets the parser's message and position.
  std::size_t consumed = 0;
  const int c = buf->sgetc();
  if (c != std::char_traits<char>::eof() && !std::isprint(c) && !std::isspace(c)) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(c) & 0xffu);
    throw UsageError("'" + path + "' is not a Chrome trace (JSON text): it starts with byte " +
                     hex + ", binary data");
  }
  std::size_t events = 0;
  const std::function<void(RawEvent&)> counted = [&](RawEvent& e) {
    ++events;
    on_event(e);
  };
  TraceSax sax(path, counted);  // keeps a reference: `counted` must outlive it
  CountingIterator first{std::istreambuf_iterator<char>(buf), &consumed};
  CountingIterator last{std::istreambuf_iterator<char>(), &consumed};
  json::sax_parse(first, last, &sax);
  TraceFileInfo info = sax.finish(consumed);
  // An empty event list would analyse to a table of zeros that looks like a measurement.
  if (events == 0)
    throw UsageError("'" + path + "' has no trace events: nothing to analyse (was the traced "
                     "program stopped before it wrote any?)");
  return info;
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> traces, other_json;
    for (const auto& entry : fs::directory_iterator(a, ec)) {
      const std::string name = entry.path().filename().string();
      auto ends = [&](std::string_view s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
      };
      if (!entry.is_regular_file()) continue;
      if (ends("trace.json") || ends("trace.json.gz"))
        traces.push_back(entry.path().string());
      else if (ends(".json") || ends(".json.gz"))
        other_json.push_back(entry.path().string());
    }
    // Prefer files named like traces, so an analysis written into the folder is not read back.
    auto& use = traces.empty() ? other_json : traces;
    if (use.empty()) throw UsageError("folder '" + a + "' has no *.json trace files");
    std::sort(use.begin(), use.end());
    out.insert(out.end(), use.begin(), use.end());
  }
  return out;
}

}  // namespace ovb::trace
