// Training data sources (see loader.hpp). Files are memory-mapped: only the windows used are read.
#include "data/loader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/rng.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

DataSource::DataSource(const std::string& spec, const GptShape& m, std::int64_t batch,
                       std::uint64_t seed)
    : spec_(spec), seq_(m.seq), vocab_(m.vocab), batch_(batch), seed_(seed) {
  if (spec == "synthetic") return;
  if (spec.rfind("tokens:", 0) == 0) {
    kind_ = Kind::tokens;
    path_ = spec.substr(7);
  } else if (spec.rfind("text:", 0) == 0) {
    kind_ = Kind::text;
    path_ = spec.substr(5);
  } else {
    throw UsageError("--data: unknown source '" + spec +
                     "' (expected synthetic, tokens:FILE or text:FILE)");
  }
  if (path_.empty()) throw UsageError("--data " + spec + ": no file name");
  if (kind_ == Kind::text && vocab_ < 256)
    throw UsageError("--data " + spec + ": text data uses the 256 byte values as tokens, so " +
                     "--vocab must be >= 256, got " + std::to_string(vocab_));
  const int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) throw UsageError("--data: cannot open '" + path_ + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw UsageError("--data: cannot stat '" + path_ + "': " + std::strerror(errno));
  }
  bytes_ = static_cast<std::size_t>(st.st_size);
  if (kind_ == Kind::tokens && bytes_ % 2 != 0) {
    ::close(fd);
    throw UsageError("--data: '" + path_ + "' has " + std::to_string(bytes_) +
                     " bytes, not a whole number of uint16 tokens");
  }
  n_ = static_cast<std::int64_t>(kind_ == Kind::tokens ? bytes_ / 2 : bytes_);
  if (n_ < seq_ + 1) {
    ::close(fd);
    throw UsageError("--data: '" + path_ + "' holds " + std::to_string(n_) +
                     " tokens, fewer than seq + 1 = " + std::to_string(seq_ + 1));
  }
  void* p = ::mmap(nullptr, bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED)
    throw UsageError("--data: cannot map '" + path_ + "': " + std::strerror(errno));
  data_ = static_cast<const unsigned char*>(p);
}

DataSource::~DataSource() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), bytes_);
}

std::int32_t DataSource::token_at(std::int64_t window, std::int64_t pos) const {
  if (kind_ == Kind::synthetic)
    return static_cast<std::int32_t>(hash3(seed_ ^ 0xDA7Aull, static_cast<std::uint64_t>(window),
                                           static_cast<std::uint64_t>(pos)) %
                                     static_cast<std::uint64_t>(vocab_));
  const std::int64_t i = (window * seq_) % (n_ - seq_) + pos;
  if (kind_ == Kind::text) return data_[i];
  std::uint16_t v;
  std::memcpy(&v, data_ + 2 * i, 2);  // little-endian files on little-endian hosts
  if (v >= vocab_)
    throw UsageError("--data: token id " + std::to_string(v) + " at position " + std::to_string(i) +
                     " of '" + path_ + "' is >= --vocab " + std::to_string(vocab_));
  return v;
}

void DataSource::batch(int iter, std::int64_t first_seq, std::int64_t n_seq, std::int32_t* tokens,
                       std::int32_t* targets) const {
  for (std::int64_t j = 0; j < n_seq; ++j) {
    const std::int64_t window = static_cast<std::int64_t>(iter) * batch_ + first_seq + j;
    for (std::int64_t p = 0; p < seq_; ++p) {
      tokens[j * seq_ + p] = token_at(window, p);
      targets[j * seq_ + p] = token_at(window, p + 1);
    }
  }
}

std::string DataSource::describe() const {
  if (kind_ == Kind::synthetic) return "synthetic (seed " + std::to_string(seed_) + ")";
  return spec_ + " (" + std::to_string(n_) + " tokens)";
}

}  // namespace ovb::gpt
