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
  void* p = nullptr;
  OVB_CHECK_NCCL(ncclMemAlloc(&p, size), comm);
  ncclWindow_t win = nullptr;
  const ncclResult_t rc = ncclCommWindowRegister(comm, p, size, &win, NCCL_WIN_COLL_SYMMETRIC);
  if (rc != ncclSuccess) {
    OVB_WARN_NCCL(ncclMemFree(p), comm);
    OVB_CHECK_NCCL(rc, comm);
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
