// Atomic writes: content, no temporary left behind, the old file intact when a write fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/io.hpp"

namespace fs = std::filesystem;

static std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ovb-io-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (fs::exists(dir_)) fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(IoTest, WritesContentCreatesFoldersLeavesNoTemporary) {
  const fs::path p = dir_ / "a" / "b" / "result.json";
  ovb::write_json(p.string(), {{"x", 1}, {"nan", std::nan("")}});
  EXPECT_EQ(slurp(p), "{\n  \"nan\": null,\n  \"x\": 1\n}\n");
  int files = 0;
  for (const auto& e : fs::directory_iterator(p.parent_path())) (void)e, ++files;
  EXPECT_EQ(files, 1);
  EXPECT_EQ(ovb::read_json(p.string())["x"], 1);
}

TEST_F(IoTest, ReplacesExistingFile) {
  const fs::path p = dir_ / "r.txt";
  ovb::atomic_write(p.string(), "old");
  ovb::atomic_write(p.string(), "new content");
  EXPECT_EQ(slurp(p), "new content");
}

TEST_F(IoTest, FailureLeavesOldFileAndSaysWhy) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions";
  const fs::path p = dir_ / "r.txt";
  ovb::atomic_write(p.string(), "old");
  fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::remove);
  EXPECT_THROW(ovb::atomic_write(p.string(), "new"), ovb::Error);
  fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(slurp(p), "old");
}

TEST_F(IoTest, FailureWhenTargetIsAFolder) {
  const fs::path p = dir_ / "taken";
  fs::create_directories(p / "inside");
  try {
    ovb::atomic_write(p.string(), "x");
    FAIL() << "expected an error";
  } catch (const ovb::Error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(p / "inside"));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST_F(IoTest, ReadJsonErrorsNameTheFile) {
  fs::create_directories(dir_);
  const fs::path bad = dir_ / "bad.json";
  ovb::atomic_write(bad.string(), "{\"a\": [1, 2");
  try {
    ovb::read_json(bad.string());
    FAIL();
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json' is not valid JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ovb::read_json((dir_ / "missing.json").string()), ovb::UsageError);
}
