// Streaming reader of Chrome trace JSON: this suite's traces, Kineto's and PyTorch profiler's
// (object form {"traceEvents": [...], ...} or the bare array form), plain or gzip-compressed.
// A SAX parse hands over one element of traceEvents at a time and keeps nothing else of it, so
// memory does not grow with the file: a 1 GB trace is read in the memory of its largest event.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ovb::trace {

struct RawEvent {
  nlohmann::json json;                // the element as parsed (an object for any real event)
  std::optional<std::int64_t> ts_ns;  // "ts" (microseconds) as exact nanoseconds, from its text
  std::optional<std::int64_t> dur_ns;
};

struct TraceFileInfo {
  nlohmann::json top = nlohmann::json::object();  // every top-level key except traceEvents
  std::size_t events = 0;
  std::size_t bytes = 0;  // bytes of JSON read (uncompressed)
};

// Reads `path`, calling on_event for every element of traceEvents (the event may be moved from).
// Throws UsageError naming the file: unreadable; malformed or truncated JSON (with the byte
// position where parsing failed); not a trace (no traceEvents array).
TraceFileInfo read_trace(const std::string& path, const std::function<void(RawEvent&)>& on_event);

// Microseconds written as JSON number text ("12", "12.3456", "-1.5", "1.2e3") to nanoseconds,
// rounded to the nearest; nullopt when the text is not a number.
std::optional<std::int64_t> us_text_to_ns(std::string_view text);

// The inputs named on a command line: a folder stands for its *.json and *.json.gz files
// (sorted); anything else is taken as a file. Throws UsageError for a folder without traces.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& args);

}  // namespace ovb::trace
