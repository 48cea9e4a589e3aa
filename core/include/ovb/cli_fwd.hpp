// CLI11's App and Option declared, for headers that only name them (a parameter, a pointer): the
// whole <CLI/CLI.hpp> costs each translation unit that includes it seconds of compile time (CLI11
// 2.1 defines its validators as objects in every unit), so only the .cpp files that register or
// read options include it.
#pragma once

namespace CLI {
class App;
class Option;
}  // namespace CLI
