// The GEMM shape text "MxNxK[:TATB]" (see ovb/gemm.hpp): one format for the microbenchmarks'
// --shapes and the model's gemm command.
#include <string>
#include <string_view>

#include "ovb/error.hpp"
#include "ovb/gemm.hpp"

namespace ovb {

GemmShape parse_gemm_shape(std::string_view s) {
  auto fail = [&]() -> GemmShape {
    throw UsageError("GEMM shape '" + std::string(s) +
                     "' is not MxNxK or MxNxK:TATB (e.g. 4096x4096x4096, 4096x1024x512:nt)");
  };
  GemmShape g;
  std::string_view dims = s;
  if (const auto colon = s.find(':'); colon != std::string_view::npos) {
    const std::string_view tt = s.substr(colon + 1);
    if (tt.size() != 2) return fail();
    for (int i = 0; i < 2; ++i)
      if (tt[i] != 'n' && tt[i] != 't') return fail();
    g.ta = tt[0] == 'n' ? Trans::n : Trans::t;
    g.tb = tt[1] == 'n' ? Trans::n : Trans::t;
    dims = s.substr(0, colon);
  }
  std::int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    const auto x = dims.find('x');
    const std::string_view part = i < 2 ? dims.substr(0, x) : dims;
    if ((i < 2) == (x == std::string_view::npos)) return fail();  // exactly two 'x'
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != part.npos)
      return fail();
    v[i] = std::stoll(std::string(part));
    if (v[i] < 1) return fail();
    if (i < 2) dims = dims.substr(x + 1);
  }
  g.m = v[0];
  g.n = v[1];
  g.k = v[2];
  return g;
}

std::string shape_text(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + ":" +
         (s.ta == Trans::n ? "n" : "t") + (s.tb == Trans::n ? "n" : "t");
}

}  // namespace ovb
