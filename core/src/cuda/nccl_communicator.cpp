// NCCL communicators for one group: unique id from the group's rank 0, MPI_Bcast, then
// ncclCommInitRankConfig with the CommConfig knobs (see cuda_backend.hpp).
#include "cuda_backend.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/cuda/compat.hpp"
#include "ovb/error.hpp"

namespace ovb::cuda {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
  }
  return ncclFloat32;
}

static cudaStream_t native(Stream& s) { return static_cast<cudaStream_t>(s.native()); }

NcclCommunicator::NcclCommunicator(MPI_Comm group, const CommConfig& cfg,
                                   std::shared_ptr<CudaWatch> watch)
    : watch_(std::move(watch)), cfg_(cfg) {
  OVB_CHECK_MPI(MPI_Comm_rank(group, &rank_));
  OVB_CHECK_MPI(MPI_Comm_size(group, &size_));
  ncclUniqueId id{};
  if (rank_ == 0) OVB_CHECK_NCCL(ncclGetUniqueId(&id), nullptr);
  OVB_CHECK_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, group));
  ncclConfig_t nc = NCCL_CONFIG_INITIALIZER;
  apply_comm_config(cfg, nc);
  if (!cfg.name.empty()) nc.commName = cfg_.name.c_str();
  OVB_CHECK_NCCL(ncclCommInitRankConfig(&comm_, size_, id, rank_, &nc), comm_);
  watch_->comms.add(this);
}

NcclCommunicator::~NcclCommunicator() {
  watch_->comms.remove(this);
  if (!comm_) return;
  OVB_WARN_NCCL(ncclCommFinalize(comm_), comm_);
  OVB_WARN_NCCL(ncclCommDestroy(comm_), comm_);
}

void NcclCommunicator::all_reduce(const void* send, void* recv, std::size_t count, DType t,
                                  Stream& s) {
  OVB_CHECK_NCCL(ncclAllReduce(send, recv, count, nccl_type(t), ncclSum, comm_, native(s)), comm_);
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, std::size_t recv_count,
                                      DType t, Stream& s) {
  OVB_CHECK_NCCL(ncclReduceScatter(send, recv, recv_count, nccl_type(t), ncclSum, comm_, native(s)),
                 comm_);
}

void NcclCommunicator::all_gather(const void* send, void* recv, std::size_t send_count, DType t,
                                  Stream& s) {
  OVB_CHECK_NCCL(ncclAllGather(send, recv, send_count, nccl_type(t), comm_, native(s)), comm_);
}

void NcclCommunicator::send_recv(const void* send, int to, void* recv, int from, std::size_t count,
                                 DType t, Stream& s) {
  // One group, so that the send and the receive progress together (a ring would deadlock if
  // every rank's send waited for its neighbour's receive).
  OVB_CHECK_NCCL(ncclGroupStart(), comm_);
  OVB_CHECK_NCCL(ncclSend(send, count, nccl_type(t), to, comm_, native(s)), comm_);
  OVB_CHECK_NCCL(ncclRecv(recv, count, nccl_type(t), from, comm_, native(s)), comm_);
  OVB_CHECK_NCCL(ncclGroupEnd(), comm_);
}

Buffer NcclCommunicator::allocate_window(std::size_t bytes) {
  if (cfg_.cta_policy != kCtaPolicyZero) return {};
  return allocate_symmetric_window(comm_, bytes);
}

void NcclCommunicator::abort() {
  // Best effort: the communicator is being given up, and the caller is already reporting an error.
  if (comm_) OVB_WARN_NCCL(ncclCommAbort(comm_), nullptr);
  comm_ = nullptr;
}

std::string NcclCommunicator::async_error() {
  if (!comm_) return {};
  ncclResult_t rc = ncclSuccess;
  OVB_CHECK_NCCL(ncclCommGetAsyncError(comm_, &rc), comm_);
  if (rc == ncclSuccess || rc == ncclInProgress) return {};
  return nccl_message(rc, comm_);
}

}  // namespace ovb::cuda
