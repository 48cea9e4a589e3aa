// The replay's cost of each step of the schedule (timeline.cpp; the rules in timeline.hpp):
// compute steps by op name from ComputeTerms and by GEMM shape through gemm_term(), collectives
// from PlanComm's table, else cost_collective(), with the link each uses (link_share.hpp). Each is
// looked up in a small table filled on first use, so that a replay of millions of steps computes a
// few dozen costs.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "ovb/gpt_schedule.hpp"
#include "ovb/grid.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/link_share.hpp"
#include "ovb/model/plan_comm.hpp"

namespace ovb::model {

class KernelCosts {
 public:
  KernelCosts(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
              const GptPlanOptions& o, const Machine& mc);

  double compute_us(const Step& s);      // a compute step; Error for an op without a cost
  LinkUse collective(const CollOp& op);  // an issued collective on o.grid: its time and link

 private:
  // A compute op: fixed time, plus for a GEMM its shape's time and a share of the epilogue.
  struct Kernel {
    double fixed_us = 0;
    double epilogue_us = 0;  // the whole layer's (T rows)
    bool gemm = false;
  };
  Kernel resolve(std::string_view op, bool head) const;

  static constexpr std::size_t kSlots = 128;  // per table; a few dozen entries are used
  struct NamedEntry {
    const char* key = nullptr;
    bool head = false;
    Kernel k;
  };
  struct GemmEntry {
    GemmShape shape;
    double us = -1;
  };
  struct CollEntry {
    std::int64_t count = -1;
    int group_size = 0;
    Group group = Group::x;
    CollKind kind = CollKind::all_reduce;
    DType dtype = DType::f32;
    LinkUse use;
  };
  GemmEntry& find(const GemmShape& g);  // its entry, or the empty one where it would go
  CollEntry& find(const CollOp& op);
  void add(GemmEntry& e, const GemmShape& g, double us);  // unless the table is half full
  void add(CollEntry& e, const CollOp& op, const LinkUse& use);

  const ComputeTerms& ct_;
  const Machine& mc_;
  Grid grid_;
  std::string_view dtype_;
  double adamw_block_ = 0, adamw_head_ = 0;  // each bucket's share of the optimizer
  std::array<NamedEntry, kSlots> named_{};
  std::array<GemmEntry, kSlots> gemms_{};
  std::array<CollEntry, kSlots> colls_{};
  std::size_t gemm_count_ = 0, coll_count_ = 0;
};

}  // namespace ovb::model
