// Atomic result files and JSON reading (see ovb/io.hpp).
#include "ovb/io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ovb/error.hpp"

namespace ovb {

namespace fs = std::filesystem;

static std::string sys_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

void check_writable(const std::string& path) {
  const fs::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw UsageError("cannot create folder '" + target.parent_path().string() + "' for '" + path +
                       "': " + ec.message());
  }
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw UsageError("'" + path + "' is a folder, not a file name");
  const std::string probe = path + ".probe." + std::to_string(getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError(sys_error("cannot write beside", path));
  ::close(fd);
  ::unlink(probe.c_str());
}

void atomic_write(const std::string& path, const std::string& content) {
  const fs::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw Error("cannot create folder '" + target.parent_path().string() + "': " + ec.message());
  }
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(sys_error("cannot write", tmp));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string msg = sys_error("write failed for", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(msg);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string msg = sys_error("cannot flush", tmp);
    ::unlink(tmp.c_str());
    throw Error(msg);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = sys_error("cannot rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    throw Error(msg);
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  // Non-finite numbers (e.g. an undefined ratio) are written as null, never as invalid JSON.
  atomic_write(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(sys_error("cannot read", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("'" + path + "' is not valid JSON: " + e.what());
  }
}

}  // namespace ovb
