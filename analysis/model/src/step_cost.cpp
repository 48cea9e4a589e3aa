// The model's time of one compute step of the schedule (see step_cost.hpp).
#include "ovb/model/step_cost.hpp"

#include <string>
#include <string_view>

#include "ovb/error.hpp"

namespace ovb::model {

StepCoster::StepCoster(const GptShape& m, const GptPlanOptions& o, const Machine& mc)
    : m_(m), o_(o), mc_(mc), ct_(compute_terms(m, o, mc)) {
  bucket_elements_ = static_cast<double>(m.layers) *
                         static_cast<double>(data_chunk(block_bucket_count(m, o.grid), o)) +
                     static_cast<double>(data_chunk(head_bucket_count(m, o.grid), o));
}

const LinearCompute& StepCoster::linear(const Step& s) const {
  if (s.linear.value < 0) throw Error("step cost: '" + s.op + "' names no linear layer");
  if (s.linear.value >= 4 * m_.layers) return ct_.head.lm_head;
  return ct_.block.lin[static_cast<std::size_t>(s.linear.value % 4)];
}

double StepCoster::compute_us(const Step& s) const {
  const std::string_view op = s.op;
  const std::size_t dot = op.find('.');
  const std::string_view base = op.substr(0, dot);
  const std::string_view part = dot == std::string_view::npos ? "" : op.substr(dot + 1);
  const bool bwd = part == "bwd";
  const BlockCompute& b = ct_.block;
  const HeadCompute& h = ct_.head;
  if (s.gemm.m > 0) {  // a linear layer's GEMM (or a chunk of it)
    const LinearCompute& l = linear(s);
    const double gemm = gemm_term(mc_, s.gemm.m, s.gemm.n, s.gemm.k, name_of(o_.act_dtype)).time_us;
    const double rows = static_cast<double>(s.gemm.m) / static_cast<double>(ct_.tokens);
    if (part == "fwd") return gemm + l.epilogue.time_us * rows;
    if (part == "dx") return gemm + l.epilogue.bwd_us * rows;
    if (part == "dw") return gemm;
  }
  if (part == "accumulate" && base != "bucket") return linear(s).accumulate.time_us;
  if (part == "stats" || part == "bwd_stats" || part == "bias_accumulate") return 0;
  if (base == "ln1") return bwd ? b.ln1.bwd_us : b.ln1.time_us;
  if (base == "ln2") return bwd ? b.ln2.bwd_us : b.ln2.time_us;
  if (base == "ln_f") return bwd ? h.ln_f.bwd_us : h.ln_f.time_us;
  if (base == "attention")
    return bwd ? b.attn_bwd_us + b.attn_io.bwd_us : b.attn_fwd_us + b.attn_io.time_us;
  if (base == "embedding") return bwd ? h.embed.bwd_us : h.embed.time_us;
  if (base == "ce") return bwd ? h.ce.bwd_us : h.ce.time_us;
  if (base == "gelu" || base == "swiglu" || base == "rope" || base == "ce_combine" ||
      base == "sumsq" || op == "bucket.zero")
    return 0;
  if (op == "bucket.accumulate") return s.layer < 0 ? h.accumulate_us : b.accumulate_us;
  if (op == "adamw") {
    const std::int64_t count =
        s.layer < 0 ? head_bucket_count(m_, o_.grid) : block_bucket_count(m_, o_.grid);
    return ct_.optimizer.time_us * static_cast<double>(data_chunk(count, o_)) / bucket_elements_;
  }
  throw Error("step cost: the model has no cost for compute step '" + s.op + "'");
}

}  // namespace ovb::model
