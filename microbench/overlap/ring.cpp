// The ring overlap scenario (dependent form, one step per rank of the group): AG+GEMM and GEMM+RS
// as ring exchanges, each step computing on the shard this rank has while the next shard moves
// point to point to the ring neighbour (rank r sends to r+1, receives from r-1), as in the
// collective-matmul decompositions of async tensor parallelism. --exchange picks how a step moves
// data: send_recv (Communicator::send_recv: MPI on host, ncclSend/ncclRecv on CUDA, on SMs) or
// copy_engine (CUDA only: cudaMemcpyAsync from the neighbour's buffer mapped with CUDA IPC).
//   mpirun -np 4 ovb-overlap --backend host --scenarios ring --colls all_gather,reduce_scatter
//          --shapes 64x48x32
//
// AG+GEMM: A's rows are sharded over the n ranks; step i computes rows of shard (r - i) mod n of C
// while shard (r - i - 1) mod n arrives (chunk i's GEMM waits for chunk i's exchange; chunk 0's
// shard is this rank's own). GEMM+RS: every rank computes the same C; step i computes row block
// (r - i - 1) mod n into its own slot, adds the partial sum received from r-1 (membw's residual
// kernel, on the communication stream) and passes the sum on; after n steps rank r holds block r
// of the sum over ranks, which is reduce_scatter's result. The unchunked baseline is the whole
// GEMM and the library's collective (all_gather, reduce_scatter).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "harness/collective.hpp"
#include "harness/gemm_workload.hpp"
#include "harness/pattern.hpp"
#include "harness/sizes.hpp"
#include "membw/mem_kernels.hpp"
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "overlap/decomposition.hpp"

namespace ovb::mb {
namespace {

std::string ring_problem(const OverlapPoint& p, int ranks) {
  const GemmShape& s = p.gcase.shape;
  const std::string scenario = "--scenarios ring: ";
  if (p.kind == CollKind::all_reduce)
    return scenario +
           "all_reduce has no ring form here; use --colls all_gather (AG+GEMM) or "
           "reduce_scatter (GEMM+RS)";
  if (ranks < 2)
    return scenario + "a ring needs at least 2 ranks in group " + p.group.name() + ", it has " +
           std::to_string(ranks);
  if (s.ta != Trans::n || s.tb != Trans::n)
    return scenario + "GEMM " + shape_text(s) + " is transposed; shards need the nn layout";
  if (s.m % ranks != 0)
    return scenario + std::to_string(ranks) + " ranks do not divide M = " + std::to_string(s.m) +
           " of GEMM " + shape_text(s);
  return "";
}

// Element types: A travels in the GEMM's input type (AG), C in its output type (RS).
DType travel_dtype(const OverlapPoint& p) {
  return p.kind == CollKind::reduce_scatter ? p.coll_type : gathered_dtype(p.gemm_type);
}

class Ring : public PipelineOps {
 public:
  Ring(BenchEnv& env, Communicator& comm, const OverlapPoint& p)
      : backend_(env.backend()),
        comm_(comm),
        gather_(p.kind == CollKind::all_gather),
        ce_(p.exchange == Exchange::copy_engine),
        type_(p.gemm_type),
        dtype_(travel_dtype(p)),
        whole_(p.gcase.shape),
        n_(comm.size()),
        r_(comm.rank()),
        range_{overlap_benchmark_name(p), "collective", std::string(name_of(p.kind)),
               p.group.name(), static_cast<std::int64_t>(p.bytes)} {
    if (const std::string why = ring_problem(p, n_); !why.empty()) throw UsageError(why);
    if (!gather_ && dtype_ != DType::f32 && dtype_ != DType::bf16)
      throw UsageError(
          "--scenarios ring: reduce_scatter adds partial sums with fp32 or bf16 "
          "kernels only, not " +
          std::string(name_of(dtype_)));
    block_ = whole_;
    block_.m /= n_;
    const auto m = static_cast<std::size_t>(whole_.m), n = static_cast<std::size_t>(whole_.n),
               k = static_cast<std::size_t>(whole_.k), nr = static_cast<std::size_t>(n_);
    const Storage in = input_storage(type_), out = output_storage(type_);
    // AG: gathered A, B, C, the whole GEMM's C. RS: A, B, the whole GEMM's C and its
    // reduce-scatter (M/n rows), the partials and sums (2n blocks of M/n rows) and the received
    // sums (n - 1 blocks).
    const std::size_t need =
        gather_ ? (m * k + k * n) * size_of(in) + 2 * m * n * size_of(out)
                : (m * k + k * n) * size_of(in) + (m + m / nr + 2 * m + m) * n * size_of(out);
    check_pipeline_fits(env, type_, dtype_, whole_, need);
    chunk_plan_ = env.gemm().plan(block_, type_, 1, sm_target(p));
    whole_plan_ = env.gemm().plan(whole_, type_, 1, sm_target(p));
    b_ = backend_.allocate(k * n * size_of(in));
    fill(backend_, b_, in, 0, k * n, gemm_b_value);
    if (gather_) {
      const std::size_t rows = m / nr, first = static_cast<std::size_t>(r_) * rows;
      a_ = mapped_or_collective(m * k * size_of(in));
      backend_.memset_zero(a_);
      fill(backend_, a_, in, first * k, rows * k, gemm_a_value);  // this rank's shard only
      c_ = backend_.allocate(m * n * size_of(out));
      backend_.memset_zero(c_);
      if (ce_) peers_ = backend_.map_peers(env.mpi_comm(p.group), a_, n_ - 1);
    } else {
      a_ = backend_.allocate(m * k * size_of(in));
      fill(backend_, a_, in, 0, m * k, gemm_a_value);
      whole_result_ = allocate_collective_buffer(backend_, comm_, m / nr * n * size_of(out));
      slots_ = mapped_or_collective(2 * m * n * size_of(out));
      received_ = allocate_collective_buffer(backend_, comm_, (nr - 1) * m / nr * n * size_of(out));
      backend_.memset_zero(slots_);
      backend_.memset_zero(received_);
      if (ce_) peers_ = backend_.map_peers(env.mpi_comm(p.group), slots_, n_ - 1);
    }
    c_whole_ = backend_.allocate(m * n * size_of(out));
  }

