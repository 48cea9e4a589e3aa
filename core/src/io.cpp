// Result files written whole (through OutputFile) and JSON reading (see ovb/io.hpp).
#include "ovb/io.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ovb/error.hpp"

namespace ovb {

static std::string sys_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

void atomic_write(const std::string& path, const std::string& content) {
  OutputFile out(path);
  out.write(content);
  out.commit();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  // Non-finite numbers (e.g. an undefined ratio) are written as null, never as invalid JSON.
  atomic_write(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(sys_error("cannot read", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("'" + path + "' is not valid JSON: " + e.what());
  }
}

}  // namespace ovb
