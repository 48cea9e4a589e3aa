// Plain-text tables (see table.hpp).
#include "ovb/model/table.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace ovb::model {

std::string TextTable::str(const std::string& indent) const {
  std::vector<std::size_t> w(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& r) {
    os << indent;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      if (i > 0) os << "  ";
      os << (i == 0 ? std::left : std::right) << std::setw(static_cast<int>(w[i])) << cell;
    }
    os << '\n';
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return os.str();
}

std::string fmt(double v, int digits) {
  if (std::isnan(v)) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

}  // namespace ovb::model
