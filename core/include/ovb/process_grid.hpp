// A Grid bound to MPI: one sub-communicator per dimension (MPI_Comm_split), from which backend
// communicators (NCCL or MPI) are created for each group.
#pragma once

#include <mpi.h>

#include <array>
#include <memory>

#include "ovb/backend.hpp"
#include "ovb/grid.hpp"

namespace ovb {

// Owning MPI communicator handle (MPI_Comm_free on destruction).
class MpiComm {
 public:
  MpiComm() = default;
  explicit MpiComm(MPI_Comm c) : comm_(c) {}
  ~MpiComm();
  MpiComm(MpiComm&& o) noexcept : comm_(o.comm_) { o.comm_ = MPI_COMM_NULL; }
  MpiComm& operator=(MpiComm&& o) noexcept;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class ProcessGrid {
 public:
  // Collective over MPI_COMM_WORLD. Throws UsageError when the shape does not match the world size.
  ProcessGrid(const GridShape& shape, MPI_Comm world = MPI_COMM_WORLD);

  const Grid& grid() const { return grid_; }
  int rank() const { return rank_; }
  Coords coords() const { return grid_.coords(rank_); }
  MPI_Comm world() const { return world_; }
  // The group along d containing this rank; its rank in it equals this rank's coordinate along d.
  MPI_Comm comm(Dim d) const { return comms_[static_cast<int>(d)].get(); }

 private:
  Grid grid_;
  MPI_Comm world_;
  int rank_ = 0;
  std::array<MpiComm, 4> comms_;
};

}  // namespace ovb
