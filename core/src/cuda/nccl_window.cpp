// Symmetric NCCL windows for copy-engine collectives (see ovb/cuda/compat.hpp): the one place that
// calls ncclMemAlloc and ncclCommWindowRegister, behind the NCCL version check.
#include <algorithm>

#include "ovb/cuda/check.hpp"
#include "ovb/cuda/compat.hpp"

namespace ovb::cuda {

Buffer allocate_symmetric_window(ncclComm_t comm, std::size_t bytes) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  // Every rank registers the same size, rounded up to the window alignment NCCL requires.
  const std::size_t align = NCCL_WIN_REQUIRED_ALIGNMENT;
  const std::size_t size = std::max<std::size_t>(align, (bytes + align - 1) / align * align);
  // A failure (e.g. a platform without the memory mapping symmetric windows need) is a fallback,
  // not an error: without a window NCCL uses SM kernels, which the observed transport then shows.
  void* p = nullptr;
  ncclResult_t rc = ncclMemAlloc(&p, size);
  if (rc != ncclSuccess) {
    warn_call_failed("NCCL", "ncclMemAlloc", nccl_message(rc, comm), __FILE__, __LINE__);
    return {};
  }
  ncclWindow_t win = nullptr;
  rc = ncclCommWindowRegister(comm, p, size, &win, NCCL_WIN_COLL_SYMMETRIC);
  if (rc != ncclSuccess) {
    warn_call_failed("NCCL", "ncclCommWindowRegister", nccl_message(rc, comm), __FILE__, __LINE__);
    OVB_WARN_NCCL(ncclMemFree(p), comm);
    return {};
  }
  return Buffer(p, bytes, [comm, win](void* q) {
    OVB_WARN_NCCL(ncclCommWindowDeregister(comm, win), comm);
    OVB_WARN_NCCL(ncclMemFree(q), comm);
  });
#else
  (void)comm;
  (void)bytes;
  return {};
#endif
}

}  // namespace ovb::cuda
