// Every collective on every sub-communicator of a process grid, checked exactly against values
// computed from the grid's group membership. Run under mpirun with --grid=GXxGYxGZxGD and
// --backend=host|cuda (see CMakeLists.txt): the same test checks MPI and NCCL.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/error.hpp"
#include "ovb/process_grid.hpp"
#include "ovb/test_main.hpp"

namespace {

using ovb::CollKind;
using ovb::Dim;
using ovb::DType;

struct Env {
  std::unique_ptr<ovb::Backend> backend;
  std::unique_ptr<ovb::ProcessGrid> grid;
  // One communicator per dimension, created once: NCCL initialisation over loopback takes ~0.5 s.
  std::map<Dim, std::unique_ptr<ovb::Communicator>> comms;
};

Env& env() {
  static Env e = [] {
    Env x;
    ovb::BackendOptions opts;
    opts.name = ovb::testing::options().backend;
    opts.ranks_per_gpu = ovb::testing::options().ranks_per_gpu;
    x.backend = ovb::make_backend(opts, ovb::testing::launch());
    x.grid = std::make_unique<ovb::ProcessGrid>(ovb::GridShape::parse(ovb::testing::options().grid));
    return x;
  }();
  return e;
}

// Input element j of world rank r: a small integer, exact in bf16/fp16 and in their sums.
float input(int r, std::size_t j) { return static_cast<float>(r % 13 + static_cast<int>(j % 7)); }

struct Case {
  Dim dim;
  CollKind kind;
  DType dtype;
  bool in_place;
  std::size_t count;  // the count argument of the call (see backend.hpp)
};

std::string describe(const Case& c) {
  return std::string(ovb::name_of(c.kind)) + " over " + std::string(ovb::name_of(c.dim)) + " " +
         std::string(ovb::name_of(c.dtype)) + (c.in_place ? " in-place" : " out-of-place") +
         " count " + std::to_string(c.count);
}

// Runs one case and returns the number of wrong elements.
std::size_t run_case(const Case& c) {
  auto& [backend, pg, comms] = env();
  const ovb::Grid& g = pg->grid();
  const int me = pg->rank();
  const std::vector<int> members = g.group(c.dim, me);
  const int n = static_cast<int>(members.size());
  const int gi = pg->coords()[c.dim];
  auto& comm = env().comms[c.dim];
  if (!comm)
    comm = backend->create_communicator(pg->comm(c.dim), {.name = std::string(ovb::name_of(c.dim))});
  EXPECT_EQ(comm->size(), n);
  EXPECT_EQ(comm->rank(), gi);
  auto stream = backend->create_stream(ovb::Priority::high);
  const std::size_t es = ovb::size_of(c.dtype);

  const std::size_t in_count = c.kind == CollKind::reduce_scatter ? c.count * n : c.count;
  const std::size_t out_count = c.kind == CollKind::all_gather ? c.count * n : c.count;
  const std::size_t buf_count = std::max(in_count, out_count);
  std::vector<unsigned char> host(buf_count * es, 0);

  // Where this rank's input lives inside the buffer(s).
  std::size_t in_offset = 0;
  if (c.in_place && c.kind == CollKind::all_gather) in_offset = c.count * gi;
  for (std::size_t j = 0; j < in_count; ++j) ovb::store_host(host.data(), c.dtype, in_offset + j, input(me, j));

  ovb::Buffer a = backend->allocate(buf_count * es);
  ovb::Buffer b = c.in_place ? ovb::Buffer() : backend->allocate(out_count * es);
  backend->upload(a, host.data(), host.size());
  char* base = a.as<char>();
  const void* send = base + in_offset * es;
  void* recv = c.in_place ? base : b.data();
  if (c.in_place && c.kind == CollKind::reduce_scatter) recv = base + c.count * gi * es;
  if (c.in_place && c.kind == CollKind::all_gather) recv = base;

  comm->run(c.kind, send, recv, c.count, c.dtype, *stream);
  stream->synchronize();

  std::vector<unsigned char> out(out_count * es);
  const ovb::Buffer& res = c.in_place ? a : b;
  const std::size_t res_offset = static_cast<char*>(recv) - static_cast<char*>(res.data());
  backend->download(out.data(), res, out.size(), res_offset);

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < out_count; ++i) {
    float expect = 0;
    if (c.kind == CollKind::all_reduce) {
      for (int m : members) expect += input(m, i);
    } else if (c.kind == CollKind::reduce_scatter) {
      for (int m : members) expect += input(m, gi * c.count + i);
    } else {
      expect = input(members[i / c.count], i % c.count);
    }
    if (ovb::load_host(out.data(), c.dtype, i) != expect) ++wrong;
  }
  return wrong;
}

