// Unit tests of the shared command-line parsing (ovb/cli.hpp): an unknown option or subcommand is
// named first, before CLI11's complaint about a required option it made impossible to give.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ovb/cli.hpp"
#include "ovb/cli_words.hpp"
#include "ovb/error.hpp"

namespace ovb {
namespace {

struct Argv {
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    words.insert(words.begin(), "prog");
    for (std::string& s : words) ptrs.push_back(s.data());
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
};

// The shape of ovb-model and ovb-trace: subcommands with required options and positionals.
struct Tool {
  CLI::App app{"tool", "tool"};
  std::string machine, json;
  std::vector<std::string> files;
  int top = 0;
  Tool() {
    app.require_subcommand(1);
    CLI::App* search = app.add_subcommand("search", "search");
    search->add_option("--machine", machine)->required();
    search->add_option("--top", top);
    search->add_flag("--verbose");
    CLI::App* analyze = app.add_subcommand("analyze", "analyze");
    analyze->add_option("files", files)->required();
    analyze->add_option("--json", json);
    app.add_subcommand("merge", "merge");
  }
  std::string unknown(std::vector<std::string> words) {
    Argv a(std::move(words));
    return first_unknown_word(app, a.argc(), a.argv());
  }
  std::string error(std::vector<std::string> words) {
    Argv a(std::move(words));
    try {
      parse_cli(app, a.argc(), a.argv(), LaunchContext{});
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(Cli, TheUnknownWordIsNamedBeforeAMissingRequiredOption) {
  EXPECT_EQ(Tool().error({"search", "--frob"}),
            "unknown option '--frob' for 'search' (see tool --help)");
  EXPECT_EQ(Tool().error({"analyse", "traces/"}),
            "unknown subcommand 'analyse' (expected one of: search, analyze, merge) (see tool "
            "--help)");
  // Without an unknown word, CLI11's own message stays.
  EXPECT_NE(Tool().error({"search", "--top", "3"}).find("--machine is required"),
            std::string::npos);
}

TEST(Cli, OptionValuesAndPositionalsAreNotUnknownWords) {
  EXPECT_EQ(Tool().unknown({"search", "--machine", "m.json", "--top=3", "--verbose"}), "");
  EXPECT_EQ(Tool().unknown({"analyze", "a.json", "b.json", "--json", "out.json"}), "");
  EXPECT_EQ(Tool().unknown({"search", "--top", "-1", "--machine", "x"}), "");  // a value
  EXPECT_EQ(Tool().unknown({"analyze", "--jsn", "x"}), "unknown option '--jsn' for 'analyze'");
  EXPECT_EQ(Tool().unknown({"--frob"}), "unknown option '--frob'");
}

}  // namespace
}  // namespace ovb
