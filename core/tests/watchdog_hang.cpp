// A collective that never completes, for the collective watchdog's test (ovb/watchdog.hpp): every
// rank runs a checked all_reduce over MPI_COMM_WORLD; then every rank except --skip-rank issues a
// second one and waits for it (--wait event|stream|device) while the skipping rank moves on to a
// barrier. Without OVB_COMM_TIMEOUT_S that hangs forever; with it, the job must end non-zero with
// the watchdog's line. Without --skip-rank both all_reduces complete and are checked (exit 0).
//
//   OVB_COMM_TIMEOUT_S=2 mpirun -np 2 build/host/core/tests/ovb-core-watchdog-hang --skip-rank 1
//   (--backend cuda --ranks-per-gpu 2 for NCCL on one GPU). Registered in core/tests/CMakeLists.txt
//   through expect_fail_within.sh.
#include <mpi.h>

#include <iostream>
#include <string>
#include <vector>

#include "ovb/backend.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"
#include "ovb/run_main.hpp"

namespace {

// All_reduce of `buf` (count floats) on `stream`, then the chosen host-side wait for it.
void all_reduce_and_wait(ovb::Backend& backend, ovb::Communicator& comm, ovb::Stream& stream,
                         ovb::Buffer& buf, std::size_t count, const std::string& wait) {
  comm.all_reduce(buf.data(), buf.data(), count, ovb::DType::f32, stream);
  if (wait == "event") {
    auto done = backend.create_event();
    done->record(stream);
    done->synchronize();
  } else if (wait == "stream") {
    stream.synchronize();
  } else {
    backend.synchronize();
  }
}

// Every element must be `expected` (sums of small integers are exact in fp32).
void check_all(const std::vector<float>& v, float expected, const char* which) {
  std::size_t wrong = 0;
  for (float x : v) wrong += x != expected;
  if (wrong)
    throw ovb::Error(std::string(which) + " all_reduce: " + std::to_string(wrong) + " of " +
                     std::to_string(v.size()) + " elements differ from " +
                     std::to_string(expected));
}

}  // namespace

int main(int argc, char** argv) {
  return ovb::run_main("ovb-core-watchdog-hang", argc, argv, [&](const ovb::LaunchContext& ctx) {
    CLI::App app{"All_reduces over MPI_COMM_WORLD, one of them skipped by one rank (a hang)"};
    ovb::BackendOptions backend_opts;
    ovb::add_backend_options(app, backend_opts);
    int skip_rank = -1;
    std::string wait = "event";
    std::size_t count = 1024;
    app.add_option("--skip-rank", skip_rank, "Rank that skips the second all_reduce (-1: none)")
        ->capture_default_str();
    app.add_option("--wait", wait, "How the issuing ranks wait: event, stream or device")
        ->check(CLI::IsMember({"event", "stream", "device"}))
        ->capture_default_str();
    app.add_option("--count", count, "Elements per all_reduce")->check(ovb::positive());
    ovb::parse_cli(app, argc, argv, ctx);

    auto backend = ovb::make_backend(backend_opts, ctx);
    ovb::CommConfig cfg;
    cfg.name = "world";
    auto comm = backend->create_communicator(MPI_COMM_WORLD, cfg);
    auto stream = backend->create_stream();
    const std::size_t bytes = count * sizeof(float);
    ovb::Buffer buf = backend->allocate(bytes);
    std::vector<float> host(count, static_cast<float>(ctx.rank + 1));
    backend->upload(buf, host.data(), bytes);

    // First, on every rank: connects the communicator (NCCL connects at its first collective,
    // inside the call) and checks that a watched wait gives the right result.
    all_reduce_and_wait(*backend, *comm, *stream, buf, count, wait);
    backend->download(host.data(), buf, bytes);
    const float sum = static_cast<float>(ctx.world) * static_cast<float>(ctx.world + 1) / 2;
    check_all(host, sum, "first");

    if (ctx.rank != skip_rank) all_reduce_and_wait(*backend, *comm, *stream, buf, count, wait);
    OVB_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));  // where a skipping rank waits for the others
    backend->download(host.data(), buf, bytes);
    check_all(host, sum * static_cast<float>(ctx.world), "second");
    if (ctx.rank == 0)
      std::cout << "both all_reduces completed and checked on " << ctx.world << " ranks ("
                << backend->name() << ", wait " << wait << ")" << std::endl;
    return 0;
  });
}