  bool comm_feeds_compute() const override { return gather_; }
  int chunks() const override { return n_; }
  std::string transport_by_construction() const override { return ce_ ? "ce-ipc" : ""; }

  void compute_chunk(Stream& s, int i) override {
    const std::size_t k = static_cast<std::size_t>(whole_.k);
    const int b = gather_ ? shard(i) : block(i);
    const char* a = a_.as<const char>() + rows_at(b) * k * in_size();
    if (gather_)
      chunk_plan_->run(s, a, b_.data(), c_.as<char>() + block_bytes(b));
    else
      chunk_plan_->run(s, a, b_.data(), slot(i));  // this rank's partial of step i
  }

  // Every launch inside a "collective" range, as gemm_coll's.
  void comm_chunk(Stream& s, int i) override {
    ScopedRange r(range_);
    gather_ ? gather_step(s, i) : reduce_step(s, i);
  }
  void compute_whole(Stream& s) override {
    whole_plan_->run(s, a_.data(), b_.data(), c_whole_.data());
  }
  void comm_whole(Stream& s) override {
    ScopedRange r(range_);
    const std::size_t rows = static_cast<std::size_t>(block_.m);
    if (gather_)  // in place: this rank's shard is its slot of A
      comm_.all_gather(a_.as<char>() + rows_at(r_) * k() * in_size(), a_.data(), rows * k(), dtype_,
                       s);
    else
      comm_.reduce_scatter(c_whole_.data(), whole_result_.data(), rows * cols(), dtype_, s);
  }
  int ranks() const override { return n_; }
  const RangeInfo& comm_range() const override { return range_; }

  // Against the exact unchunked result, as the decomposition scenario's check: AG+GEMM's C is the
  // GEMM of the gathered A (the exchange moves A's exact values; only the output rounding may
  // differ); GEMM+RS's block r is n copies of C's block r added in n - 1 roundings
  // (reduced_tolerance).
  std::int64_t check(bool inject) override {
    const Storage out = output_storage(type_);
    Buffer& result = gather_ ? c_ : slots_;
    const std::size_t first = gather_ ? 0 : slot_offset(2 * n_ - 1) / out_size();  // the last sum
    const std::int64_t count = gather_ ? whole_.m * whole_.n : block_.m * block_.n;
    const double copies = gather_ ? 1 : n_;
    const double tol = gather_ ? gemm_output_tolerance(out) : reduced_tolerance(out, dtype_, n_);
    if (inject) {
      const double ref = copies * static_cast<double>(exact(0));
      poke(backend_, result, out, first, static_cast<float>(ref + std::max(8.0, std::fabs(ref))));
    }
    std::int64_t wrong = 0;
    for (const std::int64_t e : check_points(count, 4096, 1024, 113)) {
      const double ref = copies * static_cast<double>(exact(e));
      const double got = read(backend_, result, out, first + static_cast<std::size_t>(e), 1)[0];
      if (!(std::fabs(got - ref) <= tol * std::fabs(ref))) ++wrong;
    }
    return wrong;
  }

