// Errors: one exception type for the whole suite and the check macro for MPI calls.
// Library code throws; only main() (see run_main.hpp) decides to print and exit.
// CUDA, cuBLAS, NCCL and CUPTI checks live in ovb/cuda/check.hpp (they need the CUDA headers).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ovb {

// Any failure the suite reports: a library call that failed, or input that cannot be used.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the user (options, sizes, grids, files): main() exits with status 2 and prints
// the message once (rank 0), since every rank sees the same input.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Throws Error("<library> error at <file>:<line>: <call> failed: <message>").
[[noreturn]] void raise_call_error(std::string_view library, std::string_view call,
                                   std::string_view message, const char* file, int line);

// MPI's own text for an error code.
std::string mpi_error_string(int code);

}  // namespace ovb

#define OVB_CHECK_MPI(call)                                                                     \
  do {                                                                                          \
    const int ovb_mpi_rc_ = (call);                                                             \
    if (ovb_mpi_rc_ != 0 /* MPI_SUCCESS */)                                                     \
      ::ovb::raise_call_error("MPI", #call, ::ovb::mpi_error_string(ovb_mpi_rc_), __FILE__,     \
                              __LINE__);                                                        \
  } while (0)
