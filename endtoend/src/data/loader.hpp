// Training data: synthetic tokens, a flat uint16 token file (nanoGPT / llm.c format) or a text
// file whose bytes are the tokens (vocabulary 256).
//
// Which sequences a rank trains on: iteration i uses the global sequences 0..B-1; global sequence
// g of iteration i is the window of seq+1 tokens starting at ((i*B + g) * seq) mod (N - seq) of a
// file of N tokens (synthetic: token p of that window is hash(seed, i*B + g, p) mod V). Rank
// (x, y, z, d) takes the B / (Gdata*Gz) consecutive sequences starting at (d*Gz + z) *
// B/(Gdata*Gz), so the global batch is the same on every grid, and X/Y ranks of one (z, d) share
// their tokens.
#pragma once

#include <cstdint>
#include <string>

#include "ovb/gpt_plan.hpp"

namespace ovb::gpt {

class DataSource {
 public:
  // spec: "synthetic", "tokens:FILE" or "text:FILE". Throws UsageError for an unknown spec, a
  // missing or unreadable file, an odd-sized token file, a file shorter than seq + 1 tokens, or
  // text data with vocab < 256.
  DataSource(const std::string& spec, const GptShape& m, std::int64_t batch, std::uint64_t seed);
  ~DataSource();
  DataSource(const DataSource&) = delete;
  DataSource& operator=(const DataSource&) = delete;

  // Tokens and next-token targets of the n_seq global sequences from first_seq, iteration iter:
  // n_seq * seq entries each. Throws UsageError for a token id >= vocab in a token file.
  void batch(int iter, std::int64_t first_seq, std::int64_t n_seq, std::int32_t* tokens,
             std::int32_t* targets) const;
  std::string describe() const;             // e.g. "text:data.txt (12345 tokens)"
  std::int64_t size() const { return n_; }  // tokens in the file (0 for synthetic)

 private:
  std::int32_t token_at(std::int64_t window, std::int64_t pos) const;

  std::string spec_, path_;
  enum class Kind { synthetic, tokens, text } kind_ = Kind::synthetic;
  std::int64_t seq_, vocab_, batch_;
  std::uint64_t seed_;
  const unsigned char* data_ = nullptr;  // mmap of the file
  std::size_t bytes_ = 0;
  std::int64_t n_ = 0;
};

}  // namespace ovb::gpt
