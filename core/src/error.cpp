// Formatting of library-call errors (see ovb/error.hpp).
#include "ovb/error.hpp"

#include <mpi.h>

#include <sstream>

namespace ovb {

void raise_call_error(std::string_view library, std::string_view call, std::string_view message,
                      const char* file, int line) {
  std::ostringstream os;
  os << library << " error at " << file << ':' << line << ": " << call << " failed: " << message;
  throw Error(os.str());
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

}  // namespace ovb
