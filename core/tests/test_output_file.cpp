// Result files never replace what is not theirs (ovb/output_file.hpp): "-" and /dev/stdout are
// standard output, devices, FIFOs and links to them are written through, a planted file at the
// temporary name is neither followed nor truncated, a failed write leaves the old file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/io.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// What `write` sends to file descriptor 1, read through a pipe.
std::string captured_stdout(const std::function<void()>& write) {
  std::cout.flush();  // the test framework's own text stays out of the pipe
  std::fflush(stdout);
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(p[1], STDOUT_FILENO);
  ::close(p[1]);
  write();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(p[0]);
  return out;
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ovb-output-file-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Names in the folder other than `keep` (temporary files left behind).
  std::vector<std::string> others(std::initializer_list<std::string> keep) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), n) == keep.end()) out.push_back(n);
    }
    return out;
  }
  // A character device like /dev/null to write to: /dev/null itself unless root (as root a
  // regression would replace the machine's /dev/null), else one made with mknod, else none.
  fs::path null_device() const {
    if (geteuid() != 0) return "/dev/null";
    const fs::path p = dir_ / "null";
    if (::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) return p;
    return {};
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, DashAndDevStdoutAreStandardOutput) {
  EXPECT_EQ(captured_stdout([] { ovb::write_json("-", {{"a", 1}}); }), "{\n  \"a\": 1\n}\n");
  EXPECT_EQ(captured_stdout([] { ovb::atomic_write("/dev/stdout", "x\n"); }), "x\n");
  EXPECT_NO_THROW(ovb::check_writable("-"));
  EXPECT_NO_THROW(ovb::check_writable("/dev/stdout"));
  EXPECT_TRUE(fs::exists("/dev/stdout"));
  EXPECT_TRUE(fs::is_symlink("/dev/stdout") || is_char_device("/dev/stdout"));
}

TEST_F(OutputFileTest, DevFdNamesTheOpenDescriptorLeftOpen) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ovb::atomic_write("/dev/fd/" + std::to_string(p[1]), "abc");
  EXPECT_GE(::fcntl(p[1], F_GETFD), 0);
  ::close(p[1]);
  char buf[8] = {};
  EXPECT_EQ(::read(p[0], buf, sizeof buf), 3);
  EXPECT_STREQ(buf, "abc");
  ::close(p[0]);
  EXPECT_THROW(ovb::atomic_write("/dev/fd/123456789", "x"), ovb::Error);  // not open: EBADF
}

TEST_F(OutputFileTest, FifoIsWrittenThroughNotReplaced) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NO_THROW(ovb::check_writable(fifo.string()));  // does not wait for a reader
  // The reader end is open first (as with `--json >(jq .)`), so the writer never waits; a FIFO
  // replaced by a file would leave it empty.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  ovb::atomic_write(fifo.string(), "through the pipe\n");
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) > 0;) got.append(buf, n);
  ::close(rd);
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(others({"pipe"}), std::vector<std::string>{});
}

TEST_F(OutputFileTest, DeviceAndLinkToDeviceStayWhatTheyAre) {
  const fs::path dev = null_device();
  if (dev.empty()) GTEST_SKIP() << "root without CAP_MKNOD: no device to write to";
  ovb::atomic_write(dev.string(), "gone\n");
  EXPECT_TRUE(is_char_device(dev));
  const fs::path link = dir_ / "to-null";
  fs::create_symlink(dev, link);
  EXPECT_NO_THROW(ovb::check_writable(link.string()));
  ovb::write_json(link.string(), {{"a", 1}});
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), dev);
  EXPECT_TRUE(is_char_device(dev));
  EXPECT_EQ(others({"to-null", "null"}), std::vector<std::string>{});
}

TEST_F(OutputFileTest, LinkToRegularFileReplacesTheFileKeepsTheLink) {
  const fs::path real = dir_ / "real.json", link = dir_ / "link.json";
  ovb::atomic_write(real.string(), "old");
  fs::create_symlink("real.json", link);
  ovb::atomic_write(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(real), "new");
  EXPECT_EQ(others({"real.json", "link.json"}), std::vector<std::string>{});
}

TEST_F(OutputFileTest, PlantedTemporaryNamesAreNeitherFollowedNorTruncated) {
  const fs::path target = dir_ / "r.txt", victim = dir_ / "victim";
  ovb::atomic_write(target.string(), "old");
  ovb::atomic_write(victim.string(), "precious");
  const std::string stem = ".r.txt.tmp." + std::to_string(getpid()) + ".";
  fs::create_symlink(victim, dir_ / (stem + "0"));            // would be truncated through the link
  fs::create_symlink(dir_ / "created", dir_ / (stem + "1"));  // would create a file there
  ovb::atomic_write((dir_ / (stem + "2")).string(), "planted");
  ovb::atomic_write(target.string(), "new");
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "created")));
  EXPECT_TRUE(fs::is_symlink(dir_ / (stem + "0")));
  EXPECT_EQ(slurp(dir_ / (stem + "2")), "planted");
  EXPECT_FALSE(fs::exists(dir_ / (stem + "3")));
}

TEST_F(OutputFileTest, RegularFileIsReplacedNotRewrittenInPlace) {
  const fs::path p = dir_ / "r.json";
  ovb::atomic_write(p.string(), "old");
  std::ifstream reader(p);  // a reader that opened the old file keeps reading it whole
  ovb::atomic_write(p.string(), "new content");
  std::stringstream ss;
  ss << reader.rdbuf();
  EXPECT_EQ(ss.str(), "old");
  EXPECT_EQ(slurp(p), "new content");
}

TEST_F(OutputFileTest, FailedWriteLeavesOldFileAndNoTemporary) {
  const fs::path p = dir_ / "r.json";
  ovb::atomic_write(p.string(), "old");
  // A file size limit makes the write fail (EFBIG), for root too.
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string what;
  try {
    ovb::atomic_write(p.string(), std::string(1 << 16, 'x'));
  } catch (const ovb::Error& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(what.find("r.json.tmp."), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(others({"r.json"}), std::vector<std::string>{});
}

TEST_F(OutputFileTest, UncommittedOutputLeavesNothing) {
  const fs::path p = dir_ / "trace.json";
  {
    ovb::OutputFile out(p.string());
    out.write("half");
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(others({}), std::vector<std::string>{});
}

TEST_F(OutputFileTest, FolderSocketAndDanglingLinkAreRefusedInOneLine) {
  const fs::path link = dir_ / "dangling", sock = dir_ / "sock";
  fs::create_symlink(dir_ / "nowhere", link);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << sock;
  for (const fs::path& p : {dir_, link, sock}) {
    for (const auto& call : {+[](const std::string& s) { ovb::atomic_write(s, "x"); },
                             +[](const std::string& s) { ovb::check_writable(s); }}) {
      try {
        call(p.string());
        ADD_FAILURE() << "expected an error for " << p;
      } catch (const ovb::UsageError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'" + p.string() + "'"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
    }
  }
  ::close(s);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "nowhere")));
  EXPECT_TRUE(fs::is_socket(sock));
  EXPECT_EQ(others({"dangling", "sock"}), std::vector<std::string>{});
}

}  // namespace
