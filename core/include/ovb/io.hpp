// Result files: written atomically (temporary file in the same folder, fsync, rename), so a killed
// run never leaves a half-written result that a resumed sweep would take as finished; "-", devices
// and FIFOs are written through, never replaced (the rules: ovb/output_file.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ovb/output_file.hpp"  // check_writable, the rules behind atomic_write

namespace ovb {

// Writes `content` to `path` by OutputFile's rules, creating missing parent folders. Throws Error
// with the path and the system's reason on failure; an existing file at `path` is then left
// unchanged. check_writable (ovb/output_file.hpp) checks the place before a long run.
void atomic_write(const std::string& path, const std::string& content);

// atomic_write of j pretty-printed (2-space indent) with a final newline.
void write_json(const std::string& path, const nlohmann::json& j);

// Reads and parses a JSON file; throws UsageError naming the file (missing, unreadable, or the
// parse error with its byte position).
nlohmann::json read_json(const std::string& path);

}  // namespace ovb
