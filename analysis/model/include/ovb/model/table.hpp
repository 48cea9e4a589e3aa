// Plain-text tables for ovb-model's console output: a header, rows, columns padded to their
// widest cell (first column left-aligned, the others right-aligned).
#pragma once

#include <string>
#include <vector>

namespace ovb::model {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str(const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// v with `digits` decimals; "-" for NaN.
std::string fmt(double v, int digits = 2);

}  // namespace ovb::model
