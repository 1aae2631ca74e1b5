// run::CommandTarget driven by the sink engine: a command that succeeds,
// fails once, fails for good, outlives its timeout or cannot be run; an
// ack never passes what a run finished.
#include "cdc/run/command.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cdc/base/fs.h"
#include "sink/sink_test.h"
#include "test_util.h"

namespace cdc::run {

namespace {

using Run = test::SinkRun;

struct World {
  test::TempDir dir;
  std::vector<test::Ev> evs = test::Workload();
  uint64_t cursor = 0;
  size_t batch = 1;
  Options o;
  std::vector<uint64_t> acks;

  explicit World(const std::string& script) {
    o.argv = {"sh", "-c", script, "handler"};
    o.log = "L";
    o.consumer = "c";
  }
  Run Start() {
    CommandTarget t(o);
    return test::RunEngine(&t, &evs, &cursor, batch, 1e9,
                           [this](uint64_t seq) { acks.push_back(seq); });
  }
  std::string Out() const {
    auto s = ReadFileToString(dir.sub("out"), 1 << 20);
    return s.ok() ? *s : "";
  }
  // The seqs of the native lines the handler appended to `out`.
  std::vector<uint64_t> Seqs() const {
    std::vector<uint64_t> seqs;
    const std::string out = Out();
    for (size_t i = 0; (i = out.find("{\"seq\":", i)) != std::string::npos; ++i)
      seqs.push_back(std::stoull(out.substr(i + 7)));
    return seqs;
  }
  std::vector<uint64_t> All(uint64_t to) const {
    std::vector<uint64_t> v;
    for (const test::Ev& e : evs)
      if (e.seq <= to) v.push_back(e.seq);
    return v;
  }
};

}  // namespace

TEST_CASE("cdc-run: every event once, in order, acked after the run",
          "[run][sink]") {
  World w("");
  w.o.argv[2] = "cat >> '" + w.dir.sub("out") + "'";
  Run r = w.Start();
  REQUIRE_OK(r.status);
  CHECK(w.Seqs() == w.All(w.evs.back().seq));
  CHECK(r.acked == w.evs.back().seq);
  // One transaction per run: the native lines end each with "last".
  CHECK(w.Out().find("\"last\":true") != std::string::npos);
}

TEST_CASE("cdc-run: the environment names the batch and the attempt",
          "[run][sink]") {
  World w("");
  w.batch = 1000;
  w.o.argv[2] =
      "cat > /dev/null; echo \"$CDC_SEQ_FIRST $CDC_SEQ_LAST "
      "$CDC_ATTEMPT $CDC_LOG $CDC_CONSUMER\" >> '" +
      w.dir.sub("out") + "'";
  REQUIRE_OK(w.Start().status);
  CHECK(w.Out() == "1 " + std::to_string(w.evs.back().seq) + " 1 L c\n");
}

TEST_CASE("cdc-run: a failed run is run again; nothing is acked past it",
          "[run][sink]") {
  World w("");
  const std::string out = w.dir.sub("out");
  // Fails on the first run of the batch starting at seq 5.
  w.o.argv[2] =
      "if [ \"$CDC_SEQ_FIRST\" = 5 ] && [ \"$CDC_ATTEMPT\" = 1 ]; "
      "then exit 3; fi; cat >> '" +
      out + "'";
  Run r = w.Start();
  REQUIRE_OK(r.status);
  CHECK(w.Seqs() == w.All(w.evs.back().seq));
  CHECK(r.Saw("command sh exited with status 3 on seqs 5-6; retrying in"));
  CHECK(r.acked == w.evs.back().seq);
}

TEST_CASE("cdc-run: a run failing for good stops the run (75), acked before it",
          "[run][sink]") {
  World w("");
  const std::string out = w.dir.sub("out");
  w.o.argv[2] = "[ \"$CDC_SEQ_FIRST\" = 5 ] && exit 4; cat >> '" + out + "'";
  w.o.max_retries = 2;
  Run r = w.Start();
  CHECK(r.status.code() == Code::kBusy);
  CHECK(r.status.message().find("exited with status 4 on seqs 5-6 (3 runs)") !=
        std::string::npos);
  CHECK(w.Seqs() == w.All(4));
  CHECK(r.acked == 4);
  for (uint64_t a : w.acks) CHECK(a <= 4);
  // Started again (the handler fixed): from seq 5, nothing twice.
  w.o.argv[2] = "cat >> '" + out + "'";
  REQUIRE_OK(w.Start().status);
  CHECK(w.Seqs() == w.All(w.evs.back().seq));
}

TEST_CASE("cdc-run: --dead-letter takes a batch that fails for good",
          "[run][sink]") {
  World w("");
  const std::string out = w.dir.sub("out");
  w.o.argv[2] = "[ \"$CDC_SEQ_FIRST\" = 5 ] && exit 4; cat >> '" + out + "'";
  w.o.max_retries = 1;
  w.o.dead_letter = w.dir.sub("dead.ndjson");
  Run r = w.Start();
  REQUIRE_OK(r.status);
  std::vector<uint64_t> want = w.All(w.evs.back().seq);
  want.erase(want.begin() + 4, want.begin() + 6);  // seqs 5 and 6
  CHECK(w.Seqs() == want);
  auto dead = ReadFileToString(w.dir.sub("dead.ndjson"));
  REQUIRE(dead.ok());
  CHECK(dead->rfind("{\"seq\":5,", 0) == 0);
  CHECK(dead->find("{\"seq\":6,") != std::string::npos);
  CHECK(r.Saw("seqs 5-6 written to " + w.dir.sub("dead.ndjson") +
              " after 2 failed runs, and skipped"));
  CHECK(r.acked == w.evs.back().seq);
}

TEST_CASE("cdc-run: --timeout stops a run that hangs; a missing command is 78",
          "[run][sink]") {
  World w("exec sleep 30");
  w.o.timeout_us = 200000;
  w.o.max_retries = 0;
  Run r = w.Start();
  CHECK(r.status.code() == Code::kBusy);
  CHECK(r.status.message().find("ran longer than 0.2") != std::string::npos);
  CHECK(r.acked == 0);

  World m("");
  m.o.argv = {"/nonexistent/handler"};
  Run missing = m.Start();
  CHECK(missing.status.code() == Code::kConfig);
  CHECK(missing.status.message().find("cannot run /nonexistent/handler") !=
        std::string::npos);
}

}  // namespace cdc::run
