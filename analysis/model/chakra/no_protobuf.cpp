// ChakraTraceWriter in a build without protobuf: `ovb-model export-chakra` ends with one line
// naming what to install (the rest of ovb-model is unaffected).
#include "ovb/error.hpp"
#include "ovb/model/chakra_trace.hpp"

namespace ovb::model {

struct ChakraTraceWriter::Impl {};

ChakraTraceWriter::ChakraTraceWriter(const ExecGraph&, const GptSchedule&, const CommGroups&, int,
                                     std::vector<std::pair<std::string, std::string>>) {
  throw UsageError(
      "this ovb-model was built without protobuf, so it cannot write Chakra traces: install "
      "protobuf-compiler and libprotobuf-dev (Debian/Ubuntu) and configure the build again");
}

ChakraTraceWriter::~ChakraTraceWriter() = default;

std::string ChakraTraceWriter::encode(int) {
  return {};
}

}  // namespace ovb::model
