// Chakra execution traces of the execution graph, with the protobuf classes generated from
// et_def.proto (see ovb/model/chakra_trace.hpp). The nodes are built once; each rank's file only
// sets its communicator group ids (pg_name) before the messages are serialized.
#include "ovb/model/chakra_trace.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>

#include "et_def.pb.h"
#include "ovb/metrics.hpp"

namespace ovb::model {

namespace {

namespace pb = ChakraProtoMsg;

pb::CollectiveCommType comm_type(CollKind k) {
  switch (k) {
    case CollKind::all_reduce: return pb::ALL_REDUCE;
    case CollKind::reduce_scatter: return pb::REDUCE_SCATTER;
    case CollKind::all_gather: return pb::ALL_GATHER;
  }
  return pb::ALL_REDUCE;
}

pb::AttributeProto* attr(pb::Node& n, const char* name) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  return a;
}

std::int64_t whole(double x) {
  return static_cast<std::int64_t>(std::llround(x));
}

// Appends one message with its varint size prefix.
void frame(const google::protobuf::MessageLite& m, std::string& out) {
  google::protobuf::io::StringOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  coded.WriteVarint32(static_cast<std::uint32_t>(m.ByteSizeLong()));
  m.SerializeWithCachedSizes(&coded);
}

}  // namespace

struct ChakraTraceWriter::Impl {
  pb::GlobalMetadata meta;
  std::vector<pb::Node> nodes;
  std::vector<std::pair<std::size_t, Group>> groups;  // collective node index, its group
  const CommGroups* comm = nullptr;
};

ChakraTraceWriter::ChakraTraceWriter(const ExecGraph& g, const GptSchedule& sched,
                                     const CommGroups& groups, int elem_bytes,
                                     std::vector<std::pair<std::string, std::string>> meta)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.comm = &groups;
  im.meta.set_version(kChakraVersion);
  for (auto& [k, v] : meta) {
    pb::AttributeProto* a = im.meta.add_attr();
    a->set_name(k);
    a->set_string_val(v);
  }
  im.nodes.reserve(g.nodes.size());
  for (const ExecNode& e : g.nodes) {
    pb::Node n;
    n.set_id(e.id);
    n.set_name(e.name);
    for (std::uint64_t d : e.data_deps) n.add_data_deps(d);
    for (std::uint64_t d : e.ctrl_deps) n.add_ctrl_deps(d);
    n.set_duration_micros(static_cast<std::uint64_t>(whole(e.duration_us)));
    attr(n, "is_cpu_op")->set_bool_val(false);
    if (!e.collective) {
      n.set_type(pb::COMP_NODE);
      if (e.gemm.m > 0) {
        const GemmShape& s = e.gemm;
        attr(n, "num_ops")
            ->set_int64_val(whole(metrics::gemm_flop(
                static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k))));
        attr(n, "tensor_size")
            ->set_uint64_val(
                static_cast<std::uint64_t>((s.m * s.k + s.k * s.n + s.m * s.n) * elem_bytes));
      }
    } else {
      const CollOp& op = sched.collectives[static_cast<std::size_t>(e.coll)];
      n.set_type(pb::COMM_COLL_NODE);
      attr(n, "comm_type")->set_int64_val(comm_type(op.kind));
      attr(n, "comm_size")->set_int64_val(whole(op.bytes()));
      attr(n, "pg_name");  // set per rank
      im.groups.emplace_back(im.nodes.size(), op.group);
    }
    attr(n, "ovb_duration_ns")->set_int64_val(whole(e.duration_us * 1e3));
    im.nodes.push_back(std::move(n));
  }
}

ChakraTraceWriter::~ChakraTraceWriter() = default;

std::string ChakraTraceWriter::encode(int rank) {
  Impl& im = *impl_;
  for (const auto& [i, group] : im.groups) {
    pb::Node& n = im.nodes[i];
    for (pb::AttributeProto& a : *n.mutable_attr())
      if (a.name() == "pg_name") a.set_string_val(std::to_string(im.comm->id(group, rank)));
  }
  std::string out;
  frame(im.meta, out);
  for (const pb::Node& n : im.nodes) frame(n, out);
  return out;
}

}  // namespace ovb::model
