// Shared command-line options (see ovb/cli.hpp).
#include "ovb/cli.hpp"
#include "ovb/cli_words.hpp"

#include <cctype>
#include <iostream>
#include <string>

#include "ovb/error.hpp"
#include "ovb/output_file.hpp"
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

// Whether a given --json, --out or --timeline (in `app` or a subcommand given) names standard
// output.
bool result_to_stdout(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0) continue;
    bool named = false;
    for (const std::string& n : o->get_lnames())
      named = named || n == "json" || n == "out" || n == "timeline";
    if (!named) continue;
    for (const std::string& v : o->results())
      if (is_stdout_name(v)) return true;
  }
  for (const CLI::App* sub : app.get_subcommands())
    if (result_to_stdout(*sub)) return true;
  return false;
}

const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (; app; app = app->get_parent())
    if (const CLI::Option* o = app->get_option_no_throw(name)) return o;
  return nullptr;
}

CLI::App* find_subcommand(CLI::App& app, const std::string& word) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(word)) return sub;
  return nullptr;
}

std::string subcommand_names(CLI::App& app) {
  std::string out;
  for (CLI::App* sub : app.get_subcommands({})) out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

}  // namespace

std::string first_unknown_word(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  bool value_next = false;  // the previous word was an option that takes a value
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") break;
    if (value_next) {
      value_next = false;
      continue;
    }
    const bool number = w.size() > 1 && (std::isdigit(static_cast<unsigned char>(w[1])) ||
                                         w[1] == '.');
    if (w.size() > 1 && w[0] == '-' && !number) {
      const std::string name = w.substr(0, w.find('='));
      const CLI::Option* o = find_option(cur, name.size() > 2 && name[1] != '-'
                                                  ? name.substr(0, 2)  // -abc: short option -a
                                                  : name);
      if (!o)
        return "unknown option '" + name + "'" +
               (cur != &app ? " for '" + cur->get_name() + "'" : std::string());
      value_next = w.find('=') == std::string::npos && (name[1] == '-' || name.size() == 2) &&
                   o->get_items_expected_min() > 0;
      continue;
    }
    if (cur->get_subcommands({}).empty()) continue;  // a positional argument
    CLI::App* sub = find_subcommand(*cur, w);
    if (!sub) return "unknown subcommand '" + w + "' (expected one of: " + subcommand_names(*cur) + ")";
    cur = sub;
  }
  return "";
}

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
    // CLI11 checks required options before it complains about words it does not know, so a
    // typo would be reported as a missing option: the unknown word is the real problem.
    const std::string unknown = first_unknown_word(app, argc, argv);
    throw UsageError((unknown.empty() ? std::string(e.what()) : unknown) + " (see " +
                     app.get_name() + " --help)");
  }
  if (result_to_stdout(app)) reserve_stdout_for_results();
}

}  // namespace ovb
