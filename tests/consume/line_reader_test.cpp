#include "cdc/consume/line_reader.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace cdc::consume {

namespace {

// A pipe whose write end holds `input`; closed when `close_write`.
struct Pipe {
  explicit Pipe(const std::string& input, bool close_write = true) {
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], input.data(), input.size()) ==
            static_cast<ssize_t>(input.size()));
    if (close_write) CloseWrite();
  }
  ~Pipe() {
    ::close(fds[0]);
    CloseWrite();
  }
  void CloseWrite() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
  int fds[2];
};

struct Line {
  std::string text;
  uint64_t no;
  bool operator==(const Line& o) const { return text == o.text && no == o.no; }
};

std::vector<Line> ReadAll(LineReader& in) {
  std::vector<Line> out;
  std::string_view line;
  for (;;) {
    auto got = in.Next(1000, &line);
    REQUIRE(got.ok());
    REQUIRE(*got != LineReader::Got::kTimeout);
    if (*got == LineReader::Got::kEof) break;
    out.push_back({std::string(line), in.line_no()});
  }
  return out;
}

}  // namespace

TEST_CASE(
    "lines are numbered, blank ones skipped, a last one without newline kept",
    "[consume][lines]") {
  Pipe p("{\"a\":1}\n\n  \t\r\n{\"b\":2}\r\n{\"c\":3}");
  LineReader in(p.fds[0]);
  CHECK(ReadAll(in) == std::vector<Line>{{"{\"a\":1}", 1},
                                         {"{\"b\":2}\r", 4},
                                         {"{\"c\":3}", 5}});
  // A blank last line without newline is no line.
  Pipe q("x\n \t");
  LineReader in2(q.fds[0]);
  CHECK(ReadAll(in2) == std::vector<Line>{{"x", 1}});
}

TEST_CASE("a line longer than the bound is refused with its number",
          "[consume][lines]") {
  const std::string ok(16, 'o');
  Pipe p(ok + "\n" + std::string(17, 'x') + "\n" + ok + "\n");
  LineReader in(p.fds[0], "stdin", 16);
  std::string_view line;
  REQUIRE(*in.Next(1000, &line) == LineReader::Got::kLine);
  CHECK(line == ok);
  auto got = in.Next(1000, &line);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == Code::kBadInput);
  CHECK(got.status().message() == "stdin line 2: longer than 16 bytes");

  // Without its newline yet (still arriving), and at EOF.
  Pipe q(std::string(40, 'y'), /*close_write=*/false);
  LineReader in2(q.fds[0], "stdin", 16);
  got = in2.Next(1000, &line);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message() == "stdin line 1: longer than 16 bytes");
  Pipe r("a\n" + std::string(17, 'z'));
  LineReader in3(r.fds[0], "stdin", 16);
  REQUIRE(*in3.Next(1000, &line) == LineReader::Got::kLine);
  got = in3.Next(1000, &line);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message() == "stdin line 2: longer than 16 bytes");
}

TEST_CASE("a pause in the input is a timeout, then reading goes on",
          "[consume][lines]") {
  Pipe p("one\ntw", /*close_write=*/false);
  LineReader in(p.fds[0]);
  std::string_view line;
  REQUIRE(*in.Next(1000, &line) == LineReader::Got::kLine);
  CHECK(line == "one");
  CHECK(*in.Next(20, &line) == LineReader::Got::kTimeout);
  REQUIRE(::write(p.fds[1], "o\nthree\n", 8) == 8);
  REQUIRE(*in.Next(1000, &line) == LineReader::Got::kLine);
  CHECK(line == "two");
  REQUIRE(*in.Next(1000, &line) == LineReader::Got::kLine);
  CHECK(line == "three");
  CHECK(in.LineError("bad").message() == "stdin line 3: bad");
  p.CloseWrite();
  CHECK(*in.Next(1000, &line) == LineReader::Got::kEof);
}

TEST_CASE("only a last line without a newline is unterminated",
          "[consume][lines]") {
  Pipe p("{\"a\":1}\n{\"b\":2}\n{\"c\"");
  LineReader in(p.fds[0]);
  std::string_view line;
  std::vector<bool> unterminated;
  while (*in.Next(1000, &line) == LineReader::Got::kLine)
    unterminated.push_back(in.unterminated());
  CHECK(unterminated == std::vector<bool>{false, false, true});
  CHECK(line == "{\"c\"");
}

}  // namespace cdc::consume
