// The 4D process grid (Gx, Gy, Gz, Gdata) of docs/algorithm.md.
// Rank placement: the first dimension of `order` varies fastest (default X, then Y, then Z), data
// is always slowest. The stride of a dimension ("ip" in docs/model-costs.md) is the product of the
// sizes of the dimensions that vary faster than it.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace ovb {

enum class Dim { x = 0, y = 1, z = 2, data = 3 };
inline constexpr std::array<Dim, 4> kAllDims{Dim::x, Dim::y, Dim::z, Dim::data};

std::string_view name_of(Dim d);   // "x", "y", "z", "data"
Dim parse_dim(std::string_view s);  // throws UsageError

struct GridShape {
  int gx = 1, gy = 1, gz = 1, gdata = 1;
  std::array<Dim, 3> order{Dim::x, Dim::y, Dim::z};  // fastest-varying first

  int size(Dim d) const;
  // Gx*Gy*Gz*Gdata; throws UsageError when the product does not fit an int (no world is that
  // large), so that no caller divides by an overflowed product.
  int world() const;
  // "2x2x2x1" (order x,y,z) or "2x2x2x1:y,x,z".
  std::string str() const;
  static GridShape parse(std::string_view s);             // "GXxGYxGZxGD[:order]"
  static std::array<Dim, 3> parse_order(std::string_view s);  // "x,y,z" permutations
};

struct Coords {
  std::array<int, 4> c{};  // indexed by Dim
  int operator[](Dim d) const { return c[static_cast<int>(d)]; }
  int& operator[](Dim d) { return c[static_cast<int>(d)]; }
  bool operator==(const Coords&) const = default;
};

// A validated grid: pure arithmetic, no communicators (see ProcessGrid for those).
class Grid {
 public:
  // Throws UsageError naming the factor that is wrong when the shape does not fit world_size.
  Grid(const GridShape& shape, int world_size);

  const GridShape& shape() const { return shape_; }
  int size(Dim d) const { return shape_.size(d); }
  int stride(Dim d) const;
  Coords coords(int rank) const;
  int rank_of(const Coords& c) const;
  // Ranks of the group along d that contains `rank`, ordered by their coordinate along d.
  std::vector<int> group(Dim d, int rank) const;
  // Index of that group among all groups along d (same for every member; used as a split color).
  int group_id(Dim d, int rank) const;

 private:
  GridShape shape_;
  std::array<int, 4> stride_{};
};

}  // namespace ovb
