// Result files that never replace what is not theirs (see ovb/output_file.hpp).
#include "ovb/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "ovb/error.hpp"

namespace ovb {

namespace fs = std::filesystem;

namespace {

// The descriptor that "-" and /dev/stdout write to: STDOUT_FILENO until
// reserve_stdout_for_results moves the other output aside (process-wide, like the descriptor).
int g_results_fd = STDOUT_FILENO;

constexpr int kTempTries = 100;
constexpr std::size_t kBufferBytes = 1 << 20;

std::string sys_error(const std::string& what, const std::string& path, int err = errno) {
  return what + " '" + path + "': " + std::strerror(err);
}

// The descriptor a name stands for, when it names an open one.
std::optional<int> named_descriptor(const std::string& path) {
  if (is_stdout_name(path)) return g_results_fd;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p(prefix);
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos &&
        path.size() - p.size() <= 9) {
      const int fd = std::stoi(path.substr(p.size()));
      return fd == STDOUT_FILENO ? g_results_fd : fd;
    }
  }
  return std::nullopt;
}

enum class How { descriptor, through, replace };

struct Target {
  How how;
  std::string file;  // through: the path opened; replace: the file renamed over
  int fd = -1;       // descriptor
};

Target resolve(const std::string& path) {
  if (path.empty()) throw UsageError("an empty output file name");
  if (const auto fd = named_descriptor(path)) return {How::descriptor, path, *fd};
  const fs::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw Error("cannot create folder '" + target.parent_path().string() + "' for '" + path +
                  "': " + ec.message());
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {How::replace, path};
    throw Error(sys_error("cannot look at", path));
  }
  std::string file = path;
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0)
      throw UsageError(sys_error("cannot follow the symbolic link", path));
    if (S_ISREG(st.st_mode)) {
      std::error_code ec;
      file = fs::canonical(target, ec).string();
      if (ec) throw Error("cannot resolve the symbolic link '" + path + "': " + ec.message());
    }
  }
  if (S_ISDIR(st.st_mode)) throw UsageError("'" + path + "' is a folder, not a file name");
  if (S_ISSOCK(st.st_mode)) throw UsageError("'" + path + "' is a socket, not a file name");
  return {S_ISREG(st.st_mode) ? How::replace : How::through, file};
}

// Creates .NAME.tmp.PID.N beside `file` exclusively (never through a link, never over a file
// there); returns its descriptor and sets `tmp`.
int create_temp(const std::string& file, std::string& tmp) {
  const fs::path target(file);
  std::string name = ".";  // appended, not "." + ...: GCC 12 warns wrongly (-Wrestrict) on that
  name += target.filename().string();
  const std::string stem =
      (target.parent_path() / name).string() + ".tmp." + std::to_string(::getpid()) + ".";
  for (int n = 0; n < kTempTries; ++n) {
    tmp = stem + std::to_string(n);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) throw Error(sys_error("cannot create a temporary file for", file));
  }
  throw Error("cannot create a temporary file for '" + file + "': " + std::to_string(kTempTries) +
              " names taken (" + stem + "N)");
}

}  // namespace

bool is_stdout_name(const std::string& path) {
  return path == "-" || path == "/dev/stdout";
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  const Target t = resolve(path_);
  final_ = t.file;
  if (t.how == How::descriptor) {
    fd_ = t.fd;
    own_fd_ = false;
    // Text already printed by the program comes first.
    std::cout.flush();
    std::fflush(stdout);
  } else if (t.how == How::through) {
    fd_ = ::open(final_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) throw Error(sys_error("cannot write", path_));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      throw Error("'" + path_ + "' changed while it was being opened; not written");
    }
  } else {
    fd_ = create_temp(final_, tmp_);
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && own_fd_) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::write(std::string_view data) {
  buffer_.append(data);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void OutputFile::flush_buffer() {
  const std::string& where = tmp_.empty() ? path_ : tmp_;
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(sys_error("write failed for", where));
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void OutputFile::commit() {
  if (committed_) return;
  flush_buffer();
  if (!own_fd_) {
    committed_ = true;
    return;
  }
  const int fd = fd_;
  fd_ = -1;
  if (tmp_.empty()) {  // written through: nothing to sync or rename
    if (::close(fd) != 0) throw Error(sys_error("cannot write", path_));
    committed_ = true;
    return;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw Error(sys_error("cannot flush", tmp_));
  if (std::rename(tmp_.c_str(), final_.c_str()) != 0)
    throw Error(sys_error("cannot rename " + tmp_ + " to", final_));
  committed_ = true;
}

void check_writable(const std::string& path) {
  try {
    const Target t = resolve(path);
    if (t.how == How::descriptor) {
      if (::fcntl(t.fd, F_GETFL) < 0) throw UsageError(sys_error("cannot write", path));
    } else if (t.how == How::through) {
      // Opening a FIFO here would wait for its reader: ask for permission only.
      if (::access(t.file.c_str(), W_OK) != 0) throw UsageError(sys_error("cannot write", path));
    } else {
      std::string tmp;
      ::close(create_temp(t.file, tmp));
      ::unlink(tmp.c_str());
    }
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

void reserve_stdout_for_results() {
  if (g_results_fd != STDOUT_FILENO) return;
  std::cout.flush();
  std::fflush(stdout);
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) throw Error(sys_error("cannot keep standard output for results", "-"));
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    const int err = errno;
    ::close(fd);
    throw Error(sys_error("cannot send text to standard error", "-", err));
  }
  g_results_fd = fd;
}

}  // namespace ovb
