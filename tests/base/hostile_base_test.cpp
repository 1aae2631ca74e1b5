// Extreme and hostile inputs for the base helpers: times at the ends of
// int64, impossible dates, and files that are not what their name says.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <fstream>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "test_util.h"

namespace cdc {

TEST_CASE("timestamps at the ends of int64 format without overflow",
          "[base][hostile]") {
  CHECK(FormatTimestamp(INT64_MIN) == "-290308-12-21T19:59:05.224192Z");
  CHECK(FormatTimestamp(INT64_MIN + 1) == "-290308-12-21T19:59:05.224193Z");
  CHECK(FormatTimestamp(INT64_MAX) == "294247-01-10T04:00:54.775807Z");
  CHECK(FormatTimestamp(-1) == "1969-12-31T23:59:59.999999Z");
  CHECK(FormatTimestamp(0) == "1970-01-01T00:00:00.000000Z");
}

TEST_CASE("timestamps name real dates and RFC 3339 offsets",
          "[base][hostile]") {
  for (const char* bad :
       {"2026-02-30", "2026-02-29", "1900-02-29", "2026-04-31", "2026-13-01",
        "2026-00-10", "2026-01-00", "2026-01-01T00:00:00+99:99",
        "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00-23:60",
        "2026-01-01T00:00:00+0960", ""}) {
    INFO(bad);
    auto t = ParseTimestamp(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == Code::kUsage);
  }
  CHECK(ParseTimestamp("2024-02-29").ok());
  CHECK(ParseTimestamp("2000-02-29").ok());
  CHECK(ParseTimestamp("2026-12-31T23:59:60Z").ok());  // a leap second
  CHECK(*ParseTimestamp("2026-01-01T23:59:00+23:59") ==
        *ParseTimestamp("2026-01-01T00:00:00Z"));
  CHECK(*ParseTimestamp("2026-01-01T00:00:00-23:59") ==
        *ParseTimestamp("2026-01-01T23:59:00Z"));
}

TEST_CASE("OpenFile refuses what is not a regular file, without blocking",
          "[base][hostile]") {
  test::TempDir dir;
  const std::string victim = dir.sub("victim");
  { std::ofstream(victim) << "precious\n"; }
  const std::string link = dir.sub("link");
  REQUIRE(symlink(victim.c_str(), link.c_str()) == 0);
  const std::string fifo = dir.sub("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
  const std::string sock = dir.sub("sock");
  int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock.c_str());
  REQUIRE(bind(sfd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  struct Case {
    std::string path;
    int flags;
    const char* what;
  };
  const Case cases[] = {
      {link, O_RDONLY, "symbolic link"},
      {link, O_RDWR | O_CREAT, "symbolic link"},
      {fifo, O_RDONLY, "a FIFO"},
      {fifo, O_RDWR | O_CREAT, "a FIFO"},
      {"/dev/zero", O_RDONLY, "a character device"},
      {dir.path(), O_RDONLY, "a directory"},
      {dir.path(), O_RDWR, "not a regular file"},
      {sock, O_RDONLY, "not a regular file"},
  };
  for (const auto& c : cases) {
    INFO(c.path << " " << c.flags);
    auto f = OpenFile(c.path, c.flags);
    REQUIRE_FALSE(f.ok());
    CHECK(f.status().code() == Code::kCorruption);
    CHECK_THAT(f.status().message(), Catch::StartsWith("refusing " + c.path) &&
                                         Catch::Contains(c.what));
  }
  auto text = ReadFileToString(fifo);  // would block forever before
  CHECK(text.status().code() == Code::kCorruption);
  close(sfd);
  CHECK(*ReadFileToString(victim) == "precious\n");
  // A regular file opens blocking as usual.
  auto f = OpenFile(victim, O_RDONLY);
  REQUIRE(f.ok());
  CHECK((fcntl(f->fd(), F_GETFL) & O_NONBLOCK) == 0);
}

TEST_CASE("metadata reads are bounded", "[base][hostile]") {
  test::TempDir dir;
  const std::string big = dir.sub("big.json");
  { std::ofstream(big) << std::string(kMaxMetadataBytes + 1, ' '); }
  auto text = ReadFileToString(big);
  REQUIRE_FALSE(text.ok());
  CHECK(text.status().code() == Code::kCorruption);
  CHECK_THAT(text.status().message(), Catch::Contains("larger than"));
  CHECK(ReadFileToString(big, kMaxMetadataBytes + 1).ok());
}

TEST_CASE("WriteFileAtomic never writes through a planted temporary",
          "[base][hostile]") {
  test::TempDir dir;
  const std::string victim = dir.sub("victim");
  { std::ofstream(victim) << "precious\n"; }
  const std::string target = dir.sub("metrics.prom");
  REQUIRE(symlink(victim.c_str(), (target + ".tmp").c_str()) == 0);
  REQUIRE(WriteFileAtomic(target, "new\n").ok());
  CHECK(*ReadFileToString(victim) == "precious\n");
  CHECK(*ReadFileToString(target) == "new\n");
  CHECK_FALSE(PathExists(target + ".tmp"));
  // The file itself a symlink: rename replaces the link, not its target.
  REQUIRE(unlink(target.c_str()) == 0);
  REQUIRE(symlink(victim.c_str(), target.c_str()) == 0);
  REQUIRE(WriteFileAtomic(target, "newer\n").ok());
  CHECK(*ReadFileToString(victim) == "precious\n");
  CHECK(*ReadFileToString(target) == "newer\n");
}

}  // namespace cdc
