// An environment for tests of code that reads variables through a replaceable getenv
// (launcher_rank, the tracer's capture window): only the variables set in `vars` exist.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace ovb::test {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> fn() const {
    return [this](const char* n) {
      const auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

}  // namespace ovb::test
