#include "cdc/pg/copy_raw.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "wire.h"

namespace cdc::pg {
namespace {

// A string literal's bytes, embedded NULs included (not its final NUL).
template <size_t N>
std::string Bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// A protocol message: the type, then the length (counting itself) and the
// body, as the server frames it.
std::string Msg(char type, const std::string& body) {
  test::Wire w(type);
  w.I32(static_cast<int32_t>(4 + body.size())).Raw(body);
  return w.data();
}

std::string ErrorBody(const std::string& code, const std::string& message,
                      const std::string& severity = "ERROR",
                      const std::string& more = "") {
  return "S" + severity + '\0' + "V" + severity + '\0' + "C" + code + '\0' +
         "M" + message + '\0' + more + '\0';
}

const std::string kCopyOut = Msg('H', Bytes("\1\0\2\0\1\0\1"));
const std::string kDone = Msg('c', "") + Msg('C', Bytes("COPY 2\0"));
const std::string kReady = Msg('Z', "T");

// Plays the server on one end of a socket pair: reads the query (into
// `query`), then writes `reply` in pieces of `piece` bytes, so messages
// straddle the client's reads; then closes if `close` is set.
struct FakeServer {
  int client = -1, server = -1;
  std::string query;
  std::thread t;

  FakeServer(std::string reply, size_t piece, bool close = false) {
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    client = fds[0];
    server = fds[1];
    // libpq leaves its socket non-blocking; so must the reader cope.
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    t = std::thread([this, reply = std::move(reply), piece, close] {
      char buf[4096];
      // The query message: 'Q', its length, the text and a NUL.
      auto whole = [this] {
        if (query.size() < 5) return false;
        size_t len = 0;
        for (int k = 1; k <= 4; ++k)
          len = len << 8 | static_cast<unsigned char>(query[k]);
        return query.size() >= 1 + len;
      };
      while (!whole()) {
        const ssize_t n = read(server, buf, sizeof buf);
        if (n <= 0) return;
        query.append(buf, static_cast<size_t>(n));
      }
      for (size_t at = 0; at < reply.size(); at += piece) {
        const size_t n = std::min(piece, reply.size() - at);
        if (write(server, reply.data() + at, n) != static_cast<ssize_t>(n))
          return;
        std::this_thread::yield();
      }
      if (close) shutdown(server, SHUT_WR);
    });
  }
  ~FakeServer() {
    t.join();
    ::close(client);
    ::close(server);
  }
};

struct Got {
  std::vector<std::string> rows;
  std::vector<std::string> notices;
  int cancels = 0;
  bool broken = false;
};

Status Run(FakeServer& s, Got* g, size_t buffer = 256u << 10,
           Status fail_at_second = Status::OK()) {
  RawCopyOptions o;
  o.buffer_bytes = buffer;
  o.cancel = [g] { ++g->cancels; };
  o.notice = [g](const std::string& sev, const std::string& msg) {
    g->notices.push_back(sev + ": " + msg);
  };
  return RawCopyOut(
      s.client, "COPY t TO STDOUT",
      [&](std::string_view row) {
        g->rows.emplace_back(row);
        if (g->rows.size() == 2) return fail_at_second;
        return Status::OK();
      },
      o, &g->broken);
}

TEST_CASE("a raw COPY sends one Query and hands out each CopyData in order",
          "[pg][copy_raw]") {
  const std::string big(100000, 'x');  // larger than the buffer below
  const std::string reply =
      Msg('S', Bytes("a\0b\0")) + kCopyOut + Msg('d', "1\tone\n") +
      Msg('N', Bytes("SWARNING\0VWARNING\0Mlook out\0\0")) + Msg('d', big) +
      Msg('d', "") + kDone + kReady;
  for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, reply.size()}) {
    INFO("written " << piece << " bytes at a time");
    FakeServer s(reply, piece);
    Got g;
    const Status st = Run(s, &g, 64);  // a tiny buffer: it must grow
    CHECK(st.ok());
    CHECK_FALSE(g.broken);
    REQUIRE(g.rows.size() == 3);
    CHECK(g.rows[0] == "1\tone\n");
    CHECK(g.rows[1] == big);
    CHECK(g.rows[2].empty());
    CHECK(g.notices == std::vector<std::string>{"WARNING: look out"});
    CHECK(g.cancels == 0);
    CHECK(s.query == Msg('Q', Bytes("COPY t TO STDOUT\0")));
  }
}

