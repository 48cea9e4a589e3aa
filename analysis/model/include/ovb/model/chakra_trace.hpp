// Chakra execution traces (MLCommons Chakra, read by ASTRA-sim) of the execution graph of
// exec_graph.hpp: the bytes of one rank's file - a GlobalMetadata message, then one Node per
// graph node, each preceded by its size as a varint (docs/chakra.md says what each field holds).
// Compute nodes are COMP_NODE (duration in whole microseconds; num_ops and tensor_size for
// GEMMs), collectives COMM_COLL_NODE (comm_type, comm_size = S of docs/metrics.md in bytes,
// pg_name = the rank's communicator group id of CommGroups). The messages are those of
// analysis/model/chakra/et_def.proto, built with protobuf into the ovb_chakra library; a build
// without protobuf has this class throw an Error that names the packages (no_protobuf.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ovb/gpt_schedule.hpp"
#include "ovb/model/exec_graph.hpp"

namespace ovb::model {

// Chakra's schema version written into GlobalMetadata.
inline constexpr const char* kChakraVersion = "0.0.4";

class ChakraTraceWriter {
 public:
  // meta: (name, value) string attributes of the GlobalMetadata (configuration, machine, ...).
  // elem_bytes: bytes per element of the GEMMs' operands (their tensor_size).
  ChakraTraceWriter(const ExecGraph& g, const GptSchedule& sched, const CommGroups& groups,
                    int elem_bytes, std::vector<std::pair<std::string, std::string>> meta);
  ~ChakraTraceWriter();
  ChakraTraceWriter(const ChakraTraceWriter&) = delete;
  ChakraTraceWriter& operator=(const ChakraTraceWriter&) = delete;

  std::string encode(int rank);  // the bytes of rank's trace file

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ovb::model
