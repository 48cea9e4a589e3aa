// Configuration search (see search.hpp).
#include "ovb/model/search.hpp"

#include <algorithm>
#include <set>

#include "ovb/error.hpp"
#include "search_choice.hpp"

namespace ovb::model {

namespace {

std::vector<int> divisors(int n, bool pow2_only) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0 && (!pow2_only || (i & (i - 1)) == 0)) d.push_back(i);
  return d;
}

}  // namespace

std::vector<GridShape> enumerate_grids(int gpus, bool pow2_only) {
  if (gpus < 1) throw UsageError("the number of GPUs must be >= 1, got " + std::to_string(gpus));
  std::vector<GridShape> out;
  const std::vector<int> ds = divisors(gpus, pow2_only);
  for (int gx : ds)
    for (int gy : ds)
      for (int gz : ds) {
        const long long tp = static_cast<long long>(gx) * gy * gz;
        if (gpus % tp != 0) continue;
        const int gd = static_cast<int>(gpus / tp);
        if (pow2_only && (gd & (gd - 1)) != 0) continue;
        GridShape g;
        g.gx = gx;
        g.gy = gy;
        g.gz = gz;
        g.gdata = gd;
        out.push_back(g);
      }
  return out;
}

std::vector<GridShape> distinct_orders(const GridShape& g) {
  std::array<Dim, 3> order{Dim::x, Dim::y, Dim::z};
  std::set<std::array<int, 3>> seen;
  std::vector<GridShape> out;
  do {
    GridShape v = g;
    v.order = order;
    const Grid grid(v, v.world());
    // A dimension of size 1 issues no collective: its stride does not matter.
    auto stride = [&](Dim d) { return g.size(d) > 1 ? grid.stride(d) : 0; };
    if (seen.insert({stride(Dim::x), stride(Dim::y), stride(Dim::z)}).second) out.push_back(v);
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

SearchResult search(const GptShape& m, const SearchOptions& opt, const Machine& mc) {
  SearchResult r;
  r.memory_limit_bytes = memory_limit_bytes(mc);
  for (const GridShape& g : enumerate_grids(opt.gpus, opt.pow2_only)) {
    ++r.grids;
    GptPlanOptions o = opt.base;
    o.grid = g;
    if (opt.choose.micro_batch) o.micro_batch = 0;  // every variant is valid when this one is
    if (opt.choose.tp_chunks) o.otp = false;        // each variant's chunks divide its tokens
    try {
      validate_gpt_plan(m, o);
    } catch (const UsageError& e) {
      ++r.invalid;
      if (r.invalid_example.empty()) r.invalid_example = e.what();
      continue;
    }
    const std::vector<GridShape> orders =
        opt.all_orders ? distinct_orders(g) : std::vector<GridShape>{g};
    const std::vector<GptPlanOptions> variants = plan_variants(m, o, opt.choose);
    r.variants += static_cast<std::int64_t>(variants.size() * orders.size());
    std::vector<Candidate> best =
        choose_per_order(m, variants, orders, mc, r.memory_limit_bytes, opt.exhaustive);
    for (Candidate& c : best) {
      ++r.configs;
      if (!c.fits) {
        ++r.unfit;
        ++r.unfit_by_term[std::string(c.memory.largest_term())];
      }
      r.ranked.push_back(std::move(c));
    }
  }
  std::stable_sort(r.ranked.begin(), r.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.fits != b.fits) return a.fits;
    return a.timeline.iteration_us < b.timeline.iteration_us;
  });
  return r;
}

}  // namespace ovb::model