 private:
  // The buffer the ring exchanges from: the backend's for the copy engine (CUDA IPC maps
  // cudaMalloc memory, not NCCL's symmetric windows), else the communicator's.
  Buffer mapped_or_collective(std::size_t bytes) {
    return ce_ ? backend_.allocate(bytes) : allocate_collective_buffer(backend_, comm_, bytes);
  }
  std::size_t in_size() const { return size_of(input_storage(type_)); }
  std::size_t out_size() const { return size_of(output_storage(type_)); }
  std::size_t k() const { return static_cast<std::size_t>(whole_.k); }
  std::size_t cols() const { return static_cast<std::size_t>(whole_.n); }
  std::size_t rows_at(int b) const {
    return static_cast<std::size_t>(b) * static_cast<std::size_t>(block_.m);
  }
  std::size_t block_bytes(int b) const { return rows_at(b) * cols() * out_size(); }
  int shard(int i) const { return ((r_ - i) % n_ + n_) % n_; }      // AG: shard used at step i
  int block(int i) const { return ((r_ - i - 1) % n_ + n_) % n_; }  // RS: block summed at step i
  // RS slots: [0, n) this rank's partial of step i, [n, 2n) the running sum after step i (step
  // 0's sum is its partial). What step i passes on is sent_offset(i).
  std::size_t slot_offset(int j) const { return block_bytes(j); }
  char* slot(int j) { return slots_.as<char>() + slot_offset(j); }
  std::size_t sent_offset(int i) const { return slot_offset(i == 0 ? 0 : n_ + i); }
  char* received(int i) { return received_.as<char>() + block_bytes(i); }
  int next() const { return (r_ + 1) % n_; }
  int prev() const { return (r_ + n_ - 1) % n_; }
  std::size_t shard_elems() const { return static_cast<std::size_t>(block_.m) * k(); }
  std::size_t block_elems() const { return static_cast<std::size_t>(block_.m) * cols(); }

  // Step i makes shard(i) available: step 0's is this rank's own; step i >= 1 receives it from r-1
  // while passing shard(i - 1) on to r+1.
  void gather_step(Stream& s, int i) {
    const std::size_t bytes = shard_elems() * in_size();
    char* a = a_.as<char>();
    if (ce_) {
      if (i > 0)
        peers_->pull(s, prev(), i - 1, rows_at(shard(i)) * k() * in_size(),
                     a + rows_at(shard(i)) * k() * in_size(), bytes);
      if (i < n_ - 1) peers_->publish(s, i, next());
      return;
    }
    if (i == 0) return;
    comm_.send_recv(a + rows_at(shard(i - 1)) * k() * in_size(), next(),
                    a + rows_at(shard(i)) * k() * in_size(), prev(), shard_elems(), dtype_, s);
  }

  // Step i: the sum so far of block(i) = what r-1 passed on at step i - 1 + this rank's partial;
  // then passed on to r+1 (all steps but the last, whose sum is the result: block r).
  void reduce_step(Stream& s, int i) {
    const std::size_t bytes = block_elems() * out_size();
    if (i > 0) {
      if (ce_) peers_->pull(s, prev(), i - 1, sent_offset(i - 1), received(i - 1), bytes);
      // The received block is complete before the add reads it (on host: its MPI receive done).
      sync_->record(s);
      backend_.wait_event(s, *sync_);
      add(s, received(i - 1), slot(i), slot(n_ + i));
    }
    if (i == n_ - 1) return;
    if (ce_)
      peers_->publish(s, i, next());
    else
      comm_.send_recv(slots_.as<char>() + sent_offset(i), next(), received(i), prev(),
                      block_elems(), dtype_, s);
  }

  // y = a + b over one block: membw's residual kernel (host loop or CUDA kernel).
  void add(Stream& s, const void* a, const void* b, void* y) {
    MemArgs args;
    args.c = MemClass::residual;
    args.t = dtype_;
    args.n = static_cast<std::int64_t>(block_elems());
    args.row = whole_.n;
    args.buf = {const_cast<void*>(a), const_cast<void*>(b), y};
    if (backend_.name() == "cuda")
      run_cuda_mem_kernel(args, s.native());
    else
      run_host_mem_kernel(args);
  }

  // The exact C value behind element e of the checked result: C itself (AG), block r (RS).
  std::int64_t exact(std::int64_t e) const {
    const std::int64_t row = e / whole_.n + (gather_ ? 0 : static_cast<std::int64_t>(rows_at(r_)));
    return GemmWorkload::reference(whole_, row, e % whole_.n);
  }

  Backend& backend_;
  Communicator& comm_;
  bool gather_, ce_;
  GemmType type_;
  DType dtype_;
  GemmShape whole_, block_;
  int n_, r_;
  std::unique_ptr<GemmPlan> chunk_plan_, whole_plan_;
  Buffer a_, b_, c_, c_whole_, whole_result_, slots_, received_;
  std::unique_ptr<PeerBuffers> peers_;
  std::unique_ptr<Event> sync_ = backend_.create_event();
  RangeInfo range_;
};

std::unique_ptr<OverlapOps> make_ring(BenchEnv& env, Communicator& comm, const OverlapPoint& p) {
  return std::make_unique<Ring>(env, comm, p);
}

}  // namespace

OVB_OVERLAP_RING_SCENARIO(ring, "AG+GEMM and GEMM+RS as ring exchanges, one step per rank",
                          make_ring, ring_problem, pipeline_bytes);

}  // namespace ovb::mb
