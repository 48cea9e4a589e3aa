// The backend a microbench unit test runs on, made by name ("host", "cuda") for the test
// process's launch context.
#pragma once

#include <memory>

#include "ovb/backend.hpp"
#include "ovb/test_main.hpp"

namespace ovb::mb {

inline std::unique_ptr<Backend> test_backend(const char* name) {
  BackendOptions o;
  o.name = name;
  return make_backend(o, ovb::testing::launch());
}

}  // namespace ovb::mb
