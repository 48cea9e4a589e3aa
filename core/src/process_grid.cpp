// MPI sub-communicators of the process grid (see ovb/process_grid.hpp).
#include "ovb/process_grid.hpp"

#include "ovb/error.hpp"

namespace ovb {

MpiComm::~MpiComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

MpiComm& MpiComm::operator=(MpiComm&& o) noexcept {
  if (this != &o) {
    this->~MpiComm();
    comm_ = o.comm_;
    o.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

static int world_size_of(MPI_Comm world) {
  int n = 0;
  OVB_CHECK_MPI(MPI_Comm_size(world, &n));
  return n;
}

ProcessGrid::ProcessGrid(const GridShape& shape, MPI_Comm world)
    : grid_(shape, world_size_of(world)), world_(world) {
  OVB_CHECK_MPI(MPI_Comm_rank(world, &rank_));
  for (Dim d : kAllDims) {
    MPI_Comm c = MPI_COMM_NULL;
    // color: which group along d; key: position along d, so the group rank is the coordinate.
    OVB_CHECK_MPI(MPI_Comm_split(world, grid_.group_id(d, rank_), grid_.coords(rank_)[d], &c));
    comms_[static_cast<int>(d)] = MpiComm(c);
  }
}

}  // namespace ovb
