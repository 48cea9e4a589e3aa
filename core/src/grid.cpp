// Grid arithmetic and validation (see ovb/grid.hpp).
#include "ovb/grid.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <sstream>

#include "ovb/error.hpp"

namespace ovb {

std::string_view name_of(Dim d) {
  switch (d) {
    case Dim::x: return "x";
    case Dim::y: return "y";
    case Dim::z: return "z";
    case Dim::data: return "data";
  }
  return "?";
}

Dim parse_dim(std::string_view s) {
  if (s == "x" || s == "X") return Dim::x;
  if (s == "y" || s == "Y") return Dim::y;
  if (s == "z" || s == "Z") return Dim::z;
  if (s == "data" || s == "d" || s == "dp") return Dim::data;
  throw UsageError("unknown grid dimension '" + std::string(s) + "' (expected x, y, z or data)");
}

int GridShape::size(Dim d) const {
  switch (d) {
    case Dim::x: return gx;
    case Dim::y: return gy;
    case Dim::z: return gz;
    case Dim::data: return gdata;
  }
  return 1;
}

std::string GridShape::str() const {
  std::ostringstream os;
  os << gx << 'x' << gy << 'x' << gz << 'x' << gdata;
  if (order != std::array<Dim, 3>{Dim::x, Dim::y, Dim::z})
    os << ':' << name_of(order[0]) << ',' << name_of(order[1]) << ',' << name_of(order[2]);
  return os.str();
}

std::array<Dim, 3> GridShape::parse_order(std::string_view s) {
  std::array<Dim, 3> out{};
  std::size_t n = 0, pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = std::min(s.find(',', pos), s.size());
    if (n == 3) throw UsageError("grid order '" + std::string(s) + "' names more than x, y and z");
    out[n++] = parse_dim(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  std::array<Dim, 3> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (n != 3 || sorted != std::array<Dim, 3>{Dim::x, Dim::y, Dim::z})
    throw UsageError("grid order '" + std::string(s) +
                     "' must name x, y and z once each, e.g. x,y,z or y,x,z");
  return out;
}

GridShape GridShape::parse(std::string_view s) {
  GridShape g;
  const std::size_t colon = s.find(':');
  const std::string_view dims = s.substr(0, colon);
  int vals[4];
  std::size_t n = 0, pos = 0;
  while (pos <= dims.size()) {
    const std::size_t sep = std::min(dims.find('x', pos), dims.size());
    const std::string_view part = dims.substr(pos, sep - pos);
    int v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (n == 4 || part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw UsageError("grid '" + std::string(s) + "' is not of the form GXxGYxGZxGDATA, e.g. 2x2x2x1");
    vals[n++] = v;
    pos = sep + 1;
  }
  if (n != 4)
    throw UsageError("grid '" + std::string(s) + "' is not of the form GXxGYxGZxGDATA, e.g. 2x2x2x1");
  g.gx = vals[0];
  g.gy = vals[1];
  g.gz = vals[2];
  g.gdata = vals[3];
  if (colon != std::string_view::npos) g.order = parse_order(s.substr(colon + 1));
  return g;
}

int GridShape::world() const {
  std::int64_t n = 1;
  for (int f : {gx, gy, gz, gdata}) {
    n *= f;
    if (n > std::numeric_limits<int>::max() || n < std::numeric_limits<int>::min())
      throw UsageError("grid " + str() + ": Gx*Gy*Gz*Gdata is larger than any world size");
  }
  return static_cast<int>(n);
}

Grid::Grid(const GridShape& shape, int world_size) : shape_(shape) {
  const char* names[4] = {"Gx", "Gy", "Gz", "Gdata"};
  for (Dim d : kAllDims)
    if (shape.size(d) < 1)
      throw UsageError("grid " + shape.str() + ": " + names[static_cast<int>(d)] +
                       " must be >= 1, got " + std::to_string(shape.size(d)));
  if (shape.world() != world_size) {
    const int tp = shape.gx * shape.gy * shape.gz;
    std::ostringstream os;
    os << "grid " << shape.str() << " (Gx*Gy*Gz*Gdata = " << shape.world()
       << ") does not match the world size " << world_size << ": ";
    if (world_size % tp == 0)
      os << "with Gx*Gy*Gz = " << tp << ", Gdata must be " << world_size / tp << ", not "
         << shape.gdata;
    else
      os << "Gx*Gy*Gz = " << tp << " does not divide " << world_size
         << "; change Gx, Gy or Gz so that their product divides the world size";
    throw UsageError(os.str());
  }
  int s = 1;
  for (Dim d : shape.order) {
    stride_[static_cast<int>(d)] = s;
    s *= shape.size(d);
  }
  stride_[static_cast<int>(Dim::data)] = s;
}

int Grid::stride(Dim d) const { return stride_[static_cast<int>(d)]; }

Coords Grid::coords(int rank) const {
  Coords c;
  for (Dim d : kAllDims) c[d] = (rank / stride(d)) % size(d);
  return c;
}

int Grid::rank_of(const Coords& c) const {
  int r = 0;
  for (Dim d : kAllDims) r += c[d] * stride(d);
  return r;
}

std::vector<int> Grid::group(Dim d, int rank) const {
  Coords c = coords(rank);
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(size(d)));
  for (int i = 0; i < size(d); ++i) {
    c[d] = i;
    out.push_back(rank_of(c));
  }
  return out;
}

int Grid::group_id(Dim d, int rank) const {
  Coords c = coords(rank);
  c[d] = 0;
  return rank_of(c);  // the lowest rank of the group identifies it
}

}  // namespace ovb