TEST_CASE(
    "a raw COPY reports the server's error, classified, and stays in "
    "step",
    "[pg][copy_raw]") {
  SECTION("an error before the copy starts: a missing table is config") {
    FakeServer s(
        Msg('E', ErrorBody("42P01", "relation \"t\" does not\nexist")) + kReady,
        3);
    Got g;
    const Status st = Run(s, &g);
    CHECK(st.code() == Code::kConfig);
    CHECK(st.message() == "COPY failed: ERROR: relation \"t\" does not exist");
    CHECK_FALSE(g.broken);
    CHECK(g.rows.empty());
  }
  SECTION("an error mid-copy, with its detail and hint, is unavailable") {
    FakeServer s(kCopyOut + Msg('d', "1\n") +
                     Msg('E', ErrorBody("57014", "canceling statement", "ERROR",
                                        Bytes("Dthe detail\0Ha hint\0"))) +
                     kReady,
                 5);
    Got g;
    const Status st = Run(s, &g);
    CHECK(st.code() == Code::kUnavailable);
    CHECK(st.message() ==
          "COPY failed: ERROR: canceling statement DETAIL: the detail HINT: "
          "a hint");
    CHECK(g.rows.size() == 1);
    CHECK_FALSE(g.broken);
  }
  SECTION("a FATAL, then the connection closed: the server's words") {
    FakeServer s(kCopyOut + Msg('d', "1\n") +
                     Msg('E', ErrorBody("57P01",
                                        "terminating connection due to "
                                        "administrator command",
                                        "FATAL")),
                 5, /*close=*/true);
    Got g;
    const Status st = Run(s, &g);
    CHECK(st.code() == Code::kUnavailable);
    CHECK(st.message() ==
          "COPY failed: FATAL: terminating connection due to administrator "
          "command");
    CHECK(g.broken);
  }
  SECTION("the caller's error, then the connection closed: the caller's") {
    FakeServer s(kCopyOut + Msg('d', "1\n") + Msg('d', "2\n"), 4,
                 /*close=*/true);
    Got g;
    const Status st = Run(s, &g, 256u << 10, Status::BadInput("row 2 is bad"));
    CHECK(st.message() == "row 2 is bad");
    CHECK(g.broken);
  }
  SECTION("the caller's error cancels once, and the rest is drained") {
    FakeServer s(
        kCopyOut + Msg('d', "1\n") + Msg('d', "2\n") + Msg('d', "3\n") +
            Msg('E', ErrorBody("57014", "canceling statement")) + kReady,
        2);
    Got g;
    const Status st = Run(s, &g, 256u << 10, Status::BadInput("row 2 is bad"));
    CHECK(st.code() == Code::kBadInput);
    CHECK(st.message() == "row 2 is bad");
    CHECK(g.cancels == 1);
    CHECK(g.rows.size() == 2);  // not handed out after the error
    CHECK_FALSE(g.broken);
  }
}

TEST_CASE(
    "a raw COPY fails loudly, and marks the connection broken, on a "
    "reply that makes no sense or ends early",
    "[pg][copy_raw]") {
  struct Case {
    const char* name;
    std::string reply;
    const char* says;
  };
  std::string bad_len = kCopyOut + "d" + Bytes("\0\0\0\2");
  std::string huge_len = kCopyOut + "d" + Bytes("\x80\0\0\0");
  const std::vector<Case> cases = {
      {"the connection closed before any reply", "",
       "closed the connection unexpectedly"},
      {"closed mid-message", kCopyOut + Msg('d', "12345").substr(0, 7),
       "closed the connection unexpectedly"},
      {"closed before ReadyForQuery", kCopyOut + Msg('d', "1\n") + kDone,
       "closed the connection unexpectedly"},
      {"a length shorter than itself", bad_len, "impossible length 2"},
      {"a length of 2 GiB", huge_len, "impossible length 2147483648"},
      {"a row before CopyOutResponse", Msg('d', "1\n") + kReady,
       "a row before the copy started"},
      {"an unknown message type", kCopyOut + Msg('T', "") + kReady,
       "unexpected message type 0x54"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    FakeServer s(c.reply, 3, /*close=*/true);
    Got g;
    const Status st = Run(s, &g);
    CHECK(st.code() == Code::kUnavailable);
    CHECK_THAT(st.message(), Catch::Contains(c.says));
    CHECK(g.broken);
  }
}

}  // namespace
}  // namespace cdc::pg
