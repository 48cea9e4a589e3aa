// The first word of a command line that an app does not know: parse_cli (ovb/cli.hpp) names it
// before CLI11's complaint about a required option, which a typo would otherwise hide.
#pragma once

#include <string>

#include "ovb/cli_fwd.hpp"

namespace ovb {

// "unknown option '--frob' for 'search'" or "unknown subcommand 'analyse' (expected one of: ...)"
// for the first word of argv that `app` (after its subcommands) does not know; "" when every word
// is known. A word after an option that takes a value is that value.
std::string first_unknown_word(CLI::App& app, int argc, char** argv);

}  // namespace ovb
