// Shared command-line options (see ovb/cli.hpp).
#include "ovb/cli.hpp"

#include <iostream>

#include "ovb/error.hpp"
#include "ovb/run_main.hpp"

namespace ovb {

namespace {

// A number > lo (strict) or >= lo; the message names the bound and the value given.
CLI::Validator at_least(double lo, bool strict, const std::string& type_name) {
  return CLI::Validator(
      [lo, strict](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "expects a number, got '" + text + "'";
        if (strict ? v > lo : v >= lo) return {};
        return std::string("must be ") + (strict ? "> " : ">= ") + CLI::detail::to_string(lo) +
               ", got " + text;
      },
      type_name);
}

}  // namespace

const CLI::Validator& positive() {
  static const CLI::Validator v = at_least(0, true, "POSITIVE");
  return v;
}

const CLI::Validator& non_negative() {
  static const CLI::Validator v = at_least(0, false, "NONNEGATIVE");
  return v;
}

void add_backend_options(CLI::App& app, BackendOptions& opts) {
  app.add_option("--backend", opts.name,
                 "auto (CUDA when built with it and a GPU is visible, else host), cuda or host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}))
      ->capture_default_str();
  app.add_option("--ranks-per-gpu", opts.ranks_per_gpu,
                 "Allow up to N ranks to share one GPU (loopback NCCL; also OVB_RANKS_PER_GPU)")
      ->check(ovb::positive());
}

void add_grid_options(CLI::App& app, GridShape& shape) {
  app.add_option("--gx", shape.gx, "Tensor-parallel size along X")->capture_default_str();
  app.add_option("--gy", shape.gy, "Tensor-parallel size along Y")->capture_default_str();
  app.add_option("--gz", shape.gz, "Tensor-parallel size along Z (weights sharded, FSDP-like)")
      ->capture_default_str();
  app.add_option("--gdata", shape.gdata, "Data-parallel size")->capture_default_str();
  app.add_option_function<std::string>(
         "--grid-order", [&shape](const std::string& s) { shape.order = GridShape::parse_order(s); },
         "Order of X/Y/Z placement, fastest-varying first (default x,y,z)");
}

void parse_cli(CLI::App& app, int argc, char** argv, const LaunchContext& ctx) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (ctx.rank == 0) std::cout << app.help();
    throw ExitRequest{0};
  } catch (const CLI::CallForAllHelp& e) {
    if (ctx.rank == 0) std::cout << app.help("", CLI::AppFormatMode::All);
    throw ExitRequest{0};
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see " + app.get_name() + " --help)");
  }
}

}  // namespace ovb
