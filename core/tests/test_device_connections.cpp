// CUDA_DEVICE_MAX_CONNECTIONS against the streams a run uses: the warning where one hardware
// queue serialises the streams (CUDA backend, value 1, more than one stream), nothing on the host
// backend (recorded only), a bad value refused, and the record in a result's context.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "ovb/device_connections.hpp"
#include "ovb/error.hpp"

namespace {

// Sets the variable for one test and restores the environment afterwards.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvVar() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

ovb::DeviceConnections from_env(std::string_view backend, int streams) {
  return ovb::check_device_connections(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), backend,
                                       streams);
}

}  // namespace

TEST(DeviceConnections, OneConnectionWithSeveralCudaStreamsWarns) {
  EnvVar v("CUDA_DEVICE_MAX_CONNECTIONS", "1");
  const auto c = from_env("cuda", 4);
  EXPECT_EQ(c.value, 1);
  EXPECT_TRUE(c.applies);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("CUDA_DEVICE_MAX_CONNECTIONS=1 with 4 streams"), std::string::npos);
  EXPECT_NE(c.warnings[0].find("one hardware queue"), std::string::npos);
}

TEST(DeviceConnections, NoWarningWhereNothingCanSerialise) {
  {
    EnvVar v("CUDA_DEVICE_MAX_CONNECTIONS", "1");
    EXPECT_TRUE(from_env("cuda", 1).warnings.empty());  // one stream: nothing to overlap
    const auto host = from_env("host", 4);              // no hardware queues: recorded, n/a
    EXPECT_EQ(host.value, 1);
    EXPECT_FALSE(host.applies);
    EXPECT_TRUE(host.warnings.empty());
  }
  {
    EnvVar v("CUDA_DEVICE_MAX_CONNECTIONS", "8");
    EXPECT_EQ(from_env("cuda", 4).value, 8);
    EXPECT_TRUE(from_env("cuda", 4).warnings.empty());
  }
  {
    EnvVar v("CUDA_DEVICE_MAX_CONNECTIONS", nullptr);
    EXPECT_FALSE(from_env("cuda", 4).value.has_value());  // the driver's default
    EXPECT_TRUE(from_env("cuda", 4).warnings.empty());
  }
}

TEST(DeviceConnections, BadValuesAreRefusedInOneLine) {
  for (const char* bad : {"0", "33", "abc", "1x", "-1"}) {
    try {
      ovb::check_device_connections(bad, "cuda", 4);
      FAIL() << bad;
    } catch (const ovb::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA_DEVICE_MAX_CONNECTIONS='" + std::string(bad) +
                                           "' is not an integer 1..32"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(DeviceConnections, RecordedInTheContext) {
  nlohmann::json ctx = {{"warnings", {"earlier"}}};
  ovb::record_device_connections(ctx, ovb::check_device_connections("1", "cuda", 2));
  EXPECT_EQ(ctx["device_max_connections"], 1);
  ASSERT_EQ(ctx["warnings"].size(), 2u);
  EXPECT_EQ(ctx["warnings"][0], "earlier");
  nlohmann::json unset = nlohmann::json::object();
  ovb::record_device_connections(unset, ovb::check_device_connections(nullptr, "host", 4));
  EXPECT_TRUE(unset["device_max_connections"].is_null());
  EXPECT_EQ(unset["warnings"], nlohmann::json::array());
}
