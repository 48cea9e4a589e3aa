// Parsing of sizes and lists on the command line (and in sweep files): byte counts with binary
// suffixes like nccl-tests ("8", "64K", "1M", "2G") and nccl-tests-style size sweeps (min, max,
// factor).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ovb::mb {

// "8", "64K", "1M", "2G" (K = 1024, as nccl-tests' -b/-e), optional trailing "B" ("64KB").
// Throws UsageError naming `what` for anything else (negative, empty, unknown suffix, overflow).
std::size_t parse_bytes(std::string_view s, std::string_view what = "size");

// min, min*f, min*f^2, ... while <= max (nccl-tests' -b -e -f). Throws UsageError when min is 0,
// max < min, or f < 2 while min < max.
std::vector<std::size_t> size_sweep(std::size_t min, std::size_t max, std::size_t factor);

// -1 -> "default", else the number.
std::string knob_text(int v);

// 1536 -> "1.5 KiB", for messages.
std::string human_bytes(std::size_t b);

// Splits "a,b,c" (empty items dropped).
std::vector<std::string> split_list(std::string_view s, char sep = ',');

}  // namespace ovb::mb
