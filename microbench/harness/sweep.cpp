// Sweep files (see sweep.hpp).
#include "harness/sweep.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <vector>

#include "ovb/error.hpp"
#include "ovb/io.hpp"

#ifndef OVB_MICROBENCH_SWEEP_DIR
#error "OVB_MICROBENCH_SWEEP_DIR must be defined by the build (microbench/CMakeLists.txt)"
#endif

namespace ovb::mb {

std::string sweep_path(std::string_view s) {
  const bool is_path =
      s.find('/') != std::string_view::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
  if (is_path) return std::string(s);
  const char* dir = std::getenv("OVB_SWEEP_DIR");
  return std::string(dir && *dir ? dir : OVB_MICROBENCH_SWEEP_DIR) + "/" + std::string(s) + ".json";
}

namespace {
std::vector<std::string> value_strings(const nlohmann::json& v, const std::string& where) {
  std::vector<std::string> out;
  auto one = [&](const nlohmann::json& x) {
    if (x.is_string())
      out.push_back(x.get<std::string>());
    else if (x.is_boolean())
      out.push_back(x.get<bool>() ? "true" : "false");
    else if (x.is_number_integer())
      out.push_back(std::to_string(x.get<long long>()));
    else if (x.is_number())
      out.push_back(x.dump());
    else
      throw UsageError(where + ": values must be strings, numbers, booleans or lists of them");
  };
  if (v.is_array()) {
    for (const auto& x : v) one(x);
  } else {
    one(v);
  }
  return out;
}
}  // namespace

namespace {
void apply_section(CLI::App& app, const nlohmann::json& section, const std::string& path,
                   const std::string& name, const std::string& prog) {
  for (const auto& [key, value] : section.items()) {
    if (!key.empty() && key[0] == '_') continue;  // comments: "_note": "..."
    const std::string where = "sweep file " + path + ": " + name + "." + key;
    CLI::Option* opt = app.get_option_no_throw("--" + key);
    if (!opt) throw UsageError(where + ": no such option (see " + prog + " --help)");
    if (opt->count() > 0) continue;  // the command line (or the backend's section) wins
    try {
      opt->add_result(value_strings(value, where));
      opt->run_callback();
    } catch (const CLI::Error& e) {
      throw UsageError(where + ": " + e.what());
    } catch (const UsageError& e) {  // a typed axis's parser (harness/axes.hpp)
      throw UsageError(where + ": " + e.what());
    }
  }
}
}  // namespace

void apply_sweep(CLI::App& app, std::string_view program, std::string_view name_or_path,
                 std::string_view backend) {
  const std::string path = sweep_path(name_or_path);
  const nlohmann::json j = read_json(path);
  const std::string prog(program);
  if (!j.is_object() || !j.contains(prog) || !j[prog].is_object())
    throw UsageError("sweep file " + path + " has no \"" + prog + "\" section");
  const std::string specific = prog + "@" + std::string(backend);
  if (!backend.empty() && j.contains(specific)) {
    if (!j[specific].is_object())
      throw UsageError("sweep file " + path + ": \"" + specific + "\" must be an object");
    apply_section(app, j[specific], path, specific, prog);
  }
  apply_section(app, j[prog], path, prog, prog);
}

}  // namespace ovb::mb
