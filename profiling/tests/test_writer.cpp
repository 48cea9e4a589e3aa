// The trace writer: exact microsecond formatting, Kineto's header keys, HTA's "rank": N, valid
// pretty-printed JSON, atomic replacement, and raw events keeping their fields.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "ovb/error.hpp"
#include "ovb/trace_writer.hpp"
#include "test_util.hpp"

using namespace ovb::trace;
using ovb::trace::testing::read_file;
using ovb::trace::testing::TempDir;

TEST(TraceWriter, FormatsMicrosecondsExactly) {
  EXPECT_EQ(format_us(0), "0.000");
  EXPECT_EQ(format_us(1), "0.001");
  EXPECT_EQ(format_us(12345), "12.345");
  EXPECT_EQ(format_us(1'000'000'007), "1000000.007");
  EXPECT_EQ(format_us(-1500), "-1.500");
}

TEST(TraceWriter, WritesKinetoHeaderEventsAndMetadata) {
  TempDir dir;
  const std::string path = dir.file("sub/rank-00003.trace.json");
  TraceHeader h;
  h.rank = 3;
  h.world_size = 8;
  h.backend = "nccl";
  h.base_ns = 1'700'000'000'000'000'000;
  h.device_properties.push_back({{"id", 0}, {"name", "GPU"}});
  h.extra["context"] = {{"rank_like_key_after_distributedInfo", 9}};
  {
    TraceWriter w(path, h);
    w.process_name(0, "GPU 0", 0);
    w.thread_name(0, 7, "stream 7", 7);
    const nlohmann::ordered_json args = {{"device", 0}, {"stream", 7}, {"name \"quoted\"", "x"}};
    w.complete({"k\"ernel", cat::kernel, 0, 7, h.base_ns + 1500, h.base_ns + 4001, &args});
    w.complete({"range", cat::annotation, 42, 43, h.base_ns, h.base_ns + 10, nullptr});
    EXPECT_FALSE(std::filesystem::exists(path));  // only the temporary file exists until finish
    w.finish();
  }
  const std::string text = read_file(path);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["distributedInfo"]["rank"], 3);
  EXPECT_EQ(j["distributedInfo"]["world_size"], 8);
  EXPECT_EQ(j["distributedInfo"]["backend"], "nccl");
  EXPECT_EQ(j["baseTimeNanoseconds"], 1'700'000'000'000'000'000);
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  EXPECT_EQ(j["deviceProperties"][0]["name"], "GPU");
  ASSERT_EQ(j["traceEvents"].size(), 6u);
  const auto& k = j["traceEvents"][4];
  EXPECT_EQ(k["ph"], "X");
  EXPECT_EQ(k["cat"], "kernel");
  EXPECT_EQ(k["name"], "k\"ernel");
  EXPECT_EQ(k["args"]["name \"quoted\""], "x");
  // ts/dur relative to baseTimeNanoseconds, in microseconds with exactly three decimals.
  EXPECT_NE(text.find("\"ts\": 1.500, \"dur\": 2.501"), std::string::npos) << text;
  EXPECT_EQ(j["traceEvents"][5].count("args"), 0u);
  // HTA's rank regex: the first `"rank": N` (whitespace after the colon) is distributedInfo's.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("\"rank\": (\\d+)")));
  EXPECT_EQ(m[1], "3");
  // Metadata names the tracks.
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], "GPU 0");
  EXPECT_EQ(j["traceEvents"][2]["name"], "thread_name");
  EXPECT_EQ(j["traceEvents"][2]["tid"], 7);
  // No temporary file left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir.file("sub")))
    EXPECT_EQ(e.path().filename(), "rank-00003.trace.json");
}

TEST(TraceWriter, UnfinishedTraceLeavesNothingAndKeepsTheOldFile) {
  TempDir dir;
  const std::string path = dir.file("t.json");
  ovb::trace::testing::write_file(path, "old");
  {
    TraceWriter w(path, TraceHeader{});
    w.complete({"k", cat::kernel, 0, 0, 0, 1, nullptr});
  }  // destroyed without finish(): e.g. an exception while writing
  EXPECT_EQ(read_file(path), "old");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(TraceWriter, UnwritableFolderIsAClearError) {
  TempDir dir;
  ovb::trace::testing::write_file(dir.file("a_file"), "");
  try {
    TraceWriter w(dir.file("a_file/sub/t.json"), TraceHeader{});
    FAIL() << "expected an error";
  } catch (const ovb::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create folder"), std::string::npos) << e.what();
  }
}

TEST(TraceWriter, RawEventsKeepTheirFieldsAndTakeANewTime) {
  TempDir dir;
  const std::string path = dir.file("raw.json");
  TraceHeader h;
  h.base_ns = 1000;
  {
    TraceWriter w(path, h);
    w.raw(nlohmann::json::parse(
              R"({"ph":"X","cat":"kernel","name":"k","pid":5,"tid":1,"ts":1.0,"dur":2.5,)"
              R"("args":{"grid":[1,2,3],"External id":7}})"),
          std::int64_t{5500});
    w.raw(nlohmann::json::parse(R"({"ph":"M","name":"thread_name","pid":5,"tid":1})"));
    w.raw(nlohmann::json::parse(R"({"args":{"a":1}})"));
    w.finish();
  }
  const auto j = nlohmann::json::parse(read_file(path));
  const auto& e = j["traceEvents"][0];
  EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 4.5);  // (5500 - 1000) ns
  EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.5);
  EXPECT_EQ(e["args"]["grid"], nlohmann::json::parse("[1,2,3]"));
  EXPECT_EQ(e["args"]["External id"], 7);
  EXPECT_EQ(j["traceEvents"][1]["name"], "thread_name");
  EXPECT_EQ(j["traceEvents"][2]["args"]["a"], 1);
}
