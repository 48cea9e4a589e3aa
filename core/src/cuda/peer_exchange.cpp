// Copy-engine peer access and engine observation on the CUDA backend (see ovb/backend.hpp):
// PeerBuffers over CUDA IPC (memory and event handles exchanged with MPI_Allgather, each step's
// record announced to the reader by an MPI message), and observe_engines from a captured CUDA
// graph.
#include <mpi.h>

#include <vector>

#include "cuda_backend.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/error.hpp"

namespace ovb::cuda {
namespace {

class IpcPeerBuffers final : public PeerBuffers {
 public:
  IpcPeerBuffers(MPI_Comm group, Buffer& buf, int steps) : steps_(steps) {
    OVB_CHECK_MPI(MPI_Comm_dup(group, &comm_));
    OVB_CHECK_MPI(MPI_Comm_rank(comm_, &rank_));
    OVB_CHECK_MPI(MPI_Comm_size(comm_, &size_));
    cudaIpcMemHandle_t mine{};
    OVB_CHECK_CUDA(cudaIpcGetMemHandle(&mine, buf.data()));
    std::vector<cudaIpcMemHandle_t> mems(static_cast<std::size_t>(size_));
    OVB_CHECK_MPI(
        MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, mems.data(), sizeof(mine), MPI_BYTE, comm_));
    // One interprocess event per step: a step's record is never overwritten while a peer may
    // still have to wait for it in the same round.
    std::vector<cudaIpcEventHandle_t> mine_ev(static_cast<std::size_t>(steps));
    for (int i = 0; i < steps; ++i) {
      cudaEvent_t e = nullptr;
      OVB_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess));
      own_.push_back(e);
      OVB_CHECK_CUDA(cudaIpcGetEventHandle(&mine_ev[static_cast<std::size_t>(i)], e));
    }
    std::vector<cudaIpcEventHandle_t> evs(static_cast<std::size_t>(size_ * steps));
    const int ev_bytes = static_cast<int>(sizeof(cudaIpcEventHandle_t)) * steps;
    OVB_CHECK_MPI(
        MPI_Allgather(mine_ev.data(), ev_bytes, MPI_BYTE, evs.data(), ev_bytes, MPI_BYTE, comm_));
    base_.assign(static_cast<std::size_t>(size_), nullptr);
    peer_ev_.assign(static_cast<std::size_t>(size_ * steps), nullptr);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      void* p = nullptr;
      OVB_CHECK_CUDA(cudaIpcOpenMemHandle(&p, mems[static_cast<std::size_t>(r)],
                                          cudaIpcMemLazyEnablePeerAccess));
      base_[static_cast<std::size_t>(r)] = static_cast<char*>(p);
      for (int i = 0; i < steps; ++i) {
        const std::size_t at = static_cast<std::size_t>(r * steps + i);
        OVB_CHECK_CUDA(cudaIpcOpenEventHandle(&peer_ev_[at], evs[at]));
      }
    }
  }
  ~IpcPeerBuffers() override {
    for (int r = 0; r < size_; ++r)
      if (base_[static_cast<std::size_t>(r)])
        OVB_WARN_CUDA(cudaIpcCloseMemHandle(base_[static_cast<std::size_t>(r)]));
    for (cudaEvent_t e : peer_ev_)
      if (e) OVB_WARN_CUDA(cudaEventDestroy(e));
    for (cudaEvent_t e : own_) OVB_WARN_CUDA(cudaEventDestroy(e));
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  void publish(Stream& s, int step, int to) override {
    check(step, to);
    OVB_CHECK_CUDA(cudaEventRecord(own_[static_cast<std::size_t>(step)], native(s)));
    // After the record: the reader's wait, enqueued once this arrives, sees this record.
    OVB_CHECK_MPI(MPI_Send(&step, 1, MPI_INT, to, step, comm_));
  }

  void pull(Stream& s, int from, int step, std::size_t offset, void* dst,
            std::size_t bytes) override {
    check(step, from);
    int got = 0;
    OVB_CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, from, step, comm_, MPI_STATUS_IGNORE));
    OVB_CHECK_CUDA(cudaStreamWaitEvent(
        native(s), peer_ev_[static_cast<std::size_t>(from * steps_ + step)], 0));
    OVB_CHECK_CUDA(cudaMemcpyAsync(dst, base_[static_cast<std::size_t>(from)] + offset, bytes,
                                   cudaMemcpyDeviceToDevice, native(s)));
  }

 private:
  static cudaStream_t native(Stream& s) { return static_cast<cudaStream_t>(s.native()); }
  void check(int step, int peer) const {
    if (step < 0 || step >= steps_ || peer < 0 || peer >= size_ || peer == rank_)
      throw Error("peer buffers: step " + std::to_string(step) + " or peer " +
                  std::to_string(peer) + " out of range (" + std::to_string(steps_) + " steps, " +
                  std::to_string(size_) + " ranks, this is rank " + std::to_string(rank_) + ")");
  }

  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate: its messages never meet the caller's
  int rank_ = 0, size_ = 1, steps_ = 1;
  std::vector<char*> base_;           // each peer's buffer, mapped here (nullptr: this rank)
  std::vector<cudaEvent_t> own_;      // this rank's event per step
  std::vector<cudaEvent_t> peer_ev_;  // [rank * steps + step], opened from the peers' handles
};

// Kernel and copy nodes of a graph, child graphs included (other nodes - event waits, host
// nodes, NCCL's memory operations - move no data by themselves).
void count_nodes(cudaGraph_t graph, int& kernels, int& copies) {
  std::size_t n = 0;
  OVB_CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  OVB_CHECK_CUDA(cudaGraphGetNodes(graph, nodes.data(), &n));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    OVB_CHECK_CUDA(cudaGraphNodeGetType(node, &t));
    if (t == cudaGraphNodeTypeKernel) ++kernels;
    if (t == cudaGraphNodeTypeMemcpy) ++copies;
    if (t == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      OVB_CHECK_CUDA(cudaGraphChildGraphNodeGetGraph(node, &child));
      count_nodes(child, kernels, copies);
    }
  }
}

}  // namespace

std::unique_ptr<PeerBuffers> CudaBackend::map_peers(MPI_Comm group, Buffer& buf, int steps) {
  return std::make_unique<IpcPeerBuffers>(group, buf, steps);
}

// One call captured into a graph (thread-local mode: other threads' CUDA calls are unaffected),
// its nodes classified, then launched so that the work still runs exactly once on every rank.
Backend::Engines CudaBackend::observe_engines(Stream& s, const std::function<void()>& enqueue) {
  const auto stream = static_cast<cudaStream_t>(s.native());
  OVB_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream, &g);  // unchecked: the enqueue's error is the one to report
    if (g) cudaGraphDestroy(g);
    throw;
  }
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || !graph) {
    cudaGetLastError();
    return Engines::unknown;  // not capturable: the work did not run, nothing can be said
  }
  int kernels = 0, copies = 0;
  count_nodes(graph, kernels, copies);
  cudaGraphExec_t exec = nullptr;
  OVB_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  OVB_CHECK_CUDA(cudaGraphLaunch(exec, stream));
  OVB_CHECK_CUDA(cudaStreamSynchronize(stream));
  OVB_WARN_CUDA(cudaGraphExecDestroy(exec));
  OVB_WARN_CUDA(cudaGraphDestroy(graph));
  if (kernels > 0) return Engines::kernels;
  return copies > 0 ? Engines::copies : Engines::unknown;
}

}  // namespace ovb::cuda
