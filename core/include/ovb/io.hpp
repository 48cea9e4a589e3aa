// Result files: written atomically (temporary file in the same folder, fsync, rename), so a killed
// run never leaves a half-written result that a resumed sweep would take as finished.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ovb {

// Writes `content` to `path` atomically, creating missing parent folders. Throws Error with the
// path and the system's reason on failure; an existing file at `path` is then left unchanged.
void atomic_write(const std::string& path, const std::string& content);

// Checks before a long run that atomic_write(path, ...) will be able to write there: creates the
// missing parent folders and a probe file beside `path` (removed again). Throws UsageError naming
// the path and the system's reason, so that a run does not fail only after its work is done.
void check_writable(const std::string& path);

// atomic_write of j pretty-printed (2-space indent) with a final newline.
void write_json(const std::string& path, const nlohmann::json& j);

// Reads and parses a JSON file; throws UsageError naming the file (missing, unreadable, or the
// parse error with its byte position).
nlohmann::json read_json(const std::string& path);

}  // namespace ovb
