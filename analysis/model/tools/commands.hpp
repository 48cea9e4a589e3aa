// The subcommands of ovb-model: each registers its options on a CLI11 subcommand and runs when
// that subcommand was given (see docs/model.md for every option).
#pragma once

#include <memory>

#include "ovb/cli_fwd.hpp"
#include "ovb/launch.hpp"

namespace ovb::model::cli {

class Command {
 public:
  virtual ~Command() = default;
  virtual void setup(CLI::App& sub) = 0;
  virtual int run(const LaunchContext& ctx) = 0;
};

std::unique_ptr<Command> make_search();
std::unique_ptr<Command> make_explain();
std::unique_ptr<Command> make_calibrate();
std::unique_ptr<Command> make_compare();
std::unique_ptr<Command> make_versus();
std::unique_ptr<Command> make_validate();
std::unique_ptr<Command> make_export_chakra();
std::unique_ptr<Command> make_gemm();

}  // namespace ovb::model::cli
