// One fully connected layer under the 4D algorithm (docs/algorithm.md), forward and backward, with
// the OAR, ORS and tp overlap orders.
//
// Forward: y = x W_blk^T is a partial sum over the `in` dimension's group: all-reduce it there.
// With tp the GEMM runs as --tp-chunks row slices of the tokens (rows of x and y), each slice's
// all-reduce issued on the tp stream right after it, all waited for after the last slice: row
// slices change no dot product, and need no buffer of their own.
// The bias is added by the group's rank 0 only, inside the GEMM epilogue, so the all-reduce adds
// it exactly once. GELU is fused into the GEMM only where no all-reduce follows (group of 1).
// Backward: dx = dy W_blk is partial over the `out` dimension's group (all-reduce there);
// dW = dy^T x goes to the Z reduce-scatter (Gz > 1) or straight into the gradient shard; the
// bias gradient is computed with it (a GEMM epilogue on CUDA). A GELU before the layer (MLP-down)
// has its backward fused into the dX GEMM where dX needs no all-reduce, else after it.
//   none: dX GEMM, all-reduce dX and wait, dW GEMM, reduce-scatter dW and wait.
//   OAR:  dX GEMM, start the all-reduce, dW GEMM meanwhile, wait before returning dX.
//   ORS:  the reduce-scatter is waited for only when its dW block's slot is taken again
//         (dw_window.hpp: `ors_window` layers later) or before the optimizer; when dX needs no
//         all-reduce (its group has size 1), dW first, so the reduce-scatter starts earlier.
// Micro-steps after the first accumulate (model.hpp): the bias gradient goes to a scratch and is
// added; with Gz > 1 the accumulated shard (written by the previous micro-step's reduce-scatter,
// waited for here) is added into the rank's own chunk of the new dW block, so the reduce-scatter
// writes the running sum; with Gz = 1 the dW goes to a slot of the window and is added.
#include "ovb/annotate.hpp"
#include "train/model.hpp"

namespace ovb::gpt {

void Model::linear_forward(const LinearParams& lp, const void* x, void* y, void* gelu_out, Phase ph,
                           bool rc) {
  const LinearGeom& g = lp.geom;
  Stream& s = comm_.compute();
  const void* w = gather_.acquire(lp, ph, rc);
  const bool first_in_group = comm_.coord(g.in_dim) == 0;
  const void* bias = (lp.bias >= 0 && first_in_group) ? wptr(lp.bias) : nullptr;
  const bool reduced = o_.grid.size(g.in_dim) > 1;
  const bool fuse_gelu = gelu_out && !reduced;
  // Overlap tp: k row slices of the tokens, each reduced while the next one computes.
  const std::int64_t k = o_.otp && reduced ? o_.tp_chunks : 1, rows = T_ / k;
  std::vector<CollHandle> chunks;
  for (std::int64_t c = 0; c < k; ++c) {
    const auto* xc =
        static_cast<const char*>(x) + static_cast<std::size_t>(c * rows * g.in_local) * a_;
    auto* yc = static_cast<char*>(y) + static_cast<std::size_t>(c * rows * g.out_local) * a_;
    {
      ScopedRange r(std::string(name_of(g.spec.id)) + (rc ? " recompute" : " forward"), "compute");
      k_.linear_forward(s, xc, w, bias, yc, fuse_gelu ? gelu_out : nullptr, rows, g.out_local,
                        g.in_local);
    }
    if (c == k - 1) gather_.release(lp, rc);
    chunks.push_back(comm_.issue(
        op(ph, lp.layer, std::string(name_of(g.spec.id)), CollRole::output_reduce,
           CollKind::all_reduce, group_of(g.in_dim), rows * g.out_local, o_.act_dtype, rc),
        yc, yc));
  }
  comm_.wait(chunks);
  if (gelu_out && !fuse_gelu) k_.gelu_forward(s, y, gelu_out, T_ * g.out_local);
}

void Model::linear_backward(const LinearParams& lp, const void* dy, const void* x, void* dx,
                            const void* gelu_in) {
  const LinearGeom& g = lp.geom;
  Stream& s = comm_.compute();
  const std::string name(name_of(g.spec.id));
  ScopedRange range(name + " backward", "compute");
  const void* w = gather_.acquire(lp, Phase::backward, false);
  const bool z_sharded = o_.grid.gz > 1;
  // Sharded gradients start every micro-step afresh in a bucket buffer: nothing to add here.
  const bool accumulate = micro_step_ > 0 && !grads_sharded_;
  // A slot of the dW window when Z-sharded or accumulating, else the gradient itself.
  float* dw = z_sharded || accumulate ? nullptr : gptr(lp.weight);
  // Written by the dW GEMM's epilogue.
  float* dbias = lp.bias < 0 ? nullptr : accumulate ? st_.bias_acc : gptr(lp.bias);
  CollHandle& previous_scatter = last_scatter_[linear_slot(lp)];
  // The GELU backward can join the dX GEMM only where dX needs no all-reduce.
  const bool fuse_gelu = gelu_in && o_.grid.size(g.out_dim) == 1;
  CollHandle ar = -1, rs = -1;
  auto weight_grad = [&] {
    if (!dw) dw = dw_.take();
    k_.linear_backward_weight(s, dy, x, dw, T_, g.out_local, g.in_local, dbias);
    if (accumulate && dbias) k_.accumulate(s, dbias, gptr(lp.bias), g.bias_local);
    if (accumulate && z_sharded) {
      comm_.wait(previous_scatter);
      k_.accumulate(s, gptr(lp.weight), dw + comm_.coord(Dim::z) * g.shard, g.shard);
    } else if (accumulate) {
      k_.accumulate(s, dw, gptr(lp.weight), g.block);
    }
    if (z_sharded) {
      rs = comm_.issue(op(Phase::backward, lp.layer, name, CollRole::weight_grad_scatter,
                          CollKind::reduce_scatter, Group::z, g.shard, o_.grad_dtype),
                       dw, gptr(lp.weight));
      dw_.hold(rs);
      previous_scatter = rs;
    }
  };
  auto input_grad = [&] {
    k_.linear_backward_input(s, dy, w, dx, T_, g.out_local, g.in_local,
                             fuse_gelu ? gelu_in : nullptr);
    ar = comm_.issue(op(Phase::backward, lp.layer, name, CollRole::input_grad_reduce,
                        CollKind::all_reduce, group_of(g.out_dim), T_ * g.in_local, o_.act_dtype),
                     dx, dx);
  };
  if (o_.ors && o_.grid.size(g.out_dim) == 1) {
    weight_grad();
    input_grad();
  } else {
    input_grad();
    if (!o_.oar) comm_.wait(ar);
    weight_grad();
  }
  gather_.release(lp, false);
  comm_.wait(ar);
  if (gelu_in && !fuse_gelu) k_.gelu_backward(s, gelu_in, dx, dx, T_ * g.in_local);
  if (rs >= 0) {
    bucket_deps_.push_back(rs);
    if (!o_.ors) comm_.wait(rs);
  }
}

}  // namespace ovb::gpt
