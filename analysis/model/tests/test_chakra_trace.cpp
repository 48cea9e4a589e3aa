// Chakra traces (ovb/model/chakra_trace.hpp) decoded with the classes protoc generates from
// analysis/model/chakra/et_def.proto: the framing (a varint size before each message), the
// metadata, every node's type, name, dependencies, duration in whole microseconds and attributes,
// and each collective's communicator group (its members hold the rank, along the right
// dimension). Also a 1024-GPU 4D export of the 80B GPT (two ranks), decoded.
#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>

#include "chakra_cases.hpp"
#include "et_def.pb.h"
#include "ovb/metrics.hpp"
#include "ovb/model/chakra_trace.hpp"

namespace ovb::model {
namespace {

namespace pb = ChakraProtoMsg;

struct Decoded {
  pb::GlobalMetadata meta;
  std::vector<pb::Node> nodes;
};

Decoded decode(const std::string& bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  Decoded d;
  auto read = [&](google::protobuf::MessageLite& m) {
    std::uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return false;
    const auto limit = in.PushLimit(static_cast<int>(size));
    EXPECT_TRUE(m.ParseFromCodedStream(&in));
    EXPECT_TRUE(in.ConsumedEntireMessage());
    in.PopLimit(limit);
    return true;
  };
  EXPECT_TRUE(read(d.meta));
  for (pb::Node n; read(n); n.Clear()) d.nodes.push_back(n);
  EXPECT_EQ(in.CurrentPosition(), static_cast<int>(bytes.size()));
  return d;
}

const pb::AttributeProto* find(const pb::Node& n, const std::string& name) {
  for (const auto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// Decodes rank r's file and checks it against the graph it came from.
void check_rank(const std::string& bytes, const ExecGraph& g, const GptSchedule& sched,
                const Grid& grid, const CommGroups& groups, int rank, int elem_bytes) {
  const Decoded d = decode(bytes);
  EXPECT_EQ(d.meta.version(), kChakraVersion);
  ASSERT_EQ(d.nodes.size(), g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const ExecNode& e = g.nodes[i];
    const pb::Node& n = d.nodes[i];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(n.id(), e.id);
    EXPECT_EQ(n.name(), e.name);
    EXPECT_EQ(std::vector<std::uint64_t>(n.data_deps().begin(), n.data_deps().end()), e.data_deps);
    EXPECT_EQ(std::vector<std::uint64_t>(n.ctrl_deps().begin(), n.ctrl_deps().end()), e.ctrl_deps);
    EXPECT_EQ(static_cast<double>(n.duration_micros()), std::round(e.duration_us));
    ASSERT_NE(find(n, "is_cpu_op"), nullptr);
    EXPECT_FALSE(find(n, "is_cpu_op")->bool_val());
    if (!e.collective) {
      EXPECT_EQ(n.type(), pb::COMP_NODE);
      if (e.gemm.m > 0) {
        ASSERT_NE(find(n, "num_ops"), nullptr);
        EXPECT_EQ(find(n, "num_ops")->int64_val(), 2 * e.gemm.m * e.gemm.n * e.gemm.k);
        EXPECT_EQ(
            find(n, "tensor_size")->uint64_val(),
            static_cast<std::uint64_t>(
                (e.gemm.m * e.gemm.k + e.gemm.k * e.gemm.n + e.gemm.m * e.gemm.n) * elem_bytes));
      }
      continue;
    }
    const CollOp& op = sched.collectives[static_cast<std::size_t>(e.coll)];
    EXPECT_EQ(n.type(), pb::COMM_COLL_NODE);
    const std::map<CollKind, int> kinds{{CollKind::all_reduce, pb::ALL_REDUCE},
                                        {CollKind::reduce_scatter, pb::REDUCE_SCATTER},
                                        {CollKind::all_gather, pb::ALL_GATHER}};
    EXPECT_EQ(find(n, "comm_type")->int64_val(), kinds.at(op.kind));
    EXPECT_EQ(static_cast<double>(find(n, "comm_size")->int64_val()), std::round(op.bytes()));
    const int id = std::stoi(find(n, "pg_name")->string_val());
    const auto it = std::find_if(groups.all().begin(), groups.all().end(),
                                 [&](const CommGroup& c) { return c.id == id; });
    ASSERT_NE(it, groups.all().end());
    EXPECT_EQ(it->group, op.group);
    EXPECT_EQ(static_cast<int>(it->ranks.size()), op.group_size);
    if (op.group != Group::world) {
      EXPECT_EQ(it->ranks, grid.group(static_cast<Dim>(op.group), rank));
    }
  }
}

TEST(ChakraTrace, DecodesToTheGraph) {
  const Machine mc = test::synthetic_machine();
  for (const auto& c : test::export_cases()) {
    SCOPED_TRACE(c.name);
    const GptSchedule sched = gpt_schedule(c.m, c.o);
    const Grid grid(c.o.grid, c.o.grid.world());
    const ExecGraph g = exec_graph(sched, StepCoster(c.m, c.o, mc), mc, grid);
    const CommGroups groups(grid);
    ChakraTraceWriter w(g, sched, groups, 4, {{"config", c.o.grid.str()}});
    for (int r = 0; r < grid.shape().world(); ++r)
      check_rank(w.encode(r), g, sched, grid, groups, r, 4);
  }
}

TEST(ChakraTrace, Exports1024Gpus4D) {
  // AxoNN's 80B GPT (analysis/validation/published_runs.json) on 1024 GPUs of Perlmutter,
  // 4x4x8x8, every overlap, recomputation; two ranks written, as `export-chakra --ranks 0,1023`.
  GptShape m;
  m.layers = 42;
  m.hidden = 12288;
  m.heads = 96;
  m.seq = 2048;
  m.vocab = 50304;
  GptPlanOptions o = test::plan_on("4x4x8x8", 1024);
  o.oar = o.ors = o.oag = o.recompute = true;
  o.act_dtype = DType::bf16;
  const Machine mc = load_machine("perlmutter-a100");
  const auto t0 = std::chrono::steady_clock::now();
  const GptSchedule sched = gpt_schedule(m, o);
  const Grid grid(o.grid, 1024);
  const ExecGraph g = exec_graph(sched, StepCoster(m, o, mc), mc, grid);
  const CommGroups groups(grid);
  ChakraTraceWriter w(g, sched, groups, 2, {});
  std::size_t bytes = 0;
  for (int r : {0, 1023}) {
    const std::string data = w.encode(r);
    bytes += data.size();
    check_rank(data, g, sched, grid, groups, r, 2);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << g.nodes.size() << " nodes per rank, " << bytes / 2 << " bytes per rank file, " << s
            << " s for two ranks (encoded and decoded)\n";
  EXPECT_GT(g.collective_nodes, 42 * 4);
}

}  // namespace
}  // namespace ovb::model
