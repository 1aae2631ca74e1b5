#include "cdc/base/logging.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cdc/base/fs.h"
#include "cdc/cli/cli.h"
#include "test_util.h"

namespace cdc {

namespace {

// Runs fn with stderr sent to a file; returns what it wrote there.
template <typename Fn>
std::string Stderr(const test::TempDir& dir, Fn fn) {
  const std::string path = dir.sub("stderr");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  int saved = ::dup(2);
  ::dup2(fd, 2);
  ::close(fd);
  fn();
  ::dup2(saved, 2);
  ::close(saved);
  auto text = ReadFileToString(path);
  REQUIRE(text.ok());
  return *text;
}

}  // namespace

TEST_CASE("library messages carry the name of the tool that installed logging",
          "[cli][logging]") {
  test::TempDir dir;
  CHECK(Stderr(dir,
               [] {
                 cli::InstallLogging("cdc-redis");
                 LogWarning("redis down; retrying");
                 LogInfo("line\nforged: \x1b[31m");
               }) ==
        "cdc-redis: warning: redis down; retrying\n"
        "cdc-redis: line\\nforged: \\x1b[31m\n");
  CHECK(Stderr(dir, [] {
          cli::InstallLogging("cdc-capture");
          LogInfo("created replication slot cdc at 0/16B3748");
        }) == "cdc-capture: created replication slot cdc at 0/16B3748\n");
  // Without an installed sink: the executable's own name, text as given.
  CHECK(
      Stderr(dir, [] {
        SetLogSink(nullptr);
        LogWarning("plain");
      }) == std::string(program_invocation_short_name) + ": warning: plain\n");
  // A sink of one's own receives level and message, nothing printed.
  static std::vector<std::pair<LogLevel, std::string>> got;
  got.clear();
  CHECK(Stderr(dir, [] {
          SetLogSink([](LogLevel l, std::string_view m) {
            got.emplace_back(l, std::string(m));
          });
          LogInfo("a");
          LogWarning("b");
          SetLogSink(nullptr);
        }).empty());
  CHECK(got == std::vector<std::pair<LogLevel, std::string>>{
                   {LogLevel::kInfo, "a"}, {LogLevel::kWarning, "b"}});
}

}  // namespace cdc