class Collectives : public ::testing::TestWithParam<std::tuple<Dim, CollKind>> {};

TEST_P(Collectives, ExactOnEverySubCommunicator) {
  const auto [dim, kind] = GetParam();
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    if (!env().backend->supports(t)) continue;
    for (bool in_place : {false, true})
      for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{65537}}) {
        const Case c{dim, kind, t, in_place, count};
        EXPECT_EQ(run_case(c), 0u) << describe(c);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllDimsAllKinds, Collectives,
    ::testing::Combine(::testing::Values(Dim::x, Dim::y, Dim::z, Dim::data),
                       ::testing::Values(CollKind::all_reduce, CollKind::reduce_scatter,
                                         CollKind::all_gather)),
    [](const auto& info) {
      return std::string(ovb::name_of(std::get<0>(info.param))) + "_" +
             std::string(ovb::name_of(std::get<1>(info.param)));
    });

TEST(CollectivesAsync, EventsOrderACommStreamBeforeAComputeStream) {
  auto& [backend, pg, comms] = env();
  auto comm = backend->create_communicator(pg->world(), {.name = "world"});
  auto comm_stream = backend->create_stream(ovb::Priority::high);
  auto compute_stream = backend->create_stream(ovb::Priority::normal);
  auto done = backend->create_event();
  std::vector<float> h(4096, 1.0f);
  ovb::Buffer buf = backend->allocate(h.size() * sizeof(float));
  backend->upload(buf, h.data(), h.size() * sizeof(float));
  comm->all_reduce(buf.data(), buf.data(), h.size(), DType::f32, *comm_stream);
  done->record(*comm_stream);
  backend->wait_event(*compute_stream, *done);
  compute_stream->synchronize();
  backend->download(h.data(), buf, h.size() * sizeof(float));
  for (float v : h) ASSERT_EQ(v, static_cast<float>(comm->size()));
  auto start = backend->create_event();
  start->record(*compute_stream);
  EXPECT_GE(done->elapsed_ms(*start), -1e3);  // both complete; elapsed is defined
}

TEST(CollectivesHost, UnsupportedDtypeIsAClearError) {
  auto& [backend, pg, comms] = env();
  if (backend->supports(DType::bf16)) GTEST_SKIP() << "backend supports bf16";
  auto comm = backend->create_communicator(pg->world(), {});
  auto s = backend->create_stream();
  ovb::Buffer buf = backend->allocate(64);
  try {
    comm->all_reduce(buf.data(), buf.data(), 8, DType::bf16, *s);
    FAIL() << "expected an error";
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32 collectives only, not bf16"), std::string::npos);
  }
}

// Uploads and downloads check their range on every backend (one check, core/src/copy_range.hpp):
// an in-range copy round-trips, one past the end is an Error naming the sizes.
TEST(Copies, InRangeRoundTripsAndAnOverrunIsAClearError) {
  auto& backend = env().backend;
  ovb::Buffer buf = backend->allocate(16);
  const std::vector<char> in{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<char> out(8, 0);
  backend->upload(buf, in.data(), 8, 8);
  backend->download(out.data(), buf, 8, 8);
  EXPECT_EQ(out, in);
  const std::string want = "copy of 8 bytes at offset 12 overruns a buffer of 16 bytes";
  for (int download = 0; download < 2; ++download) {
    try {
      if (download)
        backend->download(out.data(), buf, 8, 12);
      else
        backend->upload(buf, in.data(), 8, 12);
      FAIL() << "expected an error";
    } catch (const ovb::Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

}  // namespace
