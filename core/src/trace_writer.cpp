// Streaming Kineto-dialect trace writer (see trace_writer.hpp).
#include "ovb/trace_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace ovb::trace {

std::string format_us(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                static_cast<unsigned long long>(a / 1000),
                static_cast<unsigned long long>(a % 1000));
  return buf;
}

static void append_value(std::string& out, const nlohmann::ordered_json& v) {
  // Non-finite numbers become null rather than invalid JSON.
  out += v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string format_flat(const nlohmann::ordered_json& obj) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : obj.items()) {
    if (!first) out += ", ";
    first = false;
    out += nlohmann::ordered_json(k).dump(-1, ' ', false,
                                          nlohmann::ordered_json::error_handler_t::replace);
    out += ": ";
    append_value(out, v);
  }
  return out + "}";
}

static std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TraceWriter::TraceWriter(std::string path, const TraceHeader& header)
    : out_(std::move(path)), base_ns_(header.base_ns) {
  // Header first, with distributedInfo before anything else named "rank": HTA reads the rank with
  // a regex that takes the first `"rank": N` it finds.
  nlohmann::ordered_json h;
  h["schemaVersion"] = 1;
  h["distributedInfo"] = {
      {"backend", header.backend}, {"rank", header.rank}, {"world_size", header.world_size}};
  h["deviceProperties"] = header.device_properties;
  h["baseTimeNanoseconds"] = header.base_ns;
  h["displayTimeUnit"] = "ms";
  for (const auto& [k, v] : header.extra.items()) h[k] = v;
  std::string text = h.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  text.pop_back();  // the closing brace: the events follow
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  put(text);
  put(",\n  \"traceEvents\": [");
}

void TraceWriter::put(std::string_view s) {
  out_.write(s);
}

void TraceWriter::begin_event() {
  put(events_ == 0 ? "\n" : ",\n");
  ++events_;
}

void TraceWriter::complete(const CompleteEvent& e) {
  begin_event();
  std::string s = "  {\n    \"ph\": \"X\", \"cat\": " + json_string(e.cat) +
                  ", \"name\": " + json_string(e.name) + ", \"pid\": " + std::to_string(e.pid) +
                  ", \"tid\": " + std::to_string(e.tid) +
                  ",\n    \"ts\": " + format_us(e.begin_ns - base_ns_) +
                  ", \"dur\": " + format_us(std::max<std::int64_t>(0, e.end_ns - e.begin_ns));
  if (e.args && !e.args->empty()) s += ",\n    \"args\": " + format_flat(*e.args);
  s += "\n  }";
  put(s);
}

void TraceWriter::process_name(std::int64_t pid, std::string_view name, std::int64_t sort_index) {
  begin_event();
  put("  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(pid) +
      ", \"tid\": 0, \"args\": {\"name\": " + json_string(name) + "}},\n" +
      "  {\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": " + std::to_string(pid) +
      ", \"tid\": 0, \"args\": {\"sort_index\": " + std::to_string(sort_index) + "}}");
  ++events_;
}

void TraceWriter::thread_name(std::int64_t pid, std::int64_t tid, std::string_view name,
                              std::int64_t sort_index) {
  begin_event();
  const std::string where = "\"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid);
  put("  {\"ph\": \"M\", \"name\": \"thread_name\", " + where + ", \"args\": {\"name\": " +
      json_string(name) + "}},\n  {\"ph\": \"M\", \"name\": \"thread_sort_index\", " + where +
      ", \"args\": {\"sort_index\": " + std::to_string(sort_index) + "}}");
  ++events_;
}

void TraceWriter::raw(const nlohmann::json& event, std::optional<std::int64_t> ts_ns) {
  begin_event();
  if (!event.is_object()) {
    put("  " + event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  // Kineto's layout: identity on the first line, times on the second, args on the third.
  nlohmann::ordered_json head = nlohmann::ordered_json::object(), times = head;
  const nlohmann::json* args = nullptr;
  for (const auto& [k, v] : event.items()) {
    if (k == "args")
      args = &v;
    else if (k == "ts" || k == "dur")
      times[k] = v;
    else
      head[k] = v;
  }
  std::vector<std::string> lines;
  if (!head.empty()) lines.push_back(format_flat(head));
  if (ts_ns) times["ts"] = format_us(*ts_ns - base_ns_);
  if (!times.empty()) {
    std::string t;
    for (const auto& [k, v] : times.items()) {
      if (!t.empty()) t += ", ";
      // A replaced ts is already formatted: written as a number, not as a string.
      t += json_string(k) + ": ";
      if (k == "ts" && ts_ns)
        t += v.get<std::string>();
      else
        append_value(t, v);
    }
    lines.push_back("{" + t + "}");
  }
  if (args) {
    std::string a = "{\"args\": ";
    if (args->is_object())
      a += format_flat(nlohmann::ordered_json(*args));
    else
      append_value(a, nlohmann::ordered_json(*args));
    lines.push_back(a + "}");
  }
  std::string s = "  {";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // Each line is a flat object: drop its braces and join them.
    s += (i ? ",\n    " : "\n    ") + lines[i].substr(1, lines[i].size() - 2);
  }
  put(s + "\n  }");
}

void TraceWriter::finish() {
  if (finished_) return;
  put("\n  ]\n}\n");
  out_.commit();
  finished_ = true;
}

}  // namespace ovb::trace
